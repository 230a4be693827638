package plan_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/internal/racedetector"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// rehearsalObjective is the TTFT objective of the rehearsal tests, at the default 99 % target.
const rehearsalObjective = 500 * time.Millisecond

// rehearsalQueues are M/D/c deployments (fixed slots, fixed service time) whose capacity at
// rehearsalObjective is known exactly (queueing.MDCCapacity), as in the sweep's decision tests.
var rehearsalQueues = []struct {
	name string
	q    sim.QueueConfig
}{
	{"4 slots, 400 ms", sim.QueueConfig{ModelName: "m", Servers: 4, Service: 400 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: 16}},
	{"8 slots, 1 s", sim.QueueConfig{ModelName: "m", Servers: 8, Service: time.Second, FirstToken: 50 * time.Millisecond, OutputTokens: 16}},
}

// tightShare is the true compliant share below which a rehearsal must fail. A rehearsal tier
// runs until its verdict is decided, up to at least 6,000 arrivals; with misses clustered up to
// 10-fold (what the sweeps measure near capacity) that is 600 independent ones, on which a share
// of 97 % has a standard error of √(0.97·0.03/600) ≈ 0.7 points. Its 95 % upper bound stays
// below the 99 % target unless the share comes out above 97.6 %, two standard errors above the
// truth: about 1 rehearsal in 40, and fewer the lower the truth.
const tightShare = 0.97

// clearShare is the true share above which a rehearsal must not fail: 0.5 points above the
// target, where a failure would need the measured share more than three standard errors below
// the truth.
const clearShare = 0.995

