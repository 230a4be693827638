package runner

import (
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/workloads"
)

// ReplayNote says, of a run whose schedule is a trace's replay (RunSchedule), which inputs do
// not apply to it; it refers to them with field.Ref markers (param.Render writes them).
var ReplayNote = fmt.Sprintf("the trace is the schedule: %v and %v do not apply", field.Ref(arrival.FieldRate), field.Ref(arrival.FieldBurstiness))

// RunSchedule is the schedule of a run of src at spec, d long (0: bounded by its count): spec
// itself, or, for a trace, the trace's replay (replay true), which is its own schedule: a
// duration does not apply to it (a count cuts it, the time scale stretches it).
func RunSchedule(spec arrival.Spec, src *workloads.Source, d time.Duration) (sch arrival.Schedule, replay bool, err error) {
	if src == nil || src.Trace == nil {
		return spec, false, nil
	}
	if d > 0 {
		return nil, false, field.Sentencef(arrival.FieldWithin, "%v does not apply to a trace replay: the trace is the schedule (cut it with %v, stretch it with %v)",
			field.Ref(arrival.FieldWithin), field.Ref(arrival.FieldArrivals), field.Ref(workloads.FieldTimeScale))
	}
	r, err := arrival.NewReplay(src.TraceOffsets(), src.Trace.Source)
	if err != nil {
		return nil, false, field.Sentencef(workloads.FieldWorkload, "%v %s: %w", field.Ref(workloads.FieldWorkload), src.Spec, err)
	}
	return r, true, nil
}
