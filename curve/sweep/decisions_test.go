package sweep_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/curve/sweep/sweeptest"
	"github.com/loadcurve/loadcurve/internal/racedetector"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// queues are the M/D/c deployments the decisions are held to (sweeptest.DecisionQueues), whose
// capacity at their TTFT objective is known exactly.
var queues = sweeptest.DecisionQueues

// fourSlots is the 4-slot queue with a 500 ms objective that several tests sweep.
var fourSlots = sweeptest.DecisionQueues[1]

// ttftObjective is the objective of defaultSweep.
const ttftObjective = 500 * time.Millisecond

// defaultSweep is the configuration `loadcurve sweep --goodput ttft:500` runs with.
func defaultSweep(seed int64) sweep.Config {
	return sweep.Config{Rates: sweep.Rates{Auto: true}, Seed: seed, Confirm: true,
		Settings: result.Settings{Measure: measure.Options{Objectives: measure.Objectives{TTFT: ttftObjective}}, Params: curve.DefaultParams()}}
}

// sweepFor is the default sweep of a deployment at its own TTFT objective.
func sweepFor(d sweeptest.DecisionQueue, seed int64) sweep.Config {
	cfg := defaultSweep(seed)
	cfg.Settings.Measure.Objectives.TTFT = d.Objective
	return cfg
}

