package sweep_test

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

func TestPyFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{4, "4.0"}, {0.5, "0.5"}, {12.25, "12.25"}, {1e-5, "1e-05"}, {1e-4, "0.0001"}, {1234567, "1234567.0"},
		{1e16, "1e+16"}, {math.Inf(1), "inf"}, {math.NaN(), "inf"}, {0, "0.0"},
	}
	for _, tc := range tests {
		if got := result.PyFloat(tc.in); got != tc.want {
			t.Errorf("PyFloat(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReservedKey(t *testing.T) {
	tests := []struct {
		key      string
		reserved bool
	}{
		{"tp", false}, {"version", false}, {"gpu", false}, {"p", false}, {"pp", false}, {"p2p", false},
		// summary.json's own and vLLM's
		{"duration", true}, {"label", true}, {"date", true}, {"run", true}, {"verdict", true}, {"steady_state", true},
		{"compliant_request_share", true}, {"tokenizer_id", true}, {"rtfx", true}, {"ramp_up_strategy", true},
		{"percentile_metrics", true}, {"not_issued", true}, {"cached_prompt_share", true}, {"stalls", true}, {"cut_short", true},
		// the families of statistics, whatever the percentile or metric
		{"p99_ttft_ms", true}, {"p99.9_itl_ms", true}, {"mean_anything_ms", true}, {"count_ttft", true}, {"spec_decode_acceptance_rate", true},
	}
	for _, tc := range tests {
		if why := result.ReservedKey(tc.key); (why != "") != tc.reserved {
			t.Errorf("ReservedKey(%q) = %q, want reserved %v", tc.key, why, tc.reserved)
		}
	}
}

// runResult is a run's result of a few ok requests under a concurrency cap.
func runResult(t *testing.T, endpoint string) *result.Result {
	t.Helper()
	tier := records.Tier{Kind: records.KindTier, Tier: 0, Role: records.RoleTier, Arrival: "poisson(rate=4/s)",
		RequestRate: 4, Burstiness: 1, MaxConcurrency: 2, Planned: 3}
	recs := []records.Record{okRecord(0, 0, 0.1, 0.02, 0.02), okRecord(1, 0.3, 0.35, 0.02), okRecord(2, 0.6, 0.7, 0.01, 0.01, 0.01)}
	s := result.DefaultSettings()
	h := records.Header{Kind: records.KindHeader, Tool: "loadcurve", MetricsVersion: records.MetricsVersion, Command: records.CommandRun,
		Endpoint: endpoint, Model: "org/Model-7B", MaxConcurrency: 2,
		StartWall: time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("", 3600)), RequestIDPrefix: "bench-",
		Label: "nightly", Metadata: records.Metadata{{Key: "tp", Value: "2"}, {Key: "gpu", Value: "a100, 80GB"}}}
	res := result.Build(h, s, []result.TierResult{{Tier: tier, Summary: measure.Summarize(recs, tier, s.Measure)}})
	res.Peaks = map[int]result.Peak{0: result.PeakOf(recs)}
	return res
}

// TestRunFileVLLMKeys: summary.json holds vLLM's identity keys and the metadata at its top
// level, and reads its peak figures back.
func TestRunFileVLLMKeys(t *testing.T) {
	res := runResult(t, "chat")
	rf, err := res.RunSummary()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rf)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"date": "20260304-050607", "backend": "openai-chat", "endpoint_type": "openai-chat", "label": "nightly",
		"model_id": "org/Model-7B", "tokenizer_id": nil, "num_prompts": 3.0, "max_output_tokens_per_s": 9.0,
		"max_concurrent_requests": 1.0, "tp": "2", "gpu": "a100, 80GB"}
	for k, v := range want {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("summary.json %q = %v (present %v), want %v", k, got, ok, v)
		}
	}
	run := m["run"].(map[string]any)
	if run["label"] != "nightly" || run["request_id_prefix"] != "bench-" || run["metadata"].(map[string]any)["gpu"] != "a100, 80GB" {
		t.Errorf("run holds label %v, prefix %v, metadata %v", run["label"], run["request_id_prefix"], run["metadata"])
	}
	var back result.RunFile
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Peak == nil || *back.Peak != *rf.Peak || !slices.Equal(back.Run.Metadata, rf.Run.Metadata) {
		t.Errorf("read back peak %v metadata %v, want %v %v", back.Peak, back.Run.Metadata, rf.Peak, rf.Run.Metadata)
	}
	again, _ := json.Marshal(back)
	if !bytes.Equal(again, b) {
		t.Errorf("summary.json does not read back to itself:\n%s\n%s", b, again)
	}

	// Without peaks (bounded, no records file) and without label, they are null.
	res.Peaks, res.Header.Label = nil, ""
	rf, _ = res.RunSummary()
	b, _ = json.Marshal(rf)
	m = nil
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"max_output_tokens_per_s", "max_concurrent_requests", "label", "tokenizer_id"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("%q = %v (present %v), want null", k, v, ok)
		}
	}
}

