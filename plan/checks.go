package plan

import (
	"fmt"

	"github.com/loadcurve/loadcurve/field"
	"github.com/loadcurve/loadcurve/measure"
)

// CheckVerified refuses to plan the side-th deployment (its result in dir) from an operating
// point no confirmation tier verified, unless AllowUnverified, when it returns the warning to
// say instead. Both name their inputs with field.Ref.
func (s Settings) CheckVerified(side int, dir string, d Deployment, verified bool) (warning string, err error) {
	switch {
	case verified:
		return "", nil
	case !s.AllowUnverified:
		return "", field.Sentencef(FieldAllowUnverified, "%s (%s): its operating point was not verified by a confirmation tier (%s); run the sweep with its confirmation, or pass %v",
			Sides[side], dir, d.Source, field.Ref(FieldAllowUnverified))
	}
	return fmt.Sprintf("%s (%s): planned from an operating point no confirmation tier verified (%v)", Sides[side], dir, field.Ref(FieldAllowUnverified)), nil
}

// CheckComparable refuses to plan A (its result in dirs[0]) against B (dirs[1]) when compare's
// check found them measured differently (k.Differences, which the caller shows first), unless
// AllowDifferent, when it returns the warning to say instead; err, ComparabilityOf's, says how
// to judge both alike. Both name their inputs with field.Ref.
func (s Settings) CheckComparable(k *Comparability, err error, dirs [2]string) (warning string, refused error) {
	if err != nil {
		return "", field.Sentencef(measure.FieldObjectives, "%v; pass %v (and the analysis flags) to judge both alike (their operating points are then re-derived, and verified only where a confirmation tier ran)",
			err, field.Ref(measure.FieldObjectives))
	}
	n := len(k.Differences)
	switch {
	case n == 0:
		return "", nil
	case !s.AllowDifferent:
		return "", field.Sentencef(FieldAllowDifferent, "%s and %s are not comparable (%d differences above: compare's check): a plan of one against the other would compare different work; %v plans them anyway, stamped NOT COMPARABLE",
			dirs[0], dirs[1], n, field.Ref(FieldAllowDifferent))
	}
	return fmt.Sprintf("NOT COMPARABLE (%d differences above): planning A against B anyway (%v)", n, field.Ref(FieldAllowDifferent)), nil
}
