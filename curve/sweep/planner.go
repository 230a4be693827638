package sweep

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Planner places the tiers of an automatic search for the capacity. It is a pure function of
// the tiers run so far and the load they cost (Next), so a sweep can be replayed tier by tier.
//
// Near a 99 % target a tier can rarely say with confidence which side of the capacity it is on
// (misses are rare and cluster, see measure.Steady), but every tier's share says where the
// curve is. So the search spends its tiers where they inform the estimate: it reads the analysis
// of the tiers so far (curve.Analyze) and its estimate c, where the monotone fit of the share
// crosses the target, and wants three tiers around it: one within Precision/2 of c, one below
// (placed at c·(1 − EndReach·Precision), within Precision/4 of that) and one above (at
// c·(1 + EndReach·Precision)). It runs the first one missing, in that order (the one above
// before the one below when the estimate rests on a tier with no miss: missless), and stops once
// all three exist for the current estimate (every tier moves it), after MaxTiers tiers, or when
// the budget is spent.
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
	// Axis is what the rates count (requests or sessions per second), which the reasons Next
	// gives name.
	Axis curve.Axis
	// Budget is the load the search may put on the target (the confirmation's share already
	// taken out); 0: no bound. MinTier is the shortest tier worth starting, MaxTier the longest
	// usual cap (0: end tiers get the usual cap too).
	Budget           time.Duration
	MinTier, MaxTier time.Duration
}

// Step is the next tier of a search.
type Step struct {
	Rate float64
	// Cap is the tier's cap when it is not the usual one (0: the usual).
	Cap time.Duration
	// Again is set when the tier repeats the rate of a tier the analysis excluded.
	Again bool
	// Budget is set when the search is over because its budget is spent.
	Budget bool
	Why    string
}

func (pl Planner) unit() string { return pl.Axis.Unit() }

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
		return Step{Budget: true, Why: fmt.Sprintf("its share of the budget is spent (%v of load so far, what is left is kept for the confirmation)", spent.Round(time.Second))}, false
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
		return pl.lighter(a, search)
	case c.Method != curve.CapacityInterpolated:
		// Bracketed within the precision, but no tier meets the target with confidence: the
		// interval has no lower end yet, and the tiers around the estimate give it one.
		if step, ok := pl.upwards(a, search); ok || c.Low > 0 {
			return step, ok
		}
	}
	if Certified(c, pl.Precision) {
		return Step{Why: fmt.Sprintf("the capacity is certified to ±%.3g %%: %s", 100*pl.Precision, c.String())}, false
	}
	slots := pl.slots(a)
	order := []int{0, 1, 2}
	if missless(a) {
		order = []int{0, 2, 1}
	}
	for _, i := range order {
		slot := slots[i]
		if slotTier(a, slot) == nil && !tried(search, slot.at) {
			step := Step{Rate: slot.at, Why: slot.why}
			if slot.end {
				var ok bool
				if step.Cap, ok = pl.endCap(a, slot.at, spent); !ok {
					return Step{Budget: true, Why: fmt.Sprintf("the budget left is too short for a tier that could show an end of the interval (%v of load so far)", spent.Round(time.Second))}, false
				}
			}
			return step, true
		}
	}
	// Every slot has a tier. An end whose tier has not decided yet is measured again at its
	// rate, pooled with it, a few times at most; then an end whose tier stood further out.
	step, ok, short := pl.extendEnd(a, slots, spent)
	if !ok {
		var tooShort bool
		step, ok, tooShort = pl.standIn(a, slots, search, spent)
		short = short || tooShort
	}
	if !ok && !short {
		step, ok, short = pl.closeIn(a, search, spent)
	}
	switch {
	case ok:
		return step, true
	case short:
		return Step{Budget: true, Why: fmt.Sprintf("the budget left is too short to measure an end of the interval again (%v of load so far): %s", spent.Round(time.Second), c.String())}, false
	}
	return Step{Why: fmt.Sprintf("the estimate %s has tiers at it and on either side", c.String())}, false
}

