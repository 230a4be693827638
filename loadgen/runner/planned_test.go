package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// TestPlannedHeaderIsOpensHeader: the header a resumed sweep is checked against before anything
// starts (PlannedHeader) says what the header Open builds says, for a base URL, the embedded
// deployment and the virtual clock, with the model given or not (then the planned one has none:
// GET /models names it once the target is up): sweep.ResumeDifferences finds nothing between them.
func TestPlannedHeaderIsOpensHeader(t *testing.T) {
	_, base := startServer(t, 0)
	cfg, err := sim.Profile(sim.ProfileDefault)
	if err != nil {
		t.Fatal(err)
	}
	q := sim.QueueConfig{ModelName: "mdc", Servers: 2, Service: 10 * time.Millisecond, FirstToken: time.Millisecond, OutputTokens: 2}
	src, errs := workloads.NewSource(workloads.KindSynthetic, workloads.LoadOptions{Seed: 1, TimeScale: 1,
		Synthetic: workloads.Synthetic{InputLen: 8, OutputLen: 2}}, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	tests := []struct {
		name string
		edit func(*runner.Options)
	}{
		{"a base URL, the model given", func(o *runner.Options) { o.Target.BaseURL, o.Target.Model = base, "m" }},
		{"a base URL, the model GET /models names", func(o *runner.Options) { o.Target.BaseURL = base }},
		{"the embedded deployment", func(o *runner.Options) { o.Sim, o.SimLabel = cfg, "default" }},
		{"the embedded deployment, two replicas", func(o *runner.Options) {
			o.Sim, o.SimLabel, o.SimReplicas, o.SimBalance = cfg, "default", 2, sim.BalanceRandom
		}},
		{"a queue on the virtual clock", func(o *runner.Options) {
			o.Queue, o.SimLabel, o.Virtual, o.MaxConcurrency, o.Retries = &q, q.String(), true, 0, 0
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := runner.Options{Target: loadgen.Target{Endpoint: loadgen.Chat, Timeout: 30 * time.Second, ExtraBody: []byte(`{"top_p": 0.9}`)},
				Workload: src, Seed: 7, MaxConcurrency: 3, Retries: 1, Version: "test", Command: records.CommandSweep,
				Schedule: schedule("poisson(rates=1,2)"), Settings: result.DefaultSettings().Record()}
			tc.edit(&o)
			planned, err := runner.PlannedHeader(o)
			if err != nil {
				t.Fatal(err)
			}
			s, err := runner.Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			opened := s.Header
			s.Close()
			if o.Target.Model == "" && !o.Virtual {
				if planned.Model != "" {
					t.Errorf("planned model %q before GET /models named one", planned.Model)
				}
				planned.Model = opened.Model
			}
			if d := sweep.ResumeDifferences(opened, planned); len(d) > 0 {
				t.Errorf("the planned header differs from Open's: %+v", d)
			}
		})
	}
}
