package servermetrics_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	sm "github.com/loadcurve/loadcurve/measure/servermetrics"
)

// FuzzParse: no input makes Parse panic, and a successful parse yields only
// finite values that Summarize and JSON accept.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"vllm.txt", "vllm_v0.txt", "sglang.txt", "sim.txt"} {
		f.Add(readFixture(f, name))
	}
	for _, s := range []string{
		"",
		"# TYPE a histogram\na_bucket{le=\"+Inf\"} 1\na_count 1\na_sum 0\n",
		"# TYPE sim_step_lateness_seconds histogram\nsim_step_lateness_seconds_bucket{le=\"0.1\"} 3\nsim_step_lateness_seconds_bucket{le=\"+Inf\"} -1\n",
		"{\"vllm:num_requests_running\",model_name=\"m\"} 1\n",
		"vllm:kv_cache_usage_perc NaN\n",
		"a{b=\"\\\"\"} 1 2\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		snap, err := sm.Parse(strings.NewReader(text), "m")
		if err != nil {
			return
		}
		for k, v := range snap.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s = %v", k, v)
			}
		}
		tm := sm.Summarize([]sm.Snapshot{snap, snap})
		if _, err := json.Marshal(tm); err != nil {
			t.Fatalf("marshal %+v: %v", tm, err)
		}
	})
}

func BenchmarkParseVLLM(b *testing.B) {
	text := readFixture(b, "vllm.txt")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := sm.Parse(strings.NewReader(text), "meta-llama/Llama-3.1-8B-Instruct"); err != nil {
			b.Fatal(err)
		}
	}
}