// lighter is the next tier when every tier so far misses the objective: lighter than the
// lightest, below where a near miss puts the capacity when one does, or none below 1 % of the
// saturation rate.
func (pl Planner) lighter(a curve.Analysis, search []measure.Summary) (Step, bool) {
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
	why := fmt.Sprintf("every tier so far misses the objective: going lighter than %.3g %s", lightest, pl.unit())
	if est, ok := missedBy(a, lightest, pl.Params.WithDefaults().TargetShare); ok && est < lightest {
		// A share that missed the target says where the capacity is.
		r = math.Max(r, est*(1-EndReach*pl.Precision))
		why = fmt.Sprintf("every tier so far misses the objective, the one at %.3g %s %s compliant: below where its misses put the capacity, %.3g %[2]s", lightest, pl.unit(), pctOf(a, lightest), est)
	}
	for tried(search, r) {
		r *= 0.4
	}
	if r < 0.01*pl.Saturation {
		return Step{Why: "no rate down to 1 % of the saturation rate meets the objective"}, false
	}
	return Step{Rate: r, Why: why}, true
}

// planSlot is a range of rates the search wants a tier in: at the estimate, or at an end of the
// interval (its cap sized to its verdict).
type planSlot struct {
	lo, hi, at float64
	end        bool
	why        string
}

// slots are the search's three slots around the estimate: at it, below it where a tier should
// meet the target, above it where one should miss.
func (pl Planner) slots(a curve.Analysis) [3]planSlot {
	e, p := planEstimate(a), pl.Precision
	return [3]planSlot{
		{e * (1 - p/2), e * (1 + p/2), e, false, fmt.Sprintf("at the estimate %s", a.Capacity.String())},
		{e * (1 - EndReach*p) * (1 - p/4), e * (1 - EndReach*p) * (1 + p/4), e * (1 - EndReach*p), true, fmt.Sprintf("below the estimate %.3g %s, where it should meet the target", e, pl.unit())},
		{e * (1 + EndReach*p) * (1 - p/4), e * (1 + EndReach*p) * (1 + p/4), e * (1 + EndReach*p), true, fmt.Sprintf("above the estimate %.3g %s, where it should miss the target", e, pl.unit())},
	}
}

// slotTier is the judged tier in slot with the largest effective sample, nil when none is.
// Slots are matched on the rates the planner asked for (a tier's realised rate scatters around
// its nominal one).
func slotTier(a curve.Analysis, slot planSlot) *curve.PointVerdict {
	var found *curve.PointVerdict
	for i := range a.Points {
		if v := &a.Points[i]; v.Verdict != curve.VerdictExcluded && v.NominalRate >= slot.lo && v.NominalRate <= slot.hi && (found == nil || v.EffectiveRequests > found.EffectiveRequests) {
			found = v
		}
	}
	return found
}

// extendEnd measures an end whose tier has not decided yet again at its rate, pooled with it,
// a few times at most. short is set when the budget leaves too little for it.
func (pl Planner) extendEnd(a curve.Analysis, slots [3]planSlot, spent time.Duration) (step Step, ok, short bool) {
	for _, slot := range slots[1:] {
		v := slotTier(a, slot)
		if v == nil || v.Verdict != curve.VerdictUncertain || len(v.Pooled) >= MaxExtensions+1 {
			continue
		}
		capacity, fits := pl.endCap(a, v.NominalRate, spent)
		if !fits {
			return Step{}, false, true
		}
		return Step{Rate: v.NominalRate, Cap: capacity,
			Why: fmt.Sprintf("%s, not decided yet: measured again at its rate", strings.Replace(tierName(*v), "(", "at ", 1))}, true, false
	}
	return Step{}, false, false
}

// standIn: both ends decided, and yet the interval is wider than certified: an end's tier stood
// in from the far side of its slot (an earlier tier, placed before the estimate settled). One
// tier at that end's own rate, the farther end first, once. short is set when the budget
// leaves too little for it.
func (pl Planner) standIn(a curve.Analysis, slots [3]planSlot, search []measure.Summary, spent time.Duration) (step Step, ok, short bool) {
	type far struct {
		at, off float64
		why     string
	}
	var ends []far
	for i, slot := range slots[1:] {
		v := slotTier(a, slot)
		if v == nil {
			continue
		}
		if below := i == 0; below && v.Verdict == curve.VerdictMeets && v.NominalRate < slot.at ||
			!below && v.Verdict == curve.VerdictFails && v.NominalRate > slot.at {
			ends = append(ends, far{slot.at, math.Abs(math.Log(v.NominalRate / slot.at)), slot.why})
		}
	}
	slices.SortFunc(ends, func(x, y far) int { return cmp.Compare(y.off, x.off) })
	for _, end := range ends {
		if tried(search, end.at) {
			continue
		}
		capacity, fits := pl.endCap(a, end.at, spent)
		if !fits {
			return Step{}, false, true
		}
		return Step{Rate: end.at, Cap: capacity, Why: end.why + " (the tier there stood further out than certifying needs)"}, true, false
	}
	return Step{}, false, false
}

