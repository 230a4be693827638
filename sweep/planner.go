package sweep

import (
	"fmt"
	"math"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/records"
)

// Planner places the tiers of an automatic search for the capacity. It is a pure function of
// the tiers run so far (Next), so a sweep can be replayed tier by tier.
//
// Near a 99 % target a tier can rarely say with confidence which side of the capacity it is on
// (misses are rare and cluster, see measure.Steady), but every tier's share says where the
// curve is. So the search spends its tiers where they inform the estimate: it reads the analysis
// of the tiers so far (curve.Analyze) and its estimate c, where the monotone fit of the share
// crosses the target, and wants three tiers around it: one within Precision/4 of c, one below
// within Precision (placed at c·(1 − Precision/2)) and one above (at c·(1 + Precision/2)). It
// runs the first one missing, in that order, and stops once all three exist for the current
// estimate (every tier moves it), or after MaxTiers tiers.
//
// Before there is an estimate: the first tier runs at half the probed saturation rate; with every
// tier missing the objective the search goes down (to 40 % of the lightest tier, not below 1 %
// of the saturation rate), with every tier meeting it goes up (half way, geometrically, to the
// lightest tier that failed or never settled, at most 1.5 times the heaviest so far, not above
// 1.5 times the saturation rate).
type Planner struct {
	Saturation float64 // the probed saturation completion rate, in the schedule's unit
	Params     curve.Params
	Precision  float64
	MaxTiers   int
	// Unit names the rates in the reasons Next gives: "" means "req/s" (the schedule's
	// arrivals are requests); "sessions/s" for a workload of sessions.
	Unit string
}

func (pl Planner) unit() string {
	if pl.Unit == "" {
		return "req/s"
	}
	return pl.Unit
}

// Next returns the rate of the next tier of the search and why, given the summaries of every
// tier run so far (probes and earlier search tiers; confirmations are ignored), or ok = false
// and why the search is over.
func (pl Planner) Next(done []measure.Summary) (rate float64, why string, ok bool) {
	var search []measure.Summary
	for _, s := range done {
		if s.Role == records.RoleTier || s.Role == "" {
			search = append(search, s)
		}
	}
	switch {
	case len(search) >= pl.MaxTiers:
		return 0, fmt.Sprintf("the search ran its %d tiers (--max-tiers)", pl.MaxTiers), false
	case len(search) == 0:
		return pl.Saturation / 2, "a first tier at half the saturation rate", true
	}
	a := curve.Analyze(done, pl.Params)
	c := a.Capacity
	switch {
	case c == nil:
		lightest := math.Inf(1)
		for _, v := range a.Points {
			if v.Verdict != curve.VerdictExcluded {
				lightest = math.Min(lightest, v.Rate)
			}
		}
		if math.IsInf(lightest, 1) {
			lightest = pl.Saturation / 2
		}
		r := 0.4 * lightest
		for tried(search, r) { // the lightest was excluded (client-bound, cut): go below it
			r *= 0.4
		}
		if r < 0.01*pl.Saturation {
			return 0, "no rate down to 1 % of the saturation rate meets the objective", false
		}
		return r, "every tier so far misses the objective: going lighter", true
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
			return slot.at, slot.why, true
		}
	}
	return 0, fmt.Sprintf("the estimate %s has tiers at it and within %.3g %% on either side", c.String(), 100*p), false
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
// settles (at most 1.5 times the former, and not above 1.5 times the saturation rate). When a
// tier already ran at that rate and was excluded from the curve (client-bound, cut), it goes
// half way to that rate instead, until the step is within the precision.
func (pl Planner) upwards(a curve.Analysis, search []measure.Summary) (float64, string, bool) {
	q := a.Params.TargetShare
	meet, fail := 0.0, math.Inf(1)
	for _, v := range a.Points {
		switch {
		case v.Verdict == curve.VerdictExcluded:
		case v.Stable && v.Fit >= q && v.Rate < fail:
			meet = math.Max(meet, v.Rate)
		case !v.Stable || v.Verdict == curve.VerdictFails:
			fail = math.Min(fail, v.Rate)
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
	for tried(search, r) && r > meet*(1+pl.Precision/2) { // it ran and was excluded (client-bound, cut): half way to it
		why = fmt.Sprintf("a tier at %.3g %s ran but is not on the curve: half way to it from %.3g %[2]s", r, pl.unit(), meet)
		r = math.Sqrt(meet * r)
	}
	if r <= meet*(1+pl.Precision/2) {
		return 0, fmt.Sprintf("the heaviest stable tier meeting the objective, at %.3g %s, and the lightest failing it or not on the curve, at %.3g %[2]s, are within the precision", meet, pl.unit(), math.Min(fail, r)), false
	}
	return r, why, true
}
