package curve_test

import (
	"fmt"

	"github.com/loadcurve/loadcurve/curve"
)

// A constructed sweep: raw output grows 100 tok/s per req/s up to 1000 tok/s
// at 10 req/s and stays there; beyond 10 req/s queueing grows and
// compliance collapses.
func ExampleAnalyze() {
	stable := curve.Trend{Tested: true, N: 1000, PValue: 0.5}
	growing := curve.Trend{Tested: true, N: 1000, PValue: 1e-6, Growing: true}
	points := []curve.Point{
		{Tier: 1, OfferedRate: 4, RawOutputThroughput: 400, CompliantOutputThroughput: 400, Issued: 1000, Compliant: 1000, Trend: stable},
		{Tier: 2, OfferedRate: 8, RawOutputThroughput: 800, CompliantOutputThroughput: 796, Issued: 1000, Compliant: 995, Trend: stable},
		{Tier: 3, OfferedRate: 12, RawOutputThroughput: 1000, CompliantOutputThroughput: 700, Issued: 1000, Compliant: 700, Trend: growing},
		{Tier: 4, OfferedRate: 16, RawOutputThroughput: 1010, CompliantOutputThroughput: 400, Issued: 1000, Compliant: 400, Trend: growing},
	}
	a := curve.Analyze(points, curve.DefaultParams())
	// Capacity: share crosses 99 % between (8, 0.995) and (12, 0.70):
	// 8 + 0.005/0.295·4 = 8.068; operating point 8.068·(1 − 0.2) = 6.454.
	for _, v := range a.Points {
		fmt.Printf("%4g req/s: %5.1f %% compliant [%5.1f, %5.1f] %-5s stable=%v\n",
			v.Point.OfferedRate, 100*v.CompliantShare, 100*v.ShareLo, 100*v.ShareHi, v.Verdict, v.Stable)
	}
	fmt.Printf("plateau from %g req/s at %g tok/s\n", a.Plateau.StartRate, a.Plateau.Throughput)
	fmt.Printf("knee at %g req/s, after %g req/s\n", a.Knee.Rate, a.Knee.AfterRate)
	fmt.Printf("capacity %.2f req/s (%s)\n", a.Capacity.Rate, a.Capacity.Method)
	fmt.Printf("operating point %.2f req/s, about %.0f tok/s compliant\n", a.OperatingPoint.Rate, a.OperatingPoint.ExpectedCompliantThroughput)
	// Output:
	//    4 req/s: 100.0 % compliant [ 99.6, 100.0] meets stable=true
	//    8 req/s:  99.5 % compliant [ 98.8,  99.8] meets stable=true
	//   12 req/s:  70.0 % compliant [ 67.1,  72.8] fails stable=false
	//   16 req/s:  40.0 % compliant [ 37.0,  43.1] fails stable=false
	// plateau from 12 req/s at 1010 tok/s
	// knee at 12 req/s, after 8 req/s
	// capacity 8.07 req/s (interpolated)
	// operating point 6.45 req/s, about 643 tok/s compliant
}
