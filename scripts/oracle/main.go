// Command oracle prints the load an oracle needs to certify the capacity of each deployment the
// sweep's decisions are held to (sweeptest.DecisionQueues) to ±10 % at 95 % confidence: it
// knows the true capacity T and runs one tier at 0.9·T and one at 1.1·T, each just long enough
// for its compliant share's interval to exclude the 99 % target (sweeptest.Oracle). The
// time-to-decision benchmark of docs/PERFORMANCE.md states the sweep's time against it.
//
//	go run ./scripts/oracle            # the table, in markdown
//	go run ./scripts/oracle -precision 0.05
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/loadcurve/loadcurve/curve/sweep/sweeptest"
)

func main() {
	precision := flag.Float64("precision", 0.1, "half-width of the interval to certify, relative to the capacity")
	reps := flag.Int("replications", 300, "independent tiers that measure each variance factor")
	flag.Parse()
	fmt.Printf("Oracle: certify the capacity to ±%.0f %% at 95 %% confidence (99 %% of requests within the TTFT objective).\n\n", 100**precision)
	fmt.Println("| deployment | true capacity | tier | share there | variance factor | effective requests | requests | seconds |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, d := range sweeptest.DecisionQueues {
		res, err := sweeptest.Oracle{Queue: d.Queue, Objective: d.Objective, Precision: *precision, Replications: *reps}.Run()
		if err != nil {
			fmt.Fprintf(os.Stderr, "oracle: %s: %v\n", d.Name, err)
			os.Exit(1)
		}
		for i, t := range []sweeptest.OracleTier{res.Below, res.Above} {
			name, truth := "", ""
			if i == 0 {
				name, truth = d.Name, fmt.Sprintf("%.3f req/s", res.Capacity)
			}
			fmt.Printf("| %s | %s | %.3g req/s (%.2f·T) | %.3f %% | %.1f | %.0f | %.0f | %.0f |\n", name, truth, t.Rate, t.Rate/res.Capacity,
				100*t.Share, t.VarianceFactor, t.EffectiveRequests, t.Requests, t.Seconds)
		}
		fmt.Printf("| | | **both** | | | | | **%.0f s (%.1f min)** |\n", res.Seconds, res.Seconds/60)
	}
}
