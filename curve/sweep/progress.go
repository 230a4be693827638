package sweep

import (
	"fmt"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure/records"
)

// What a tier's progress display says (Plan.Label and Plan.Status): which tier of at most how
// many the sweep can run, how long this one may still run, the load used of the budget, and
// the most time left.

// label names a tier for its progress display: "tier 3 of at most 31 (8.02 req/s)"; a run's
// one tier, "tier 0 (8 req/s)".
func (e *exec) label(role records.Role, idx int, level string) string {
	if e.cfg.Schedule != nil {
		return fmt.Sprintf("%s %d (%s)", roleLabel(role), idx, level)
	}
	return fmt.Sprintf("%s %d of at most %d (%s)", roleLabel(role), idx, e.mostTiers(role, idx), level)
}

// mostTiers is the most tiers the sweep can run, counting from its first, when tier idx of role
// starts: those that ran, this one, and the most that can follow it in this repetition (the
// probes left, MaxTiers of a search or the listed tiers left, the confirmations) and in every
// repetition after it.
func (e *exec) mostTiers(role records.Role, idx int) int {
	c := e.cfg
	confirms := 0
	if c.Confirm && c.StartAt.IsZero() {
		confirms = 2 // one may be run again when the analysis could not judge it
		if c.Rates.Auto && c.budgetBounds() {
			confirms = 4 // and again after the search went on (searchOn)
		}
	}
	search, probes := len(c.Rates.List), 0
	switch {
	case e.axis() == curve.AxisUsers && c.Concurrency.Auto:
		search = c.MaxTiers
	case e.axis() == curve.AxisUsers:
		search = len(c.Concurrency.Levels)
	case c.Rates.Auto:
		search, probes = c.MaxTiers, 1+probeTries
	}
	ran := map[records.Role]int{}
	for _, t := range e.tiers {
		if t.Tier.Repeat == e.repeat {
			ran[t.Tier.Role]++
		}
	}
	ran[role]++ // this one
	left := max(confirms-ran[records.RoleConfirm], 0)
	switch role {
	case records.RoleProbe:
		left += max(probes-ran[records.RoleProbe], 0) + search
	case records.RoleTier:
		left += max(search-ran[records.RoleTier], 0)
	}
	return idx + 1 + left + (c.Repeat-e.repeat-1)*(probes+search+confirms)
}

// status is a tier's Plan.Status: how long its arrivals may still run (to arrivalsEnd, its cap
// or length; sequential: it may stop earlier, once decided), the load used of the budget, and
// the most time the sweep has left (ETA: within what the budget leaves, and within what the
// tiers that may still follow can take, when that is known): "ends in ≤ 1m12s · load 4m12s/1h0m0s
// · sweep ETA ≤ 55m48s".
func (e *exec) status(role records.Role, arrivalsEnd, grace time.Duration, sequential bool) func(time.Duration) string {
	left, bounded := e.budgetLeft()
	budget := e.cfg.Budget
	after, known := e.loadAfter(role)
	return func(elapsed time.Duration) string {
		var parts []string
		if arrivalsEnd > 0 {
			rest := max(arrivalsEnd-elapsed, 0).Round(time.Second)
			if sequential {
				parts = append(parts, fmt.Sprintf("ends in ≤ %v", rest))
			} else {
				parts = append(parts, fmt.Sprintf("ends in %v", rest))
			}
		}
		eta, hasETA := time.Duration(0), false
		if bounded {
			parts = append(parts, fmt.Sprintf("load %v/%v", (budget-left+elapsed).Round(time.Second), budget))
			eta, hasETA = max(left-elapsed, 0), true
		}
		if known && (arrivalsEnd > 0 || after == 0) {
			bound := max(arrivalsEnd+grace-elapsed, 0) + after
			if !hasETA || bound < eta {
				eta, hasETA = bound, true
			}
		}
		if hasETA {
			parts = append(parts, fmt.Sprintf("sweep ETA ≤ %v", eta.Round(time.Second)))
		}
		return strings.Join(parts, " · ")
	}
}

// loadAfter bounds the load the tiers that may follow a tier of role can take (Drain
// included), when the sweep's settings bound each of them: fixed --duration tiers, or tiers that
// run until decided, a search's end tiers and a confirmation within ConfirmFactor times the
// longest cap. known is false for tiers of a fixed request count (their length is the
// deployment's) and for a run.
func (e *exec) loadAfter(role records.Role) (d time.Duration, known bool) {
	c := e.cfg
	if c.Schedule != nil || c.Requests > 0 {
		return 0, false
	}
	n := e.mostTiers(role, len(e.tiers)) - len(e.tiers) - 1 // the tiers that may follow this one
	each := ConfirmFactor * c.MaxTierDuration
	if c.Duration > 0 {
		each = c.Duration
	}
	return time.Duration(n) * (each + c.Drain), true
}