// TestRehearsalHoldsAtThePlanAndFailsBelow sweeps one replica of an M/D/c deployment on the
// virtual clock, plans a forecast peak that needs exactly N replicas of its operating point
// (the largest peak that plans N: N × the operating rate, so the plan is as tight as it gets),
// and rehearses the plan with plan.Rehearse and sweep.RunTrial on N and N − 1 virtual replicas behind
// a balancer (virtual.ClusterQueueRunner). Over seeds and both balance policies:
//
//   - at the planned count, every replica runs at or below the operating point, which is below
//     the true capacity: the rehearsal never fails, and meets in at least 4 of 5 trials (a
//     trial is a confirmation tier, which the sweep tests hold to the same rate);
//   - one replica below, each replica gets N/(N − 1) times the operating rate. The steady state
//     there is known: for the random balancer it is the M/D/c queue at peak/(N − 1) exactly, for
//     round-robin (every (N − 1)-th arrival: a smoother stream) a long discrete-event run gives
//     it. Where the true share is below the target, the rehearsal never says the fewer replicas
//     meet it; below tightShare, it fails them, every time; above clearShare, it never fails them.
//
// With the random balancer the plan is tight (one replica fewer falls to a 93 % to 97 % share);
// with round-robin it is not: the smoother stream holds 99.3 % to 99.9 % on one replica fewer,
// and the rehearsal does not fail it. The plan's assumption (each replica sees the peak's
// burstiness) is exact for random balancing and conservative for round-robin.
func TestRehearsalHoldsAtThePlanAndFailsBelow(t *testing.T) {
	seeds := 4
	if testing.Short() || racedetector.Enabled {
		seeds = 2
	}
	const n = 3 // the planned replicas
	ctx := context.Background()
	held, meets, tight, failed := 0, 0, 0, 0
	for _, qc := range rehearsalQueues {
		truth, err := queueing.MDCCapacity(qc.q.Service, qc.q.Servers, rehearsalObjective-qc.q.FirstToken, 0.99)
		if err != nil {
			t.Fatal(err)
		}
		for seed := int64(1); seed <= int64(seeds); seed++ {
			cfg := sweep.Config{Rates: sweep.Rates{Auto: true}, Seed: seed, Confirm: true,
				Settings: result.Settings{Measure: measure.Options{Objectives: measure.Objectives{TTFT: rehearsalObjective}}, Params: curve.DefaultParams()}}
			res, err := (&sweep.Executor{Config: cfg, Runner: &virtual.QueueRunner{Config: qc.q}}).Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			d, verified, err := plan.FromAnalysis("A", res.Analysis)
			if err != nil {
				t.Fatalf("%s seed %d: %v", qc.name, seed, err)
			}
			if !verified {
				t.Logf("%s seed %d: the operating point %.3f was not verified: not planned from", qc.name, seed, d.OperatingRate)
				continue
			}
			if d.OperatingRate > truth {
				t.Errorf("%s seed %d: operating point %.3f req/s above the true capacity %.3f", qc.name, seed, d.OperatingRate, truth)
				continue
			}
			d.CostPerHour = 1
			peak := n * d.OperatingRate
			p, err := plan.Plan(d, plan.PeakForecast(peak), plan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if p.PeakReplicas != n {
				t.Fatalf("%s seed %d: %g req/s on %.4f req/s a replica plans %d replicas, want %d", qc.name, seed, peak, d.OperatingRate, p.PeakReplicas, n)
			}
			for _, policy := range sim.BalancePolicies() {
				below, err := trueShare(qc.q, n-1, policy, peak)
				if err != nil {
					t.Fatal(err)
				}
				trials, err := plan.Rehearse(n, func(k int) (plan.Trial, error) {
					r := &virtual.ClusterQueueRunner{Config: qc.q, Replicas: k, Policy: policy, Seed: seed}
					return try(ctx, res, r, plan.TrialConfig{Deployment: "A", Replicas: k, Peak: peak, Seed: seed + 100})
				})
				if err != nil {
					t.Fatal(err)
				}
				at, one := trials[0], trials[len(trials)-1]
				what := fmt.Sprintf("%s seed %d %s: %g req/s", qc.name, seed, policy, peak)
				t.Logf("%s: %d replicas %s %.4f [%.4f, %.4f]; %d replicas %s %.4f [%.4f, %.4f] (true share %.4f)", what,
					at.Replicas, at.Verdict, at.Share, at.ShareLo, at.ShareHi, one.Replicas, one.Verdict, one.Share, one.ShareLo, one.ShareHi, below)
				if at.Replicas != n || one.Replicas != n-1 {
					t.Fatalf("%s: trials of %d … %d replicas, want %d first and %d last", what, at.Replicas, one.Replicas, n, n-1)
				}
				held++
				if at.Failed() {
					t.Errorf("%s: the plan of %d replicas failed its rehearsal at %.3f req/s a replica (true capacity %.3f): %s", what, n, peak/n, truth, at.Reason)
				}
				if at.Verdict == string(curve.VerdictMeets) {
					meets++
				}
				switch {
				case below < 0.99 && one.Verdict == string(curve.VerdictMeets):
					t.Errorf("%s: %d replicas, each at %.3f req/s where the true share is %.4f, met the 99 %% target", what, n-1, peak/(n-1), below)
				case below < tightShare:
					tight++
					if one.Failed() {
						failed++
					} else {
						t.Errorf("%s: %d replicas, each at %.3f req/s where the true share is %.4f, did not fail: %s (%s)", what, n-1, peak/(n-1), below, one.Verdict, one.Reason)
					}
				case below > clearShare && one.Failed():
					t.Errorf("%s: %d replicas, where the true share is %.4f, failed: %s", what, n-1, below, one.Reason)
				}
			}
		}
	}
	t.Logf("planned count: %d trials, %d meet; one below: %d tight, %d failed", held, meets, tight, failed)
	if held == 0 || 5*meets < 4*held {
		t.Errorf("the planned count met in %d of %d rehearsals, want at least 4 in 5", meets, held)
	}
	if 3*tight < held {
		t.Errorf("only %d of %d plans were tight (true share one replica below < %.2f): the test does not test the failure", tight, held, tightShare)
	}
}

// trueShare is the steady-state share of requests meeting rehearsalObjective when peak req/s
// of Poisson arrivals are balanced over replicas of q by policy: for random balancing the
// M/D/c queue at peak/replicas exactly, for round-robin a discrete-event run of 200,000
// arrivals (its first tenth left out as warm-up), whose standard error is below 0.1 points.
func trueShare(q sim.QueueConfig, replicas int, policy string, peak float64) (float64, error) {
	wait := rehearsalObjective - q.FirstToken
	if policy == sim.BalanceRandom {
		s, err := queueing.MDCWaitCDF(peak/float64(replicas), q.Service, q.Servers, wait)
		if err != nil {
			return 0, nil // unstable: no request waits less than any bound in steady state
		}
		return s, nil
	}
	const arrivals = 200_000
	rng := rand.New(rand.NewPCG(1, 2))
	offsets := make([]time.Duration, arrivals)
	at := 0.0
	for i := range offsets {
		at += rng.ExpFloat64() / peak
		offsets[i] = time.Duration(at * float64(time.Second))
	}
	q.OutputTokens = 2 // the waits are the same, and the records carry one inter-token gap
	r := &virtual.ClusterQueueRunner{Config: q, Replicas: replicas, Policy: policy, Seed: 1}
	count := &meetCounter{from: arrivals / 10, wait: rehearsalObjective}
	p := sweep.Plan{Offsets: offsets, ArrivalsEnd: offsets[arrivals-1]}
	if _, err := r.RunTier(context.Background(), p, count, nil); err != nil {
		return 0, err
	}
	return float64(count.met) / float64(count.n), nil
}

// meetCounter counts the records from index from on whose TTFT is within wait.
type meetCounter struct {
	from   int
	wait   time.Duration
	n, met int
}

func (c *meetCounter) Write(r *records.Record) error {
	if r.ID < c.from {
		return nil
	}
	c.n++
	if r.First-r.Sent <= c.wait {
		c.met++
	}
	return nil
}

// TestTryKeepsTheSweepsSettings: a rehearsal tier is judged with the sweep's objectives and
// target share, at the peak, flat, with the sweep's burstiness, and is as long as the sweep's
// confirmation needed.
func TestTryKeepsTheSweepsSettings(t *testing.T) {
	q := rehearsalQueues[0].q
	cfg := sweep.Config{Rates: sweep.Rates{List: []float64{2}}, Burstiness: 4, Seed: 1,
		Settings: result.Settings{Measure: measure.Options{Objectives: measure.Objectives{TTFT: rehearsalObjective}}, Params: curve.DefaultParams()}}
	res, err := (&sweep.Executor{Config: cfg, Runner: &virtual.QueueRunner{Config: q}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec := &tierSpy{Runner: &virtual.ClusterQueueRunner{Config: q, Replicas: 2, Policy: sim.BalanceRoundRobin}}
	tr, err := try(context.Background(), res, rec, plan.TrialConfig{Deployment: "A", Replicas: 2, Peak: 3, Seed: 9, TierRequests: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.plans) != 1 {
		t.Fatalf("Try ran %d tiers, want 1", len(rec.plans))
	}
	id := rec.plans[0].Tier
	if id.RequestRate != 3 || id.Burstiness != 4 || id.Planned > 500 || tr.Replicas != 2 || tr.PeakRate != 3 || tr.Deployment != "A" {
		t.Errorf("tier %+v, trial %+v: want 3 req/s, burstiness 4, at most 500 planned, on 2 replicas", id, tr)
	}
	if tr.Verdict != string(curve.VerdictMeets) || !(tr.Share >= 0.99) {
		t.Errorf("2 replicas at 1.5 req/s each (capacity about 6) gave %s %.4f: %s", tr.Verdict, tr.Share, tr.Reason)
	}
	// Without TierRequests, as long as the sweep's confirmation would be, and at least 3 × 2,000.
	rec.plans = nil
	if _, err := try(context.Background(), res, rec, plan.TrialConfig{Replicas: 2, Peak: 3, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	// Without bounds, a confirmation tier's: at least 3 × 2,000 arrivals within 3 × 300 s (at
	// 3 req/s the duration binds first: about 2,700).
	id = rec.plans[0].Tier
	maxDur := (sweep.ConfirmFactor * sweep.DefaultMaxTierDuration).Seconds()
	if want := min(sweep.ConfirmFactor*sweep.DefaultTierRequests, int(3*maxDur)); id.MaxDurationS != maxDur || float64(id.Planned) < 0.9*float64(want) {
		t.Errorf("a default rehearsal tier plans %d arrivals within %g s, want about %d within %g s", id.Planned, id.MaxDurationS, want, maxDur)
	}
	// Misses cluster in time: at 30 times the operating point's rate, a rehearsal plans 30 times
	// the requests the confirmation needed (here more than the 6,000 floor), as a Poisson count
	// over the time they take (within four standard deviations).
	var sums []measure.Summary
	for _, tr := range res.Tiers {
		sums = append(sums, tr.Summary)
	}
	need := sweep.ConfirmRequests(sums, res.Settings.Params)
	scaled := *res
	scaled.Analysis.OperatingPoint = &curve.OperatingPoint{Rate: 0.1}
	rec.plans = nil
	if _, err := try(context.Background(), &scaled, rec, plan.TrialConfig{Replicas: 2, Peak: 3, Seed: 9, MaxTierDuration: 100_000 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if want := max(sweep.ConfirmFactor*sweep.DefaultTierRequests, int(math.Ceil(30*need))); !(need > 0) || want <= sweep.ConfirmFactor*sweep.DefaultTierRequests ||
		math.Abs(float64(rec.plans[0].Tier.Planned-want)) > 4*math.Sqrt(float64(want)) {
		t.Errorf("at 30 × the operating point, the tier plans %d arrivals; want 30 × %.1f = %d", rec.plans[0].Tier.Planned, need, want)
	}
	if _, err := try(context.Background(), res, rec, plan.TrialConfig{Replicas: 2, Peak: 3, TierRequests: 3}); err == nil {
		t.Error("a 3-request rehearsal tier was accepted")
	}
}

// tierSpy keeps the plans of the tiers it passes on.
type tierSpy struct {
	sweep.Runner
	plans []sweep.Plan
}

func (s *tierSpy) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	s.plans = append(s.plans, p)
	return s.Runner.RunTier(ctx, p, sink, stop)
}

// try runs tc's tier on runner as the command does (sweep.RunTrial) and judges it (plan.TrialOf).
func try(ctx context.Context, res *result.Result, runner sweep.Runner, tc plan.TrialConfig) (plan.Trial, error) {
	v, ran, err := sweep.RunTrial(ctx, res, runner, sweep.TrialTier{Peak: tc.Peak, Seed: tc.Seed, TierRequests: tc.TierRequests, MaxTierDuration: tc.MaxTierDuration})
	if err != nil {
		return plan.Trial{}, err
	}
	return plan.TrialOf(tc, v, ran, res.Settings.Params.TargetShare), nil
}
