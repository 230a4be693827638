package servermetrics

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Canonical names: the keys of Snapshot.Values and of Scrape's result.
const (
	NameRunning          = "running"           // requests running (gauge)
	NameWaiting          = "waiting"           // requests waiting (gauge)
	NameKVUsage          = "kv_usage"          // KV-cache usage, 0..1 (gauge)
	NamePrefixQueries    = "prefix_queries"    // prefix-cache queries, tokens (counter)
	NamePrefixHits       = "prefix_hits"       // prefix-cache hits, tokens (counter)
	NamePrefixHitRate    = "prefix_hit_rate"   // the server's own hit-rate gauge, 0..1
	NamePreemptions      = "preemptions"       // preemptions (counter)
	NameGenerationTokens = "generation_tokens" // generated tokens (counter)
	NamePromptTokens     = "prompt_tokens"     // prompt tokens (counter)
	NameRequestsFinished = "requests_finished" // requests finished, any reason (counter)
	NameRequestsReceived = "requests_received" // requests received (counter)
)

// Sources, as detected from the metric names.
const (
	SourceVLLM     = "vllm"
	SourceSGLang   = "sglang"
	SourceLlamaCpp = "llamacpp"
	SourceSim      = "sim"
	SourceUnknown  = "unknown"
)

// stepLatenessMetric is the sim's step-lateness histogram, in seconds.
const stepLatenessMetric = "sim_step_lateness_seconds"

// modelLabel is the label vLLM and SGLang put the served model name in.
const modelLabel = "model_name"

type aggregation int

const (
	aggSum  aggregation = iota // counts: summed over label sets
	aggMean                    // fractions: averaged over label sets
)

// canonical maps one canonical name to the server metrics it is read from,
// in order of preference. An entry "a+b" is the sum of the families a and b,
// used only when the server exports both (llama.cpp counts the prompt tokens
// it processed and those it reused from its cache apart; vLLM's and SGLang's
// prompt-token counters hold both).
type canonical struct {
	name    string
	agg     aggregation
	metrics []string
}

// canonicals is the mapping table of the package documentation.
var canonicals = []canonical{
	{NameRunning, aggSum, []string{"vllm:num_requests_running", "sglang:num_running_reqs", "llamacpp:requests_processing"}},
	{NameWaiting, aggSum, []string{"vllm:num_requests_waiting", "sglang:num_queue_reqs", "llamacpp:requests_deferred"}},
	{NameKVUsage, aggMean, []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage", "llamacpp:kv_cache_usage_ratio"}},
	{NamePrefixQueries, aggSum, []string{"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total", "sglang:prompt_tokens_total", llamaCppPromptTokens}},
	{NamePrefixHits, aggSum, []string{"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total", "sglang:cached_tokens_total", "llamacpp:prompt_tokens_cached_total"}},
	{NamePrefixHitRate, aggMean, []string{"vllm:gpu_prefix_cache_hit_rate", "sglang:cache_hit_rate"}},
	{NamePreemptions, aggSum, []string{"vllm:num_preemptions_total", "sglang:num_retracted_requests_total"}},
	{NameGenerationTokens, aggSum, []string{"vllm:generation_tokens_total", "sglang:generation_tokens_total", "llamacpp:tokens_predicted_total"}},
	{NamePromptTokens, aggSum, []string{"vllm:prompt_tokens_total", "sglang:prompt_tokens_total", llamaCppPromptTokens}},
	{NameRequestsFinished, aggSum, []string{"vllm:request_success_total", "sglang:num_requests_total"}},
	{NameRequestsReceived, aggSum, []string{"sim_requests_received_total"}},
}

// llamaCppPromptTokens is every prompt token llama.cpp's server was given:
// those it processed (its prompt_tokens_total excludes the cached ones) and
// those it reused from a slot's cache.
const llamaCppPromptTokens = "llamacpp:prompt_tokens_total+llamacpp:prompt_tokens_cached_total"

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64 // +Inf for the last bucket
	Count      float64 // observations ≤ UpperBound
}

// Snapshot is one scrape, reduced to canonical names.
type Snapshot struct {
	// At is when the scrape was sent, as an offset from the tier's T0.
	At time.Duration `json:"at_ns"`
	// Values maps canonical names to values aggregated over the label sets
	// that match the model (see the package documentation).
	Values map[string]float64 `json:"values"`
	// Source is "vllm", "sglang", "llamacpp", "sim" or "unknown".
	Source string `json:"source"`
	// StepLateness is the sim's cumulative step-lateness histogram
	// (seconds), nil when not exported. Not in JSON (its last bound is +Inf).
	StepLateness []Bucket `json:"-"`
	// Warnings says what the reduction could not do as asked.
	Warnings []string `json:"warnings,omitempty"`
}

// Parse reads one exposition in the Prometheus text format and reduces it to
// canonical names, keeping only the series of model when model is not
// empty (see the package documentation). An input with no metric at all is
// an error: it is not a metrics page.
func Parse(r io.Reader, model string) (Snapshot, error) {
	fams, err := parseText(r)
	if err != nil {
		return Snapshot{}, err
	}
	if len(fams) == 0 {
		return Snapshot{}, fmt.Errorf("no metrics in the exposition")
	}
	return reduce(fams, model), nil
}

