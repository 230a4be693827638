package sweep_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/curve/sweep/sweeptest"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestTheBudgetBoundsTheLoad: whatever the budget, the load a sweep puts on the target (the sum
// of its tiers' durations, drains included) stays within it, and what the budget cut is said.
// Before, a budget below the confirmation's reserve made the search's own budget negative, which
// read as no budget at all: `sweep --budget 1m` put 3.7 minutes on the embedded deployment and 34
// on the virtual queue, and said nothing. Each row sweeps a queue on the virtual clock (which
// cancels a tier's stragglers at its drain deadline, as loadgen does) with the default settings
// but the budget; the smallest budgets cannot hold a confirmation, the middle ones shorten it.
func TestTheBudgetBoundsTheLoad(t *testing.T) {
	slow := queues[3] // 8 slots serving 1.4 s requests: its burst drains for 22 s
	users := defaultSweep(1)
	users.Rates, users.Concurrency = sweep.Rates{}, sweep.Concurrency{Auto: true}
	list := defaultSweep(1)
	list.Rates = sweep.Rates{List: []float64{1, 2, 3, 4, 5, 6}}
	fixed := list
	fixed.Duration = 50 * time.Second
	tests := []struct {
		name   string
		runner func() sweep.Runner
		cfg    sweep.Config
		budget time.Duration
		// said: a note the budget must have given ("" for none: the budget cut nothing).
		said string
	}{
		{"1m: the probes, then nothing fits", openQueue(fourSlots.Queue), defaultSweep(1), time.Minute, "too little for a search tier"},
		{"2m", openQueue(fourSlots.Queue), defaultSweep(2), 2 * time.Minute, "the confirmation is shortened"},
		{"5m", openQueue(fourSlots.Queue), defaultSweep(3), 5 * time.Minute, "keeps back"},
		{"15m", openQueue(fourSlots.Queue), defaultSweep(4), 15 * time.Minute, "the search stopped"},
		{"1h, the default: nothing cut", openQueue(fourSlots.Queue), defaultSweep(5), 0, ""},
		{"slow queue, 1m", openQueue(slow.Queue), sweepFor(slow, 1), time.Minute, "too little for a search tier"},
		{"slow queue, 4m", openQueue(slow.Queue), sweepFor(slow, 2), 4 * time.Minute, "budget"},
		{"a list of tiers that run until decided, 3m", openQueue(fourSlots.Queue), list, 3 * time.Minute, "not run"},
		{"fixed tiers of 50 s, 3m: the fourth does not fit", openQueue(fourSlots.Queue), fixed, 3 * time.Minute, "tier 3 (4 req/s), which needs at least 1m10s with its drain: not run"},
		{"users, 2m", closedQueue(fourSlots.Queue), users, 2 * time.Minute, "no confirmation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			cfg.Budget = tt.budget
			var logged []string
			res, err := (&sweep.Executor{Config: cfg, Runner: tt.runner(),
				Log: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			budget := tt.budget
			if budget == 0 {
				budget = sweep.DefaultBudget
			}
			spent := time.Duration(res.TargetSeconds * float64(time.Second))
			if spent > budget {
				t.Errorf("%v of load for a budget of %v:\n%s", spent, budget, strings.Join(logged, "\n"))
			}
			if res.Budget != budget {
				t.Errorf("the result's budget is %v, want %v", res.Budget, budget)
			}
			said := strings.Join(res.BudgetNotes, "\n")
			switch {
			case tt.said == "" && said != "":
				t.Errorf("the budget cut nothing, yet the notes say:\n%s", said)
			case !strings.Contains(said, tt.said):
				t.Errorf("the notes do not say %q:\n%s\nlog:\n%s", tt.said, said, strings.Join(logged, "\n"))
			}
			for _, n := range res.BudgetNotes {
				if !containsLine(logged, n) {
					t.Errorf("a note the log did not say as it happened: %q", n)
				}
			}
			// An operating point left unverified for want of budget says so; one verified needs
			// no excuse.
			if op := res.Analysis.OperatingPoint; op != nil && !op.Verified() && tt.said != "" && op.Confirmation == nil &&
				!strings.Contains(said, "no confirmation") {
				t.Errorf("no confirmation ran and the notes do not say why:\n%s", said)
			}
		})
	}
}

func containsLine(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

// openQueue and closedQueue serve a budget test's tiers on the virtual clock: open tiers on an
// M/D/c queue, or closed loops of users on it.
func openQueue(q sim.QueueConfig) func() sweep.Runner {
	return func() sweep.Runner { return &virtual.QueueRunner{Config: q} }
}

func closedQueue(q sim.QueueConfig) func() sweep.Runner {
	return func() sweep.Runner { return &virtual.ClosedQueueRunner{Config: q} }
}

// TestABudgetShortenedConfirmationSaysHowFarItGot: a confirmation the budget shortened that
// ends undecided is reported as not verified yet, with the confidence it reached, never as
// verified.
func TestABudgetShortenedConfirmationSaysHowFarItGot(t *testing.T) {
	cfg := defaultSweep(2)
	cfg.Budget = 2 * time.Minute
	res, err := (&sweep.Executor{Config: cfg, Runner: &virtual.QueueRunner{Config: fourSlots.Queue}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	op := res.Analysis.OperatingPoint
	if op == nil || op.Confirmation == nil {
		t.Fatalf("no confirmation ran: %v", res.BudgetNotes)
	}
	cf := op.Confirmation
	if cf.Verdict == curve.VerdictUncertain && (op.VerifiedBy == curve.VerifiedByConfirmation || !(cf.ConfidenceReached >= 0)) {
		t.Errorf("an undecided confirmation: verified by %q, confidence reached %v", op.VerifiedBy, cf.ConfidenceReached)
	}
	var last records.Tier
	for _, tr := range res.Tiers {
		last = tr.Tier
	}
	if last.Role != records.RoleConfirm || last.MaxDurationS > 60 {
		t.Errorf("the last tier is a %s capped at %v s: want a confirmation shortened to what 2 minutes leave", last.Role, last.MaxDurationS)
	}
}

// TestProgressSaysTierOfAtMostAndTheBudget: every tier's progress display names it as tier k of
// at most N, N a bound that holds (never fewer than the tiers that ran) and never grows, and
// says how long it may still run, the load used of the budget and the most time left.
func TestProgressSaysTierOfAtMostAndTheBudget(t *testing.T) {
	r := &planRecorder{QueueRunner: virtual.QueueRunner{Config: fourSlots.Queue}}
	cfg := defaultSweep(3)
	cfg.Budget = 15 * time.Minute
	res, err := (&sweep.Executor{Config: cfg, Runner: r}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	label := regexp.MustCompile(`^(probe|tier|confirmation) (\d+) of at most (\d+) \(`)
	prev := math.MaxInt
	for i, p := range r.plans {
		m := label.FindStringSubmatch(p.Label)
		if m == nil {
			t.Fatalf("tier %d's label %q", i, p.Label)
		}
		k, _ := strconv.Atoi(m[2])
		n, _ := strconv.Atoi(m[3])
		if k != i || n < len(res.Tiers) || n > prev {
			t.Errorf("tier %d is %q: at most %d, %d ran, the bound before was %d", i, p.Label, n, len(res.Tiers), prev)
		}
		prev = n
		if p.Status == nil {
			t.Fatalf("tier %d has no status", i)
		}
		st := p.Status(time.Second)
		if !strings.Contains(st, "/15m0s") || !strings.Contains(st, "sweep ETA ≤ ") {
			t.Errorf("tier %d's status %q", i, st)
		}
		if p.Tier.Role != records.RoleProbe && !strings.HasPrefix(st, "ends in ≤ ") {
			t.Errorf("tier %d's status does not say how long it may still run: %q", i, st)
		}
	}
}

// TestTheSearchGoesOnAfterAConfirmationThatDecidedEarly: a search stopped by its share of the
// budget keeps back what a confirmation that verifies on its own may need; when the
// confirmation verified the operating point in a fraction of that, the search goes on with the
// rest (keeping back what that confirmation took, its drain included), and the operating point
// is confirmed again when it moved. On the 8-slot, 320 ms queue with a 20-minute budget (seed 2)
// the sweep runs a search tier after the confirmation, says so, stays within the budget, and
// ends with the operating point verified at a confirmation of its own rate, below the truth
// inside an interval that holds it; with the default hour, whose search certifies the capacity,
// it does not go on. On the 16-slot queue (seed 16) the tier it went on with moved the
// operating point, and a second confirmation verified it at its new rate.
func TestTheSearchGoesOnAfterAConfirmationThatDecidedEarly(t *testing.T) {
	for _, tt := range []struct {
		q      sweeptest.DecisionQueue
		seed   int64
		budget time.Duration
		goesOn bool
		// confirms is how many confirmations run: two when the operating point moved.
		confirms int
	}{
		{queues[0], 2, 20 * time.Minute, true, 1},
		{queues[0], 2, 0, false, 1},
		// 16 slots of 2 s, seed 16: the tier the search went on with moved the estimate, and
		// the operating point was confirmed again at its new rate.
		{queues[4], 16, 20 * time.Minute, true, 2},
	} {
		q := tt.q
		t.Run(fmt.Sprintf("%s seed %d budget %v", q.Name, tt.seed, tt.budget), func(t *testing.T) {
			cfg := sweepFor(q, tt.seed)
			cfg.Budget = tt.budget
			res, err := (&sweep.Executor{Config: cfg, Runner: &virtual.QueueRunner{Config: q.Queue}}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			said := strings.Join(res.BudgetNotes, "\n")
			var roles []string
			searchAfter := false
			for i, tr := range res.Tiers {
				roles = append(roles, string(tr.Tier.Role))
				if tr.Tier.Role == records.RoleTier && i > 0 && slicesContainRole(res.Tiers[:i], records.RoleConfirm) {
					searchAfter = true
				}
			}
			if notes := strings.Contains(said, "the search goes on"); notes != tt.goesOn || searchAfter != tt.goesOn {
				t.Fatalf("goes on: said %v, search tiers after a confirmation %v, want %v (tiers %v):\n%s", notes, searchAfter, tt.goesOn, roles, said)
			}
			if n := strings.Count(strings.Join(roles, " "), string(records.RoleConfirm)); n != tt.confirms {
				t.Errorf("%d confirmations, want %d (tiers %v)", n, tt.confirms, roles)
			}
			budget := cmp.Or(tt.budget, sweep.DefaultBudget)
			if spent := time.Duration(res.TargetSeconds * float64(time.Second)); spent > budget {
				t.Errorf("%v of load for a budget of %v", spent, budget)
			}
			op := res.Analysis.OperatingPoint
			if op == nil || !op.Verified() || op.Confirmation == nil || !op.Confirmation.AtThisPoint {
				t.Fatalf("the operating point is not verified at a confirmation of its own: %+v", op)
			}
			truth, err := q.Capacity(cfg.Settings.Params.TargetShare)
			if err != nil {
				t.Fatal(err)
			}
			if c := res.Analysis.Capacity; c == nil || !(op.Rate < truth) || c.Low > truth || (c.High != nil && *c.High < truth) {
				t.Errorf("capacity %v, operating point %.4g against the true capacity %.4g", c, op.Rate, truth)
			}
		})
	}
}

func slicesContainRole(ts []result.TierResult, role records.Role) bool {
	for _, t := range ts {
		if t.Tier.Role == role {
			return true
		}
	}
	return false
}
