package report

import (
	"fmt"
	"io"
	"math"

	"github.com/loadcurve/loadcurve/curve/plan"
)

// RehearsalText prints a plan's rehearsal (plan.Rehearse's trials, one deployment after the
// other): a line per trial, and after each deployment's what they mean for its plan.
func RehearsalText(w io.Writer, trials []plan.Trial) {
	for _, group := range plan.TrialGroups(trials) {
		for _, r := range group {
			what := "the plan"
			if !r.Planned {
				what = "another count"
			}
			fmt.Fprintf(w, "Rehearsal of %s (%s): %d replicas at %s req/s (%s realised): %s, %s compliant [%s, %s].\n",
				r.Deployment, what, r.Replicas, trialRate(r.PeakRate), trialRate(r.RealisedRate), r.Verdict,
				trialShare(r.Share), trialShare(r.ShareLo), trialShare(r.ShareHi))
		}
		fmt.Fprintln(w, plan.Conclusion(group))
	}
}

// trialRate is a rate of a rehearsal's line: three significant figures.
func trialRate(v float64) string {
	if math.IsNaN(v) {
		return NaNText
	}
	return fmt.Sprintf("%.3g", v)
}

// trialShare is a share of a rehearsal's line, in per cent with two decimals.
func trialShare(v float64) string {
	if math.IsNaN(v) {
		return NaNText
	}
	return fmt.Sprintf("%.2f %%", 100*v)
}
