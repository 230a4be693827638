package sweep

import (
	"fmt"
	"math"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/records"
)

// Planner places the tiers of an automatic search for the capacity. It is a pure function of
// the tiers run so far and the load they cost (Next), so a sweep can be replayed tier by tier.
//
// Near a 99 % target a tier can rarely say with confidence which side of the capacity it is on
// (misses are rare and cluster, see measure.Steady), but every tier's share says where the
// curve is. So the search spends its tiers where they inform the estimate: it reads the analysis
// of the tiers so far (curve.Analyze) and its estimate c, where the monotone fit of the share
// crosses the target, and wants three tiers around it: one within Precision/4 of c, one below
// within Precision (placed at c·(1 − Precision/2)) and one above (at c·(1 + Precision/2)). It
// runs the first one missing, in that order, and stops once all three exist for the current
// estimate (every tier moves it), after MaxTiers tiers, or when the budget is spent.
//
// Before there is an estimate: the first tier runs at half the probed saturation rate; with every
// tier missing the objective the search goes down (to 40 % of the lightest tier, not below 1 %
// of the saturation rate), with every tier meeting it goes up (half way, geometrically, to the
// lightest tier that failed or never settled, at most 1.5 times the heaviest so far, not above
// 1.5 times the saturation rate).
//
// Tiers the analysis excludes (client-bound, interrupted, cut) tell nothing about the
// deployment and never steer the search: a rate whose tier was excluded runs once more, and
// the search ends, saying why, when that one is excluded too.
type Planner struct {
	Saturation float64 // the probed saturation completion rate, in the schedule's unit
	Params     curve.Params
	Precision  float64
	MaxTiers   int
	// Unit names the rates in the reasons Next gives: "" means "req/s" (the schedule's
	// arrivals are requests); "sessions/s" for a workload of sessions.
	Unit string
	// Budget is the load the search may put on the target (the confirmation's share already
	// taken out); 0: no bound. MinTier is the shortest tier worth starting.
	Budget  time.Duration
	MinTier time.Duration
}

// Step is the next tier of a search.
type Step struct {
	Rate float64
	// Again is set when the tier repeats the rate of a tier the analysis excluded.
	Again bool
	Why   string
}

func (pl Planner) unit() string {
	if pl.Unit == "" {
		return "req/s"
	}
	return pl.Unit
}

// Next returns the next tier of the search, given the summaries of every tier run so far
// (probes and earlier search tiers; confirmations are ignored) and the load the sweep spent, or
// ok = false and why the search is over.
func (pl Planner) Next(done []measure.Summary, spent time.Duration) (step Step, ok bool) {
	var search []measure.Summary
	for _, s := range done {
		if s.Role == records.RoleTier || s.Role == "" {
			search = append(search, s)
		}
	}
	switch {
	case len(search) >= pl.MaxTiers:
		return Step{Why: fmt.Sprintf("the search ran its %d tiers (--max-tiers)", pl.MaxTiers)}, false
	case pl.Budget > 0 && pl.Budget-spent < max(pl.MinTier, time.Second):
		return Step{Why: fmt.Sprintf("the budget is spent (%v of load so far, what is left is kept for the confirmation)", spent.Round(time.Second))}, false
	case len(search) == 0:
		return Step{Rate: pl.Saturation / 2, Why: "a first tier at half the saturation rate"}, true
	}
	a := curve.Analyze(done, pl.Params)
	if r, ok := excludedTwice(search, a); ok {
		return Step{Why: fmt.Sprintf("two tiers at %.3g %s were excluded (%s): the client, not the deployment, limited them; rerun on a less loaded machine or with --shard",
			r, pl.unit(), excludedWhy(a, r))}, false
	}
	if last := search[len(search)-1]; excludedTier(a, last.Tier) {
		// An excluded tier says nothing about the deployment: its rate runs once more.
		return Step{Rate: last.NominalRate, Again: true, Why: fmt.Sprintf("tier %d at %.3g %s is not on the curve (%s): once more",
			last.Tier, last.NominalRate, pl.unit(), excludedWhy(a, last.NominalRate))}, true
	}
	c := a.Capacity
	switch {
	case c == nil:
		lightest := math.Inf(1)
		for _, v := range a.Points {
			if v.Verdict != curve.VerdictExcluded {
				lightest = math.Min(lightest, v.NominalRate)
			}
		}
		if math.IsInf(lightest, 1) {
			lightest = pl.Saturation / 2
		}
		r := 0.4 * lightest
		for tried(search, r) {
			r *= 0.4
		}
		if r < 0.01*pl.Saturation {
			return Step{Why: "no rate down to 1 % of the saturation rate meets the objective"}, false
		}
		return Step{Rate: r, Why: fmt.Sprintf("every tier so far misses the objective: going lighter than %.3g %s", lightest, pl.unit())}, true
	case c.Method != curve.CapacityInterpolated:
		return pl.upwards(a, search)
	}
	e, p := c.Rate, pl.Precision
	// Slots are matched on the rates the planner asked for (a tier's realised rate scatters
	// around its nominal one).
	near := func(lo, hi float64) bool {
		for _, s := range search {
			if s.NominalRate >= lo && s.NominalRate <= hi {
				return true
			}
		}
		return false
	}
	for _, slot := range []struct {
		lo, hi, at float64
		why        string
	}{
		{e * (1 - p/4), e * (1 + p/4), e, fmt.Sprintf("at the estimate %s", c.String())},
		{e * (1 - p), e * (1 - p/4), e * (1 - p/2), fmt.Sprintf("just below the estimate %.3g %s", e, pl.unit())},
		{e * (1 + p/4), e * (1 + p), e * (1 + p/2), fmt.Sprintf("just above the estimate %.3g %s", e, pl.unit())},
	} {
		if !near(slot.lo, slot.hi) && !tried(search, slot.at) {
			return Step{Rate: slot.at, Why: slot.why}, true
		}
	}
	return Step{Why: fmt.Sprintf("the estimate %s has tiers at it and within %.3g %% on either side", c.String(), 100*p)}, false
}

