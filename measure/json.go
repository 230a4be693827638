package measure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/loadcurve/loadcurve/measure/records"
)

// summaryHead holds the keys of summary.json that come before the statistics, in vLLM's order.
// Keys that vLLM's --save-result also writes have vLLM's name and formula: duration, completed,
// failed, total_input_tokens, total_output_tokens, request_throughput, request_goodput (null
// without objectives), output_throughput, total_token_throughput, request_rate, burstiness,
// max_concurrency (null without a cap), and mean_/median_/std_/pP_ X _ms for ttft, tpot, itl,
// e2el, client_queue_time and e2el_including_client_queue. The rest is ours.
type summaryHead struct {
	MetricsVersion       string       `json:"metric_definition_version"`
	Tier                 int          `json:"tier"`
	Role                 records.Role `json:"role,omitempty"`
	Arrival              string       `json:"arrival"`
	Complete             bool         `json:"complete"`
	Window               string       `json:"window"`
	RequestRate          Number       `json:"request_rate"`
	Burstiness           Number       `json:"burstiness"`
	MaxConcurrency       *int         `json:"max_concurrency"`
	Users                int          `json:"users,omitempty"` // a closed-loop tier's concurrency level
	Duration             Number       `json:"duration"`
	Completed            int          `json:"completed"`
	Failed               int          `json:"failed"`
	TotalInputTokens     int          `json:"total_input_tokens"`
	TotalRequestedInput  int          `json:"total_requested_input_tokens"`
	TotalOutputTokens    int          `json:"total_output_tokens"`
	RequestThroughput    Number       `json:"request_throughput"`
	RequestGoodput       Number       `json:"request_goodput"`
	OutputThroughput     Number       `json:"output_throughput"`
	TotalTokenThroughput Number       `json:"total_token_throughput"`
	Percentiles          []Number     `json:"metric_percentiles"`
	PercentileMetrics    []string     `json:"percentile_metrics,omitempty"`
}

// summaryTail holds the keys after the statistics.
type summaryTail struct {
	Planned                   int           `json:"planned"`
	Issued                    int           `json:"issued"`
	NotIssued                 int           `json:"not_issued,omitempty"`
	Recorded                  int           `json:"recorded"`
	Interrupted               bool          `json:"interrupted,omitempty"`
	EndReason                 string        `json:"end_reason,omitempty"`
	Outcomes                  outcomeCounts `json:"outcomes"`
	TimeoutRatio              Number        `json:"timeout_ratio"`
	FailureRatio              Number        `json:"failure_ratio"`
	Objectives                string        `json:"objectives"`
	GoodRequests              int           `json:"good_requests"`
	LatencyFailures           int           `json:"latency_failures"`
	QualityFailures           int           `json:"quality_failures"`
	CompliantRequests         int           `json:"compliant_requests"`
	Unit                      records.Unit  `json:"unit,omitempty"`
	RawOutputTokens           int           `json:"raw_output_tokens"`
	CompliantOutputTokens     int           `json:"compliant_output_tokens"`
	OutputTokensFromChunks    int           `json:"output_tokens_from_chunks"`
	OutputTokensBadUsage      int           `json:"output_tokens_bad_usage,omitempty"`
	InputTokensBadUsage       int           `json:"input_tokens_bad_usage,omitempty"`
	Stalls                    int           `json:"stalls,omitempty"`
	CutShort                  int           `json:"cut_short,omitempty"`
	RawOutputThroughput       Number        `json:"raw_output_throughput"`
	CompliantOutputThroughput Number        `json:"compliant_output_throughput"`
	CompliantTokenShare       Number        `json:"compliant_token_share"`
	CompliantRequestShare     Number        `json:"compliant_request_share"`
	NominalRate               Number        `json:"nominal_request_rate"`
	RealisedRate              Number        `json:"realised_request_rate"`
	DeliveredRate             Number        `json:"delivered_request_rate"`
	ClientBound               bool          `json:"client_bound"`
	ClientBoundReason         string        `json:"client_bound_reason"`
	ClientBoundThreshold      Number        `json:"client_bound_threshold_ms"`
	ScheduleLagNote           string        `json:"schedule_lag_note,omitempty"`
	PercentileError           Number        `json:"percentile_relative_error,omitempty"`
	ReasoningResponses        int           `json:"reasoning_responses,omitempty"`
	ReasoningTokens           int           `json:"reasoning_tokens,omitempty"`
	AnswerTokens              *int          `json:"answer_tokens,omitempty"`
	ReasoningTokensFromChunks int           `json:"reasoning_tokens_from_chunks,omitempty"`
	CachedReported            int           `json:"cached_tokens_reported,omitempty"`
	CachedTokens              *int          `json:"cached_prompt_tokens,omitempty"`
	CachedShare               *Number       `json:"cached_prompt_share,omitempty"`
	Sessions                  *Sessions     `json:"sessions,omitempty"`
	CPU                       *cpuJSON      `json:"cpu,omitempty"`
	Steady                    *steadyJSON   `json:"steady_state,omitempty"`
}

