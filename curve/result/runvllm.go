package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/internal/redact"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// What vLLM's benchmark client (`vllm bench serve`, vllm/benchmarks/serve.py) writes into its
// --save-result file, and how loadcurve writes the same: summary.json holds these keys beside
// its own, and VLLMResult writes a file of vLLM's keys only, for tools that read vLLM's files.

// VLLMIdentityKeys are the keys of vLLM's result that summary.json holds beside the summary's
// own (RunFile): how vLLM names the run, and its two peak figures.
var VLLMIdentityKeys = []string{"date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts",
	"max_output_tokens_per_s", "max_concurrent_requests"}

// VLLMMetrics are the metrics vLLM reports statistics for, in its order (its
// --percentile-metrics); VLLMDefaultMetrics and VLLMDefaultPercentiles are its defaults.
var (
	VLLMMetrics            = vllmMetrics(func(m measure.Metric) bool { return m.VLLM })
	VLLMDefaultMetrics     = vllmMetrics(func(m measure.Metric) bool { return m.VLLMDefault })
	VLLMDefaultPercentiles = []float64{99}
)

// vllmMetrics are the keys of measure.Metrics that keep, in the table's order.
func vllmMetrics(keep func(measure.Metric) bool) []string {
	var out []string
	for _, m := range measure.Metrics {
		if keep(m) {
			out = append(out, m.Key)
		}
	}
	return out
}

// VLLMBackend is vLLM's --backend name for loadcurve's --endpoint: what vLLM writes under
// "backend" and "endpoint_type" (openai-chat, openai, openai-embeddings); "" for a kind vLLM's
// benchmark has no backend for (responses).
func VLLMBackend(endpoint string) string {
	switch endpoint {
	case "chat":
		return "openai-chat"
	case "completions":
		return "openai"
	case "embeddings":
		return "openai-embeddings"
	}
	return ""
}

// VLLMDate is vLLM's "date" of a run started at t: strftime("%Y%m%d-%H%M%S") of the wall clock
// in the run's own time zone (the one records.jsonl keeps with the time), "" for the zero time.
// vLLM dates the moment it saves; loadcurve the run's start, which the records keep.
func VLLMDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("20060102-150405")
}

// vllmIdentity is the values of VLLMIdentityKeys for summary.json.
func (f RunFile) vllmIdentity() map[string]json.RawMessage {
	str := func(s string) json.RawMessage {
		if s == "" {
			return json.RawMessage("null")
		}
		b, _ := json.Marshal(s) // a string always encodes
		return b
	}
	backend := str(VLLMBackend(f.Run.Endpoint))
	m := map[string]json.RawMessage{
		"date": str(VLLMDate(f.Run.StartWall)), "endpoint_type": backend, "backend": backend, "label": str(f.Run.Label),
		"model_id": str(f.Run.Model), "tokenizer_id": json.RawMessage("null"),
		"num_prompts":             json.RawMessage(strconv.Itoa(f.Summary.Planned)),
		"max_output_tokens_per_s": json.RawMessage("null"), "max_concurrent_requests": json.RawMessage("null"),
	}
	if pk := f.Peak; pk != nil {
		n, _ := measure.Number(pk.MaxOutputTokensPerS).MarshalJSON()
		m["max_output_tokens_per_s"] = n
		m["max_concurrent_requests"] = json.RawMessage(strconv.Itoa(pk.MaxConcurrentRequests))
	}
	return m
}

// vllmResultKeys are the keys vLLM's result file may hold besides the statistics.
var vllmResultKeys = []string{"date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts",
	"request_rate", "burstiness", "max_concurrency", "ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps",
	"duration", "completed", "failed", "total_input_tokens", "total_output_tokens", "request_throughput",
	"request_goodput", "output_throughput", "total_token_throughput", "input_lens", "output_lens", "ttfts", "itls",
	"latencies", "start_times", "queue_times", "generated_texts", "errors", "max_output_tokens_per_s",
	"max_concurrent_requests", "rtfx", "rps_change_events", "input_sequence_throughput", "total_input_sequences"}

// takenKeys is every key summary.json or the vLLM-layout file writes (a sample summary with
// every optional part marshalled), and vLLM's own.
var takenKeys = sync.OnceValue(func() map[string]bool {
	taken := map[string]bool{}
	for _, k := range vllmResultKeys {
		taken[k] = true
	}
	taken["percentile_metrics"] = true // written when --percentile-metrics is given
	s := measure.Summary{Percentiles: []float64{50}, Role: records.RoleTier, NotIssued: 1, Interrupted: true, EndReason: "cap",
		OutputTokensBadUsage: 1, InputTokensBadUsage: 1, Stalls: 1, CutShort: 1, PercentileError: 0.005, ReasoningResponses: 1, ReasoningTokens: 1, ReasoningTokensFromChunks: 1,
		CachedReported: 1, Steady: &measure.Steady{}, Sessions: &measure.Sessions{}}
	f := RunFile{Summary: s, Server: json.RawMessage("{}"), Verdict: &curve.PointVerdict{}, Peak: &Peak{}}
	b, err := json.Marshal(f)
	var m map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		panic(fmt.Sprintf("sweep: summary.json's keys: %v", err)) // the sample is ours: a test runs it
	}
	for k := range m {
		taken[k] = true
	}
	return taken
})

