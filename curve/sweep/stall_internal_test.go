package sweep

import (
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestTierLineSaysStalls: a tier whose requests stalled until the drain deadline says so in its
// line on the terminal, with the count (a stall was once recorded as canceled and mentioned
// nowhere); a tier without stalls says nothing of them.
func TestTierLineSaysStalls(t *testing.T) {
	for _, stalls := range []int{0, 3} {
		tr := result.TierResult{Summary: measure.Summary{NominalRate: 4, Planned: 20, Stalls: stalls,
			Steady: &measure.Steady{Requests: 20, CompliantShare: 0.85, Stationary: true}}}
		line := shortTierLine(tr, nil, curve.Params{}, false)
		if got := strings.Contains(line, "3 requests stalled (the server sent nothing on them until the drain deadline"); got != (stalls > 0) {
			t.Errorf("%d stalls: %q", stalls, line)
		}
		if stalls == 0 && strings.Contains(line, "stall") {
			t.Errorf("no stall, yet: %q", line)
		}
	}
}

// TestTierLineSaysOverloadedAsTheTableWill: a tier whose arrivals came 40 % faster than the
// deployment completed requests anywhere in the sweep is overloaded, whatever its own trend
// showed: its line says so as it ends, as the sweep's table will say (it said "meets the target"
// on the terminal and "overloaded" in the table). A tier within the margin keeps its verdict.
func TestTierLineSaysOverloadedAsTheTableWill(t *testing.T) {
	tier := func(n int, rate, completions float64) result.TierResult {
		st := &measure.Steady{End: 60, Requests: 1000, Compliant: 1000, Ok: 1000, RealisedRate: rate, RequestThroughput: completions,
			CompliantShare: 1, VarianceFactor: 1, EffectiveRequests: 1000, Stationary: true}
		return result.TierResult{Tier: records.Tier{Tier: n, Role: records.RoleTier}, Summary: measure.Summary{Tier: n, Role: records.RoleTier,
			NominalRate: rate, Planned: 1000, Recorded: 1000, Issued: 1000, Complete: true, RequestThroughput: completions, Steady: st}}
	}
	e := &exec{cfg: Config{Settings: result.Settings{Params: curve.DefaultParams()}}}
	for _, tc := range []struct {
		tier result.TierResult
		want string
	}{
		{tier(1, 5, 5), "meets the target"},
		{tier(2, 10.4, 10), "meets the target"}, // within 5 % of the best completion rate
		{tier(3, 14, 10.1), "overloaded: its queue keeps growing"},
	} {
		e.tiers = append(e.tiers, tc.tier)
		line := shortTierLine(tc.tier, nil, e.cfg.Settings.Params, e.beyondService(tc.tier.Tier.Tier))
		if !strings.HasSuffix(line, tc.want) {
			t.Errorf("tier %d: %q, want it to end %q", tc.tier.Tier.Tier, line, tc.want)
		}
	}
}
