package sweep

import (
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/workloads"
)

// CheckSource refuses a workload a sweep cannot run: a trace is its own schedule, one tier, so
// it has no rates to sweep (a run replays it). nil for any other source, and for none.
func CheckSource(src *workloads.Source) error {
	if src == nil || src.Trace == nil {
		return nil
	}
	return field.Sentencef(workloads.FieldWorkload, "%v %s is a trace: a trace is its own schedule, one tier; replay it with `loadcurve run` (and %v)",
		field.Ref(workloads.FieldWorkload), src.Spec, field.Ref(workloads.FieldTimeScale))
}
