package sweep_test

import (
	"context"
	"math"
	"testing"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
)

// TestRepeatMeasuresTheSpread: --repeat 3 runs three whole decisions with fresh seeds on one
// deployment; the result keeps each one's capacity and operating point, and their spread.
func TestRepeatMeasuresTheSpread(t *testing.T) {
	qc := fourSlots.Queue
	truth, err := queueing.MDCCapacity(qc.Service, qc.Servers, ttftObjective-qc.FirstToken, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	cfg := defaultSweep(7)
	cfg.Repeat = 3
	res, err := (&sweep.Executor{Config: cfg, Runner: &virtual.QueueRunner{Config: qc}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Repeats) != 3 {
		t.Fatalf("%d repetitions, want 3", len(res.Repeats))
	}
	seeds := map[int]map[int64]bool{}
	for _, tr := range res.Tiers {
		if seeds[tr.Tier.Repeat] == nil {
			seeds[tr.Tier.Repeat] = map[int64]bool{}
		}
		seeds[tr.Tier.Repeat][tr.Tier.Seed] = true
	}
	if len(seeds) != 3 {
		t.Fatalf("tiers belong to %d repetitions, want 3", len(seeds))
	}
	for k, s := range seeds { // fresh seeds: no tier of one repetition replays another's traffic
		for j, o := range seeds {
			for seed := range s {
				if j != k && o[seed] {
					t.Errorf("repetitions %d and %d share the seed %d", k, j, seed)
				}
			}
		}
	}
	for _, rep := range res.Repeats {
		if rep.Capacity == nil || math.Abs(rep.Capacity.Rate/truth-1) > 0.2 {
			t.Errorf("repetition %d: capacity %v, truth %.3f req/s", rep.Repeat, rep.Capacity, truth)
		}
		if rep.TargetSeconds <= 0 {
			t.Errorf("repetition %d: no target time", rep.Repeat)
		}
	}
	if c := res.Analysis.Capacity; c == nil || c.Rate != res.Repeats[0].Capacity.Rate {
		t.Errorf("the analysis is not the first repetition's: %v vs %v", c, res.Repeats[0].Capacity)
	}
	sp := res.Spread()
	if sp == nil || sp.N != 3 || !(sp.Min <= sp.Median && sp.Median <= sp.Max) ||
		math.Abs(sp.RelativeRange-(sp.Max-sp.Min)/sp.Median) > 1e-12 {
		t.Fatalf("spread %+v", sp)
	}
	t.Logf("capacities %.3f / %.3f / %.3f req/s (truth %.3f), range %.1f %%", sp.Min, sp.Median, sp.Max, truth, 100*sp.RelativeRange)
}
