package sweep_test

import (
	"context"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/internal/racedetector"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
)

// TestSessionDecisionsHoldInSteadyState: the default sweep of a workload of sessions states its
// capacity in sessions per second, and it holds. Three-turn sessions with exponential think
// times of 25 service times on an M/D/c queue: their requests arrive nearly as a Poisson stream
// of three times the session rate (virtual.SessionQueueRunner), so the true session capacity
// is the queue's M/D/c capacity over three. A sweep that measured the ramp-up of later turns as
// steady state (the request rate rises for a session's whole span after T0) would overstate it.
func TestSessionDecisionsHoldInSteadyState(t *testing.T) {
	seeds := 12
	if testing.Short() || racedetector.Enabled {
		seeds = 4
	}
	const turns = 3
	q := sim.QueueConfig{ModelName: "m", Servers: 4, Service: 400 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: 16}
	requests, err := queueing.MDCCapacity(q.Service, q.Servers, ttftObjective-q.FirstToken, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	truth := requests / turns
	var errs []float64
	within := 0
	for seed := int64(1); seed <= int64(seeds); seed++ {
		r := &virtual.SessionQueueRunner{Config: q, Turns: turns, Think: 25 * q.Service}
		res, err := (&sweep.Executor{Config: defaultSweep(seed), Runner: r}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		a := res.Analysis
		if a.Capacity == nil || a.OperatingPoint == nil {
			t.Errorf("seed %d: no capacity or operating point: %v", seed, a.Notes)
			continue
		}
		e := a.Capacity.Rate/truth - 1
		errs = append(errs, e)
		if math.Abs(e) <= 0.15 {
			within++
		}
		if op := a.OperatingPoint; op.Rate > truth {
			t.Errorf("seed %d: operating point %.3f sessions/s above the true capacity %.3f", seed, op.Rate, truth)
		}
		found := false
		for _, n := range res.Notes {
			found = found || n == result.SessionsNote
		}
		if !found {
			t.Errorf("seed %d: the result does not say its rates count sessions: %v", seed, res.Notes)
		}
	}
	sort.Float64s(errs)
	t.Logf("truth %.3f sessions/s (%.3f req/s); capacity errors %v", truth, requests, errs)
	// Measured: 11 of 12 within 15 %, errors from -20 % to +6 %, median -5 % (the longer warm-up
	// leaves fewer requests in each window, so the verdicts near the capacity are more cautious).
	// Without the warm-up over the sessions' span, one sweep in twelve put its operating point
	// 47 % above the capacity.
	if float64(within) < 0.8*float64(len(errs)) {
		t.Errorf("capacity within 15 %% of the truth in only %d of %d sweeps", within, len(errs))
	}
}
