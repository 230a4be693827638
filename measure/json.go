package measure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/loadcurve/loadcurve/records"
)

// The metrics with statistics, in the order of their JSON keys (vLLM's order first).
var statNames = [...]string{"ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue", "schedule_lag"}

func (s *Summary) stats() [len(statNames)]*Stats {
	return [...]*Stats{&s.TTFT, &s.TPOT, &s.ITL, &s.E2EL, &s.ClientQueueTime, &s.E2ELIncludingClientQueue, &s.ScheduleLag}
}

// MarshalJSON writes summary.json: one flat object, keys in a fixed order. Keys that vLLM's
// --save-result also writes have vLLM's name and formula: duration, completed, failed,
// total_input_tokens, total_output_tokens, request_throughput, request_goodput (null without
// objectives), output_throughput, total_token_throughput, request_rate, burstiness,
// max_concurrency (null without a cap), and mean_/median_/std_/pP_ X _ms for ttft, tpot, itl,
// e2el, client_queue_time and e2el_including_client_queue. The rest is ours (package
// documentation). A NaN is written null, +Inf the string "inf".
func (s Summary) MarshalJSON() ([]byte, error) {
	w := objectWriter{b: make([]byte, 0, 4096)}
	w.str("metric_definition_version", s.MetricsVersion)
	w.int("tier", s.Tier)
	w.str("arrival", s.Arrival)
	w.bool("complete", s.Complete)
	w.str("window", s.Window)

	w.num("request_rate", s.NominalRate)
	w.num("burstiness", s.Burstiness)
	if s.MaxConcurrency > 0 {
		w.int("max_concurrency", s.MaxConcurrency)
	} else {
		w.raw("max_concurrency", "null")
	}

	w.num("duration", s.Duration)
	w.int("completed", s.Completed)
	w.int("failed", s.Failed)
	w.int("total_input_tokens", s.TotalInputTokens)
	w.int("total_output_tokens", s.TotalOutputTokens)
	w.num("request_throughput", s.RequestThroughput)
	w.num("request_goodput", s.RequestGoodput)
	w.num("output_throughput", s.OutputThroughput)
	w.num("total_token_throughput", s.TotalTokenThroughput)

	w.floats("metric_percentiles", s.Percentiles)
	for i, st := range s.stats() {
		name := statNames[i]
		if !s.Reports(name) {
			continue
		}
		w.int("count_"+name, st.Count)
		w.num("mean_"+name+"_ms", st.Mean)
		w.num("median_"+name+"_ms", st.Median)
		w.num("std_"+name+"_ms", st.Std)
		for _, p := range s.Percentiles {
			v, ok := st.Percentiles[PercentileKey(p)]
			if !ok {
				v = math.NaN()
			}
			w.num(PercentileKey(p)+"_"+name+"_ms", v)
		}
	}

	w.int("planned", s.Planned)
	w.int("issued", s.Issued)
	w.key("outcomes")
	w.b = append(w.b, '{')
	for i, o := range records.Outcomes() {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = strconv.AppendQuote(w.b, o.String())
		w.b = append(w.b, ':')
		w.b = strconv.AppendInt(w.b, int64(s.Outcomes[o.String()]), 10)
	}
	w.b = append(w.b, '}')
	w.num("timeout_ratio", s.TimeoutRatio)
	w.num("failure_ratio", s.FailureRatio)

	w.str("objectives", s.Objectives)
	w.int("good_requests", s.GoodRequests)
	w.int("latency_failures", s.LatencyFailures)
	w.int("quality_failures", s.QualityFailures)
	w.int("compliant_requests", s.CompliantRequests)
	w.int("raw_output_tokens", s.RawOutputTokens)
	w.int("compliant_output_tokens", s.CompliantOutputTokens)
	w.int("output_tokens_from_chunks", s.OutputTokensFromChunks)
	w.num("raw_output_throughput", s.RawOutputThroughput)
	w.num("compliant_output_throughput", s.CompliantOutputThroughput)
	w.num("compliant_token_share", s.CompliantTokenShare)
	w.num("compliant_request_share", s.CompliantRequestShare)

	w.num("nominal_request_rate", s.NominalRate)
	w.num("realised_request_rate", s.RealisedRate)
	w.num("delivered_request_rate", s.DeliveredRate)

	w.bool("client_bound", s.ClientBound)
	w.str("client_bound_reason", s.ClientBoundReason)
	w.num("client_bound_threshold_ms", s.ClientBoundThreshold)
	if s.PercentileError > 0 {
		w.num("percentile_relative_error", s.PercentileError)
	}
	w.b = append(w.b, '}')
	return w.b, nil
}

// objectWriter appends the members of one JSON object in call order.
type objectWriter struct {
	b []byte
}

func (w *objectWriter) key(k string) {
	if len(w.b) == 0 {
		w.b = append(w.b, '{')
	} else {
		w.b = append(w.b, ',')
	}
	w.b = strconv.AppendQuote(w.b, k)
	w.b = append(w.b, ':')
}

func (w *objectWriter) raw(k, v string) { w.key(k); w.b = append(w.b, v...) }

func (w *objectWriter) str(k, v string) {
	w.key(k)
	enc, _ := json.Marshal(v) // a string always encodes
	w.b = append(w.b, enc...)
}

func (w *objectWriter) int(k string, v int) { w.key(k); w.b = strconv.AppendInt(w.b, int64(v), 10) }

func (w *objectWriter) bool(k string, v bool) { w.key(k); w.b = strconv.AppendBool(w.b, v) }