// closeIn: both ends decided, and yet the interval is wider than certified, with every end's
// own rate tried (the ends at their slots' far edges, or the estimate moved since they ran).
// One tier at the rate that certifies the interval against the other end (closeInMargin inside
// it, and at least 2 % from every tier that ran, toward the estimate, but no nearer to it than
// Precision/2), the end farther from the estimate first (the sooner decided), once each. short
// is set when the budget leaves too little for it.
func (pl Planner) closeIn(a curve.Analysis, search []measure.Summary, spent time.Duration) (step Step, ok, short bool) {
	c := a.Capacity
	if c == nil || !(c.Low > 0) || c.High == nil || Certified(c, pl.Precision) {
		return Step{}, false, false
	}
	e, p := planEstimate(a), pl.Precision
	span := (1 + p) / (1 - p)
	type end struct {
		at  float64
		why string
	}
	low, high := *c.High/span*(1+closeInMargin), c.Low*span/(1+closeInMargin)
	for _, s := range search {
		// One step past the tiers within sameRate, toward the estimate (a little beyond it, so
		// that it is not tried): a second call finds the tier this one placed there, and places
		// none.
		if math.Abs(s.NominalRate/low-1) < sameRate {
			low = math.Max(low, s.NominalRate*(1+sameRate+0.001))
		}
		if math.Abs(s.NominalRate/high-1) < sameRate {
			high = math.Min(high, s.NominalRate/(1+sameRate+0.001))
		}
	}
	var ends []end
	if low > c.Low && low <= e*(1-p/2) && !tried(search, low) {
		ends = append(ends, end{low, fmt.Sprintf("below the estimate %.3g %s, where a tier that meets the target certifies the interval against its upper end %.3g %[2]s", e, pl.unit(), *c.High)})
	}
	if high < *c.High && high >= e*(1+p/2) && !tried(search, high) {
		ends = append(ends, end{high, fmt.Sprintf("above the estimate %.3g %s, where a tier that misses the target certifies the interval against its lower end %.3g %[2]s", e, pl.unit(), c.Low)})
	}
	slices.SortFunc(ends, func(x, y end) int { return cmp.Compare(math.Abs(math.Log(y.at/e)), math.Abs(math.Log(x.at/e))) })
	for _, en := range ends {
		capacity, fits := pl.endCap(a, en.at, spent)
		if !fits {
			return Step{}, false, true
		}
		return Step{Rate: en.at, Cap: capacity, Why: en.why}, true, false
	}
	return Step{}, false, false
}

// closeInMargin is how far inside the certifying rate closeIn places its tier: a realised
// rate scatters about its nominal one.
const closeInMargin = 0.01

// endCap is the cap of a tier that shows an end of the capacity interval at rate: what its
// verdict needs when its share is what the curve expects there (the miss rate 1 − q at the
// estimate, growing like rate^defaultSlope) and its misses cluster as the tiers nearest it
// measured, CertifyMargin more; at least half the usual longest cap, at most three times it, and
// at most half of what the budget leaves (the confirmation's reserve already taken out: the
// rest is kept for a tier elsewhere, so that one tier near the capacity, which may never decide,
// cannot take it all). ok is false when that is less than half the usual longest cap: a shorter
// tier near the capacity would end before its steady state says anything. Without MaxTier, the
// usual cap (0).
func (pl Planner) endCap(a curve.Analysis, rate float64, spent time.Duration) (time.Duration, bool) {
	if pl.MaxTier <= 0 {
		return 0, true
	}
	p := pl.Params.WithDefaults()
	c := a.Capacity.Rate
	share := 1 - math.Min(0.5, (1-p.TargetShare)*math.Pow(rate/c, defaultSlope))
	n, err := curve.NeededEffective(share, p.TargetShare, p.Confidence)
	d := pl.MaxTier * ConfirmFactor
	if err == nil {
		d = time.Duration(CertifyMargin * n * nearFactor(a, rate) / rate * float64(time.Second))
	}
	d = min(max(d, pl.MaxTier/2), pl.MaxTier*ConfirmFactor)
	if pl.Budget > 0 {
		left := (pl.Budget - spent) / 2
		if left < pl.MaxTier/2 {
			return 0, false
		}
		d = min(d, left)
	}
	return d, true
}

