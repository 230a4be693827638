package plan_test

import (
	"errors"
	"testing"

	"github.com/loadcurve/loadcurve/field"
	"github.com/loadcurve/loadcurve/param"
	"github.com/loadcurve/loadcurve/plan"
)

// TestCheckVerifiedAndComparable: an operating point no confirmation verified is refused unless
// allowed, then a warning; results measured differently are refused unless allowed, then a
// warning; results judged under different objectives are refused, saying how to judge them
// alike. Every input is named by reference.
func TestCheckVerifiedAndComparable(t *testing.T) {
	flag := func(n string) string { return "--" + n }
	say := func(warning string, err error) string {
		if err != nil {
			return "refused: " + field.Of(err).Render(flag)
		}
		return param.Render(warning, flag)
	}
	strict, lax := plan.DefaultSettings(), plan.DefaultSettings()
	lax.AllowUnverified, lax.AllowDifferent = true, true
	d := plan.Deployment{Source: "the curve"}
	differ := &plan.Comparability{Differences: []string{"request-set fingerprint differs"}}
	objectives := errors.New("A and B were judged under different objectives")
	for _, tc := range []struct {
		name, got, want string
	}{
		{"verified", say(strict.CheckVerified(0, "a", d, true)), ""},
		{"not verified", say(strict.CheckVerified(1, "b", d, false)),
			"refused: B (b): its operating point was not verified by a confirmation tier (the curve); run the sweep with its confirmation, or pass --allow-unverified"},
		{"not verified, allowed", say(lax.CheckVerified(0, "a", d, false)),
			"A (a): planned from an operating point no confirmation tier verified (--allow-unverified)"},
		{"alike", say(strict.CheckComparable(&plan.Comparability{}, nil, [2]string{"a", "b"})), ""},
		{"different", say(strict.CheckComparable(differ, nil, [2]string{"a", "b"})),
			"refused: a and b are not comparable (1 differences above: compare's check): a plan of one against the other would compare different work; --allow-different plans them anyway, stamped NOT COMPARABLE"},
		{"different, allowed", say(lax.CheckComparable(differ, nil, [2]string{"a", "b"})),
			"NOT COMPARABLE (1 differences above): planning A against B anyway (--allow-different)"},
		{"other objectives", say(lax.CheckComparable(nil, objectives, [2]string{"a", "b"})),
			"refused: A and B were judged under different objectives; pass --objectives (and the analysis flags) to judge both alike (their operating points are then re-derived, and verified only where a confirmation tier ran)"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q\nwant %q", tc.name, tc.got, tc.want)
		}
	}
}
