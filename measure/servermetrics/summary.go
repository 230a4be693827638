package servermetrics

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// TierMetrics is the server's view of one tier. Pointers are nil (and left
// out of JSON) when the server does not export the metric or the tier gave
// too few scrapes to compute it.
type TierMetrics struct {
	// Source is "vllm", "sglang", "llamacpp", "sim" or "unknown", detected from the
	// metric names of the last successful scrape.
	Source string `json:"source"`
	// Scrapes counts successful scrapes, Failures failed ones; LastError is
	// the last failure's message.
	Scrapes   int    `json:"scrapes"`
	Failures  int    `json:"failures"`
	LastError string `json:"last_error,omitempty"`

	// PrefixCacheHitRate is PrefixCacheHits/PrefixCacheQueries over the
	// tier (in tokens); nil when Δqueries is 0. Only when the server has no
	// such counters is it the mean of its own hit-rate gauge (then noted).
	PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate,omitempty"`
	// PrefixCacheQueries and PrefixCacheHits are deltas, in tokens.
	PrefixCacheQueries *float64 `json:"prefix_cache_queries,omitempty"`
	PrefixCacheHits    *float64 `json:"prefix_cache_hits,omitempty"`
	// Preemptions is a delta (SGLang: retracted requests).
	Preemptions *float64 `json:"preemptions,omitempty"`
	// MeanRunning, MaxRunning, MeanWaiting and MaxWaiting are over the
	// scrapes, in requests.
	MeanRunning *float64 `json:"mean_running,omitempty"`
	MaxRunning  *float64 `json:"max_running,omitempty"`
	MeanWaiting *float64 `json:"mean_waiting,omitempty"`
	MaxWaiting  *float64 `json:"max_waiting,omitempty"`
	// MeanKVUsage and MaxKVUsage are over the scrapes, 0..1.
	MeanKVUsage *float64 `json:"mean_kv_usage,omitempty"`
	MaxKVUsage  *float64 `json:"max_kv_usage,omitempty"`
	// GenerationTokens and PromptTokens are deltas.
	GenerationTokens *float64 `json:"generation_tokens,omitempty"`
	PromptTokens     *float64 `json:"prompt_tokens,omitempty"`
	// RequestsReceived is the delta of the requests the server received
	// when it counts them (sim); vLLM and SGLang count requests only when
	// they finish, so for them it is RequestsFinished.
	RequestsReceived *float64 `json:"requests_received,omitempty"`
	// RequestsFinished is the delta of requests finished for any reason
	// (vLLM's request_success over every finished_reason, abort included).
	RequestsFinished *float64 `json:"requests_finished,omitempty"`
	// StepLatenessP99 is the 0.99 quantile of the sim's step lateness over
	// the tier, in milliseconds.
	StepLatenessP99 *float64 `json:"step_lateness_p99_ms,omitempty"`
	// Notes says what was inferred or could not be done: counter resets,
	// a model filter that matched nothing, a gauge used for the hit rate.
	Notes []string `json:"notes,omitempty"`
}

// Summarize reduces the successful scrapes of one tier, in time order, to
// TierMetrics (Failures and LastError are the caller's to fill).
func Summarize(snaps []Snapshot) TierMetrics {
	var r Reducer
	for _, s := range snaps {
		r.Add(s)
	}
	return r.Result()
}

// The counters and gauges a tier is reduced to, in the order of their notes.
var (
	reducedCounters = [...]string{NamePrefixQueries, NamePrefixHits, NamePreemptions, NameGenerationTokens,
		NamePromptTokens, NameRequestsFinished, NameRequestsReceived}
	reducedGauges = [...]string{NameRunning, NameWaiting, NameKVUsage, NamePrefixHitRate}
)

// Reducer is Summarize one scrape at a time: it keeps what the result needs (a few numbers per
// counter and gauge, the first and last step-lateness histograms), never the scrapes, so a
// Sampler's memory does not grow with the length of the tier.
type Reducer struct {
	scrapes  int
	source   string
	sources  []string
	warnings []string // the scrapes' own warnings, deduplicated, in time order
	counters [len(reducedCounters)]counterState
	gauges   [len(reducedGauges)]gaugeState
	first    []Bucket // step lateness at the first scrape that has it
	last     []Bucket // and at the last
}

// counterState is counterDelta's loop state for one counter.
type counterState struct {
	total, prev float64
	prevAt      time.Duration
	seen        bool
	notes       []string
}

// gaugeState is gaugeStats' loop state for one gauge.
type gaugeState struct {
	sum, max float64
	n        int
}

// Add counts the next scrape, in time order.
func (r *Reducer) Add(s Snapshot) {
	first := r.scrapes == 0
	r.scrapes++
	if s.Source != SourceUnknown && s.Source != "" {
		r.source = s.Source
		if !slices.Contains(r.sources, s.Source) {
			r.sources = append(r.sources, s.Source)
		}
	}
	for _, w := range s.Warnings {
		if !slices.Contains(r.warnings, w) {
			r.warnings = append(r.warnings, w)
		}
	}
	for i, name := range reducedCounters {
		c := &r.counters[i]
		v, ok := s.Values[name]
		if !ok {
			continue
		}
		if !c.seen {
			c.seen = true
			if first {
				c.prev, c.prevAt = v, s.At
				continue
			}
			c.prev = 0 // a series created during the tier starts at zero
		}
		if v < c.prev {
			c.notes = append(c.notes, fmt.Sprintf("%s went down from %g to %g between the scrapes at %v and %v: counted as a server restart", name, c.prev, v, c.prevAt, s.At))
			c.total += v
		} else {
			c.total += v - c.prev
		}
		c.prev, c.prevAt = v, s.At
	}
	for i, name := range reducedGauges {
		g := &r.gauges[i]
		v, ok := s.Values[name]
		if !ok {
			continue
		}
		if g.n == 0 || v > g.max {
			g.max = v
		}
		g.sum += v
		g.n++
	}
	if s.StepLateness != nil {
		if r.first == nil {
			r.first = s.StepLateness
		}
		r.last = s.StepLateness
	}
}

