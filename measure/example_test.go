package measure_test

import (
	"fmt"

	"github.com/loadcurve/loadcurve/measure"
)

func ExampleParseGoodput() {
	o, err := measure.ParseGoodput([]string{"e2el:20000", "tpot:50,ttft:500"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o)
	_, err = measure.ParseGoodput([]string{"latency:50"})
	fmt.Println(err)
	// Output:
	// ttft:500 tpot:50 e2el:20000
	// objectives: "latency:50": unknown key "latency" (want KEY:MS with KEY one of ttft, tpot, e2el, client_queue_time, e2el_including_client_queue, ttfa, answer_itl)
}

func ExamplePercentile() {
	sorted := []float64{1, 2, 3, 4, 7, 10}
	for _, p := range []float64{50, 90, 99.9} {
		fmt.Printf("%s %.4g\n", measure.PercentileKey(p), measure.Percentile(sorted, p))
	}
	// Output:
	// p50 3.5
	// p90 8.5
	// p99.9 9.985
}