// ReservedKey says why key cannot be a --metadata key, "" when it can: summary.json and vLLM's
// result file put the metadata pairs at their top level, beside their own keys, so a key of
// theirs (or one of the statistics' or vLLM's optional families: mean_…, p99_…, spec_decode_…)
// would overwrite a result.
func ReservedKey(key string) string {
	if takenKeys()[key] {
		return fmt.Sprintf("%q is a key of summary.json or of vLLM's result file", key)
	}
	for _, p := range []string{"count_", "mean_", "median_", "std_", "spec_decode_", "probe_", "diffusion_"} {
		if strings.HasPrefix(key, p) {
			return fmt.Sprintf("%q starts like the keys of statistics (%s…)", key, p)
		}
	}
	if len(key) > 1 && key[0] == 'p' && (key[1] >= '0' && key[1] <= '9') && strings.Contains(key, "_") {
		return fmt.Sprintf("%q has the form of a percentile's key (p99_ttft_ms)", key)
	}
	return ""
}

// VLLMOptions choose what a vLLM-layout result holds beyond the run's own figures.
type VLLMOptions struct {
	// Metrics whose statistics are written, among VLLMMetrics (nil: VLLMDefaultMetrics).
	// client_queue_time and e2el_including_client_queue are written only with a concurrency
	// cap, the latter only at a finite rate, as vLLM does.
	Metrics []string
	// Percentiles written for each metric (nil: VLLMDefaultPercentiles); the summary must hold them.
	Percentiles []float64
	// Ramp is the rate's ramp, when the run had one.
	Ramp *VLLMRamp
	// PerRequest is the run's per-request arrays (nil: none kept, written as empty lists).
	// latencies and queue_times are always written, as vLLM does; the other seven only with
	// Detailed (vLLM's --save-detailed).
	PerRequest *VLLMPerRequest
	Detailed   bool
	// TokenizerID is vLLM's tokenizer_id ("" writes null: the server's usage counted the tokens).
	TokenizerID string
	// Backend is vLLM's --backend as given ("": the one of the run's endpoint, openai or openai-chat).
	Backend string
}

// VLLMPerRequest is vLLM's per-request arrays of a run, one entry per request in the order the
// requests were planned, failures included (0 and "" where vLLM writes them for a failure).
// Times are in seconds; StartTimes count from the run's start (vLLM's are perf_counter values,
// a clock of the same kind with another origin).
type VLLMPerRequest struct {
	InputLens      []int
	OutputLens     []int
	TTFTs          []float64
	ITLs           [][]float64
	Latencies      []float64
	StartTimes     []float64
	QueueTimes     []float64
	GeneratedTexts []string
	Errors         []string
}

// VLLMRamp is a ramp of the request rate as vLLM's result names it.
type VLLMRamp struct {
	Strategy   string  // linear or exponential
	Start, End float64 // requests/s
}

// VLLMResult is a run's result in the layout of vLLM's --save-result file: vLLM's keys only, in
// vLLM's order, with vLLM's default choice of statistics (o), the --metadata pairs at the top
// level after num_prompts, vLLM's value types (floats written as Python writes them, "inf" for
// an infinite rate), latencies and queue_times always and the other per-request arrays with
// o.Detailed (vLLM's --save-detailed). tokenizer_id is null unless o.TokenizerID: without
// --tokenizer, loadcurve counts the tokens the server's usage reports.
func (r *Result) VLLMResult(o VLLMOptions) ([]byte, error) {
	rf, err := r.RunSummary()
	if err != nil {
		return nil, err
	}
	s := &rf.Summary
	w := orderedJSON{b: []byte{'{'}}
	id := rf.vllmIdentity()
	if o.TokenizerID != "" {
		b, _ := json.Marshal(o.TokenizerID) // a string always encodes
		id["tokenizer_id"] = b
	}
	if o.Backend != "" {
		b, _ := json.Marshal(o.Backend)
		id["backend"], id["endpoint_type"] = b, b
	}
	for _, k := range VLLMIdentityKeys[:7] { // up to num_prompts; the peaks come later
		w.raw(k, id[k])
	}
	for _, p := range r.Header.Metadata {
		if ReservedKey(p.Key) == "" {
			w.value(p.Key, p.Value)
		}
	}
	w.vllmRun(s, o.Ramp)
	w.vllmPerRequest(o)
	if pk := rf.Peak; pk != nil {
		w.pyFloat("max_output_tokens_per_s", pk.MaxOutputTokensPerS)
	} else {
		w.raw("max_output_tokens_per_s", id["max_output_tokens_per_s"])
	}
	w.raw("max_concurrent_requests", id["max_concurrent_requests"])
	w.pyFloat("rtfx", 0) // vLLM's inverse real-time factor of audio input: 0.0 for text
	if err := w.vllmStatistics(s, o); err != nil {
		return nil, err
	}
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '}', '\n'), nil
}

