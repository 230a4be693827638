package workloads

import "github.com/loadcurve/loadcurve/internal/field"

// FieldSetRequests names the number of requests of a request set made on its own (SetRequests).
const FieldSetRequests = "requests in the set"

// DefaultSetRequests is the size of a generated request set made on its own.
const DefaultSetRequests = 1000

// SetRequests is how many requests a set made on its own of src holds when n were asked for
// (stated: n was given, not defaulted): n, which must be >= 1; of a file with no count stated,
// all of its requests. src may be nil (not read): n is checked alone.
func SetRequests(src *Source, n int, stated bool) (int, error) {
	if n < 1 {
		return n, field.Errorf(FieldSetRequests, "must be >= 1, got %d", n)
	}
	if src != nil && !src.Generated() && !stated {
		return src.Size(), nil
	}
	return n, nil
}