// tried reports whether a tier ran within 2 % of rate.
func tried(search []measure.Summary, rate float64) bool {
	for _, s := range search {
		if math.Abs(s.NominalRate/rate-1) < 0.02 {
			return true
		}
	}
	return false
}

// upwards places the next tier when every stable tier so far meets the objective: geometrically
// half way from the heaviest stable tier that meets it to the lightest that fails it or never
// settles (at most 1.5 times the former, and not above 1.5 times the saturation rate), in the
// rates the planner asked for. When the rate half way is within 2 % of one that already ran, it
// goes half way to that one instead, until the step is within the precision.
func (pl Planner) upwards(a curve.Analysis, search []measure.Summary) (Step, bool) {
	q := a.Params.TargetShare
	meet, fail := 0.0, math.Inf(1)
	for _, v := range a.Points {
		switch {
		case v.Verdict == curve.VerdictExcluded:
		case !v.Stable || v.Verdict == curve.VerdictFails:
			fail = math.Min(fail, v.NominalRate)
		}
	}
	for _, v := range a.Points {
		if v.Verdict != curve.VerdictExcluded && v.Stable && v.Fit >= q && v.NominalRate < fail {
			meet = math.Max(meet, v.NominalRate)
		}
	}
	if meet == 0 {
		meet = pl.Saturation / 4
	}
	r := math.Min(1.5*meet, 1.5*pl.Saturation)
	if !math.IsInf(fail, 1) {
		r = math.Min(r, math.Sqrt(meet*fail))
	}
	why := fmt.Sprintf("every stable tier up to %.3g %s meets the objective: half way to %.3g %[2]s", meet, pl.unit(), fail)
	if math.IsInf(fail, 1) {
		why = fmt.Sprintf("every stable tier up to %.3g %s meets the objective: going heavier", meet, pl.unit())
	}
	for tried(search, r) && r > meet*(1+pl.Precision/2) {
		why = fmt.Sprintf("a tier already ran at %.3g %s: half way to it from %.3g %[2]s", r, pl.unit(), meet)
		r = math.Sqrt(meet * r)
	}
	if r <= meet*(1+pl.Precision/2) {
		return Step{Why: fmt.Sprintf("the heaviest stable tier meeting the objective, at %.3g %s, and the lightest failing it, at %.3g %[2]s, are within the precision", meet, pl.unit(), math.Min(fail, r))}, false
	}
	return Step{Rate: r, Why: why}, true
}

// excludedTier reports whether the analysis excluded tier from the curve.
func excludedTier(a curve.Analysis, tier int) bool {
	for _, v := range a.Points {
		if v.Tier == tier {
			return v.Verdict == curve.VerdictExcluded
		}
	}
	return false
}

// excludedTwice reports a rate at which two tiers ran and both were excluded from the curve.
func excludedTwice(search []measure.Summary, a curve.Analysis) (float64, bool) {
	excluded := map[int]bool{}
	for _, v := range a.Points {
		if v.Verdict == curve.VerdictExcluded {
			excluded[v.Tier] = true
		}
	}
	for i, s := range search {
		if !excluded[s.Tier] {
			continue
		}
		for _, t := range search[i+1:] {
			if excluded[t.Tier] && math.Abs(t.NominalRate/s.NominalRate-1) < 0.02 {
				return s.NominalRate, true
			}
		}
	}
	return 0, false
}

// excludedWhy is the reason the analysis gave for excluding the tier at rate.
func excludedWhy(a curve.Analysis, rate float64) string {
	for _, v := range a.Points {
		if v.Verdict == curve.VerdictExcluded && math.Abs(v.NominalRate/rate-1) < 0.02 {
			return v.Reason
		}
	}
	return "excluded"
}