// vllmRun writes the run's schedule and totals: its rate, burstiness, cap and ramp, its
// duration, counts and throughputs. vLLM writes its float-typed values as Python floats ("4.0")
// and an infinite rate as "inf".
func (w *orderedJSON) vllmRun(s *measure.Summary, ramp *VLLMRamp) {
	w.pyFloat("request_rate", s.NominalRate)
	w.pyFloat("burstiness", s.Burstiness)
	if s.MaxConcurrency > 0 {
		w.value("max_concurrency", s.MaxConcurrency)
	} else {
		w.raw("max_concurrency", json.RawMessage("null"))
	}
	if ramp != nil {
		w.value("ramp_up_strategy", ramp.Strategy)
		w.number("ramp_up_start_rps", ramp.Start)
		w.number("ramp_up_end_rps", ramp.End)
	}
	w.pyFloat("duration", s.Duration)
	w.value("completed", s.Completed)
	w.value("failed", s.Failed)
	w.value("total_input_tokens", s.TotalInputTokens)
	w.value("total_output_tokens", s.TotalOutputTokens)
	w.pyFloat("request_throughput", s.RequestThroughput)
	if math.IsNaN(s.RequestGoodput) {
		w.raw("request_goodput", json.RawMessage("null")) // vLLM's None without --goodput
	} else {
		w.pyFloat("request_goodput", s.RequestGoodput)
	}
	w.pyFloat("output_throughput", s.OutputThroughput)
	w.pyFloat("total_token_throughput", s.TotalTokenThroughput)
}

// vllmPerRequest writes the per-request arrays: latencies and queue times always, the others
// with o.Detailed.
func (w *orderedJSON) vllmPerRequest(o VLLMOptions) {
	pr := o.PerRequest
	if pr == nil {
		pr = &VLLMPerRequest{}
	}
	if o.Detailed {
		w.value("input_lens", nonNil(pr.InputLens))
		w.value("output_lens", nonNil(pr.OutputLens))
		w.pyFloats("ttfts", pr.TTFTs)
		w.pyFloatLists("itls", pr.ITLs)
	}
	w.pyFloats("latencies", pr.Latencies)
	if o.Detailed {
		w.pyFloats("start_times", pr.StartTimes)
	}
	w.pyFloats("queue_times", pr.QueueTimes)
	if o.Detailed {
		w.value("generated_texts", nonNil(pr.GeneratedTexts))
		w.value("errors", nonNil(pr.Errors))
	}
}

// vllmStatistics writes the mean, median, standard deviation and percentiles of each metric o
// chooses (vLLM's default choice when it chooses none), in vLLM's order.
func (w *orderedJSON) vllmStatistics(s *measure.Summary, o VLLMOptions) error {
	metrics := o.Metrics
	if metrics == nil {
		metrics = VLLMDefaultMetrics
	}
	ps := o.Percentiles
	if ps == nil {
		ps = VLLMDefaultPercentiles
	}
	for _, m := range measure.Metrics {
		name := m.Key
		switch {
		case !m.VLLM || !slices.Contains(metrics, name):
			continue
		case m.UnderCapOnly && s.MaxConcurrency == 0:
			continue // vLLM measures the client's queue only under a concurrency cap
		case name == "e2el_including_client_queue" && math.IsInf(s.NominalRate, 1):
			continue
		case !s.Reports(name):
			return fmt.Errorf("the summary has no statistics of %s (--percentile-metrics)", name)
		}
		st := m.Stats(s)
		w.pyFloat("mean_"+name+"_ms", st.Mean)
		w.pyFloat("median_"+name+"_ms", st.Median)
		w.pyFloat("std_"+name+"_ms", st.Std)
		for _, p := range ps {
			k := measure.PercentileKey(p)
			v, ok := st.Percentiles[k]
			if !ok {
				return fmt.Errorf("the summary has no %s of %s (--metric-percentiles)", k, name)
			}
			w.pyFloat(k+"_"+name+"_ms", v)
		}
	}
	return nil
}

