package plan_test

import (
	"errors"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/measure"
)

// asFlag writes an input as a command line would: --NAME.
func asFlag(name string) string { return "--" + name }

// TestCheckVerified: an operating point no confirmation tier verified is refused, naming the
// input that waives it and saying the sweep's reason; waived, it is warned of; verified, neither.
func TestCheckVerified(t *testing.T) {
	d := plan.Deployment{Source: "confirmation tier 3", Verification: "not verified yet: confirmation tier 3 was 100 % compliant"}
	for _, tc := range []struct {
		name     string
		verified bool
		allow    bool
		warning  string
		refusal  string
	}{
		{"verified", true, false, "", ""},
		{"verified, allowed anyway", true, true, "", ""},
		{"unverified: refused", false, false, "",
			"A (r1): its operating point was not verified yet: confirmation tier 3 was 100 % compliant; run the sweep with its confirmation (a larger budget), or pass --allow-unverified"},
		{"unverified, allowed: warned", false, true, "A (r1): planned from an operating point that was not verified yet: confirmation tier 3 was 100 % compliant (--allow-unverified); every figure of its plan says so", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := plan.DefaultSettings()
			s.AllowUnverified = tc.allow
			warning, err := s.CheckVerified("A", "r1", d, tc.verified)
			if got := param.Render(warning, asFlag); got != tc.warning {
				t.Errorf("warning %q, want %q", got, tc.warning)
			}
			checkRefusal(t, err, plan.FieldAllowUnverified, tc.refusal)
		})
	}
}

// TestCheckComparable: results judged under other objectives are refused, naming the input
// that judges both alike; results measured differently are refused, naming the input that
// waives it, and waived, warned of; alike, neither.
func TestCheckComparable(t *testing.T) {
	a, _ := virtualSweep(t, 2*time.Second)
	withSeed := func(seed int64) *result.Result { r := *a; r.Header.Seed = seed; return &r }
	withObjective := func(d time.Duration) *result.Result {
		r := *a
		r.Settings.Measure.Objectives = measure.Objectives{TTFT: d}
		return &r
	}
	for _, tc := range []struct {
		name        string
		b           *result.Result
		allow       bool
		differences int // -1: no findings
		warning     string
		field       string
		refusal     string
	}{
		{"alike", a, false, 0, "", "", ""},
		{"another seed: refused", withSeed(a.Header.Seed + 1), false, 1, "", plan.FieldAllowDifferent,
			"a and b are not comparable (1 differences above: compare's check): a plan of one against the other would compare different work; --allow-different plans them anyway, stamped NOT COMPARABLE"},
		{"another seed, allowed: warned", withSeed(a.Header.Seed + 1), true, 1, "NOT COMPARABLE (1 differences above): planning A against B anyway (--allow-different)", "", ""},
		{"other objectives: refused, even allowed", withObjective(time.Second), true, -1, "", measure.FieldObjectives,
			`A and B were judged under different objectives ("ttft:2000" and "ttft:1000"): their operating points do not answer the same question; pass --objectives (and the analysis flags) to judge both alike (their operating points are then re-derived, and verified only where a confirmation tier ran)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := plan.DefaultSettings()
			s.AllowDifferent = tc.allow
			k, warning, err := s.CheckComparable(a, tc.b, "a", "b")
			if (k == nil) != (tc.differences < 0) || (k != nil && len(k.Differences) != tc.differences) {
				t.Errorf("comparability %+v, want %d differences", k, tc.differences)
			}
			if got := param.Render(warning, asFlag); got != tc.warning {
				t.Errorf("warning %q, want %q", got, tc.warning)
			}
			checkRefusal(t, err, tc.field, tc.refusal)
			var od *plan.ObjectivesDiffer
			if tc.field == measure.FieldObjectives && !errors.As(err, &od) {
				t.Errorf("refusal %v does not wrap the ObjectivesDiffer", err)
			}
		})
	}
}

// checkRefusal checks that err is the field error on name that reads, its inputs written as
// flags, as want ("": no error).
func checkRefusal(t *testing.T, err error, name, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("refusal %v, want none", err)
		}
		return
	}
	fe := field.Of(err)
	if fe == nil || fe.Name != name {
		t.Fatalf("refusal %v: want a field error on %q", err, name)
	}
	if got := fe.Render(asFlag); got != want {
		t.Errorf("refusal\n %q, want\n %q", got, want)
	}
}

// TestDeploymentsOfUnreadResults: a side whose result could not be read (Loaded nil; the
// reader's error is the caller's) makes no deployment and is compared with nothing, while each
// side's own settings are still checked: a missing hourly cost is refused for the side it is
// missing from, and with both costs given there is nothing else to say.
func TestDeploymentsOfUnreadResults(t *testing.T) {
	for _, bCost := range []float64{1, 0} {
		set := plan.DefaultSettings()
		set.CostPerHour[0], set.CostPerHour[1] = 1, bCost
		ins := []plan.Input{{Side: "A", Dir: "/r/a"}, {Side: "B", Dir: "/r/b"}}
		ds, k, errs := set.Deployments(ins, func(string) { t.Error("a warning for unread results") }, func(string) { t.Error("differences of unread results") })
		if ds != nil || k != nil {
			t.Errorf("B's cost %v: deployments %v, comparability %v: want none", bCost, ds, k)
		}
		if bCost > 0 && len(errs) > 0 {
			t.Errorf("both costs given: errors %v, want none (the readers' errors are the caller's)", errs)
		}
		if bCost == 0 && (len(errs) != 1 || field.Of(errs[0]) == nil || field.Of(errs[0]).Name != plan.FieldCostPerHourB) {
			t.Errorf("B's cost missing: errors %v, want that alone", errs)
		}
	}
}
