package servermetrics_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sm "github.com/loadcurve/loadcurve/measure/servermetrics"
)

func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The fixtures are hand-made in each server's real exposition format
// (Python prometheus_client for vLLM and SGLang, with HELP/TYPE lines,
// engine and rank labels and _created series; the sim's own writer). The
// expected values are the fixture's numbers, added or averaged by hand.
func TestParseFixtures(t *testing.T) {
	const llama = "meta-llama/Llama-3.1-8B-Instruct"
	vllmV1 := map[string]float64{
		sm.NameRunning:          5 + 3,
		sm.NameWaiting:          2 + 0,
		sm.NameKVUsage:          (0.25 + 0.75) / 2, // a fraction: averaged over engines
		sm.NamePrefixQueries:    1000 + 3000,       // the deprecated gpu_ alias is not added
		sm.NamePrefixHits:       200 + 600,
		sm.NamePreemptions:      4 + 1,
		sm.NamePromptTokens:     5000 + 7000,
		sm.NameGenerationTokens: 1500 + 2500,
		sm.NameRequestsFinished: 10 + 12 + 3 + 5 + 0 + 1, // every finished_reason
	}
	tests := []struct {
		name, file, model string
		wantSource        string
		want              map[string]float64
		wantBuckets       int
		wantWarning       string
	}{
		{name: "vLLM v1, two engines, no model filter", file: "vllm.txt",
			wantSource: sm.SourceVLLM, want: vllmV1},
		{name: "vLLM v1, served model", file: "vllm.txt", model: llama,
			wantSource: sm.SourceVLLM, want: vllmV1},
		{name: "vLLM v1, model matching no series counts every series and says so", file: "vllm.txt", model: "other",
			wantSource: sm.SourceVLLM, want: vllmV1, wantWarning: `no series has model_name="other"`},
		{name: "vLLM v0 names: gpu_cache_usage_perc and the hit-rate gauge", file: "vllm_v0.txt", model: "mistralai/Mistral-7B-Instruct-v0.3",
			wantSource: sm.SourceVLLM, want: map[string]float64{
				sm.NameRunning:          7,
				sm.NameWaiting:          1,
				sm.NameKVUsage:          0.4375,
				sm.NamePrefixHitRate:    0.625,
				sm.NamePreemptions:      2,
				sm.NamePromptTokens:     8192,
				sm.NameGenerationTokens: 2048,
				sm.NameRequestsFinished: 14 + 2,
			}},
		{name: "SGLang: cached/prompt token counters and the hit-rate gauge", file: "sglang.txt", model: "Qwen/Qwen2.5-7B-Instruct",
			wantSource: sm.SourceSGLang, want: map[string]float64{
				sm.NameRunning:          12,
				sm.NameWaiting:          4,
				sm.NameKVUsage:          0.42,
				sm.NamePrefixQueries:    20000,
				sm.NamePrefixHits:       6000,
				sm.NamePrefixHitRate:    0.35,
				sm.NamePreemptions:      2,
				sm.NamePromptTokens:     20000,
				sm.NameGenerationTokens: 8000,
				sm.NameRequestsFinished: 100,
			}},
		{name: "sim: vLLM names plus sim_*", file: "sim.txt", model: "loadcurve-sim",
			wantSource: sm.SourceSim, wantBuckets: 12, want: map[string]float64{
				sm.NameRunning:          3,
				sm.NameWaiting:          1,
				sm.NameKVUsage:          0.125,
				sm.NamePrefixQueries:    640,
				sm.NamePrefixHits:       384,
				sm.NamePreemptions:      0,
				sm.NamePromptTokens:     640,
				sm.NameGenerationTokens: 1200,
				sm.NameRequestsFinished: 9 + 1,
				sm.NameRequestsReceived: 11,
			}},
		// Recorded from llama.cpp's llama-server (node-llama-cpp 3.21.1's llama.cpp, --metrics,
		// --parallel 4) mid-run, 4 slots busy and 2 requests deferred (docs/REAL-ENGINE.md). Its
		// prompt_tokens_total excludes the tokens reused from a slot's cache, which
		// prompt_tokens_cached_total counts: the prompt tokens are their sum, as vLLM counts them.
		{name: "llama.cpp: requests_processing/deferred, processed plus cached prompt tokens", file: "llamacpp.txt", model: "tiny-random-qwen3vocab",
			wantSource: sm.SourceLlamaCpp, want: map[string]float64{
				sm.NameRunning:          4,
				sm.NameWaiting:          2,
				sm.NamePrefixQueries:    1159 + 339,
				sm.NamePrefixHits:       339,
				sm.NamePromptTokens:     1159 + 339,
				sm.NameGenerationTokens: 644,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, err := sm.Parse(strings.NewReader(readFixture(t, tt.file)), tt.model)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Source != tt.wantSource {
				t.Errorf("Source = %q, want %q", snap.Source, tt.wantSource)
			}
			if !maps.Equal(snap.Values, tt.want) {
				t.Errorf("Values =\n %v\nwant\n %v", snap.Values, tt.want)
			}
			if len(snap.StepLateness) != tt.wantBuckets {
				t.Errorf("%d step-lateness buckets, want %d", len(snap.StepLateness), tt.wantBuckets)
			}
			if tt.wantWarning == "" && len(snap.Warnings) > 0 {
				t.Errorf("unexpected warnings %q", snap.Warnings)
			}
			if tt.wantWarning != "" && !slices.ContainsFunc(snap.Warnings, func(w string) bool { return strings.Contains(w, tt.wantWarning) }) {
				t.Errorf("warnings %q, want one containing %q", snap.Warnings, tt.wantWarning)
			}
		})
	}
}

