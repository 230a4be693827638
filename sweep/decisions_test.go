package sweep_test

import (
	"context"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/sim"
	"github.com/loadcurve/loadcurve/sweep"
	"github.com/loadcurve/loadcurve/sweep/sweeptest"
)

// queues are M/D/c FIFO deployments whose capacity at a TTFT objective is known exactly
// (sim.MDCCapacity): fixed slots and a fixed service time, like an inference server that runs a
// fixed number of sequences of a fixed length. Their capacities at a 500 ms TTFT objective and a
// 99 % target lie between 35 % and 80 % of their saturation rates, where the share of requests
// meeting the objective falls from 99.9 % to 98 % over about ±15 % of the rate: a realistic,
// unforgiving shape for a decision at 99 %.
var queues = []struct {
	name string
	q    sim.QueueConfig
}{
	{"4 slots, 400 ms", sim.QueueConfig{ModelName: "m", Servers: 4, Service: 400 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: 16}},
	{"8 slots, 1 s", sim.QueueConfig{ModelName: "m", Servers: 8, Service: time.Second, FirstToken: 50 * time.Millisecond, OutputTokens: 16}},
	{"8 slots, 1.4 s, 64 tokens", sim.QueueConfig{ModelName: "m", Servers: 8, Service: 1400 * time.Millisecond, FirstToken: 50 * time.Millisecond, OutputTokens: 64}},
	{"16 slots, 2 s", sim.QueueConfig{ModelName: "m", Servers: 16, Service: 2 * time.Second, FirstToken: 50 * time.Millisecond, OutputTokens: 16}},
}

const ttftObjective = 500 * time.Millisecond

// defaultSweep is the configuration `loadcurve sweep --goodput ttft:500` runs with.
func defaultSweep(seed int64) sweep.Config {
	return sweep.Config{Rates: sweep.Rates{Auto: true}, Seed: seed, Confirm: true,
		Settings: sweep.Settings{Measure: measure.Options{Objectives: measure.Objectives{TTFT: ttftObjective}}, Params: curve.DefaultParams()}}
}

// TestDecisionsHoldInSteadyState holds the default automatic sweep against the exact steady
// state of M/D/c queues, over several seeds each (on the virtual clock: the queue served by
// sweeptest.QueueRunner is the HTTP queue's own discrete-event model). For every seed:
//
//   - the operating point is below the true capacity (operating there meets the objective);
//   - the confirmation tier, run at the operating point, saw at least the target share;
//   - what the sweep expects at its operating point is within 10 % of what that rate delivers
//     (every request completes in steady state: rate × tokens per request).
//
// And over all seeds, the capacity estimate lands within 10 % of the truth in at least 9 of
// 10 sweeps. (Its error has two sources: the share measured near the capacity, whose standard
// error with misses clustered 5 to 15-fold is about 0.3 points on a 2,000-request tier, and the
// slope of the share there, about 1 point per 10 % of rate: so a single sweep misses 10 % now
// and then, and a claim of "always" would be false.) The confirmation verifies the operating
// point (meets at 95 % confidence) in most sweeps; where it does not, the sweep says so.
func TestDecisionsHoldInSteadyState(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	within, total, verified := 0, 0, 0
	for _, qc := range queues {
		truth, err := sim.MDCCapacity(qc.q.Service, qc.q.Servers, ttftObjective-qc.q.FirstToken, 0.99)
		if err != nil {
			t.Fatal(err)
		}
		var errs []float64
		for seed := int64(1); seed <= int64(seeds); seed++ {
			r := &sweeptest.QueueRunner{Config: qc.q}
			res, err := (&sweep.Executor{Config: defaultSweep(seed), Runner: r}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			a := res.Analysis
			if a.Capacity == nil || a.OperatingPoint == nil {
				t.Errorf("%s seed %d: no capacity or operating point: %v", qc.name, seed, a.Notes)
				continue
			}
			total++
			e := a.Capacity.Rate/truth - 1
			errs = append(errs, e)
			if math.Abs(e) <= 0.10 {
				within++
			}
			op := a.OperatingPoint
			if op.Rate > truth {
				t.Errorf("%s seed %d: operating point %.3f req/s above the true capacity %.3f", qc.name, seed, op.Rate, truth)
			}
			cf := op.Confirmation
			if cf == nil || !cf.AtThisPoint || cf.Share < 0.99 {
				t.Errorf("%s seed %d: the confirmation did not see the target share at the operating point: %+v", qc.name, seed, cf)
			}
			if op.Verified() {
				verified++
			} else if cf != nil {
				t.Logf("%s seed %d: not verified: %s, %.4f [%.4f, %.4f] on %.0f effective", qc.name, seed, cf.Verdict, cf.Share, cf.ShareLo, cf.ShareHi, cf.EffectiveRequests)
			}
			delivers := op.Rate * float64(qc.q.OutputTokens)
			if math.Abs(op.ExpectedRawThroughput/delivers-1) > 0.10 {
				t.Errorf("%s seed %d: expects %.1f tok/s at %.3f req/s, which delivers %.1f", qc.name, seed, op.ExpectedRawThroughput, op.Rate, delivers)
			}
			if cf != nil && math.Abs(cf.RawOutputThroughput/delivers-1) > 0.10 {
				t.Errorf("%s seed %d: the confirmation measured %.1f tok/s at %.3f req/s, which delivers %.1f", qc.name, seed, cf.RawOutputThroughput, op.Rate, delivers)
			}
		}
		sort.Float64s(errs)
		t.Logf("%s: truth %.3f req/s; capacity errors %v", qc.name, truth, errs)
	}
	t.Logf("capacity within 10 %% of the truth in %d of %d sweeps; operating point verified in %d", within, total, verified)
	if total == 0 || float64(within) < 0.9*float64(total) {
		t.Errorf("capacity within 10 %% of the truth in only %d of %d sweeps", within, total)
	}
	if float64(verified) < 0.5*float64(total) {
		t.Errorf("the operating point was verified in only %d of %d sweeps", verified, total)
	}
}

// TestSweepsAreReproducible: the same configuration and seed give the same decisions (the
// virtual queue is deterministic, so every tier must be the same).
func TestSweepsAreReproducible(t *testing.T) {
	run := func() *sweep.Result {
		r := &sweeptest.QueueRunner{Config: queues[0].q}
		res, err := (&sweep.Executor{Config: defaultSweep(7), Runner: r}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(), run()
	if a.Analysis.Capacity.Rate != b.Analysis.Capacity.Rate || len(a.Tiers) != len(b.Tiers) {
		t.Errorf("two runs of one seed differ: %s vs %s, %d vs %d tiers", a.Analysis.Capacity, b.Analysis.Capacity, len(a.Tiers), len(b.Tiers))
	}
}
