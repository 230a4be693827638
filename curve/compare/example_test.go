package compare_test

import (
	"fmt"

	"github.com/loadcurve/loadcurve/curve/compare"
)

func ExampleCheck() {
	a := compare.Identity{Fingerprint: "3f2a", CachePolicy: "cold", MetricsVersion: "1"}
	b := compare.Identity{Fingerprint: "3f2a", CachePolicy: "warm", MetricsVersion: "1"}
	for _, m := range compare.Check(a, b) {
		fmt.Println(m)
	}
	// Output:
	// cache policy differs: A=cold, B=warm
}

func ExamplePaired() {
	// TTFT in ms of the same ten requests in two runs; B is about 10 ms faster.
	a := map[int]float64{0: 120, 1: 95, 2: 130, 3: 101, 4: 88, 5: 140, 6: 99, 7: 115, 8: 105, 9: 92}
	b := map[int]float64{0: 108, 1: 86, 2: 121, 3: 93, 4: 80, 5: 126, 6: 91, 7: 104, 8: 97, 9: 95}
	r, err := compare.Paired(a, b, 0.95, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("median B−A %.1f ms, %.0f %% interval [%.0f, %.0f] (%s, exact %.1f %%)\n",
		r.MedianDiff, r.Confidence*100, r.CILow, r.CIHigh, r.Method, r.Achieved*100)
	fmt.Printf("B faster in %d of %d\n", r.Wins, r.N)
	// Output:
	// median B−A -8.5 ms, 95 % interval [-12, -8] (sign-test order statistics, exact 97.9 %)
	// B faster in 9 of 10
}