// TestDecisionsHoldInSteadyState holds the default automatic sweep against the exact steady
// state of M/D/c queues, over several seeds each (on the virtual clock: the queue served by
// virtual.QueueRunner is the HTTP queue's own discrete-event model). For every seed:
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
	if testing.Short() || racedetector.Enabled {
		seeds = 2
	}
	within, total, verified := 0, 0, 0
	for _, qc := range queues {
		truth, err := qc.Capacity(0.99)
		if err != nil {
			t.Fatal(err)
		}
		var errs []float64
		for seed := int64(1); seed <= int64(seeds); seed++ {
			r := &virtual.QueueRunner{Config: qc.Queue}
			res, err := (&sweep.Executor{Config: sweepFor(qc, seed), Runner: r}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			a := res.Analysis
			if a.Capacity == nil || a.OperatingPoint == nil {
				t.Errorf("%s seed %d: no capacity or operating point: %v", qc.Name, seed, a.Notes)
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
				t.Errorf("%s seed %d: operating point %.3f req/s above the true capacity %.3f", qc.Name, seed, op.Rate, truth)
			}
			cf := op.Confirmation
			if cf == nil || !cf.AtThisPoint || cf.Share < 0.99 {
				t.Errorf("%s seed %d: the confirmation did not see the target share at the operating point: %+v", qc.Name, seed, cf)
			}
			if op.Verified() {
				verified++
			} else if cf != nil {
				t.Logf("%s seed %d: not verified: %s, %.4f [%.4f, %.4f] on %.0f effective", qc.Name, seed, cf.Verdict, cf.Share, cf.ShareLo, cf.ShareHi, cf.EffectiveRequests)
			}
			delivers := op.Rate * float64(qc.Queue.OutputTokens)
			if math.Abs(op.ExpectedRawThroughput/delivers-1) > 0.10 {
				t.Errorf("%s seed %d: expects %.1f tok/s at %.3f req/s, which delivers %.1f", qc.Name, seed, op.ExpectedRawThroughput, op.Rate, delivers)
			}
			// The confirmation's throughput is its completed requests' tokens (every request
			// brings the same number, so only the few straddling its window's ends can move it),
			// and its completions follow its arrivals, a Poisson count whose spread from the
			// nominal rate is 1/√n for the n requests of its window: n is at least its effective
			// requests, so 4/√(effective) bounds it at four standard errors.
			if cf != nil {
				if got := float64(qc.Queue.OutputTokens) * cf.RequestThroughput; math.Abs(cf.RawOutputThroughput/got-1) > 0.02 {
					t.Errorf("%s seed %d: the confirmation measured %.1f tok/s from %.3f completions/s of %d tokens: %.1f", qc.Name, seed, cf.RawOutputThroughput, cf.RequestThroughput, qc.Queue.OutputTokens, got)
				}
				if tol := 4 / math.Sqrt(cf.EffectiveRequests); math.Abs(cf.RequestThroughput/op.Rate-1) > tol {
					t.Errorf("%s seed %d: the confirmation completed %.3f req/s at %.3f req/s, more than %.1f %% off", qc.Name, seed, cf.RequestThroughput, op.Rate, 100*tol)
				}
			}
		}
		sort.Float64s(errs)
		t.Logf("%s: truth %.3f req/s; capacity errors %v", qc.Name, truth, errs)
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
	run := func() *result.Result {
		r := &virtual.QueueRunner{Config: fourSlots.Queue}
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

// TestDecisionsHoldOnBatchingEngines holds the default automatic sweep against the batching
// deployments whose capacities were found by brute force (sweeptest.DecisionEngines and
// EngineTruths: the embedded deployment's own engine on the virtual clock, with steps that
// lengthen with the batch, chunked prefill, outputs ending at EOS, a prefix cache, preemption).
// For every seed the operating point is below the true capacity; over all, the capacity lands
// within 10 % of the truth and its interval covers it in at least 9 of 10 sweeps, and the
// operating point is verified in most. The time-to-decision benchmark holds them to the same
// on 50 seeds each (docs/PERFORMANCE.md).
func TestDecisionsHoldOnBatchingEngines(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("sweeps of the batching engine cost seconds of CPU each: natively only (the runner's tests run under -race)")
	}
	truths, err := sweeptest.EngineTruths()
	if err != nil {
		t.Fatal(err)
	}
	seeds := 2
	if testing.Short() {
		seeds = 1
	}
	within, covers, verified, total := 0, 0, 0, 0
	for i, d := range sweeptest.DecisionEngines {
		truth := truths[i].Capacity
		for seed := int64(1); seed <= int64(seeds); seed++ {
			run, err := d.Runner()
			if err != nil {
				t.Fatal(err)
			}
			cfg := defaultSweep(seed)
			cfg.Settings.Measure.Objectives = d.Objectives
			res, err := (&sweep.Executor{Config: cfg, Runner: run}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			a := res.Analysis
			total++
			if a.Capacity == nil || a.OperatingPoint == nil {
				t.Errorf("%s seed %d: no capacity or operating point: %v", d.Name, seed, a.Notes)
				continue
			}
			c := a.Capacity
			if math.Abs(c.Rate/truth-1) <= 0.10 {
				within++
			}
			if c.Low <= truth && (c.High == nil || truth <= *c.High) {
				covers++
			}
			if op := a.OperatingPoint; op.Rate > truth {
				t.Errorf("%s seed %d: operating point %.3f req/s above the true capacity %.3f", d.Name, seed, op.Rate, truth)
			}
			if a.OperatingPoint.Verified() {
				verified++
			}
			t.Logf("%s seed %d: truth %.3f; capacity %s; operating point %.3f verified %v; %.0f target-s", d.Name, seed, truth, c, a.OperatingPoint.Rate,
				a.OperatingPoint.Verified(), res.TargetSeconds)
		}
	}
	if float64(within) < 0.9*float64(total) || float64(covers) < 0.9*float64(total) {
		t.Errorf("capacity within 10 %% of the truth in %d of %d sweeps, its interval covering it in %d", within, total, covers)
	}
	if float64(verified) < 0.5*float64(total) {
		t.Errorf("the operating point was verified in only %d of %d sweeps", verified, total)
	}
}

// TestAVerifiedSearchTakesBackTheConfirmationsReserve: the search keeps back a confirmation's
// share of the budget, sized for a confirmation that must verify the operating point on its
// own. When the search's share is spent and its tiers already verify the point (a heavier pool
// met the target with confidence), the confirmation only measures what the point delivers, so
// the rest of that reserve goes to the search, once: more tiers run, the confirmation that
// follows is the light one, and the whole sweep stays within the budget. On the decode-bound
// batching engine the search's share runs out before its interval certifies (docs/PERFORMANCE.md:
// before this, a median 2,583 of the hour's 3,600 target-seconds were used).
func TestAVerifiedSearchTakesBackTheConfirmationsReserve(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("sweeps of the batching engine cost seconds of CPU each: natively only")
	}
	d := sweeptest.DecisionEngines[0] // decode-bound
	released, verified := 0, 0        // sweeps that took the reserve back, and of them verified
	for seed := int64(1); seed <= 3; seed++ {
		run, err := d.Runner()
		if err != nil {
			t.Fatal(err)
		}
		cfg := defaultSweep(seed)
		cfg.Settings.Measure.Objectives = d.Objectives
		var lines []string
		res, err := (&sweep.Executor{Config: cfg, Runner: run,
			Detail: func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if spent := time.Duration(res.TargetSeconds * float64(time.Second)); spent > sweep.DefaultBudget {
			t.Errorf("seed %d: %v of load for a budget of %v", seed, spent, sweep.DefaultBudget)
		}
		at := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "goes to the search") })
		if at < 0 {
			continue
		}
		released++
		if !slices.ContainsFunc(lines[at+1:], func(l string) bool { return strings.HasPrefix(l, "next tier at") }) {
			t.Errorf("seed %d: the reserve went to the search, and no tier ran after it:\n%s", seed, strings.Join(lines[at:], "\n"))
		}
		if slices.ContainsFunc(lines[at+1:], func(l string) bool { return strings.Contains(l, "goes to the search") }) {
			t.Errorf("seed %d: the reserve went to the search twice", seed)
		}
		// The tiers may move the operating point out of what they verify (a later tier with misses
		// widens the interval): the confirmation is then the full one, in what the budget leaves.
		var before []measure.Summary
		for _, tr := range res.Tiers {
			if tr.Tier.Role != records.RoleConfirm {
				before = append(before, tr.Summary)
				continue
			}
			a := curve.Analyze(before, cfg.Settings.Params)
			if op := a.OperatingPoint; op != nil && (op.Verified() || (a.Capacity != nil && a.Capacity.Low >= op.Rate)) && tr.Summary.Planned > sweep.DefaultTierRequests {
				t.Errorf("seed %d: the tiers verify the operating point, yet the confirmation planned %d requests, not the light %d or fewer",
					seed, tr.Summary.Planned, sweep.DefaultTierRequests)
			}
		}
		if a := res.Analysis; a.OperatingPoint != nil && a.OperatingPoint.Verified() {
			verified++
		}
	}
	if released == 0 || verified == 0 {
		t.Errorf("in 3 sweeps of %s the search took back the confirmation's reserve %d times, and %d of those sweeps verified their operating point", d.Name, released, verified)
	}
}
