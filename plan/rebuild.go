package plan

import (
	"errors"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/field"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/runner"
)

// CheckRebuild says whether the deployment named side, read from dir, can be rehearsed on the
// rebuild r (runner.Rebuild.Check) at the forecast's peak: nil when it can, else a field
// sentence on FieldRehearse saying why, and what to do instead, wrapping r's error. A result
// of a deployment of its own is rehearsed against its own balancer; one swept with another
// workload than the rehearsal would send, with the sweep's.
func CheckRebuild(side, dir string, r runner.Rebuild, peak float64) error {
	rehearse := field.Ref(FieldRehearse)
	var wd *runner.WorkloadDiffers
	switch err := r.Check(); {
	case err == nil:
		return nil
	case errors.Is(err, runner.ErrNotEmbedded):
		return refusal{field.Sentencef(FieldRehearse, "%v: %s (%s) measured %s, not the embedded deployment: rehearse against your own balancer with `loadcurve run %v URL %v %g` and the planned replicas behind it",
			rehearse, side, dir, r.Header.Target, field.Ref(loadgen.FieldBaseURL), field.Ref(arrival.FieldRate), peak), err}
	case errors.As(err, &wd):
		return refusal{field.Sentencef(FieldRehearse, "%v: %s was swept with the workload %s, and the rehearsal would send %s: give plan the sweep's workload flags",
			rehearse, side, wd.Measured, wd.Sent), err}
	default:
		return field.Sentencef(FieldRehearse, "%v: %s (%s): %w", rehearse, side, dir, err)
	}
}