// Result is the TierMetrics of the scrapes added so far.
func (r *Reducer) Result() TierMetrics {
	tm := TierMetrics{Source: SourceUnknown, Scrapes: r.scrapes}
	if r.source != "" {
		tm.Source = r.source
	}
	var notes []string
	note := func(format string, a ...any) {
		if s := fmt.Sprintf(format, a...); !slices.Contains(notes, s) {
			notes = append(notes, s)
		}
	}
	for _, w := range r.warnings {
		note("%s", w)
	}
	if len(r.sources) > 1 {
		note("the detected server changed during the tier; source is the last one detected")
	}

	deltas := make([]*float64, len(reducedCounters))
	for i := range reducedCounters {
		c := &r.counters[i]
		if r.scrapes < 2 || !c.seen {
			continue // a delta needs two scrapes and the counter in one of them
		}
		for _, n := range c.notes {
			note("%s", n)
		}
		deltas[i] = ptr(c.total)
	}
	tm.PrefixCacheQueries, tm.PrefixCacheHits, tm.Preemptions = deltas[0], deltas[1], deltas[2]
	tm.GenerationTokens, tm.PromptTokens, tm.RequestsFinished, tm.RequestsReceived = deltas[3], deltas[4], deltas[5], deltas[6]
	if tm.RequestsReceived == nil && tm.RequestsFinished != nil {
		tm.RequestsReceived = ptr(*tm.RequestsFinished)
	}

	gauge := func(i int) (mean, maxv *float64) {
		g := r.gauges[i]
		if g.n == 0 {
			return nil, nil
		}
		return ptr(g.sum / float64(g.n)), ptr(g.max)
	}
	tm.MeanRunning, tm.MaxRunning = gauge(0)
	tm.MeanWaiting, tm.MaxWaiting = gauge(1)
	tm.MeanKVUsage, tm.MaxKVUsage = gauge(2)

	switch {
	case tm.PrefixCacheQueries != nil && tm.PrefixCacheHits != nil:
		if *tm.PrefixCacheQueries > 0 {
			tm.PrefixCacheHitRate = ptr(*tm.PrefixCacheHits / *tm.PrefixCacheQueries)
		}
	default:
		if mean, _ := gauge(3); mean != nil {
			tm.PrefixCacheHitRate = mean
			note("prefix_cache_hit_rate is the mean of the server's own hit-rate gauge over the scrapes, not a ratio of token counters")
		}
	}

	if p99, ok := latenessP99(r.first, r.last, note); ok {
		tm.StepLatenessP99 = ptr(p99 * float64(time.Second/time.Millisecond))
	}
	tm.Notes = notes
	return tm
}

func ptr(v float64) *float64 { return &v }

// latenessP99 is the 0.99 quantile, in seconds, of the step-lateness
// histogram's increase from the first scrape that has it (first) to the last.
func latenessP99(first, last []Bucket, note func(string, ...any)) (float64, bool) {
	if last == nil {
		return 0, false
	}
	diff, ok := subtractBuckets(last, first)
	if !ok {
		note("%s went down during the tier: counted as a server restart (increase since the restart)", stepLatenessMetric)
		diff = last
	}
	return histogramQuantile(0.99, diff)
}

// subtractBuckets is later-earlier bucket by bucket; false when the bounds
// differ or a count went down (a restart).
func subtractBuckets(later, earlier []Bucket) ([]Bucket, bool) {
	if len(later) != len(earlier) {
		return nil, false
	}
	out := make([]Bucket, len(later))
	for i := range later {
		if later[i].UpperBound != earlier[i].UpperBound || later[i].Count < earlier[i].Count {
			return nil, false
		}
		out[i] = Bucket{UpperBound: later[i].UpperBound, Count: later[i].Count - earlier[i].Count}
	}
	return out, true
}

// histogramQuantile estimates the q-quantile (0 < q < 1) of cumulative
// buckets sorted by bound, as Prometheus' histogram_quantile does: find the
// bucket holding rank q·total and interpolate linearly between its lower
// bound (0 for the first bucket) and its upper bound; a rank in the +Inf
// bucket gives the largest finite bound. False when there is no observation
// or no finite bound.
func histogramQuantile(q float64, b []Bucket) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	total := b[len(b)-1].Count
	if !(total > 0) {
		return 0, false
	}
	rank := q * total
	for i, bk := range b {
		if bk.Count < rank {
			continue
		}
		if math.IsInf(bk.UpperBound, 1) {
			if i == 0 {
				return 0, false
			}
			return b[i-1].UpperBound, true
		}
		lower, below := 0.0, 0.0
		if i > 0 {
			lower, below = b[i-1].UpperBound, b[i-1].Count
		} else if bk.UpperBound <= 0 {
			return bk.UpperBound, true
		}
		if bk.Count == below {
			return bk.UpperBound, true
		}
		return lower + (bk.UpperBound-lower)*(rank-below)/(bk.Count-below), true
	}
	return 0, false
}
