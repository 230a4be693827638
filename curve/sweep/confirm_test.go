package sweep_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestConfirmRequests: the confirmation is sized by the Wilson bound at the clustering the search
// measured in the stable tiers that met the target; probes, failing and unstable tiers say
// nothing about it.
func TestConfirmRequests(t *testing.T) {
	tier := func(role records.Role, share, f float64, stable bool) measure.Summary {
		return measure.Summary{Role: role, Steady: &measure.Steady{Stationary: stable, CompliantShare: share, VarianceFactor: f}}
	}
	p := curve.DefaultParams() // 99 % at 95 % confidence
	z2 := 1.959963984540054 * 1.959963984540054
	tests := []struct {
		name   string
		search []measure.Summary
		want   float64
	}{
		{"none ran", nil, 0},
		{"only a probe and a failing tier", []measure.Summary{tier(records.RoleProbe, 1, 30, true), tier(records.RoleTier, 0.9, 40, true)}, 0},
		{"one meeting tier, f = 10", []measure.Summary{tier(records.RoleTier, 1, 10, true)}, sweep.ConfirmMargin * z2 * 10 * 99},
		{"the median f of the meeting tiers", []measure.Summary{tier(records.RoleTier, 1, 4, true), tier(records.RoleTier, 0.995, 12, true),
			tier(records.RoleTier, 1, 7, true), tier(records.RoleTier, 1, 50, false), tier(records.RoleConfirm, 1, 60, true)}, sweep.ConfirmMargin * z2 * 7 * 99},
		{"of two, the larger", []measure.Summary{tier(records.RoleTier, 1, 4, true), tier(records.RoleTier, 0.995, 12, true)}, sweep.ConfirmMargin * z2 * 12 * 99},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sweep.ConfirmRequests(tt.search, p)
			if math.Abs(got-tt.want) > 1e-9*math.Max(1, tt.want) {
				t.Errorf("ConfirmRequests = %v, want %v", got, tt.want)
			}
		})
	}
	// With that many requests and no miss, the Wilson lower bound at the measured f clears the
	// target: the confirmation can verify.
	n := sweep.ConfirmRequests([]measure.Summary{tier(records.RoleTier, 1, 10, true)}, p)
	if lo, _ := curve.WilsonN(1, n/10, p.Confidence); lo < p.TargetShare {
		t.Errorf("%.0f requests at f = 10 give a lower bound %.4f, below the target", n, lo)
	}
}

// laggingSink delays the dispatch of the records passing through it as a stalled client would:
// every arrival planned in the first half of each second is released at that second's middle.
type laggingSink struct{ sweep.Sink }

func (l laggingSink) Write(r *records.Record) error {
	if r.Dispatched != records.Unset {
		if in := r.Planned % time.Second; in < time.Second/2 {
			r.Dispatched = r.Planned - in + time.Second/2
			r.Slot, r.Sent = r.Dispatched, r.Dispatched
		}
	}
	return l.Sink.Write(r)
}

// stallingRunner serves tiers on a virtual queue, its client stalling during the first
// confirmation only.
type stallingRunner struct {
	virtual.QueueRunner
	stalled bool
}

func (s *stallingRunner) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	if p.Tier.Role == records.RoleConfirm && !s.stalled {
		s.stalled = true
		sink = laggingSink{sink}
	}
	return s.QueueRunner.RunTier(ctx, p, sink, stop)
}

// TestAnExcludedConfirmationRunsOnceMore: a confirmation the client could not carry (here its
// releases bunched into half-second bursts) is not the deployment's verdict: the sweep says so
// and runs it once more, and the second one is the operating point's verdict.
func TestAnExcludedConfirmationRunsOnceMore(t *testing.T) {
	r := &stallingRunner{QueueRunner: virtual.QueueRunner{Config: fourSlots.Queue}}
	var logged []string
	x := &sweep.Executor{Config: defaultSweep(3), Runner: r, Log: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var confirms []result.TierResult
	for _, tr := range res.Tiers {
		if tr.Tier.Role == records.RoleConfirm {
			confirms = append(confirms, tr)
		}
	}
	if len(confirms) != 2 || !confirms[0].Summary.ClientBound || confirms[1].Summary.ClientBound {
		t.Fatalf("%d confirmations (want a client-bound one, then one that is not): %v", len(confirms), logged)
	}
	if !slices.ContainsFunc(logged, func(l string) bool { return strings.Contains(l, "could not be judged: once more") }) {
		t.Errorf("the sweep did not say why it confirmed again: %v", logged)
	}
	if cf := res.Analysis.OperatingPoint.Confirmation; cf == nil || cf.Tier != confirms[1].Tier.Tier || !cf.AtThisPoint || cf.Verdict == curve.VerdictExcluded {
		t.Errorf("the operating point's verdict is not the second confirmation's: %+v", cf)
	}
}

// TestTheConfirmationAnnouncesItsOwnLength: with fixed-length tiers the confirmation is
// announced for the length it will run, not for the cap of a tier that runs until decided (it
// once announced "up to 9m57s" for a 30 s tier).
func TestTheConfirmationAnnouncesItsOwnLength(t *testing.T) {
	cfg := defaultSweep(5)
	cfg.Rates, cfg.Duration = sweep.Rates{List: []float64{2, 4, 8}}, 20*time.Second
	var logged []string
	x := &sweep.Executor{Config: cfg, Runner: &virtual.QueueRunner{Config: fourSlots.Queue}, Log: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(logged, func(l string) bool { return strings.HasPrefix(l, "confirming the operating point") })
	if i < 0 || !strings.HasSuffix(logged[i], "for 20s") || strings.Contains(logged[i], "up to") {
		t.Fatalf("the confirmation was announced as %q, want for 20s: %v", logged[max(i, 0)], logged)
	}
	last := res.Tiers[len(res.Tiers)-1]
	if last.Tier.Role != records.RoleConfirm || last.Tier.DurationS != 20 {
		t.Errorf("the confirmation ran %v s, role %s", last.Tier.DurationS, last.Tier.Role)
	}
}

// planRecorder serves tiers on a virtual queue and keeps every plan it was handed.
type planRecorder struct {
	virtual.QueueRunner
	plans []sweep.Plan
}

func (p *planRecorder) RunTier(ctx context.Context, plan sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	p.plans = append(p.plans, plan)
	return p.QueueRunner.RunTier(ctx, plan, sink, stop)
}

// TestTheBurstProbeMayDrain: the 128-request burst is the deployment's whole queue at once, so
// it may drain for as long as a tier may run (a deployment of 8 slots serving 1.4 s requests
// works through it in 22 s, past the 20 s drain, which made every such sweep INCOMPLETE);
// every other tier keeps the drain.
func TestTheBurstProbeMayDrain(t *testing.T) {
	r := &planRecorder{QueueRunner: virtual.QueueRunner{Config: queues[3].Queue}}
	res, err := (&sweep.Executor{Config: sweepFor(queues[3], 1), Runner: r}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.plans {
		burst := p.Tier.Role == records.RoleProbe && math.IsInf(float64(p.Tier.RequestRate), 1)
		if want := sweep.DefaultDrain; burst && p.Grace < sweep.DefaultMaxTierDuration || !burst && p.Grace != want {
			t.Errorf("tier %d (%s at %v): grace %v", p.Tier.Tier, p.Tier.Role, p.Tier.RequestRate, p.Grace)
		}
	}
	if !res.Complete {
		t.Error("a healthy sweep of the slow queue is marked incomplete")
	}
}