// Planning constants of the ends' tiers.
const (
	// CertifyMargin: an end's tier plans this many times the requests its verdict needs when its
	// share is what the curve expects.
	CertifyMargin = 1.3
	// defaultSlope is the exponent of the miss rate's growth with the rate near a capacity
	// (miss ∝ rate^k): 6 to 10 on M/D/c queues.
	defaultSlope = 8
)

// nearFactor is the variance factor to expect at rate: that of the stable tier closest to it in
// log-rate with at least 200 requests (clustering grows with the load), else 5.
func nearFactor(a curve.Analysis, rate float64) float64 {
	best, f := math.Inf(1), 5.0
	for _, v := range a.Points {
		if v.Verdict == curve.VerdictExcluded || !v.Stable || !(v.EffectiveRequests > 0) || v.Requests < 200 {
			continue
		}
		if d := math.Abs(math.Log(v.Rate / rate)); d < best {
			best, f = d, math.Max(1, float64(v.Requests)/v.EffectiveRequests)
		}
	}
	return f
}

// EndReach places the tiers that show the capacity interval's ends: at (1 ± EndReach·precision)
// times the estimate, so that two that decide certify it to ±precision.
const EndReach = 0.95

// MaxExtensions is how many times an end's tier is measured again, pooled with it, when it has
// not decided.
const MaxExtensions = 2

// Certified reports whether a capacity interval is certified to ±precision: both ends measured,
// High/Low ≤ (1 + precision)/(1 − precision).
func Certified(c *curve.Capacity, precision float64) bool {
	return c != nil && c.Low > 0 && c.High != nil && *c.High/c.Low <= (1+precision)/(1-precision)*(1+1e-9)
}

// tierName is "tier 3 (8.02" or "tiers 3+7 (8.02": the caller adds the unit and the parenthesis.
func tierName(v curve.PointVerdict) string {
	if len(v.Pooled) > 1 {
		parts := make([]string, len(v.Pooled))
		for i, t := range v.Pooled {
			parts[i] = fmt.Sprint(t)
		}
		return fmt.Sprintf("tiers %s (%.3g", strings.Join(parts, "+"), v.Rate)
	}
	return fmt.Sprintf("tier %d (%.3g", v.Tier, v.Rate)
}

// sameRate is how close two rates are to count as one (tried): the search never runs a tier
// within it of another.
const sameRate = 0.02

