package measure_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// rec builds a record from millisecond offsets (a negative offset means the moment never came).
type rec struct {
	outcome                                           records.Outcome
	planned, dispatched, slot, sent, first, last, end float64
	itl                                               []float64
	in, out                                           int
	outSource                                         string
	quality                                           records.Quality
}

func (c rec) record(id int) records.Record {
	r := records.NewRecord(3, id, at(c.planned))
	r.Outcome = c.outcome
	r.Dispatched, r.Slot, r.Sent = at(c.dispatched), at(c.slot), at(c.sent)
	r.FirstEvent, r.First, r.Last, r.End = at(c.first), at(c.first), at(c.last), at(c.end)
	for _, g := range c.itl {
		r.ITL = append(r.ITL, at(g))
	}
	r.Chunks = len(c.itl)
	if c.first >= 0 {
		r.Chunks++
	}
	r.InputTokens, r.InputTokensSource = c.in, records.SourceUsage
	r.OutputTokens, r.OutputTokensSource = c.out, records.SourceUsage
	if c.outSource != "" {
		r.OutputTokensSource = c.outSource
	}
	r.Quality = c.quality
	if c.outcome == records.HTTPError {
		r.HTTPStatus = 503
	}
	return r
}

// goldenRecords is a tier (T0 = 0) in which every statistic can be worked out by hand.
// Objectives ttft:100 tpot:20 e2el:1000 (ms). Per request, TTFT = first−sent,
// E2EL = last−sent, TPOT = (E2EL−TTFT)/(out−1), lag = dispatched−planned,
// client_queue_time = slot−planned, e2el_incl = last−planned.
func goldenRecords() []records.Record {
	cs := []rec{
		// R0 ok: TTFT 50, E2EL 150, TPOT 100/5 = 20 (meets tpot:20 exactly), lag 1, cq 1,
		// e2el_incl 152. Good and compliant (quality passed).
		{outcome: records.OK, planned: 0, dispatched: 1, slot: 1, sent: 2, first: 52, last: 152, end: 153,
			itl: []float64{25, 25, 25, 25}, in: 100, out: 6, quality: records.QualityPass},
		// R1 ok behind the concurrency gate: slot 150 → cq 50; TTFT 351−151 = 200 > 100 (latency
		// failure), E2EL 300, TPOT 100/2 = 50, lag 1, e2el_incl 351.
		{outcome: records.OK, planned: 100, dispatched: 101, slot: 150, sent: 151, first: 351, last: 451, end: 452,
			itl: []float64{50, 50}, in: 200, out: 3},
		// R2 ok, one output token: TPOT undefined (not in TPOT stats, meets tpot:20). TTFT 30,
		// E2EL 30, lag 1, cq 1, e2el_incl 32. Good and compliant (quality unchecked).
		{outcome: records.OK, planned: 200, dispatched: 201, slot: 201, sent: 202, first: 232, last: 232, end: 240,
			in: 50, out: 1},
		// R3 ok, output counted from chunks, quality failed: TTFT 40, E2EL 120, TPOT 80/4 = 20;
		// latency met, so good but not compliant. lag 1, cq 1, e2el_incl 121.
		{outcome: records.OK, planned: 300, dispatched: 301, slot: 301, sent: 301, first: 341, last: 421, end: 422,
			itl: []float64{20, 20, 20, 20}, in: 80, out: 5, outSource: records.SourceChunks, quality: records.QualityFail},
		// R4 stream_error after 3 tokens (counted from chunks): failed, no latency stats, but its
		// 3 tokens are raw output. lag 1, cq 1.
		{outcome: records.StreamError, planned: 400, dispatched: 401, slot: 401, sent: 401, first: 421, last: 461, end: 470,
			itl: []float64{20, 20}, out: 3, outSource: records.SourceChunks},
		// R5 timeout, released 30 ms late: lag 30, cq 30; no output; its end (2000 ms) is the
		// latest, so duration = 2 s.
		{outcome: records.Timeout, planned: 500, dispatched: 530, slot: 530, sent: 531, first: -1, last: -1, end: 2000},
		// R6 never dispatched (the tier was stopped): not issued, counted only in the realised rate.
		{outcome: records.Canceled, planned: 600, dispatched: -1, slot: -1, sent: -1, first: -1, last: -1, end: -1},
		// R7 http_error 503: lag 1, cq 1, no tokens.
		{outcome: records.HTTPError, planned: 700, dispatched: 701, slot: 701, sent: 701, first: -1, last: -1, end: 705},
	}
	out := make([]records.Record, len(cs))
	for i, c := range cs {
		out[i] = c.record(i)
	}
	return out
}

