package workloads

import (
	"fmt"

	"github.com/loadcurve/loadcurve/internal/param"
)

// Names of the settings of a request set made on its own besides its size (FieldSetRequests).
const (
	FieldSetSeed = "request set seed"
	FieldSetOut  = "request set file"
)

// SetSettings are the user's choices about a request set made on its own: how many requests it
// holds (SetRequests), its seed, and the JSONL file it is written to (Save; none when empty).
type SetSettings struct {
	Requests int
	Seed     int64
	Out      string
}

// DefaultSetSettings are the settings nobody chose: DefaultSetRequests requests (all of a
// file's), seed 0, no file.
func DefaultSetSettings() SetSettings { return SetSettings{Requests: DefaultSetRequests} }

// Params declares the settings, bound to s.
func (s *SetSettings) Params() []param.Param {
	return []param.Param{
		param.Int(FieldSetRequests, &s.Requests, "requests in the set (of a file: at most this many)").Default(fmt.Sprintf("%d; all of a file's", DefaultSetRequests)),
		param.Int64(FieldSetSeed, &s.Seed, "seed of the request set"),
		param.String(FieldSetOut, &s.Out, "write the requests to this JSONL file"),
	}
}

// Size is how many requests the set of src holds (SetRequests), the params (Params, applied)
// saying whether its size was given.
func (s SetSettings) Size(src *Source, ps []param.Param) (int, error) {
	return SetRequests(src, s.Requests, param.IsGiven(ps, FieldSetRequests))
}