// tried reports whether a tier ran within sameRate of rate.
func tried(search []measure.Summary, rate float64) bool {
	for _, s := range search {
		if math.Abs(s.NominalRate/rate-1) < sameRate {
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
	if est, ok := crossingFrom(a, meet, q); ok && est > meet && est*(1+EndReach*pl.Precision) < r {
		// A controlled share that met the target with misses says where the capacity is.
		r = est * (1 + EndReach*pl.Precision)
		why = fmt.Sprintf("every stable tier up to %.3g %s meets the objective; its misses put the capacity near %.3g %[2]s: above it", meet, pl.unit(), est)
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

// planEstimate is where the search places its tiers around: the analysis's capacity, but
// interpolated between the two tiers it lies between in log(miss rate) against log(rate), in
// which a queue's miss rate near its capacity is close to a straight line (the analysis
// interpolates the share linearly, which places the crossing too close to the tier that meets).
// A tier with no miss counts half a miss of its effective sample.
func planEstimate(a curve.Analysis) float64 {
	c := a.Capacity
	if c.Method != curve.CapacityInterpolated || c.ToTier == nil {
		return c.Rate
	}
	var l, n *curve.PointVerdict
	for i := range a.Points {
		switch v := &a.Points[i]; v.Tier {
		case c.FromTier:
			l = v
		case *c.ToTier:
			n = v
		}
	}
	q := a.Params.TargetShare
	if l == nil || n == nil || !(n.Rate > l.Rate) {
		return c.Rate
	}
	m0 := math.Max(1-l.Fit, 0.5/math.Max(l.EffectiveRequests, 1))
	m1 := 1 - n.Fit
	if !(m1 > 1-q && 1-q > m0) {
		return c.Rate
	}
	t := math.Log((1-q)/m0) / math.Log(m1/m0)
	return l.Rate * math.Pow(n.Rate/l.Rate, t)
}

// missless reports whether the tier the estimate is interpolated from had no miss: the estimate
// then rests on the half miss planEstimate credits it with, and errs low (below a batching
// engine's capacity the miss rate falls faster than such a tier can show), so the tier above
// it, whose misses move the estimate most, runs before the one below.
func missless(a curve.Analysis) bool {
	c := a.Capacity
	if c.Method != curve.CapacityInterpolated {
		return false
	}
	for _, v := range a.Points {
		if v.Tier == c.FromTier {
			return v.Fit >= 1
		}
	}
	return false
}

// crossingFrom is where the capacity lies by the controlled share of the tier at rate (nominal):
// its miss rate grows like rate^defaultSlope near a capacity, so the target's is reached at
// rate·((1 − q)/miss)^(1/k). ok is false unless that tier's share was controlled by a shadow queue
// whose gain was credited (its share is then precise enough) and lies between 50 % and 1.
func crossingFrom(a curve.Analysis, rate, q float64) (float64, bool) {
	for _, v := range a.Points {
		if v.NominalRate != rate || v.Controlled == nil || v.Controlled.Gain <= 1 || !v.Stable || !(v.Share > 0.5 && v.Share < 1) {
			continue
		}
		return rate * math.Pow((1-q)/(1-v.Share), 1.0/defaultSlope), true
	}
	return 0, false
}

// MinEstimateMisses is the fewest effective misses of a tier whose share, not controlled, places
// the next tier below it (missedBy): the miss rate's relative standard error is then at most
// 1/√3 (58 %), which moves the estimate by about 1/defaultSlope of that (7 %), where the
// fallback, 40 % of the tier's rate, is 60 % away from it. It was 10 (a third, 4 %): over HTTP
// an M/G/8 queue's first tier at 12.7 req/s, 98.89 % compliant on about 7 effective misses, sent
// the search to 5.07 req/s, where the truth was 11.4, and the 20 minutes' budget then had no
// room for a tier near the capacity.
const MinEstimateMisses = 3

// missedBy is where the capacity lies below the tier at rate (nominal), which missed the target:
// crossingFrom's estimate from its controlled share, or, without a credited control, from its
// plain share when that is below the target on at least MinEstimateMisses effective misses
// (with confidence or not: a tier that has not decided still places the capacity better than 40
// % of its rate does). A first tier that misses then sends the search to where its misses put the
// capacity (an M/G/8 queue over HTTP: from 13.5 req/s at 93.7 % to 5.4 req/s, then 10.8, where
// the truth was 11.5; from 12.9 req/s at 97.9 %, not below 99 % with confidence, to 5.2).
func missedBy(a curve.Analysis, rate, q float64) (float64, bool) {
	if est, ok := crossingFrom(a, rate, q); ok {
		return est, true
	}
	for _, v := range a.Points {
		if v.NominalRate != rate || !v.Stable || !(v.Share > 0.5 && v.Share < q) ||
			v.EffectiveRequests*(1-v.Share) < MinEstimateMisses {
			continue
		}
		return rate * math.Pow((1-q)/(1-v.Share), 1.0/defaultSlope), true
	}
	return 0, false
}

// pctOf is the share of the tier at rate (nominal) the search is steered by, in percent ("93.7 %").
func pctOf(a curve.Analysis, rate float64) string {
	for _, v := range a.Points {
		if v.NominalRate == rate {
			return fmt.Sprintf("%.4g %%", 100*v.Share)
		}
	}
	return "?"
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
