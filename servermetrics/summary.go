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
	// Source is "vllm", "sglang", "sim" or "unknown", detected from the
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
	tm := TierMetrics{Source: SourceUnknown, Scrapes: len(snaps)}
	var notes []string
	note := func(format string, a ...any) {
		if s := fmt.Sprintf(format, a...); !slices.Contains(notes, s) {
			notes = append(notes, s)
		}
	}
	sources := map[string]bool{}
	for _, s := range snaps {
		if s.Source != SourceUnknown && s.Source != "" {
			tm.Source = s.Source
			sources[s.Source] = true
		}
		for _, w := range s.Warnings {
			note("%s", w)
		}
	}
	if len(sources) > 1 {
		note("the detected server changed during the tier; source is the last one detected")
	}

	delta := func(name string) *float64 { return counterDelta(snaps, name, note) }
	tm.PrefixCacheQueries = delta(NamePrefixQueries)
	tm.PrefixCacheHits = delta(NamePrefixHits)
	tm.Preemptions = delta(NamePreemptions)
	tm.GenerationTokens = delta(NameGenerationTokens)
	tm.PromptTokens = delta(NamePromptTokens)
	tm.RequestsFinished = delta(NameRequestsFinished)
	tm.RequestsReceived = delta(NameRequestsReceived)
	if tm.RequestsReceived == nil && tm.RequestsFinished != nil {
		tm.RequestsReceived = ptr(*tm.RequestsFinished)
	}

	tm.MeanRunning, tm.MaxRunning = gaugeStats(snaps, NameRunning)
	tm.MeanWaiting, tm.MaxWaiting = gaugeStats(snaps, NameWaiting)
	tm.MeanKVUsage, tm.MaxKVUsage = gaugeStats(snaps, NameKVUsage)

	switch {
	case tm.PrefixCacheQueries != nil && tm.PrefixCacheHits != nil:
		if *tm.PrefixCacheQueries > 0 {
			tm.PrefixCacheHitRate = ptr(*tm.PrefixCacheHits / *tm.PrefixCacheQueries)
		}
	default:
		if mean, _ := gaugeStats(snaps, NamePrefixHitRate); mean != nil {
			tm.PrefixCacheHitRate = mean
			note("prefix_cache_hit_rate is the mean of the server's own hit-rate gauge over the scrapes, not a ratio of token counters")
		}
	}

	if p99, ok := latenessP99(snaps, note); ok {
		tm.StepLatenessP99 = ptr(p99 * float64(time.Second/time.Millisecond))
	}
	tm.Notes = notes
	return tm
}

func ptr(v float64) *float64 { return &v }

// counterDelta sums the increases of a counter over consecutive scrapes
// (see the package documentation); nil with fewer than two scrapes or when
// no scrape carries the counter.
func counterDelta(snaps []Snapshot, name string, note func(string, ...any)) *float64 {
	if len(snaps) < 2 {
		return nil
	}
	var total, prev float64
	var prevAt time.Duration
	seen := false
	for i, s := range snaps {
		v, ok := s.Values[name]
		if !ok {
			continue
		}
		if !seen {
			seen = true
			if i == 0 {
				prev, prevAt = v, s.At
				continue
			}
			prev = 0 // a series created during the tier starts at zero
		}
		if v < prev {
			note("%s went down from %g to %g between the scrapes at %v and %v: counted as a server restart", name, prev, v, prevAt, s.At)
			total += v
		} else {
			total += v - prev
		}
		prev, prevAt = v, s.At
	}
	if !seen {
		return nil
	}
	return &total
}

// gaugeStats is the mean and maximum of a gauge over the scrapes that carry
// it; nils when none does.
func gaugeStats(snaps []Snapshot, name string) (mean, maxv *float64) {
	var sum, m float64
	n := 0
	for _, s := range snaps {
		v, ok := s.Values[name]
		if !ok {
			continue
		}
		if n == 0 || v > m {
			m = v
		}
		sum += v
		n++
	}
	if n == 0 {
		return nil, nil
	}
	return ptr(sum / float64(n)), ptr(m)
}

// latenessP99 is the 0.99 quantile, in seconds, of the step-lateness
// histogram's increase from the first scrape that has it to the last.
func latenessP99(snaps []Snapshot, note func(string, ...any)) (float64, bool) {
	var first, last []Bucket
	for _, s := range snaps {
		if s.StepLateness == nil {
			continue
		}
		if first == nil {
			first = s.StepLateness
		}
		last = s.StepLateness
	}
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