// cpuJSON is the tier's CPU (records.TierCPU) on the wire, with the client's cores.
type cpuJSON struct {
	records.TierCPU
	ClientCores Number `json:"client_cores"`
}

// steadyJSON is Steady on the wire.
type steadyJSON struct {
	Start                     Number      `json:"window_start_s"`
	End                       Number      `json:"window_end_s"`
	Warmup                    string      `json:"warmup"`
	Requests                  int         `json:"requests"`
	Ok                        int         `json:"ok_requests"`
	Compliant                 int         `json:"compliant_requests"`
	Arrivals                  int         `json:"arrivals,omitempty"` // written when not every request is an arrival (sessions)
	RealisedRate              Number      `json:"realised_request_rate"`
	RequestThroughput         Number      `json:"request_throughput"`
	RawOutputThroughput       Number      `json:"raw_output_throughput"`
	CompliantOutputThroughput Number      `json:"compliant_output_throughput"`
	CompliantShare            Number      `json:"compliant_request_share"`
	VarianceFactor            Number      `json:"variance_factor"`
	EffectiveRequests         Number      `json:"effective_requests"`
	Stationary                bool        `json:"stationary"`
	TooShort                  bool        `json:"too_short,omitempty"`
	Note                      string      `json:"note,omitempty"`
	Trend                     Trend       `json:"trend"`
	Controlled                *Controlled `json:"controlled,omitempty"`
	ControlNote               string      `json:"control_note,omitempty"`
	// Client is what the client's own delays may have done (ClientDelays).
	Client *ClientDelays `json:"client_delays,omitempty"`
}

