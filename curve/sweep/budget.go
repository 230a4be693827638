package sweep

import (
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

// The budget bounds the load a sweep puts on the target: every tier (probes, search, the
// listed tiers, the confirmation) is planned so that its arrival phase and its drain end
// within what the budget leaves. A tier that runs until decided is shortened to fit; one that
// cannot fit with the shortest cap worth running (MinTierDuration, or the probe's own) and the
// shortest drain worth keeping (leastGrace), or a fixed tier that does not fit, is not run, and
// the sweep says so. The search keeps back what the confirmation will need; when the budget is
// too small for both, the confirmation's share shrinks first (the search must come first: without
// it there is nothing to confirm), and the confirmation gets what the search leaves.

// budgetLeft is the load the sweep's Budget leaves this repetition (Budget less what its tiers
// spent so far), and whether a budget bounds its tiers: every sweep with a Budget but a
// sharded one, whose tiers run in fixed slots that every shard must keep (Validate refuses a
// stated budget they exceed); never a run.
func (e *exec) budgetLeft() (time.Duration, bool) {
	if !e.cfg.budgetBounds() {
		return 0, false
	}
	return e.cfg.Budget - e.spent(), true
}

// budgetBounds reports whether the Budget bounds the sweep's tiers: it is set, and the sweep is
// not sharded (its tiers then run in fixed slots, StartAt and Schedule).
func (c Config) budgetBounds() bool {
	return c.Budget > 0 && c.Schedule == nil && c.StartAt.IsZero()
}

// leastGrace is the shortest drain a tier the budget shortens keeps for its stragglers: the
// longest time in system of the burst probe's requests (the deployment's whole queue at once,
// longer than a request of any tier it can carry takes; from each one's written moment,
// burstTimes), at least a second and at most the
// Drain; when no burst ran (listed rates, users), the Drain, or the shortest cap
// (MinTierDuration) when that is shorter.
func (e *exec) leastGrace() time.Duration {
	var longest time.Duration
	for _, d := range e.burstE2EL {
		longest = max(longest, d)
	}
	if longest == 0 {
		return min(e.cfg.Drain, e.cfg.MinTierDuration)
	}
	return min(e.cfg.Drain, max(longest, time.Second))
}

// fit plans a tier that wants want of arrivals, and the Drain after them, within left: the
// arrivals shrink first, down to least, the whole Drain kept; then the drain, down to
// leastGrace. ok is false when even that does not fit.
func (e *exec) fit(left, want, least time.Duration) (arrivals, grace time.Duration, ok bool) {
	grace = e.cfg.Drain
	if want+grace <= left {
		return want, grace, true
	}
	least = min(least, want)
	arrivals = max(min(want, left-grace), least)
	grace = min(grace, left-arrivals)
	return arrivals, grace, grace >= e.leastGrace()
}

// budgetNote says what the budget changed (a confirmation shortened or skipped, a tier not
// run): on the log, and in the result (Result.BudgetNotes).
func (e *exec) budgetNote(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	if e.cfg.Repeat > 1 {
		s = fmt.Sprintf("repetition %d: %s", e.repeat+1, s)
	}
	e.notes = append(e.notes, s)
	e.logf("%s", s)
}

// outOfBudget is budgetNote for a tier the budget leaves no room for (role, named what): it is
// not run, and the repetition runs no further tier but a confirmation; a confirmation not run
// leaves the operating point unverified, and says so.
func (e *exec) outOfBudget(left time.Duration, role records.Role, what string, need time.Duration) {
	e.exhausted = true
	if role == records.RoleConfirm {
		e.budgetNote("no confirmation: the budget (%v) leaves %v of load, too little for %s, which needs at least %v with its drain: the operating point is not verified; a larger budget would verify it",
			e.cfg.Budget, max(left, 0).Round(time.Second), what, need.Round(time.Second))
		return
	}
	e.budgetNote("the budget (%v) leaves %v of load, too little for %s, which needs at least %v with its drain: not run",
		e.cfg.Budget, max(left, 0).Round(time.Second), what, need.Round(time.Second))
}
