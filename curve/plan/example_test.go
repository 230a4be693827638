package plan_test

import (
	"fmt"
	"strings"

	"github.com/loadcurve/loadcurve/curve/plan"
)

// Two deployments for a flat forecast of 10 req/s: B's replicas cost 30 an hour against A's
// 100, but carry 2 req/s against 10 and deliver 80 compliant tokens a request against 100.
func ExampleCompareDeployments() {
	a := plan.Deployment{Name: "A", OperatingRate: 10, CompliantTokensPerRequest: 100, RawTokensPerRequest: 100, CostPerHour: 100}
	b := plan.Deployment{Name: "B", OperatingRate: 2, CompliantTokensPerRequest: 80, RawTokensPerRequest: 100, CostPerHour: 30}
	c, err := plan.CompareDeployments(a, b, plan.PeakForecast(10), plan.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.A.PeakReplicasFormula)
	fmt.Println(c.B.PeakReplicasFormula)
	fmt.Printf("per million effective tokens: A %.2f, B %.2f\n",
		c.A.Following.CostPerMillionEffectiveTokens, c.B.Following.CostPerMillionEffectiveTokens)
	fmt.Println(c.Following.Summary)
	// Output:
	// N = ⌈peak / operating rate⌉ = ⌈10 / 10⌉ = 1
	// N = ⌈peak / operating rate⌉ = ⌈10 / 2⌉ = 5
	// per million effective tokens: A 27.78, B 52.08
	// B is cheaper up to 4 req/s peak, A above
}

func ExampleReadProfileCSV() {
	f, err := plan.ReadProfileCSV(strings.NewReader("time,rate\n00:00,20\n08:00,120\n18:00,60\n"), "day.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(f.Points), "steps over", f.Period, "peak", f.Peak(), "mean", fmt.Sprintf("%.2f", f.Mean()))
	_, err = plan.ReadProfileCSV(strings.NewReader("00:00,20\n08:00,-1\n07:00,5\n"), "day.csv")
	fmt.Println(err)
	// Output:
	// 3 steps over 24h0m0s peak 120 mean 71.67
	// day.csv:2: rate -1 is negative: want req/s ≥ 0
	// day.csv:3: time 07:00 is not after the previous time 08:00 (line 2): times must increase
}