// MarshalJSON writes summary.json: one flat object, keys in a fixed order (summaryHead, the
// statistics of every reported metric, summaryTail). A NaN is written null, +Inf the string "inf".
func (s Summary) MarshalJSON() ([]byte, error) {
	head := summaryHead{
		MetricsVersion: s.MetricsVersion, Tier: s.Tier, Role: s.Role, Arrival: s.Arrival, Complete: s.Complete, Window: s.Window,
		RequestRate: Number(s.NominalRate), Burstiness: Number(s.Burstiness),
		Duration: Number(s.Duration), Completed: s.Completed, Failed: s.Failed,
		TotalInputTokens: s.TotalInputTokens, TotalRequestedInput: s.TotalRequestedInputTokens, TotalOutputTokens: s.TotalOutputTokens,
		RequestThroughput: Number(s.RequestThroughput), RequestGoodput: Number(s.RequestGoodput),
		OutputThroughput: Number(s.OutputThroughput), TotalTokenThroughput: Number(s.TotalTokenThroughput),
		Percentiles: numbers(s.Percentiles), PercentileMetrics: s.Metrics,
	}
	if s.MaxConcurrency > 0 {
		mc := s.MaxConcurrency
		head.MaxConcurrency = &mc
	}
	head.Users = s.Users
	tail := summaryTail{
		Planned: s.Planned, Issued: s.Issued, NotIssued: s.NotIssued, Recorded: s.Recorded, Interrupted: s.Interrupted, EndReason: s.EndReason,
		Outcomes: outcomeCounts(s.Outcomes), TimeoutRatio: Number(s.TimeoutRatio), FailureRatio: Number(s.FailureRatio),
		Objectives: s.Objectives, GoodRequests: s.GoodRequests, LatencyFailures: s.LatencyFailures,
		QualityFailures: s.QualityFailures, CompliantRequests: s.CompliantRequests, Unit: s.Unit, RawOutputTokens: s.RawOutputTokens,
		CompliantOutputTokens: s.CompliantOutputTokens, OutputTokensFromChunks: s.OutputTokensFromChunks, OutputTokensBadUsage: s.OutputTokensBadUsage,
		InputTokensBadUsage: s.InputTokensBadUsage, Stalls: s.Stalls, CutShort: s.CutShort,
		RawOutputThroughput: Number(s.RawOutputThroughput), CompliantOutputThroughput: Number(s.CompliantOutputThroughput),
		CompliantTokenShare: Number(s.CompliantTokenShare), CompliantRequestShare: Number(s.CompliantRequestShare),
		NominalRate: Number(s.NominalRate), RealisedRate: Number(s.RealisedRate), DeliveredRate: Number(s.DeliveredRate),
		ClientBound: s.ClientBound, ClientBoundReason: s.ClientBoundReason, ClientBoundThreshold: Number(s.ClientBoundThreshold), ScheduleLagNote: s.ScheduleLagNote,
		PercentileError:    Number(s.PercentileError),
		ReasoningResponses: s.ReasoningResponses, ReasoningTokens: s.ReasoningTokens, ReasoningTokensFromChunks: s.ReasoningTokensFromChunks,
		CachedReported: s.CachedReported, Sessions: s.Sessions,
	}
	if s.CPU != nil {
		tail.CPU = &cpuJSON{TierCPU: *s.CPU, ClientCores: Number(s.CPU.Cores())}
	}
	if s.ReasoningResponses > 0 {
		answer := s.AnswerTokens
		tail.AnswerTokens = &answer
	}
	if s.CachedReported > 0 {
		cached, share := s.CachedPromptTokens, Number(s.CachedPromptShare)
		tail.CachedTokens, tail.CachedShare = &cached, &share
	}
	if st := s.Steady; st != nil {
		arrivals := st.Arrivals
		if arrivals == st.Requests {
			arrivals = 0
		}
		tail.Steady = &steadyJSON{Start: Number(st.Start), End: Number(st.End), Warmup: st.Warmup, Requests: st.Requests, Ok: st.Ok, Arrivals: arrivals,
			Compliant: st.Compliant, RealisedRate: Number(st.RealisedRate), RequestThroughput: Number(st.RequestThroughput),
			RawOutputThroughput: Number(st.RawOutputThroughput), CompliantOutputThroughput: Number(st.CompliantOutputThroughput),
			CompliantShare: Number(st.CompliantShare), VarianceFactor: Number(st.VarianceFactor),
			EffectiveRequests: Number(st.EffectiveRequests), Stationary: st.Stationary, TooShort: st.TooShort, Note: st.Note, Trend: st.Trend,
			Controlled: st.Controlled, ControlNote: st.ControlNote, Client: st.Client}
	}
	hb, err := json.Marshal(head)
	if err != nil {
		return nil, fmt.Errorf("encode summary of tier %d: %w", s.Tier, err)
	}
	tb, err := json.Marshal(tail)
	if err != nil {
		return nil, fmt.Errorf("encode summary of tier %d: %w", s.Tier, err)
	}
	b := make([]byte, 0, len(hb)+len(tb)+2048)
	b = append(b, hb[:len(hb)-1]...) // without its '}'
	for _, m := range Metrics {
		name, st := m.Key, m.Stats(&s)
		if !s.Reports(name) {
			continue
		}
		b = appendMember(b, "count_"+name, strconv.AppendInt(nil, int64(st.Count), 10))
		b = appendMember(b, "mean_"+name+"_ms", appendNumber(nil, st.Mean))
		b = appendMember(b, "median_"+name+"_ms", appendNumber(nil, st.Median))
		b = appendMember(b, "std_"+name+"_ms", appendNumber(nil, st.Std))
		for _, p := range s.Percentiles {
			v, ok := st.Percentiles[PercentileKey(p)]
			if !ok {
				v = math.NaN()
			}
			b = appendMember(b, PercentileKey(p)+"_"+name+"_ms", appendNumber(nil, v))
		}
	}
	b = append(b, ',')
	return append(b, tb[1:]...), nil // the tail's members and its '}'
}

func appendMember(b []byte, key string, value []byte) []byte {
	b = append(b, ',')
	b = strconv.AppendQuote(b, key)
	b = append(b, ':')
	return append(b, value...)
}