// TestVLLMResult: the vLLM-layout file holds vLLM's keys only, in vLLM's order, with its default
// statistics (ttft, tpot, itl at p99), or the ones asked for.
func TestVLLMResult(t *testing.T) {
	keysOf := func(b []byte) []string {
		dec := json.NewDecoder(bytes.NewReader(b))
		var keys []string
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
		return keys
	}
	head := []string{"date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts", "tp", "gpu",
		"request_rate", "burstiness", "max_concurrency"}
	figures := []string{"duration", "completed", "failed", "total_input_tokens", "total_output_tokens", "request_throughput",
		"request_goodput", "output_throughput", "total_token_throughput", "latencies", "queue_times", "max_output_tokens_per_s",
		"max_concurrent_requests", "rtfx"}
	stats := func(ps []string, metrics ...string) []string {
		var out []string
		for _, m := range metrics {
			out = append(out, "mean_"+m+"_ms", "median_"+m+"_ms", "std_"+m+"_ms")
			for _, p := range ps {
				out = append(out, p+"_"+m+"_ms")
			}
		}
		return out
	}
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	tests := []struct {
		name string
		opts result.VLLMOptions
		want []string
		file string
	}{
		{"vLLM's defaults", result.VLLMOptions{}, cat(head, figures, stats([]string{"p99"}, "ttft", "tpot", "itl")),
			"nightly-4.0qps-concurrency2-Model-7B-20260304-050607.json"},
		{"chosen metrics and percentiles, in vLLM's order",
			result.VLLMOptions{Metrics: []string{"e2el", "client_queue_time", "ttft"}, Percentiles: []float64{50, 90}},
			cat(head, figures, stats([]string{"p50", "p90"}, "ttft", "e2el", "client_queue_time")), ""},
		{"a ramp", result.VLLMOptions{Ramp: &result.VLLMRamp{Strategy: "linear", Start: 1, End: 8.5}},
			cat(head, []string{"ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps"}, figures, stats([]string{"p99"}, "ttft", "tpot", "itl")),
			"nightly-ramp-up-linear-1qps-8.5qps-concurrency2-Model-7B-20260304-050607.json"},
	}
	res := runResult(t, "chat")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := res.VLLMResult(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := keysOf(b); !slices.Equal(got, tc.want) {
				t.Errorf("keys\n got %v\nwant %v", got, tc.want)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if m["max_concurrency"] != 2.0 || m["request_goodput"] != nil || m["completed"] != 3.0 || m["backend"] != "openai-chat" {
				t.Errorf("values: %s", b)
			}
			if tc.file != "" {
				if name, err := res.VLLMFileName(tc.opts.Ramp); err != nil || name != tc.file {
					t.Errorf("VLLMFileName = %q, %v; want %q", name, err, tc.file)
				}
			}
		})
	}
	if _, err := res.VLLMResult(result.VLLMOptions{Percentiles: []float64{42}}); err == nil || !strings.Contains(err.Error(), "p42") {
		t.Errorf("a percentile the summary lacks: %v", err)
	}
	comp := runResult(t, "completions")
	comp.Header.Label = ""
	if name, _ := comp.VLLMFileName(nil); name != "openai-4.0qps-concurrency2-Model-7B-20260304-050607.json" {
		t.Errorf("VLLMFileName without a label = %q (the label defaults to the backend)", name)
	}
}
