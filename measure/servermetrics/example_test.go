package servermetrics_test

import (
	"fmt"
	"strings"
	"time"

	sm "github.com/loadcurve/loadcurve/measure/servermetrics"
)

// Two scrapes of a vLLM server, at the start and the end of a tier.
func ExampleSummarize() {
	page := func(queries, hits, gen, running float64) sm.Snapshot {
		text := fmt.Sprintf(`# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="m"} %g
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="m"} %g
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} %g
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} %g
`, queries, hits, gen, running)
		snap, err := sm.Parse(strings.NewReader(text), "m")
		if err != nil {
			panic(err)
		}
		return snap
	}
	start, end := page(1000, 100, 5000, 2), page(3000, 1100, 9000, 6)
	end.At = 30 * time.Second
	tm := sm.Summarize([]sm.Snapshot{start, end})
	fmt.Println(tm.Source, *tm.PrefixCacheHitRate, *tm.GenerationTokens, *tm.MeanRunning)
	// Output: vllm 0.5 4000 4
}
