package report_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/report"
)

// TestRehearsalText: a line per trial (the plan's count, then the others), and each
// deployment's conclusion after its trials; an undefined share prints as a dash.
func TestRehearsalText(t *testing.T) {
	trials := []plan.Trial{
		{Deployment: "A", Replicas: 2, Planned: true, PeakRate: 12.3456, RealisedRate: 12.01, Verdict: "meets the objectives", TargetShare: 0.99, Share: 0.9951, ShareLo: 0.99, ShareHi: 0.998},
		{Deployment: "A", Replicas: 1, PeakRate: 12.3456, RealisedRate: math.NaN(), Verdict: "uncertain", TargetShare: 0.99, Share: math.NaN(), ShareLo: math.NaN(), ShareHi: math.NaN()},
	}
	var w bytes.Buffer
	report.RehearsalText(&w, trials)
	want := "Rehearsal of A (the plan): 2 replicas at 12.3 req/s (12 realised): meets the objectives, 99.51 % compliant [99.00 %, 99.80 %].\n" +
		"Rehearsal of A (another count): 1 replicas at 12.3 req/s (— realised): uncertain, — compliant [—, —].\n" +
		plan.Conclusion(trials) + "\n"
	if w.String() != want {
		t.Errorf("got\n%s\nwant\n%s", w.String(), want)
	}
	w.Reset()
	report.RehearsalText(&w, nil)
	if strings.TrimSpace(w.String()) != "" {
		t.Errorf("no rehearsal printed %q", w.String())
	}
}