func (w *objectWriter) num(k string, v float64) { w.key(k); w.b = appendNumber(w.b, v) }

func (w *objectWriter) floats(k string, vs []float64) {
	w.key(k)
	w.b = append(w.b, '[')
	for i, v := range vs {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendNumber(w.b, v)
	}
	w.b = append(w.b, ']')
}

// appendNumber writes f as encoding/json does (shortest digits that round-trip), NaN as null
// and ±Inf as "inf" / "-inf".
func appendNumber(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "null"...)
	case math.IsInf(f, 1):
		return append(b, `"inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-inf"`...)
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, f, format, -1, 64)
}

// number is a JSON value written by appendNumber.
type number float64

func (n *number) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "null":
		*n = number(math.NaN())
		return nil
	case `"inf"`:
		*n = number(math.Inf(1))
		return nil
	case `"-inf"`:
		*n = number(math.Inf(-1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("want a number, null or \"inf\", got %s", b)
	}
	*n = number(f)
	return nil
}

// UnmarshalJSON reads what MarshalJSON writes, exactly (NaN for null). A missing number reads
// as NaN, a missing count as 0; keys it does not know are ignored.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	r := objectReader{m: m}
	out := Summary{
		MetricsVersion: r.str("metric_definition_version"),
		Tier:           r.int("tier"),
		Arrival:        r.str("arrival"),
		Complete:       r.bool("complete"),
		Window:         r.str("window"),

		NominalRate:    r.num("nominal_request_rate"),
		Burstiness:     r.num("burstiness"),
		MaxConcurrency: r.int("max_concurrency"),

		Duration:             r.num("duration"),
		Completed:            r.int("completed"),
		Failed:               r.int("failed"),
		TotalInputTokens:     r.int("total_input_tokens"),
		TotalOutputTokens:    r.int("total_output_tokens"),
		RequestThroughput:    r.num("request_throughput"),
		RequestGoodput:       r.num("request_goodput"),
		OutputThroughput:     r.num("output_throughput"),
		TotalTokenThroughput: r.num("total_token_throughput"),

		Planned:      r.int("planned"),
		Issued:       r.int("issued"),
		TimeoutRatio: r.num("timeout_ratio"),
		FailureRatio: r.num("failure_ratio"),

		Objectives:                r.str("objectives"),
		GoodRequests:              r.int("good_requests"),
		LatencyFailures:           r.int("latency_failures"),
		QualityFailures:           r.int("quality_failures"),
		CompliantRequests:         r.int("compliant_requests"),
		RawOutputTokens:           r.int("raw_output_tokens"),
		CompliantOutputTokens:     r.int("compliant_output_tokens"),
		OutputTokensFromChunks:    r.int("output_tokens_from_chunks"),
		RawOutputThroughput:       r.num("raw_output_throughput"),
		CompliantOutputThroughput: r.num("compliant_output_throughput"),
		CompliantTokenShare:       r.num("compliant_token_share"),
		CompliantRequestShare:     r.num("compliant_request_share"),

		RealisedRate:  r.num("realised_request_rate"),
		DeliveredRate: r.num("delivered_request_rate"),

		ClientBound:          r.bool("client_bound"),
		ClientBoundReason:    r.str("client_bound_reason"),
		ClientBoundThreshold: r.num("client_bound_threshold_ms"),
	}
	if _, ok := m["percentile_relative_error"]; ok {
		out.PercentileError = r.num("percentile_relative_error")
	}
	if raw, ok := m["metric_percentiles"]; ok {
		var ps []number
		if err := json.Unmarshal(raw, &ps); err != nil {
			r.fail("metric_percentiles", err)
		}
		out.Percentiles = make([]float64, len(ps))
		for i, p := range ps {
			out.Percentiles[i] = float64(p)
		}
	}
	for i, st := range out.stats() {
		name := statNames[i]
		st.Count = r.int("count_" + name)
		st.Mean = r.num("mean_" + name + "_ms")
		st.Median = r.num("median_" + name + "_ms")
		st.Std = r.num("std_" + name + "_ms")
		st.Percentiles = make(map[string]float64, len(out.Percentiles))
		for _, p := range out.Percentiles {
			k := PercentileKey(p)
			st.Percentiles[k] = r.num(k + "_" + name + "_ms")
		}
	}
	if raw, ok := m["outcomes"]; ok {
		if err := json.Unmarshal(raw, &out.Outcomes); err != nil {
			r.fail("outcomes", err)
		}
	}
	if r.err != nil {
		return r.err
	}
	*s = out
	return nil
}

// objectReader reads typed members of a decoded object, keeping the first error.
type objectReader struct {
	m   map[string]json.RawMessage
	err error
}

func (r *objectReader) fail(k string, err error) {
	if r.err == nil {
		r.err = fmt.Errorf("summary: key %q: %w", k, err)
	}
}

func (r *objectReader) decode(k string, v any) bool {
	raw, ok := r.m[k]
	if !ok || string(raw) == "null" {
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		r.fail(k, err)
		return false
	}
	return true
}

func (r *objectReader) num(k string) float64 {
	raw, ok := r.m[k]
	if !ok {
		return math.NaN()
	}
	var n number
	if err := n.UnmarshalJSON(raw); err != nil {
		r.fail(k, err)
		return math.NaN()
	}
	return float64(n)
}

func (r *objectReader) int(k string) int {
	var v int
	r.decode(k, &v)
	return v
}

func (r *objectReader) str(k string) string {
	var v string
	r.decode(k, &v)
	return v
}

func (r *objectReader) bool(k string) bool {
	var v bool
	r.decode(k, &v)
	return v
}
