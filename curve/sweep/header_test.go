package sweep_test

import (
	"context"
	"testing"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure/records"
)

// headerRunner completes its header at the first tier, as the session does with a run's
// workload fingerprint.
type headerRunner struct {
	sweep.Runner
	h records.Header
}

func (r *headerRunner) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	if r.h.WorkloadFingerprint == "" {
		r.h.WorkloadFingerprint = "completed at the first tier"
	}
	return r.Runner.RunTier(ctx, p, sink, stop)
}

// TestResultHasTheRunnersHeader: the executor builds its result with the header the runner
// wrote, as it stands once the tiers have run (it built it with an empty header, which the
// command then copied in).
func TestResultHasTheRunnersHeader(t *testing.T) {
	cfg := defaultSweep(3)
	cfg.Rates, cfg.Requests, cfg.Confirm = sweep.Rates{List: []float64{2}}, 20, false
	r := &headerRunner{Runner: &virtual.QueueRunner{Config: fourSlots.Queue},
		h: records.Header{Kind: records.KindHeader, Command: records.CommandSweep, Model: "m", Arrival: "sweep(2, burstiness=1)"}}
	for _, tc := range []struct {
		name   string
		header func() records.Header
		want   records.Header
	}{
		{"the runner's", func() records.Header { return r.h }, records.Header{Kind: records.KindHeader, Command: records.CommandSweep,
			Model: "m", Arrival: "sweep(2, burstiness=1)", WorkloadFingerprint: "completed at the first tier"}},
		{"none", nil, records.Header{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.h.WorkloadFingerprint = ""
			res, err := (&sweep.Executor{Config: cfg, Runner: r, Header: tc.header}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Header.Kind != tc.want.Kind || res.Header.Command != tc.want.Command || res.Header.Model != tc.want.Model ||
				res.Header.Arrival != tc.want.Arrival || res.Header.WorkloadFingerprint != tc.want.WorkloadFingerprint {
				t.Errorf("result header %+v, want %+v", res.Header, tc.want)
			}
		})
	}
}