// UnmarshalJSON reads what MarshalJSON writes, exactly (NaN for null). A missing Number reads
// as NaN, a missing count as 0; keys it does not know are ignored.
func (s *Summary) UnmarshalJSON(b []byte) error {
	head := summaryHead{RequestRate: nan, Burstiness: nan, Duration: nan, RequestThroughput: nan, RequestGoodput: nan,
		OutputThroughput: nan, TotalTokenThroughput: nan}
	tail := summaryTail{TimeoutRatio: nan, FailureRatio: nan, RawOutputThroughput: nan, CompliantOutputThroughput: nan,
		CompliantTokenShare: nan, CompliantRequestShare: nan, NominalRate: nan, RealisedRate: nan, DeliveredRate: nan,
		ClientBoundThreshold: nan}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	if err := json.Unmarshal(b, &tail); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	out := summaryOf(&head, &tail)
	if st := tail.Steady; st != nil {
		out.Steady = st.steady()
	}
	if err := out.readStats(m); err != nil {
		return err
	}
	if out.Metrics == nil && out.ReasoningResponses == 0 {
		// Not written: without reasoning, the answer's metrics are the output's.
		out.TTFA, out.AnswerITL = out.TTFT.clone(), out.ITL.clone()
	}
	*s = out
	return nil
}

// summaryOf is the summary the head's and the tail's members give, its statistics and steady
// state aside.
func summaryOf(head *summaryHead, tail *summaryTail) Summary {
	out := Summary{
		MetricsVersion: head.MetricsVersion, Tier: head.Tier, Role: head.Role, Arrival: head.Arrival, Complete: head.Complete,
		Window: head.Window, Burstiness: float64(head.Burstiness),
		Duration: float64(head.Duration), Completed: head.Completed, Failed: head.Failed,
		TotalInputTokens: head.TotalInputTokens, TotalRequestedInputTokens: head.TotalRequestedInput, TotalOutputTokens: head.TotalOutputTokens,
		RequestThroughput: float64(head.RequestThroughput), RequestGoodput: float64(head.RequestGoodput),
		OutputThroughput: float64(head.OutputThroughput), TotalTokenThroughput: float64(head.TotalTokenThroughput),
		Percentiles: floats(head.Percentiles), Metrics: head.PercentileMetrics,

		Planned: tail.Planned, Issued: tail.Issued, NotIssued: tail.NotIssued, Recorded: tail.Recorded, Interrupted: tail.Interrupted, EndReason: tail.EndReason,
		Outcomes: map[string]int(tail.Outcomes), TimeoutRatio: float64(tail.TimeoutRatio), FailureRatio: float64(tail.FailureRatio),
		Objectives: tail.Objectives, GoodRequests: tail.GoodRequests, LatencyFailures: tail.LatencyFailures,
		QualityFailures: tail.QualityFailures, CompliantRequests: tail.CompliantRequests, Unit: tail.Unit, RawOutputTokens: tail.RawOutputTokens,
		CompliantOutputTokens: tail.CompliantOutputTokens, OutputTokensFromChunks: tail.OutputTokensFromChunks, OutputTokensBadUsage: tail.OutputTokensBadUsage,
		InputTokensBadUsage: tail.InputTokensBadUsage, Stalls: tail.Stalls, CutShort: tail.CutShort,
		RawOutputThroughput: float64(tail.RawOutputThroughput), CompliantOutputThroughput: float64(tail.CompliantOutputThroughput),
		CompliantTokenShare: float64(tail.CompliantTokenShare), CompliantRequestShare: float64(tail.CompliantRequestShare),
		NominalRate: float64(tail.NominalRate), RealisedRate: float64(tail.RealisedRate), DeliveredRate: float64(tail.DeliveredRate),
		ClientBound: tail.ClientBound, ClientBoundReason: tail.ClientBoundReason, ClientBoundThreshold: float64(tail.ClientBoundThreshold), ScheduleLagNote: tail.ScheduleLagNote,
		PercentileError:    float64(tail.PercentileError),
		ReasoningResponses: tail.ReasoningResponses, ReasoningTokens: tail.ReasoningTokens, ReasoningTokensFromChunks: tail.ReasoningTokensFromChunks,
		CachedReported: tail.CachedReported, CachedPromptShare: math.NaN(), Sessions: tail.Sessions,
	}
	if tail.CPU != nil {
		c := tail.CPU.TierCPU
		out.CPU = &c
	}
	out.AnswerTokens = out.TotalOutputTokens - out.ReasoningTokens
	if tail.AnswerTokens != nil {
		out.AnswerTokens = *tail.AnswerTokens
	}
	if tail.CachedTokens != nil {
		out.CachedPromptTokens = *tail.CachedTokens
	}
	if tail.CachedShare != nil {
		out.CachedPromptShare = float64(*tail.CachedShare)
	}
	if head.MaxConcurrency != nil {
		out.MaxConcurrency = *head.MaxConcurrency
	}
	out.Users = head.Users
	return out
}

