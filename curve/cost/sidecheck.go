package cost

import (
	"errors"
	"strconv"

	"github.com/loadcurve/loadcurve/internal/field"
)

// CheckFigures returns every problem of the side's option o (Option.Validate), each a field
// sentence on the side's setting that gave the figure ("INPUT = -5: must be a finite number
// ≥ 0"): o may hold figures read from a result, named then by the setting they replace.
func (s Side) CheckFigures(o Option) []error {
	var errs []error
	for _, err := range o.Validate() {
		var fe *FieldError
		if errors.As(err, &fe) {
			name := s.Field(fe.Field)
			err = field.Sentencef(name, "%v = %s: must be %s", field.Ref(name), strconv.FormatFloat(fe.Value, 'g', -1, 64), fe.Allowed)
		}
		errs = append(errs, err)
	}
	return errs
}
