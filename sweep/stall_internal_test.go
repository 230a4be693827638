package sweep

import (
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
)

// TestTierLineSaysStalls: a tier whose requests stalled until the drain deadline says so in its
// line on the terminal, with the count (a stall was once recorded as canceled and mentioned
// nowhere); a tier without stalls says nothing of them.
func TestTierLineSaysStalls(t *testing.T) {
	for _, stalls := range []int{0, 3} {
		tr := TierResult{Summary: measure.Summary{NominalRate: 4, Planned: 20, Stalls: stalls,
			Steady: &measure.Steady{Requests: 20, CompliantShare: 0.85, Stationary: true}}}
		line := shortTierLine(tr, nil, curve.Params{})
		if got := strings.Contains(line, "3 requests stalled (the server sent nothing on them until the drain deadline"); got != (stalls > 0) {
			t.Errorf("%d stalls: %q", stalls, line)
		}
		if stalls == 0 && strings.Contains(line, "stall") {
			t.Errorf("no stall, yet: %q", line)
		}
	}
}
