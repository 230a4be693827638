package compare

import "github.com/loadcurve/loadcurve/internal/field"

// Names of the options Validate and CostsOf refuse (field.Error names).
const (
	FieldConfidence = "paired confidence"
	FieldCostA      = "A's cost per hour"
	FieldCostB      = "B's cost per hour"
)

// Validate returns every invalid option at once, as a user gave them: the confidence of the
// paired intervals must be in (0,1) (Results alone takes 0 for its default).
func (o Options) Validate() []error {
	if !(o.Confidence > 0 && o.Confidence < 1) {
		return []error{field.Errorf(FieldConfidence, "must be in (0,1), got %v", o.Confidence)}
	}
	return nil
}

// CostsOf are the hourly costs of the cost ledger from the costs given for A and B (nil: not
// given): none when neither was; otherwise both are required, each a finite number ≥ 0. It
// returns every problem at once.
func CostsOf(a, b *float64, currency string) (*Costs, []error) {
	if a == nil && b == nil {
		return nil, nil
	}
	var errs []error
	for _, s := range []struct {
		name string
		v    *float64
	}{{FieldCostA, a}, {FieldCostB, b}} {
		switch {
		case s.v == nil:
			errs = append(errs, field.Errorf(s.name, "is required for the cost ledger"))
		case !(*s.v >= 0):
			errs = append(errs, field.Errorf(s.name, "must be a finite number >= 0, got %v", *s.v))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &Costs{A: *a, B: *b, Currency: currency}, nil
}