// VLLMFileName is the name vLLM's --save-result gives the result file when no
// --result-filename is given: "{label}-{rate}qps[-concurrency{N}]-{model}-{date}.json", or
// "{label}-ramp-up-{strategy}-{start}qps-{end}qps[-concurrency{N}]-{model}-{date}.json" for a
// ramp, where label defaults to the backend (openai-chat, openai), the rate is written as Python
// writes a float ("4.0", "inf"), the model is the part of its name after the last '/', and the
// date is VLLMDate. The label and the model are made safe as parts of a file name (a '/' or '\'
// of the label becomes '_', as vLLM does; control characters and the characters Windows
// reserves too: a server chose the model's name), at most 100 bytes each.
func (r *Result) VLLMFileName(ramp *VLLMRamp) (string, error) {
	rf, err := r.RunSummary()
	if err != nil {
		return "", err
	}
	h, s := r.Header, rf.Summary
	label := h.Label
	if label == "" {
		label = VLLMBackend(h.Endpoint)
	}
	label = redact.FileName(label, 100)
	conc := ""
	if s.MaxConcurrency > 0 {
		conc = "-concurrency" + strconv.Itoa(s.MaxConcurrency)
	}
	model := h.Model[strings.LastIndex(h.Model, "/")+1:]
	if model == "" {
		return "", errors.New("the run has no model name to name its vLLM result file after")
	}
	model = redact.FileName(model, 100)
	if ramp != nil {
		return fmt.Sprintf("%s-ramp-up-%s-%sqps-%sqps%s-%s-%s.json", label, ramp.Strategy, pyNumber(ramp.Start), pyNumber(ramp.End),
			conc, model, VLLMDate(h.StartWall)), nil
	}
	return fmt.Sprintf("%s-%sqps%s-%s-%s.json", label, PyFloat(s.NominalRate), conc, model, VLLMDate(h.StartWall)), nil
}

// PyFloat writes f as Python's str(float) does: "4.0", "0.5", "1e-05", "inf" (NaN too: a run
// without a nominal rate is vLLM's default rate, inf).
func PyFloat(f float64) string {
	switch a := math.Abs(f); {
	case math.IsNaN(f) || math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case a != 0 && (a < 1e-4 || a >= 1e16):
		return strconv.FormatFloat(f, 'e', -1, 64)
	case f == math.Trunc(f):
		return strconv.FormatFloat(f, 'f', -1, 64) + ".0"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// pyNumber writes a ramp's rate as vLLM does (an int there): whole numbers without ".0".
func pyNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return PyFloat(f)
}

// orderedJSON writes a JSON object's members in the order given.
type orderedJSON struct {
	b   []byte
	err error
}

func (w *orderedJSON) raw(k string, v []byte) {
	if len(w.b) > 1 {
		w.b = append(w.b, ',')
	}
	kb, _ := json.Marshal(k) // a string always encodes
	w.b = append(w.b, kb...)
	w.b = append(w.b, ':')
	w.b = append(w.b, v...)
}

func (w *orderedJSON) value(k string, v any) {
	b, err := json.Marshal(v)
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("%s: %w", k, err)
	}
	w.raw(k, b)
}

func (w *orderedJSON) number(k string, f float64) {
	b, _ := measure.Number(f).MarshalJSON()
	w.raw(k, b)
}

// pyFloat writes f as Python's json.dump writes a float: "4.0", "0.25", "1e-05"; an infinite
// value as the string "inf" (vLLM's request_rate; json.dump's bare Infinity is not JSON, so a
// burstiness of inf is written the same way); NaN, a figure the run could not define, as null.
func (w *orderedJSON) pyFloat(k string, f float64) {
	w.raw(k, appendPyFloat(nil, f))
}

func appendPyFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "null"...)
	case math.IsInf(f, 1):
		return append(b, `"inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-inf"`...)
	}
	return append(b, PyFloat(f)...)
}

// pyFloats writes a list of floats ([] for none).
func (w *orderedJSON) pyFloats(k string, fs []float64) {
	w.raw(k, appendPyFloats(nil, fs))
}

func appendPyFloats(b []byte, fs []float64) []byte {
	b = append(b, '[')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPyFloat(b, f)
	}
	return append(b, ']')
}

// pyFloatLists writes a list of lists of floats (vLLM's itls).
func (w *orderedJSON) pyFloatLists(k string, ls [][]float64) {
	b := []byte{'['}
	for i, l := range ls {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPyFloats(b, l)
	}
	w.raw(k, append(b, ']'))
}

// nonNil is s, or an empty slice for nil, so that it encodes as [] and not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
