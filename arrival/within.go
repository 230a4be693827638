package arrival

import (
	"math"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
)

// CheckWithin refuses a tier d long (d > 0) of a steady spec at rate inf: every request is
// planned at once, so a duration does not bound the tier; a count does.
func (s Spec) CheckWithin(d time.Duration) error {
	if d > 0 && math.IsInf(s.Rate, 1) && s.Ramp == RampNone {
		return field.Sentencef(FieldDuration, "%v needs a finite %v (with inf every request is planned at once): use %v",
			field.Ref(FieldDuration), field.Ref(FieldRate), field.Ref(FieldRequests))
	}
	return nil
}