func TestParseEdgeCases(t *testing.T) {
	tests := []struct {
		name, text, model string
		wantSource        string
		want              map[string]float64
	}{
		{
			name: "llama.cpp's prompt tokens need both counters: one alone is no count",
			text: "# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total 10\n" +
				"# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\n",
			wantSource: sm.SourceLlamaCpp,
			want:       map[string]float64{sm.NameRunning: 1},
		},
		{
			name: "model filter keeps its series and unlabelled ones",
			text: "# TYPE vllm:num_requests_running gauge\n" +
				`vllm:num_requests_running{model_name="a"} 2` + "\n" +
				`vllm:num_requests_running{model_name="b"} 40` + "\n" +
				`vllm:num_requests_running{engine="x"} 1` + "\n",
			model: "a", wantSource: sm.SourceVLLM,
			want: map[string]float64{sm.NameRunning: 3},
		},
		{
			name: "no model given: every series",
			text: `vllm:num_requests_running{model_name="a"} 2` + "\n" +
				`vllm:num_requests_running{model_name="b"} 40` + "\n",
			wantSource: sm.SourceVLLM,
			want:       map[string]float64{sm.NameRunning: 42},
		},
		{
			name: "a successor beside its deprecated alias wins, the alias is not added",
			text: "# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc 0.9\n" +
				"# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc 0.3\n" +
				"# TYPE vllm:gpu_prefix_cache_queries_total counter\nvllm:gpu_prefix_cache_queries_total 999\n" +
				"# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total 50\n",
			wantSource: sm.SourceVLLM,
			want:       map[string]float64{sm.NameKVUsage: 0.3, sm.NamePrefixQueries: 50},
		},
		{
			name: "vLLM 0.9 deprecated prefix counters alone",
			text: "# TYPE vllm:gpu_prefix_cache_queries_total counter\n" +
				"vllm:gpu_prefix_cache_queries_total 50\n" +
				"# TYPE vllm:gpu_prefix_cache_hits_total counter\n" +
				"vllm:gpu_prefix_cache_hits_total 20\n",
			wantSource: sm.SourceVLLM,
			want:       map[string]float64{sm.NamePrefixQueries: 50, sm.NamePrefixHits: 20},
		},
		{
			name:       "counter family without the _total suffix (OpenMetrics style)",
			text:       "# TYPE vllm:num_preemptions counter\nvllm:num_preemptions 3\n",
			wantSource: sm.SourceVLLM,
			want:       map[string]float64{sm.NamePreemptions: 3},
		},
		{
			name:       "untyped samples count",
			text:       "vllm:generation_tokens_total 7\n",
			wantSource: sm.SourceVLLM,
			want:       map[string]float64{sm.NameGenerationTokens: 7},
		},
		{
			name: "NaN and Inf samples are skipped, the rest averaged",
			text: "# TYPE vllm:kv_cache_usage_perc gauge\n" +
				`vllm:kv_cache_usage_perc{engine="0"} NaN` + "\n" +
				`vllm:kv_cache_usage_perc{engine="1"} +Inf` + "\n" +
				`vllm:kv_cache_usage_perc{engine="2"} 0.5` + "\n",
			wantSource: sm.SourceVLLM,
			want:       map[string]float64{sm.NameKVUsage: 0.5},
		},
		{
			name:       "only NaN: the name is absent",
			text:       "vllm:num_requests_waiting NaN\n",
			wantSource: sm.SourceVLLM,
			want:       map[string]float64{},
		},
		{
			name:  "quoted UTF-8 metric name",
			text:  `{"vllm:num_requests_running",model_name="m"} 4` + "\n",
			model: "m", wantSource: sm.SourceVLLM,
			want: map[string]float64{sm.NameRunning: 4},
		},
		{
			name:       "an exporter we do not know",
			text:       "# TYPE go_goroutines gauge\ngo_goroutines 12\n",
			wantSource: sm.SourceUnknown,
			want:       map[string]float64{},
		},
		{
			name:       "timestamps are accepted",
			text:       "sglang:num_queue_reqs 9 1753271031481\n",
			wantSource: sm.SourceSGLang,
			want:       map[string]float64{sm.NameWaiting: 9},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, err := sm.Parse(strings.NewReader(tt.text), tt.model)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Source != tt.wantSource {
				t.Errorf("Source = %q, want %q", snap.Source, tt.wantSource)
			}
			if !maps.Equal(snap.Values, tt.want) {
				t.Errorf("Values = %v, want %v", snap.Values, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, text, wantErr string
	}{
		{"empty body", "", "no metrics"},
		{"comments only", "# just a comment\n", "no metrics"},
		{"plain text", "this is not prometheus\n", "parse text format"},
		{"HTML", "<html><body>Not here</body></html>\n", "parse text format"},
		{"JSON", `{"detail":"Not Found"}` + "\n", "parse text format"},
		{"second TYPE line", "# TYPE a gauge\na 1\n# TYPE a gauge\n", "parse text format"},
		{"bad value", "vllm:num_requests_running one\n", "parse text format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sm.Parse(strings.NewReader(tt.text), "")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
