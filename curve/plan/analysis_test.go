package plan_test

import (
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

func TestFromAnalysis(t *testing.T) {
	// The README's sweep: capacity 83.9, operating point 67.1 verified by tier 8, which
	// realised 67.7 req/s with 8664 tok/s compliant of 8664 raw: 8664 / 67.7 = 127.98 tokens
	// a request.
	a := curve.Analysis{
		Capacity: &curve.Capacity{Rate: 83.9},
		OperatingPoint: &curve.OperatingPoint{Rate: 67.1, Confirmation: &curve.Confirmation{
			Tier: 8, AtThisPoint: true, Verdict: curve.VerdictMeets, Rate: 67.7,
			RawOutputThroughput: 8664, CompliantOutputThroughput: 8664,
		}},
	}
	d, verified, err := plan.FromAnalysis("sim", a)
	if err != nil {
		t.Fatal(err)
	}
	want := plan.Deployment{Name: "sim", OperatingRate: 67.1, Capacity: 83.9,
		CompliantTokensPerRequest: 8664 / 67.7, RawTokensPerRequest: 8664 / 67.7, Source: "confirmation tier 8", Verified: true}
	if d != want || !verified {
		t.Errorf("got %+v (verified %v), want %+v", d, verified, want)
	}

	a.OperatingPoint.Confirmation.Verdict = curve.VerdictUncertain
	a.OperatingPoint.Verification = "not verified yet: confirmation tier 8 was 100 % compliant"
	if d, verified, err := plan.FromAnalysis("sim", a); err != nil || verified || d.Verified || !d.Unverified() || d.Verification != a.OperatingPoint.Verification {
		t.Errorf("an uncertain confirmation: verified %v (%+v), %v", verified, d, err)
	}
	a.Axis = curve.AxisConcurrency
	if _, _, err := plan.FromAnalysis("sim", a); err == nil || !strings.Contains(err.Error(), "concurrent users") {
		t.Errorf("concurrency axis: %v", err)
	}
	if _, _, err := plan.FromAnalysis("sim", curve.Analysis{}); err == nil || !strings.Contains(err.Error(), "no capacity") {
		t.Errorf("no capacity: %v", err)
	}
}

// TestCapacityLowerBoundIsSaid: a capacity the sweep only bounded from below (every tier met
// the objectives) makes the utilisation of it an upper bound, and the plan says "at most".
func TestCapacityLowerBoundIsSaid(t *testing.T) {
	a := curve.Analysis{
		Capacity: &curve.Capacity{Rate: 40, Method: curve.CapacityLowerBound},
		OperatingPoint: &curve.OperatingPoint{Rate: 32, Confirmation: &curve.Confirmation{
			Tier: 3, AtThisPoint: true, Verdict: curve.VerdictMeets, Rate: 32, RawOutputThroughput: 3200, CompliantOutputThroughput: 3200}},
	}
	d, _, err := plan.FromAnalysis("A", a)
	if err != nil {
		t.Fatal(err)
	}
	if !d.CapacityIsLowerBound {
		t.Fatalf("a lower-bound capacity not marked: %+v", d)
	}
	d.CostPerHour = 1
	r, err := plan.Plan(d, plan.PeakForecast(60), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(r.Notes, "\n")
	if !strings.Contains(notes, "at the peak each replica runs at most 75.0 % of its capacity: the sweep showed only that the capacity is at least 40 req/s") {
		t.Errorf("notes:\n%s", notes)
	}
	a.Capacity.Method = ""
	d, _, _ = plan.FromAnalysis("A", a)
	d.CostPerHour = 1
	r, _ = plan.Plan(d, plan.PeakForecast(60), plan.Options{})
	if notes := strings.Join(r.Notes, "\n"); d.CapacityIsLowerBound || strings.Contains(notes, "at most") || !strings.Contains(notes, "runs at 75.0 % of its capacity (40 req/s)") {
		t.Errorf("an estimated capacity: %v\n%s", d.CapacityIsLowerBound, notes)
	}
}

// TestPlanReadsTheUnitFromTheAxis: a result whose tiers started sessions, or ran closed loops
// of users, is refused by its axis, whatever its notes say (plan once looked for the sessions
// note among them, so a result without it was planned as if its sessions were requests).
func TestPlanReadsTheUnitFromTheAxis(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    measure.Summary
		want string
	}{
		{"sessions", measure.Summary{NominalRate: 2, Sessions: &measure.Sessions{Sessions: 10, MeanTurns: 3}}, "sessions per second"},
		{"users", measure.Summary{Users: 4}, "concurrent users"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := result.Build(records.Header{Command: records.CommandSweep}, result.DefaultSettings(),
				[]result.TierResult{{Tier: records.Tier{Role: records.RoleTier}, Summary: tc.s}})
			r.Notes = nil
			_, _, err := plan.FromResult("A", r, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "plan from a sweep of requests") {
				t.Errorf("got %v, want a refusal in %s", err, tc.want)
			}
		})
	}
}
