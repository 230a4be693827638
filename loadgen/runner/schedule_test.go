package runner_test

import (
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/workloads"
)

func TestRunSchedule(t *testing.T) {
	spec := arrival.Spec{Rate: 4, Burstiness: 1}
	generated := source(t, workloads.KindSynthetic)
	trace := source(t, "mooncake:../../workloads/testdata/mooncake.jsonl")
	for _, tc := range []struct {
		name       string
		src        *workloads.Source
		d          time.Duration
		replay     bool
		refusedFor string // the field of the refusal, if any
	}{
		{"no source", nil, time.Second, false, ""},
		{"a generated workload keeps the spec", generated, time.Second, false, ""},
		{"a trace is replayed", trace, 0, true, ""},
		{"a trace is not bounded by a duration", trace, time.Second, false, arrival.FieldWithin},
	} {
		sch, replay, err := runner.RunSchedule(spec, tc.src, tc.d)
		if tc.refusedFor != "" {
			if fe := field.Of(err); fe == nil || fe.Name != tc.refusedFor {
				t.Errorf("%s: %v, want a refusal of the %s", tc.name, err, tc.refusedFor)
			}
			continue
		}
		if err != nil || replay != tc.replay {
			t.Errorf("%s: replay %v, %v; want %v", tc.name, replay, err, tc.replay)
			continue
		}
		if _, isSpec := sch.(arrival.Spec); isSpec == replay {
			t.Errorf("%s: schedule %T", tc.name, sch)
		}
	}
	name := map[string]string{arrival.FieldWithin: "-d", arrival.FieldArrivals: "-n", workloads.FieldTimeScale: "-s", arrival.FieldRate: "-r", arrival.FieldBurstiness: "-b"}
	if got, want := param.Render(runner.ReplayNote, func(s string) string { return name[s] }), "the trace is the schedule: -r and -b do not apply"; got != want {
		t.Errorf("the note %q, want %q", got, want)
	}
	_, _, err := runner.RunSchedule(spec, trace, time.Second)
	got := field.Of(err).Render(func(s string) string { return name[s] })
	if want := "-d does not apply to a trace replay: the trace is the schedule (cut it with -n, stretch it with -s)"; got != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
}
