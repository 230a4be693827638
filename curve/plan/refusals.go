package plan

import (
	"fmt"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure"
)

// CheckVerified judges whether the deployment named side, planned from the result in dir
// (FromResult: d, and whether a confirmation tier verified its operating point), may be
// planned: an unverified operating point is refused unless the settings waive it
// (AllowUnverified), and then warned of. The refusal is a field sentence, the warning a text;
// both may refer to inputs (field.Ref; param.Render writes them).
func (s Settings) CheckVerified(side, dir string, d Deployment, verified bool) (warning string, err error) {
	why := d.Verification
	if why == "" {
		why = "not verified by a confirmation tier"
	}
	switch {
	case verified:
		return "", nil
	case !s.AllowUnverified:
		return "", field.Sentencef(FieldAllowUnverified, "%s (%s): its operating point was %s; run the sweep with its confirmation (a larger budget), or pass %v",
			side, dir, why, field.Ref(FieldAllowUnverified))
	}
	return fmt.Sprintf("%s (%s): planned from an operating point that was %s (%v); every figure of its plan says so", side, dir, why, field.Ref(FieldAllowUnverified)), nil
}

// CheckComparable judges whether the result a, read from dirA, may be planned against b, read
// from dirB: ComparabilityOf's findings (nil when they were judged under different objectives),
// the refusal when they were, or when they were measured differently and the settings do not
// waive it (AllowDifferent), and the warning when the settings do. The refusal and the warning
// count the differences as shown above them: the caller shows k.Differences first. The refusal
// is a field sentence, the warning a text; both may refer to inputs (field.Ref; param.Render
// writes them).
func (s Settings) CheckComparable(a, b *result.Result, dirA, dirB string) (k *Comparability, warning string, err error) {
	k, err = ComparabilityOf(a, b)
	if err != nil {
		return nil, "", field.Sentencef(measure.FieldObjectives, "%w; pass %v (and the analysis flags) to judge both alike (their operating points are then re-derived, and verified only where a confirmation tier ran)",
			err, field.Ref(measure.FieldObjectives))
	}
	n := len(k.Differences)
	switch {
	case n == 0:
		return k, "", nil
	case !s.AllowDifferent:
		return k, "", field.Sentencef(FieldAllowDifferent, "%s and %s are not comparable (%d differences above: compare's check): a plan of one against the other would compare different work; %v plans them anyway, stamped NOT COMPARABLE",
			dirA, dirB, n, field.Ref(FieldAllowDifferent))
	}
	return k, fmt.Sprintf("NOT COMPARABLE (%d differences above): planning A against B anyway (%v)", n, field.Ref(FieldAllowDifferent)), nil
}
