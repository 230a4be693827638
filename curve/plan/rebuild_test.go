package plan_test

import (
	"errors"
	"testing"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// TestCheckRebuild: a deployment that cannot be rehearsed is refused in a sentence saying why
// and what to do instead, naming the inputs as a command line does, and wrapping the rebuild's
// finding; one that can is not.
func TestCheckRebuild(t *testing.T) {
	flags := map[string]string{plan.FieldRehearse: "--rehearse", loadgen.FieldBaseURL: "--base-url", arrival.FieldRate: "--request-rate"}
	flag := func(n string) string { return flags[n] }
	profile := sim.ProfileNames()[0]
	ok := runner.Rebuild{Header: records.Header{Sim: profile, Workload: "w"}, Workload: &workloads.Source{Desc: "w"}}
	if err := plan.CheckRebuild("A", "r", ok, 40); err != nil {
		t.Errorf("the measured deployment and workload: %v, want none", err)
	}
	for _, tc := range []struct {
		name   string
		header records.Header
		want   string
		is     error
	}{
		{"a deployment of its own", records.Header{Target: "http://gpu:8000"},
			"--rehearse: A (r) measured http://gpu:8000, not the embedded deployment: rehearse against your own balancer with `loadcurve run --base-url URL --request-rate 40` and the planned replicas behind it",
			runner.ErrNotEmbedded},
		{"another workload", records.Header{Sim: profile, Workload: "synthetic(x)"},
			"--rehearse: A was swept with the workload synthetic(x), and the rehearsal would send no workload: give plan the sweep's workload flags", nil},
		{"a deployment that cannot be rebuilt", records.Header{Sim: "no such profile"},
			`--rehearse: A (r): it measured the embedded deployment "no such profile", whose configuration its header does not keep, and which names no profile that can be rebuilt (`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := plan.CheckRebuild("A", "r", runner.Rebuild{Header: tc.header}, 40)
			fe := field.Of(err)
			if fe == nil || fe.Name != plan.FieldRehearse || err.Error() != fe.Error() {
				t.Fatalf("%v: want a field error on %s that reads as one", err, plan.FieldRehearse)
			}
			if got := fe.Render(flag); len(got) < len(tc.want) || got[:len(tc.want)] != tc.want {
				t.Errorf("%q, want %q…", got, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v does not wrap %v", err, tc.is)
			}
			var wd *runner.WorkloadDiffers
			if errors.As(err, &wd) != (tc.name == "another workload") {
				t.Errorf("%v: a WorkloadDiffers: %v", err, wd != nil)
			}
		})
	}
}
