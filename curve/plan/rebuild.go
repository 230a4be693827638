package plan

import (
	"errors"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/internal/field"
)

// A Rebuild is the embedded deployment a result measured, built again for a rehearsal: the
// executor (runner.Rebuild) implements it, and plan only reads what it says.
type Rebuild interface {
	// Check says, before anything starts, whether the deployment can be rebuilt and sent the
	// traffic it was measured with: nil, or why not. An error whose chain holds a
	// NotEmbedded() method says the result measured a deployment of its own; one with a
	// Workloads() method, that the rehearsal would send another workload.
	Check() error
	// Target is the deployment the result measured (its records header's).
	Target() string
}

// fieldBaseURL is the target's base URL, as loadgen's errors name it (loadgen.FieldBaseURL;
// TestCheckRebuild holds the two together): the way to rehearse a deployment of one's own.
const fieldBaseURL = "base URL"

// CheckRebuild says whether the deployment named side, read from dir, can be rehearsed on the
// rebuild r at the forecast's peak: nil when it can, else a field sentence on FieldRehearse
// saying why, and what to do instead, wrapping r's error. A result of a deployment of its own
// is rehearsed against its own balancer; one swept with another workload than the rehearsal
// would send, with the sweep's.
func CheckRebuild(side, dir string, r Rebuild, peak float64) error {
	rehearse := field.Ref(FieldRehearse)
	var own interface{ NotEmbedded() bool }
	var wd interface {
		Workloads() (measured, sent string)
	}
	switch err := r.Check(); {
	case err == nil:
		return nil
	case errors.As(err, &own) && own.NotEmbedded():
		return refusal{field.Sentencef(FieldRehearse, "%v: %s (%s) measured %s, not the embedded deployment: rehearse against your own balancer with `loadcurve run %v URL %v %g` and the planned replicas behind it",
			rehearse, side, dir, r.Target(), field.Ref(fieldBaseURL), field.Ref(arrival.FieldRate), peak), err}
	case errors.As(err, &wd):
		measured, sent := wd.Workloads()
		return refusal{field.Sentencef(FieldRehearse, "%v: %s was swept with the workload %s, and the rehearsal would send %s: give plan the sweep's workload flags",
			rehearse, side, measured, sent), err}
	default:
		return field.Sentencef(FieldRehearse, "%v: %s (%s): %w", rehearse, side, dir, err)
	}
}
