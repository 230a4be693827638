package cost_test

import (
	"fmt"

	"github.com/loadcurve/loadcurve/curve/cost"
)

// The constructed example of METRICS.md "Cost": B is cheaper per hour and
// faster in raw tokens, but dearer per effective token.
func ExampleNewLedger() {
	a := cost.Option{Name: "A", CostPerHour: 100, RawThroughput: 10_000, CompliantShare: 0.95}
	b := cost.Option{Name: "B", CostPerHour: 80, RawThroughput: 12_000, CompliantShare: 0.60}
	l, err := cost.NewLedger(a, b, cost.Params{Currency: "yuan"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("A %.2f, B %.2f per million effective tokens\n", l.A.CostPerMillionEffective, l.B.CostPerMillionEffective)
	fmt.Printf("B vs A: %+.1f %%\n", l.BvsAUnitCostChange*100)
	fmt.Printf("break-even: %.0f tok/s effective, %.1f %% compliant\n",
		l.BreakEvenEffectiveThroughput, l.BreakEvenCompliantShare*100)
	// Output:
	// A 2.92, B 3.09 per million effective tokens
	// B vs A: +5.6 %
	// break-even: 7600 tok/s effective, 63.3 % compliant
}