var goldenInfo = records.Tier{Tier: 3, Arrival: "poisson(rate=10)", RequestRate: 10, Burstiness: 1, MaxConcurrency: 4, Planned: 8}

func goldenOptions(t testing.TB) measure.Options {
	obj, err := measure.ParseGoodput([]string{"ttft:100 tpot:20 e2el:1000"})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := measure.ParsePercentiles("50,90,99,99.9")
	if err != nil {
		t.Fatal(err)
	}
	return measure.Options{Objectives: obj, Percentiles: ps}
}

func TestSummarizeHandComputed(t *testing.T) {
	s := measure.Summarize(goldenRecords(), goldenInfo, goldenOptions(t))

	ints := []struct {
		name      string
		got, want int
	}{
		{"issued: every record but R6", s.Issued, 7},
		{"completed: R0–R3 ok", s.Completed, 4},
		{"failed: R4 R5 R7", s.Failed, 3},
		{"total input (ok): 100+200+50+80", s.TotalInputTokens, 430},
		{"total output (ok): 6+3+1+5", s.TotalOutputTokens, 15},
		{"raw output: 15 + R4's 3", s.RawOutputTokens, 18},
		{"good: R0 R2 R3", s.GoodRequests, 3},
		{"latency failures: R1", s.LatencyFailures, 1},
		{"quality failures: R3", s.QualityFailures, 1},
		{"compliant: R0 R2", s.CompliantRequests, 2},
		{"compliant tokens: 6+1", s.CompliantOutputTokens, 7},
		{"chunk-counted: R3 R4", s.OutputTokensFromChunks, 2},
		{"outcome ok", s.Outcomes["ok"], 4},
		{"outcome http_error", s.Outcomes["http_error"], 1},
		{"outcome timeout", s.Outcomes["timeout"], 1},
		{"outcome stream_error", s.Outcomes["stream_error"], 1},
		{"outcome canceled: R6, never issued, is one of the planned requests", s.Outcomes["canceled"], 1},
		{"not issued: R6", s.NotIssued, 1},
		{"planned = ok + http_error + timeout + stream_error + canceled", s.Outcomes["ok"] + s.Outcomes["http_error"] +
			s.Outcomes["timeout"] + s.Outcomes["stream_error"] + s.Outcomes["canceled"], s.Planned},
		{"TTFT count", s.TTFT.Count, 4},
		{"TPOT count: R2 has one token", s.TPOT.Count, 3},
		{"ITL count: 4+2+0+4", s.ITL.Count, 10},
		{"client queue count: issued", s.ClientQueueTime.Count, 7},
		{"schedule lag count: issued", s.ScheduleLag.Count, 7},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
		}
	}
	if len(s.Outcomes) != len(records.Outcomes()) {
		t.Errorf("Outcomes has %d keys, want every outcome: %v", len(s.Outcomes), s.Outcomes)
	}

	floats := []struct {
		name      string
		got, want float64
	}{
		{"duration: R5 ends at 2000 ms", s.Duration, 2},
		{"request throughput 4/2", s.RequestThroughput, 2},
		{"goodput 3/2", s.RequestGoodput, 1.5},
		{"output throughput 15/2", s.OutputThroughput, 7.5},
		{"total token throughput 445/2", s.TotalTokenThroughput, 222.5},
		{"raw output throughput 18/2", s.RawOutputThroughput, 9},
		{"compliant output throughput 7/2", s.CompliantOutputThroughput, 3.5},
		{"compliant token share 7/18", s.CompliantTokenShare, 7.0 / 18},
		{"compliant request share 2/7", s.CompliantRequestShare, 2.0 / 7},
		{"timeout ratio 1/7", s.TimeoutRatio, 1.0 / 7},
		{"failure ratio 3/7", s.FailureRatio, 3.0 / 7},
		{"realised rate: 8 records / 0.7 s", s.RealisedRate, 8 / 0.7},
		{"delivered rate: 7 sent / 0.701 s", s.DeliveredRate, 7 / 0.701},
		// TTFT [30 40 50 200]: mean 320/4; median (40+50)/2; deviations −50 −40 −30 120,
		// squares sum 19400, /4 = 4850; p90 h=2.7 → 200 − 0.3·150 = 155;
		// p99 h=2.97 → 200 − 0.03·150 = 195.5; p99.9 h=2.997 → 200 − 0.003·150 = 199.55.
		{"TTFT mean", s.TTFT.Mean, 80},
		{"TTFT median", s.TTFT.Median, 45},
		{"TTFT std", s.TTFT.Std, math.Sqrt(4850)},
		{"TTFT p50", s.TTFT.Percentiles["p50"], 45},
		{"TTFT p90", s.TTFT.Percentiles["p90"], 155},
		{"TTFT p99", s.TTFT.Percentiles["p99"], 195.5},
		{"TTFT p99.9", s.TTFT.Percentiles["p99.9"], 199.55},
		// TPOT [20 20 50]: mean 30; median 20; squares 100+100+400 = 600, /3 = 200;
		// p90 h=1.8 → 50 − 0.2·30 = 44.
		{"TPOT mean", s.TPOT.Mean, 30},
		{"TPOT median", s.TPOT.Median, 20},
		{"TPOT std", s.TPOT.Std, math.Sqrt(200)},
		{"TPOT p90", s.TPOT.Percentiles["p90"], 44},
		// ITL [20×4 25×4 50×2]: mean 280/10 = 28; median (25+25)/2; squares 4·64 + 4·9 +
		// 2·484 = 1260, /10 = 126; p90 h=8.1 between 50 and 50.
		{"ITL mean", s.ITL.Mean, 28},
		{"ITL median", s.ITL.Median, 25},
		{"ITL std", s.ITL.Std, math.Sqrt(126)},
		{"ITL p90", s.ITL.Percentiles["p90"], 50},
		// E2EL [30 120 150 300]: mean 600/4; median 135; squares 14400+900+0+22500 = 37800, /4.
		{"E2EL mean", s.E2EL.Mean, 150},
		{"E2EL median", s.E2EL.Median, 135},
		{"E2EL std", s.E2EL.Std, math.Sqrt(9450)},
		// e2el_including_client_queue [32 121 152 351]: mean 656/4; median (121+152)/2.
		{"E2EL incl queue mean", s.E2ELIncludingClientQueue.Mean, 164},
		{"E2EL incl queue median", s.E2ELIncludingClientQueue.Median, 136.5},
		// client_queue_time [1 1 1 1 1 30 50]: mean 85/7; median 1; p90 h=5.4 → 30 + 0.4·20 = 38.
		{"client queue mean", s.ClientQueueTime.Mean, 85.0 / 7},
		{"client queue median", s.ClientQueueTime.Median, 1},
		{"client queue p90", s.ClientQueueTime.Percentiles["p90"], 38},
		// schedule_lag [1 1 1 1 1 1 30]: mean 36/7; p99 h=5.94 → 30 − 0.06·29 = 28.26 ms, above
		// the 5 ms floor; one request late left what was offered as planned: noted, kept.
		{"schedule lag mean", s.ScheduleLag.Mean, 36.0 / 7},
		{"schedule lag p99", s.ScheduleLag.Percentiles["p99"], 28.26},
		{"client bound threshold", s.ClientBoundThreshold, 5},
	}
	for _, c := range floats {
		if !closeTo(c.got, c.want, 1000) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}

	if s.ClientBound || !strings.Contains(s.ScheduleLagNote, "28.260 ms") || !strings.Contains(s.ScheduleLagNote, "as planned") {
		t.Errorf("client bound = %v, %q, note %q; want kept, noted with p99 28.260 ms", s.ClientBound, s.ClientBoundReason, s.ScheduleLagNote)
	}
	if s.Complete {
		t.Error("Complete = true, but only 7 of 8 planned requests were issued")
	}
	if s.Objectives != "ttft:100 tpot:20 e2el:1000" || s.MetricsVersion != records.MetricsVersion || s.Window != "" {
		t.Errorf("identity fields: objectives %q, version %q, window %q", s.Objectives, s.MetricsVersion, s.Window)
	}
}

