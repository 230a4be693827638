package arrival

import (
	"fmt"
	"math"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Names of a tier's bounds in a SizeError's explanation, as package sweep names them (its
// FieldRequests and FieldDuration), with the rate's FieldRate.
const (
	FieldArrivals = "requests per tier"
	FieldWithin   = "tier duration"
)

// arrivalBytes is what one planned arrival costs in a schedule: its offset.
const arrivalBytes = 8

// Explain says what was refused and what to change, naming the tier's bounds and the rate by
// name (as field.Error.Render names inputs; nil: in these words): the count asked for and the
// memory its schedule alone would hold; a duration at rate inf, which does not bound it; a
// duration expected to plan, or that drew, more than MaxArrivals arrivals.
func (e *SizeError) Explain(name func(string) string) string {
	if name == nil {
		name = func(s string) string { return s }
	}
	switch {
	case e.N > 0:
		return fmt.Sprintf("%s %d is more than the %d arrivals one tier may plan (its schedule alone would hold %s of memory): ask for fewer",
			name(FieldArrivals), e.N, MaxArrivals, field.Bytes(float64(e.N)*arrivalBytes))
	case e.Drawn > 0:
		return fmt.Sprintf("%s %v: %v: shorten %[1]s or lower the rate", name(FieldWithin), e.Within, e)
	case math.IsInf(e.Expected, 1):
		return fmt.Sprintf("%s %v at %s inf plans every arrival at once, so the duration does not bound it: give %s",
			name(FieldWithin), e.Within, name(FieldRate), name(FieldArrivals))
	}
	return fmt.Sprintf("%s %v at %s plans about %.0f arrivals, more than the %d one tier may plan (its schedule alone would hold %s of memory): shorten %[1]s or lower the rate",
		name(FieldWithin), e.Within, e.Spec, e.Expected, MaxArrivals, field.Bytes(e.Expected*arrivalBytes))
}