// parseText runs expfmt's text parser. UTF-8 name validation accepts every
// legacy name (colons included) and the quoted names of newer exporters.
func parseText(r io.Reader) (fams map[string]*dto.MetricFamily, err error) {
	// The parser is third-party code fed by a remote server: a panic in it
	// must become an error, not take the load test down.
	defer func() {
		if p := recover(); p != nil {
			fams, err = nil, fmt.Errorf("text format parser panicked: %v", p)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err = p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse text format: %w", err)
	}
	return fams, nil
}

func reduce(fams map[string]*dto.MetricFamily, model string) Snapshot {
	snap := Snapshot{Values: map[string]float64{}, Source: detectSource(fams)}
	match := func(*dto.Metric) bool { return true }
	if model != "" {
		if hasModel(fams, model) {
			match = func(m *dto.Metric) bool {
				v, ok := labelValue(m, modelLabel)
				return !ok || v == model
			}
		} else if hasLabel(fams, modelLabel) {
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("no series has %s=%q: every series counted", modelLabel, model))
		}
	}
	for _, c := range canonicals {
		for _, name := range c.metrics {
			if v, found, ok := read(fams, name, c.agg, match); found {
				if ok {
					snap.Values[c.name] = v
				}
				break
			}
		}
	}
	if mf := lookup(fams, stepLatenessMetric); mf != nil {
		snap.StepLateness = mergeHistograms(mf, match)
	}
	return snap
}

// read is the value of one entry of a canonical's list: a family, or the sum
// of the families joined by "+" (found only when every one is exported; ok
// when every one has a matching usable sample).
func read(fams map[string]*dto.MetricFamily, entry string, agg aggregation, match func(*dto.Metric) bool) (v float64, found, ok bool) {
	names := strings.Split(entry, "+")
	mfs := make([]*dto.MetricFamily, len(names))
	for i, name := range names {
		if mfs[i] = lookup(fams, name); mfs[i] == nil {
			return 0, false, false
		}
	}
	for _, mf := range mfs {
		x, ok := aggregate(mf, agg, match)
		if !ok {
			return 0, true, false
		}
		v += x
	}
	return v, true, true
}

// lookup finds a family by name; a name ending in _total also finds the
// family without the suffix.
func lookup(fams map[string]*dto.MetricFamily, name string) *dto.MetricFamily {
	if mf, ok := fams[name]; ok {
		return mf
	}
	if base, ok := strings.CutSuffix(name, "_total"); ok {
		if mf, ok := fams[base]; ok && mf.GetType() == dto.MetricType_COUNTER {
			return mf
		}
	}
	return nil
}

func detectSource(fams map[string]*dto.MetricFamily) string {
	if lookup(fams, "sim_requests_received_total") != nil || lookup(fams, "sim_steps_total") != nil {
		return SourceSim
	}
	vllm, sglang, llamacpp := false, false, false
	for name := range fams {
		vllm = vllm || strings.HasPrefix(name, "vllm:")
		sglang = sglang || strings.HasPrefix(name, "sglang:")
		llamacpp = llamacpp || strings.HasPrefix(name, "llamacpp:")
	}
	switch {
	case vllm:
		return SourceVLLM
	case sglang:
		return SourceSGLang
	case llamacpp:
		return SourceLlamaCpp
	}
	return SourceUnknown
}

func labelValue(m *dto.Metric, name string) (string, bool) {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue(), true
		}
	}
	return "", false
}

func hasModel(fams map[string]*dto.MetricFamily, model string) bool {
	for _, mf := range fams {
		for _, m := range mf.GetMetric() {
			if v, ok := labelValue(m, modelLabel); ok && v == model {
				return true
			}
		}
	}
	return false
}

func hasLabel(fams map[string]*dto.MetricFamily, label string) bool {
	for _, mf := range fams {
		for _, m := range mf.GetMetric() {
			if _, ok := labelValue(m, label); ok {
				return true
			}
		}
	}
	return false
}

// sampleValue is the value of a counter, gauge or untyped sample; false for
// other types and for NaN or infinite values.
func sampleValue(m *dto.Metric) (float64, bool) {
	var v float64
	switch {
	case m.GetCounter() != nil:
		v = m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		v = m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		v = m.GetUntyped().GetValue()
	default:
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

func aggregate(mf *dto.MetricFamily, agg aggregation, match func(*dto.Metric) bool) (float64, bool) {
	var sum float64
	n := 0
	for _, m := range mf.GetMetric() {
		if !match(m) {
			continue
		}
		if v, ok := sampleValue(m); ok {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	if agg == aggMean {
		return sum / float64(n), true
	}
	return sum, true
}

// mergeHistograms sums the cumulative buckets of the matching series by
// upper bound, sorted by bound; nil when no series has a usable bucket.
func mergeHistograms(mf *dto.MetricFamily, match func(*dto.Metric) bool) []Bucket {
	counts := map[float64]float64{}
	for _, m := range mf.GetMetric() {
		h := m.GetHistogram()
		if h == nil || !match(m) {
			continue
		}
		for _, b := range h.GetBucket() {
			le := b.GetUpperBound()
			c := float64(b.GetCumulativeCount())
			if b.CumulativeCountFloat != nil {
				c = b.GetCumulativeCountFloat()
			}
			if math.IsNaN(le) || math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
				continue
			}
			counts[le] += c
		}
	}
	if len(counts) == 0 {
		return nil
	}
	out := make([]Bucket, 0, len(counts))
	for le, c := range counts {
		out = append(out, Bucket{UpperBound: le, Count: c})
	}
	slices.SortFunc(out, func(a, b Bucket) int {
		switch {
		case a.UpperBound < b.UpperBound:
			return -1
		case a.UpperBound > b.UpperBound:
			return 1
		}
		return 0
	})
	return out
}