func TestSummaryGoldenJSON(t *testing.T) {
	s := measure.Summarize(goldenRecords(), goldenInfo, goldenOptions(t))
	got, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "summary.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("summary.json differs from %s (run go test -update if the change is intended)\n got:\n%s", path, got)
	}
	// vLLM's keys are present under vLLM's names.
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
		"request_throughput", "request_goodput", "output_throughput", "total_token_throughput",
		"max_concurrency", "request_rate", "burstiness", "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms",
		"p99_ttft_ms", "p99.9_ttft_ms", "mean_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "p99_itl_ms",
		"mean_e2el_ms", "p99_e2el_ms", "mean_client_queue_time_ms", "p99_e2el_including_client_queue_ms"} {
		if _, ok := m[k]; !ok {
			t.Errorf("summary.json lacks vLLM's key %q", k)
		}
	}
}

// TestSummaryJSONReportsTheSelectedMetrics: with Options.Metrics (vLLM's --percentile-metrics)
// the JSON carries the statistics of those metrics only, and everything else unchanged.
func TestSummaryJSONReportsTheSelectedMetrics(t *testing.T) {
	opts := goldenOptions(t)
	all := measure.Summarize(goldenRecords(), goldenInfo, opts)
	opts.Metrics = []string{"ttft", "e2el"}
	some := measure.Summarize(goldenRecords(), goldenInfo, opts)
	var ma, ms map[string]any
	for _, x := range []struct {
		s measure.Summary
		m *map[string]any
	}{{all, &ma}, {some, &ms}} {
		b, err := json.Marshal(x.s)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, x.m); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range ma {
		metric := ""
		for _, n := range measure.MetricNames() {
			if strings.HasSuffix(k, "_"+n+"_ms") || k == "count_"+n {
				metric = n
			}
		}
		got, ok := ms[k]
		switch {
		case metric == "" || metric == "ttft" || metric == "e2el":
			if !ok || mustJSON(t, got) != mustJSON(t, v) {
				t.Errorf("%s: %v, want %v as without the selection", k, got, v)
			}
		case ok:
			t.Errorf("%s is reported although %s was not selected", k, metric)
		}
	}
	if len(ms) >= len(ma) || !some.Reports("ttft") || some.Reports("itl") || !all.Reports("itl") {
		t.Errorf("%d keys with the selection, %d without", len(ms), len(ma))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameSummary compares two summaries treating NaN as equal to NaN.
func sameSummary(t *testing.T, got, want measure.Summary) {
	t.Helper()
	gb, err1 := json.Marshal(got)
	wb, err2 := json.Marshal(want)
	if err1 != nil || err2 != nil {
		t.Fatalf("marshal: %v %v", err1, err2)
	}
	if !bytes.Equal(gb, wb) {
		t.Errorf("summaries differ\n got %s\nwant %s", gb, wb)
	}
	// Beyond the bytes: every field, struct against struct.
	if !equalNaN(reflect.ValueOf(got), reflect.ValueOf(want)) {
		t.Errorf("summaries differ field by field\n got %+v\nwant %+v", got, want)
	}
}

// equalNaN is reflect.DeepEqual with NaN equal to NaN, pointers compared by what they point to
// and a nil map or slice equal to an empty one.
func equalNaN(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || math.IsNaN(x) && math.IsNaN(y)
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalNaN(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !equalNaN(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalNaN(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			v := b.MapIndex(k)
			if !v.IsValid() || !equalNaN(a.MapIndex(k), v) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

func TestSummaryJSONRoundTrip(t *testing.T) {
	noObj := measure.Options{}
	infRate := records.Tier{Tier: 1, Arrival: "inf", RequestRate: records.Rate(math.Inf(1)), Burstiness: records.Rate(math.Inf(1)), Planned: 3}
	atOnce := []records.Record{
		rec{outcome: records.OK, planned: 0, dispatched: 0, slot: 0, sent: 0, first: 10, last: 20, end: 20, itl: []float64{10}, in: 5, out: 2}.record(0),
		rec{outcome: records.OK, planned: 0, dispatched: 0, slot: 0, sent: 0, first: 15, last: 30, end: 31, itl: []float64{15}, in: 5, out: 2}.record(1),
		rec{outcome: records.OK, planned: 0, dispatched: 0, slot: 0, sent: 0, first: 12, last: 12, end: 12, in: 5, out: 1}.record(2),
	}
	tests := []struct {
		name string
		s    measure.Summary
	}{
		{"golden", measure.Summarize(goldenRecords(), goldenInfo, goldenOptions(t))},
		{"no records: everything undefined", measure.Summarize(nil, records.Tier{Burstiness: 1}, noObj)},
		{"rate inf, no objectives", measure.Summarize(atOnce, infRate, noObj)},
		{"zero value", measure.Summary{}},
		{"with the tier's CPU", func() measure.Summary {
			s := measure.Summarize(goldenRecords(), goldenInfo, goldenOptions(t))
			s.CPU = &records.TierCPU{WallS: 12.5, ProcessS: 0.25, InProcessTarget: true, MachineCPUs: 2, MachineBusy: 0.625}
			return s
		}()},
		{"a selection of metrics", func() measure.Summary {
			o := goldenOptions(t)
			o.Metrics = []string{"ttft", "e2el"}
			return measure.Summarize(goldenRecords(), goldenInfo, o)
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			var back measure.Summary
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("unmarshal %s: %v", b, err)
			}
			// Struct against struct: a field the codec dropped would show here, not in a second
			// encoding of the decoded value.
			want := tc.s
			if want.Outcomes == nil { // written as zero counts
				want.Outcomes = map[string]int{}
				for _, o := range records.Outcomes() {
					want.Outcomes[o.String()] = 0
				}
			}
			if want.CachedReported == 0 {
				want.CachedPromptShare = math.NaN() // undefined: not written
			}
			if want.Metrics == nil && want.ReasoningResponses == 0 {
				// Not written: without reasoning, the answer's metrics are the output's.
				want.TTFA, want.AnswerITL = want.TTFT, want.ITL
				want.AnswerTokens = want.TotalOutputTokens
			}
			if want.Metrics != nil {
				// Statistics of metrics not reported are not written: they come back empty.
				for i, n := range measure.MetricNames() {
					if !want.Reports(n) {
						*statsOf(&want)[i] = measure.Stats{Percentiles: map[string]float64{}}
					}
				}
			}
			if !equalNaN(reflect.ValueOf(back), reflect.ValueOf(want)) {
				t.Errorf("decoded summary differs from the encoded one\n got %+v\nwant %+v\njson %s", back, want, b)
			}
		})
	}
}

func TestSummarizeEdgeCases(t *testing.T) {
	t.Run("no objectives: goodput null, everything ok and on time is compliant", func(t *testing.T) {
		s := measure.Summarize(goldenRecords(), goldenInfo, measure.Options{})
		if !math.IsNaN(s.RequestGoodput) || s.Objectives != "" {
			t.Errorf("goodput %v, objectives %q; want NaN and empty", s.RequestGoodput, s.Objectives)
		}
		// Every ok request is good; R3 fails quality: compliant R0 R1 R2, tokens 6+3+1.
		if s.GoodRequests != 4 || s.CompliantRequests != 3 || s.CompliantOutputTokens != 10 {
			t.Errorf("good %d compliant %d tokens %d; want 4, 3, 10", s.GoodRequests, s.CompliantRequests, s.CompliantOutputTokens)
		}
		b, _ := json.Marshal(s)
		if !bytes.Contains(b, []byte(`"request_goodput":null`)) {
			t.Errorf("request_goodput is not null: %s", b)
		}
		if !reflect.DeepEqual(s.Percentiles, []float64{50, 90, 95, 99}) {
			t.Errorf("default percentiles %v", s.Percentiles)
		}
	})
	t.Run("no records", func(t *testing.T) {
		s := measure.Summarize(nil, records.Tier{Planned: 0}, measure.Options{})
		if s.Duration != 0 || !math.IsNaN(s.RequestThroughput) || !math.IsNaN(s.CompliantTokenShare) ||
			!math.IsNaN(s.CompliantRequestShare) || !math.IsNaN(s.FailureRatio) || s.TTFT.Count != 0 || !math.IsNaN(s.TTFT.Mean) {
			t.Errorf("empty tier: %+v", s)
		}
		b, _ := json.Marshal(s)
		for _, want := range []string{`"request_throughput":null`, `"mean_ttft_ms":null`, `"p99_ttft_ms":null`, `"max_concurrency":null`} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("empty tier JSON lacks %s: %s", want, b)
			}
		}
	})
	t.Run("the client out of file descriptors: client-bound", func(t *testing.T) {
		ok := rec{outcome: records.OK, planned: 0, dispatched: 0, slot: 0, sent: 0, first: 10, last: 20, end: 20, out: 1}
		r := ok.record(1)
		r.Outcome, r.First, r.Last, r.FirstEvent = records.StreamError, records.Unset, records.Unset, records.Unset
		r.Error = records.ClientResourcesPrefix + "socket: too many open files"
		s := measure.Summarize([]records.Record{ok.record(0), r}, records.Tier{RequestRate: 10, Burstiness: 1, Planned: 2}, measure.Options{})
		if !s.ClientBound || !strings.Contains(s.ClientBoundReason, "1 requests failed for lack of the client's own resources") {
			t.Errorf("client bound %v: %q", s.ClientBound, s.ClientBoundReason)
		}
	})
	t.Run("rate inf: realised rate inf, JSON \"inf\"", func(t *testing.T) {
		r := rec{outcome: records.OK, planned: 0, dispatched: 0, slot: 0, sent: 0, first: 10, last: 20, end: 20, out: 1}
		s := measure.Summarize([]records.Record{r.record(0), r.record(1)},
			records.Tier{RequestRate: records.Rate(math.Inf(1)), Burstiness: 1, Planned: 2}, measure.Options{})
		if !math.IsInf(s.RealisedRate, 1) || !math.IsInf(s.DeliveredRate, 1) || !s.Complete || s.ClientBound {
			t.Errorf("realised %v delivered %v complete %v client bound %v", s.RealisedRate, s.DeliveredRate, s.Complete, s.ClientBound)
		}
		b, _ := json.Marshal(s)
		for _, want := range []string{`"request_rate":"inf"`, `"nominal_request_rate":"inf"`, `"realised_request_rate":"inf"`} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("JSON lacks %s: %s", want, b)
			}
		}
	})
	t.Run("schedule lag at the floor is not even noted", func(t *testing.T) {
		// Every lag exactly 5 ms: p99 = 5, not above the 5 ms floor.
		var rs []records.Record
		for i := range 10 {
			p := float64(i * 100)
			rs = append(rs, rec{outcome: records.OK, planned: p, dispatched: p + 5, slot: p + 5, sent: p + 5, first: p + 10, last: p + 20, end: p + 20, out: 1}.record(i))
		}
		if s := measure.Summarize(rs, records.Tier{Planned: 10}, measure.Options{}); s.ClientBound || s.ScheduleLagNote != "" {
			t.Errorf("client bound or noted at p99 = floor: %s %s", s.ClientBoundReason, s.ScheduleLagNote)
		}
		// Above a 4 ms floor, but every request equally late: the load is the one planned,
		// shifted, so the tier is kept, and the lag noted.
		if s := measure.Summarize(rs, records.Tier{Planned: 10}, measure.Options{MaxScheduleLag: 4 * time.Millisecond}); s.ClientBound || !strings.Contains(s.ScheduleLagNote, "as planned") {
			t.Errorf("5 ms lags, every one alike, against a 4 ms floor: bound %v, %q, note %q", s.ClientBound, s.ClientBoundReason, s.ScheduleLagNote)
		}
	})
	t.Run("a cancelled request makes the tier incomplete", func(t *testing.T) {
		r := rec{outcome: records.Canceled, planned: 0, dispatched: 0, slot: 0, sent: 0, first: -1, last: -1, end: 5}
		if s := measure.Summarize([]records.Record{r.record(0)}, records.Tier{Planned: 1}, measure.Options{}); s.Complete {
			t.Error("Complete with a cancelled request")
		}
	})
}

func TestSummarizeWindow(t *testing.T) {
	// Ten requests planned at 0, 1, …, 9 s, each ok with E2EL 0.5 s: the tier lasts D = 9.5 s.
	// Warmup 2 s, cooldown 2.5 s → requests planned in [2 s, 7 s]: those at 2…7, six of them,
	// over a 5 s window → 1.2 requests/s.
	var rs []records.Record
	for i := range 10 {
		p := float64(i * 1000)
		rs = append(rs, rec{outcome: records.OK, planned: p, dispatched: p, slot: p, sent: p, first: p + 100, last: p + 500, end: p + 500,
			itl: []float64{100, 100, 100, 100}, in: 10, out: 5}.record(i))
	}
	info := records.Tier{Planned: 10, RequestRate: 1, Burstiness: records.Rate(math.Inf(1))}
	s := measure.Summarize(rs, info, measure.Options{Warmup: 2 * time.Second, Cooldown: 2500 * time.Millisecond})
	if s.Issued != 6 || s.Completed != 6 || s.TTFT.Count != 6 || s.ITL.Count != 24 {
		t.Errorf("issued %d completed %d ttft n %d itl n %d; want 6 6 6 24", s.Issued, s.Completed, s.TTFT.Count, s.ITL.Count)
	}
	if !closeTo(s.Duration, 5, 10) || !closeTo(s.RequestThroughput, 1.2, 10) || !closeTo(s.OutputThroughput, 6, 10) {
		t.Errorf("duration %v throughput %v output %v; want 5, 1.2, 6", s.Duration, s.RequestThroughput, s.OutputThroughput)
	}
	if !strings.Contains(s.Window, "[2.000 s, 7.000 s] of a 9.500 s tier") || !strings.Contains(s.Window, "6 of 10") {
		t.Errorf("window description %q", s.Window)
	}
	// The offered-load figures describe the whole tier: 10 records / 9 s.
	if !closeTo(s.RealisedRate, 10.0/9, 10) || !s.Complete {
		t.Errorf("realised %v complete %v", s.RealisedRate, s.Complete)
	}

	empty := measure.Summarize(rs, info, measure.Options{Warmup: 5 * time.Second, Cooldown: 5 * time.Second})
	if empty.Issued != 0 || empty.Duration != 0 || !strings.HasPrefix(empty.Window, "empty") || !math.IsNaN(empty.RequestThroughput) {
		t.Errorf("window past the end: issued %d duration %v window %q", empty.Issued, empty.Duration, empty.Window)
	}
}

func TestAccumulatorMatchesSummarize(t *testing.T) {
	for _, warmup := range []time.Duration{0, 250 * time.Millisecond} {
		opts := goldenOptions(t)
		opts.Warmup = warmup
		a, err := measure.NewAccumulator(opts)
		if err != nil {
			t.Fatal(err)
		}
		rs := goldenRecords()
		for i := range rs {
			a.Add(&rs[i])
		}
		sameSummary(t, a.Summary(goldenInfo), measure.Summarize(rs, goldenInfo, opts))
	}
	if _, err := measure.NewAccumulator(measure.Options{Cooldown: time.Second}); err == nil {
		t.Error("NewAccumulator accepted a cooldown it cannot apply")
	}
}

func statsOf(s *measure.Summary) []*measure.Stats {
	return []*measure.Stats{&s.TTFT, &s.TPOT, &s.ITL, &s.E2EL, &s.ClientQueueTime, &s.E2ELIncludingClientQueue, &s.ScheduleLag, &s.TTFA, &s.AnswerITL}
}

// TestSummaryCountsStallsAndCutShort: a tier's summary counts the timeouts that were stalls
// (the drain deadline found the server silent: records.StallPrefix) apart from the others, and
// the ok replies the server cut short; summary.json keeps both.
func TestSummaryCountsStallsAndCutShort(t *testing.T) {
	rs := []records.Record{
		rec{outcome: records.OK, planned: 0, dispatched: 0, slot: 0, sent: 0, first: 10, last: 10, end: 11, in: 5, out: 1}.record(0),
		rec{outcome: records.OK, planned: 10, dispatched: 10, slot: 10, sent: 10, first: 20, last: 40, end: 41, itl: []float64{20}, in: 5, out: 2}.record(1),
		rec{outcome: records.Timeout, planned: 20, dispatched: 20, slot: 20, sent: 20, first: -1, last: -1, end: 5000}.record(2),
		rec{outcome: records.Timeout, planned: 30, dispatched: 30, slot: 30, sent: 30, first: -1, last: -1, end: 3000}.record(3),
	}
	rs[0].FinishReason, rs[0].MaxTokens = "length", 64 // one token of 64: cut short
	rs[1].FinishReason, rs[1].MaxTokens = "stop", 64
	rs[2].Error = records.StallPrefix + "no output from the server for 5s, when the tier's drain deadline passed (grace 5s after dispatching stopped)"
	rs[3].Error = "no complete response within the 3s request timeout"
	obj, err := measure.ParseGoodput([]string{"ttft:100 tpot:50"})
	if err != nil {
		t.Fatal(err)
	}
	s := measure.Summarize(rs, records.Tier{Burstiness: 1, Planned: 4}, measure.Options{Objectives: obj})
	if s.Stalls != 1 || s.CutShort != 1 || s.Outcomes["timeout"] != 2 {
		t.Errorf("stalls %d, cut short %d, timeouts %d; want 1, 1, 2", s.Stalls, s.CutShort, s.Outcomes["timeout"])
	}
	if s.CompliantRequests != 1 || s.LatencyFailures != 1 {
		t.Errorf("%d compliant, %d latency failures: the cut-short one-token reply must miss tpot", s.CompliantRequests, s.LatencyFailures)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"stalls":1`)) || !bytes.Contains(b, []byte(`"cut_short":1`)) {
		t.Errorf("summary.json without stalls or cut_short: %s", b)
	}
	var back measure.Summary
	if err := json.Unmarshal(b, &back); err != nil || back.Stalls != 1 || back.CutShort != 1 {
		t.Errorf("decoded stalls %d, cut short %d (%v)", back.Stalls, back.CutShort, err)
	}
}

// TestRequestedBesideServedInput: the summary sets what the request set asked for beside the
// server's count, over the ok requests: a record whose usage replaced the request set's count
// keeps that count (RequestedInputTokens); one whose count stood counts its own.
func TestRequestedBesideServedInput(t *testing.T) {
	ok := func(id, in, requested int) records.Record {
		r := records.NewRecord(0, id, time.Duration(id)*time.Millisecond)
		r.Dispatched, r.Slot, r.Sent = r.Planned, r.Planned, r.Planned
		r.First, r.Last, r.End = r.Sent+10*time.Millisecond, r.Sent+20*time.Millisecond, r.Sent+20*time.Millisecond
		r.InputTokens, r.RequestedInputTokens, r.OutputTokens, r.Chunks = in, requested, 2, 2
		return r
	}
	failed := ok(3, 500, 100)
	failed.Outcome = records.HTTPError
	recs := []records.Record{ok(0, 130, 100), ok(1, 260, 200), ok(2, 50, 0), failed}
	s := measure.Summarize(recs, records.Tier{Planned: len(recs), RequestRate: 100, Burstiness: 1}, measure.Options{})
	if s.TotalInputTokens != 440 || s.TotalRequestedInputTokens != 350 {
		t.Errorf("served %d, requested %d: want 440 and 350 (ok requests only)", s.TotalInputTokens, s.TotalRequestedInputTokens)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back measure.Summary
	if err := json.Unmarshal(b, &back); err != nil || back.TotalRequestedInputTokens != 350 {
		t.Errorf("summary.json round trip: %v, requested %d", err, back.TotalRequestedInputTokens)
	}
}

// TestSummaryCountsUnbelievedPromptUsage: requests whose usage.prompt_tokens was not believed
// (loadgen kept the workload's count, source workload_bad_usage) are counted, in both the exact
// and the bounded summary and in summary.json, and their input is the workload's count in the
// totals (a count of 10^9 once made the total token throughput 14.6 G tok/s).
func TestSummaryCountsUnbelievedPromptUsage(t *testing.T) {
	rs := []records.Record{
		rec{outcome: records.OK, planned: 0, dispatched: 0, slot: 0, sent: 0, first: 10, last: 10, end: 11, in: 5, out: 1}.record(0),
		rec{outcome: records.OK, planned: 10, dispatched: 10, slot: 10, sent: 10, first: 20, last: 40, end: 41, itl: []float64{20}, in: 7, out: 2}.record(1),
	}
	rs[0].InputTokensSource = records.SourceUsage
	rs[1].InputTokensSource, rs[1].UsageRejected = records.SourceWorkloadBadUsage, "usage.prompt_tokens 1000000000: beyond the 1200 a request of 176 bytes can carry"
	opts := measure.Options{}
	exact := measure.Summarize(rs, records.Tier{Burstiness: 1, Planned: 2}, opts)
	acc, err := measure.NewApproxAccumulator(opts, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		acc.Add(&rs[i])
	}
	bounded := acc.Summary(records.Tier{Burstiness: 1, Planned: 2})
	for name, s := range map[string]measure.Summary{"exact": exact, "bounded": bounded} {
		if s.InputTokensBadUsage != 1 || s.TotalInputTokens != 12 {
			t.Errorf("%s: %d unbelieved prompt counts, %d input tokens; want 1 and 12", name, s.InputTokensBadUsage, s.TotalInputTokens)
		}
	}
	b, err := json.Marshal(exact)
	if err != nil {
		t.Fatal(err)
	}
	var back measure.Summary
	if err := json.Unmarshal(b, &back); err != nil || back.InputTokensBadUsage != 1 || !bytes.Contains(b, []byte(`"input_tokens_bad_usage":1`)) {
		t.Errorf("summary.json keeps %d unbelieved prompt counts (%v): %s", back.InputTokensBadUsage, err, b)
	}
}
