package compare

import "github.com/loadcurve/loadcurve/internal/field"

// notComparable is Results' refusal of results measured differently: a field sentence naming
// the input that compares them anyway (FieldForce), which counts the differences as shown
// above it (the caller shows Result.Mismatches first); errors.Is finds ErrNotComparable in it.
func notComparable(a, b string, differences int) error {
	return refusal{field.Sentencef(FieldForce, "%s and %s are not comparable (%d differences above); %v compares them anyway, stamped NOT COMPARABLE",
		a, b, differences, field.Ref(FieldForce)), ErrNotComparable}
}

// refusal is a field error that is also a sentinel error a caller may test for (errors.Is):
// it reads as the field error.
type refusal struct {
	error
	is error
}

func (r refusal) Unwrap() []error { return []error{r.error, r.is} }