// steady is the steady state st writes (its arrivals its requests in files older than them).
func (st *steadyJSON) steady() *Steady {
	out := &Steady{Start: float64(st.Start), End: float64(st.End), Warmup: st.Warmup, Requests: st.Requests, Ok: st.Ok,
		Compliant: st.Compliant, RealisedRate: float64(st.RealisedRate), RequestThroughput: float64(st.RequestThroughput),
		RawOutputThroughput: float64(st.RawOutputThroughput), CompliantOutputThroughput: float64(st.CompliantOutputThroughput),
		CompliantShare: float64(st.CompliantShare), VarianceFactor: float64(st.VarianceFactor),
		EffectiveRequests: float64(st.EffectiveRequests), Stationary: st.Stationary, TooShort: st.TooShort, Note: st.Note, Trend: st.Trend,
		Controlled: st.Controlled, ControlNote: st.ControlNote, Client: st.Client,
		Arrivals: st.Arrivals}
	if st.Arrivals == 0 {
		out.Arrivals = st.Requests
	}
	return out
}

// readStats reads the statistics of every metric the summary reports from m: count, mean,
// median, standard deviation and its percentiles.
func (s *Summary) readStats(m map[string]json.RawMessage) error {
	for _, metric := range Metrics {
		name, st := metric.Key, metric.Stats(s)
		if !s.Reports(name) {
			continue
		}
		var err error
		if raw, ok := m["count_"+name]; ok {
			if err = json.Unmarshal(raw, &st.Count); err != nil {
				return fmt.Errorf("summary: count_%s: %w", name, err)
			}
		}
		if st.Mean, err = numberAt(m, "mean_"+name+"_ms"); err == nil {
			if st.Median, err = numberAt(m, "median_"+name+"_ms"); err == nil {
				st.Std, err = numberAt(m, "std_"+name+"_ms")
			}
		}
		if err != nil {
			return err
		}
		st.Percentiles = make(map[string]float64, len(s.Percentiles))
		for _, p := range s.Percentiles {
			k := PercentileKey(p)
			if st.Percentiles[k], err = numberAt(m, k+"_"+name+"_ms"); err != nil {
				return err
			}
		}
	}
	return nil
}

// numberAt reads the Number under key k of m (NaN when absent).
func numberAt(m map[string]json.RawMessage, k string) (float64, error) {
	raw, ok := m[k]
	if !ok {
		return math.NaN(), nil
	}
	var n Number
	if err := n.UnmarshalJSON(raw); err != nil {
		return 0, fmt.Errorf("summary: key %q: %w", k, err)
	}
	return float64(n), nil
}

// outcomeCounts are the outcome counts, written in the order of records.Outcomes.
type outcomeCounts map[string]int

func (o outcomeCounts) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, oc := range records.Outcomes() {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, oc.String())
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(o[oc.String()]), 10)
	}
	return append(b, '}'), nil
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

// Number is a float64 on the wire as loadcurve's result files write it: the shortest digits
// that read back the same value, NaN (an undefined quantity) as null and ±Inf as "inf"/"-inf".
type Number float64

var nan = Number(math.NaN())

func (n Number) MarshalJSON() ([]byte, error) { return appendNumber(nil, float64(n)), nil }

func (n *Number) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "null":
		*n = nan
		return nil
	case `"inf"`:
		*n = Number(math.Inf(1))
		return nil
	case `"-inf"`:
		*n = Number(math.Inf(-1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("want a Number, null or \"inf\", got %s", b)
	}
	*n = Number(f)
	return nil
}

func numbers(vs []float64) []Number {
	out := make([]Number, len(vs))
	for i, v := range vs {
		out[i] = Number(v)
	}
	return out
}

func floats(ns []Number) []float64 {
	if ns == nil {
		return nil
	}
	out := make([]float64, len(ns))
	for i, v := range ns {
		out[i] = float64(v)
	}
	return out
}
