package measure

import (
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

// Metric is one per-request metric with statistics: its key, the names people read, what vLLM
// does with it, where a Summary keeps its statistics and, when it can be an objective, where
// Objectives keeps it and how a record is judged against it. Metrics is the one table of them:
// parsing (--goodput, --percentile-metrics), validation, help text, summary.json's keys, the
// report's columns and plots and vLLM's result file are derived from it.
type Metric struct {
	// Key names the metric in summary.json (mean_KEY_ms, …), in --percentile-metrics, and, for
	// an objective, in --goodput's KEY:MS.
	Key string
	// Label is its name in tables and plots ("client queue time"); Abbr a shorter one for
	// narrow columns; Title the heading of a run's text report, as vLLM prints it where vLLM has
	// the metric.
	Label, Abbr, Title string
	// VLLM: vLLM's benchmark client reports it (its --percentile-metrics choices, in this
	// table's order); VLLMDefault: among vLLM's default --percentile-metrics. UnderCapOnly: vLLM
	// measures it only under a --max-concurrency cap (the client's queue).
	VLLM, VLLMDefault, UnderCapOnly bool
	// Answer: a metric of a response's answer, reported only when some response of the tier
	// streamed reasoning (it differs from TTFT and ITL only then), or when asked for by name.
	Answer bool
	// OnCurve: drawn against the arrival rate on the load curve's latency plots.
	OnCurve bool
	// Stats is where a Summary keeps the metric's statistics.
	Stats func(*Summary) *Stats
	// Objective, nil when the metric cannot be an objective, is where Objectives keeps its
	// objective; ObjectiveOf reads it from a value (in the hot path: no pointer to escape).
	Objective   func(*Objectives) *time.Duration
	ObjectiveOf func(Objectives) time.Duration
	// Value is r's value of the metric as an objective judges it, in nanoseconds; ok is false
	// when it is undefined for r. An undefined value misses the objective unless UndefinedMeets
	// (nil: never) says otherwise for r.
	Value          func(r *records.Record) (ns float64, ok bool)
	UndefinedMeets func(r *records.Record) bool
}

// Objectives are per-request latency objectives, one field for each metric of Metrics that can
// be an objective (kept here, beside the table: adding an objective touches this file only). A
// zero field means no objective on that metric.
type Objectives struct {
	TTFT                     time.Duration
	TPOT                     time.Duration
	E2EL                     time.Duration
	ClientQueueTime          time.Duration
	E2ELIncludingClientQueue time.Duration
	// TTFA is the time to the first answer token (TTFT for a response without reasoning);
	// AnswerITL the mean gap between a response's answer chunks (undefined with fewer than two
	// answer chunks, which meets it, as for TPOT).
	TTFA      time.Duration
	AnswerITL time.Duration
}

// duration adapts a record's duration accessor to Metric.Value.
func duration(f func(*records.Record) (time.Duration, bool)) func(*records.Record) (float64, bool) {
	return func(r *records.Record) (float64, bool) {
		v, ok := f(r)
		return float64(v), ok
	}
}

// Metrics is the table of metrics with statistics, in the order of summary.json's keys (vLLM's
// first); the objectives' canonical order is this order too.
var Metrics = [...]Metric{
	{Key: "ttft", Label: "TTFT", Abbr: "TTFT", Title: "Time to First Token", VLLM: true, VLLMDefault: true, OnCurve: true,
		Stats:     func(s *Summary) *Stats { return &s.TTFT },
		Objective: func(o *Objectives) *time.Duration { return &o.TTFT }, ObjectiveOf: func(o Objectives) time.Duration { return o.TTFT }, Value: duration((*records.Record).TTFT)},
	{Key: "tpot", Label: "TPOT", Abbr: "TPOT", Title: "Time per Output Token (excl. 1st token)", VLLM: true, VLLMDefault: true, OnCurve: true,
		Stats:     func(s *Summary) *Stats { return &s.TPOT },
		Objective: func(o *Objectives) *time.Duration { return &o.TPOT }, ObjectiveOf: func(o Objectives) time.Duration { return o.TPOT }, Value: tpotNS,
		// vLLM's goodput: an undefined TPOT (one output token or none) meets the objective,
		// unless the server cut the reply short.
		UndefinedMeets: func(r *records.Record) bool { return !CutShort(r) }},
	{Key: "itl", Label: "ITL", Abbr: "ITL", Title: "Inter-token Latency", VLLM: true, VLLMDefault: true, OnCurve: true,
		Stats: func(s *Summary) *Stats { return &s.ITL }},
	{Key: "e2el", Label: "E2EL", Abbr: "E2EL", Title: "End-to-end Latency", VLLM: true, OnCurve: true,
		Stats:     func(s *Summary) *Stats { return &s.E2EL },
		Objective: func(o *Objectives) *time.Duration { return &o.E2EL }, ObjectiveOf: func(o Objectives) time.Duration { return o.E2EL }, Value: duration((*records.Record).E2EL)},
	{Key: "client_queue_time", Label: "client queue time", Abbr: "client queue", Title: "Client Queue Time (from planned arrival)",
		VLLM: true, UnderCapOnly: true,
		Stats:     func(s *Summary) *Stats { return &s.ClientQueueTime },
		Objective: func(o *Objectives) *time.Duration { return &o.ClientQueueTime }, ObjectiveOf: func(o Objectives) time.Duration { return o.ClientQueueTime }, Value: duration((*records.Record).ClientQueueTime)},
	{Key: "e2el_including_client_queue", Label: "E2EL incl. client queue", Abbr: "E2EL+queue", Title: "E2EL including Client Queue",
		VLLM: true, UnderCapOnly: true, OnCurve: true,
		Stats:     func(s *Summary) *Stats { return &s.E2ELIncludingClientQueue },
		Objective: func(o *Objectives) *time.Duration { return &o.E2ELIncludingClientQueue }, ObjectiveOf: func(o Objectives) time.Duration { return o.E2ELIncludingClientQueue },
		Value: duration((*records.Record).E2ELIncludingClientQueue)},
	{Key: "schedule_lag", Label: "schedule lag", Abbr: "lag", Title: "Schedule Lag (client's own lateness)",
		Stats: func(s *Summary) *Stats { return &s.ScheduleLag }},
	{Key: "ttfa", Label: "TTFA", Abbr: "TTFA", Title: "Time to First Answer Token (after reasoning)", Answer: true,
		Stats:     func(s *Summary) *Stats { return &s.TTFA },
		Objective: func(o *Objectives) *time.Duration { return &o.TTFA }, ObjectiveOf: func(o Objectives) time.Duration { return o.TTFA }, Value: duration((*records.Record).TTFA)},
	{Key: "answer_itl", Label: "answer ITL", Abbr: "answer ITL", Title: "Inter-token Latency of the Answer", Answer: true,
		Stats:     func(s *Summary) *Stats { return &s.AnswerITL },
		Objective: func(o *Objectives) *time.Duration { return &o.AnswerITL }, ObjectiveOf: func(o Objectives) time.Duration { return o.AnswerITL }, Value: meanAnswerGap,
		// Fewer than two answer chunks leave the mean gap undefined, which meets it, as for TPOT.
		UndefinedMeets: func(*records.Record) bool { return true }},
}

// meetsUndefined reports whether r, for which the metric is undefined, meets its objective.
func (m Metric) meetsUndefined(r *records.Record) bool {
	return m.UndefinedMeets != nil && m.UndefinedMeets(r)
}

// MetricOf is the metric named key; false when no metric has that key.
func MetricOf(key string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Key == key {
			return m, true
		}
	}
	return Metric{}, false
}

// objectiveMetrics are the metrics that can be objectives, in their canonical order.
var objectiveMetrics = func() []Metric {
	var out []Metric
	for _, m := range Metrics {
		if m.Objective != nil {
			out = append(out, m)
		}
	}
	return out
}()

// metricKeys are the keys of ms, in order.
func metricKeys(ms []Metric) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Key
	}
	return out
}

// tpotNS is (last − first)/(output_tokens − 1) in nanoseconds, without the truncation to whole
// nanoseconds of records.Record.TPOT.
func tpotNS(r *records.Record) (float64, bool) {
	if r.OutputTokens <= 1 || r.First == records.Unset || r.Last == records.Unset {
		return 0, false
	}
	return float64(r.Last-r.First) / float64(r.OutputTokens-1), true
}
