package curve

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Verdict is a tier's standing against the target share.
type Verdict string

// Verdicts. With share = compliant/issued and [lo, hi] its Wilson interval:
const (
	VerdictMeets     Verdict = "meets"     // share ≥ target
	VerdictUncertain Verdict = "uncertain" // share < target ≤ hi: too few requests to tell
	VerdictFails     Verdict = "fails"     // hi < target: fails clearly
	VerdictNoData    Verdict = "no_data"   // no request issued
	VerdictInvalid   Verdict = "invalid"   // inconsistent figures (see the notes)
)

// PointVerdict is one tier with the analysis's judgement of it.
type PointVerdict struct {
	Point Point `json:"point"`
	// CompliantShare is the compliant request share, Compliant/Issued.
	CompliantShare float64 `json:"compliant_request_share"`
	// ShareLo and ShareHi bound it: the Wilson interval at Params.Confidence.
	ShareLo float64 `json:"share_lo"`
	ShareHi float64 `json:"share_hi"`
	Verdict Verdict `json:"verdict"`
	// MeetsTarget is Verdict == VerdictMeets.
	MeetsTarget bool `json:"meets_target"`
	// Stable is false when the tier's trend test found growing queueing.
	Stable bool `json:"stable"`
	// OnPlateau marks the tiers from the plateau's start on.
	OnPlateau bool `json:"on_plateau"`
	// GainPerDoubling is the relative raw-throughput gain per doubling of
	// offered load from the previous finite tier; null for the first tier,
	// tiers off the rate axis, and when the previous tier had no output.
	GainPerDoubling *float64 `json:"gain_per_doubling"`
}

// Plateau is where raw throughput stops growing with offered load.
type Plateau struct {
	// StartTier and StartRate name the first tier on the plateau: every step
	// from it on gains less than Params.PlateauGain per doubling.
	StartTier int     `json:"start_tier"`
	StartRate float64 `json:"start_rate"`
	// Throughput is the highest raw output throughput on the plateau (tok/s).
	Throughput float64 `json:"raw_output_throughput"`
	// MarginalGain is the gain per doubling from the start to the last tier.
	MarginalGain float64 `json:"marginal_gain"`
	// Tiers is the number of tiers on the plateau (≥ 2).
	Tiers int `json:"tiers"`
}

// Knee is where non-compliance turns from sporadic to systematic.
type Knee struct {
	Tier int     `json:"tier"`
	Rate float64 `json:"rate"`
	// CompliantShare and ShareHi are the knee tier's share and the upper end
	// of its Wilson interval.
	CompliantShare float64 `json:"compliant_request_share"`
	ShareHi        float64 `json:"share_hi"`
	// ClearlyFails: ShareHi < target. Unstable: its queue grows.
	ClearlyFails bool `json:"clearly_fails"`
	Unstable     bool `json:"unstable"`
	// AfterTier and AfterRate name the last tier below it that met the target.
	AfterTier int     `json:"after_tier"`
	AfterRate float64 `json:"after_rate"`
}

// How a capacity was found.
const (
	// CapacityInterpolated: share crosses the target between FromTier and
	// ToTier; the rate is interpolated linearly in share against rate.
	CapacityInterpolated = "interpolated"
	// CapacityAtTier: ToTier still meets the share but its queue grows, so
	// capacity is put at FromTier.
	CapacityAtTier = "at_tier"
	// CapacityLowerBound: no tier above FromTier was measured; capacity is at
	// least FromTier's rate.
	CapacityLowerBound = "lower_bound"
)

// Capacity is the highest offered rate at which the compliant request share
// meets the target.
type Capacity struct {
	Rate float64 `json:"rate"`
	// Method is CapacityInterpolated, CapacityAtTier or CapacityLowerBound.
	Method   string `json:"method"`
	FromTier int    `json:"from_tier"`
	ToTier   *int   `json:"to_tier"`
}

// OperatingPoint is where to run: capacity less the headroom.
type OperatingPoint struct {
	// Rate = Capacity.Rate·(1 − Params.Headroom), requests per second.
	Rate float64 `json:"rate"`
	// ExpectedCompliantThroughput and ExpectedRawThroughput are interpolated
	// linearly in rate between the measured tiers (through the origin below
	// the first), tok/s.
	ExpectedCompliantThroughput float64 `json:"expected_compliant_output_throughput"`
	ExpectedRawThroughput       float64 `json:"expected_raw_output_throughput"`
	Reason                      string  `json:"reason"`
}

// Analysis is the load curve judged: per-tier verdicts, plateau, knee,
// capacity and operating point, each nil when it does not exist, and the
// reasons in words.
type Analysis struct {
	// Params are the parameters used, defaults filled.
	Params         Params          `json:"params"`
	Points         []PointVerdict  `json:"points"`
	Plateau        *Plateau        `json:"plateau"`
	Knee           *Knee           `json:"knee"`
	Capacity       *Capacity       `json:"capacity"`
	OperatingPoint *OperatingPoint `json:"operating_point"`
	// Notes give every judgement in words with the numbers behind it.
	Notes []string `json:"notes"`
}

// Analyze judges a sweep. points may come in any order (they are sorted by
// offered rate, then tier, in a copy; the input is not modified). Zero
// fields of p take their defaults; an invalid field is replaced by its
// default and a note says so (callers should check [Params.Validate] first).
//
// Per tier: share = Compliant/Issued, its Wilson interval [lo, hi], and the
// verdict "meets" (share ≥ target), "fails" (hi < target) or "uncertain"
// (between); Stable = the trend test did not find growing queueing. A tier
// "meets the objective" when it meets and is stable; non-compliance is
// "systematic" when it fails clearly or is unstable.
//
// On the finite-rate tiers:
//   - Plateau: the first tier from which every step gains less than
//     PlateauGain raw throughput per doubling of offered load (gain per
//     doubling = (T₂/T₁)^(1/log₂(r₂/r₁)) − 1). Nil when the last step still
//     gains more: the curve never saturated within the sweep.
//   - Knee: the first systematic tier after at least one tier that met the
//     objective.
//   - Capacity: from the last tier meeting the objective below the knee (or
//     the last one at all, without a knee), interpolated linearly in share
//     against rate to the next tier. Nil when the lightest tier does not meet
//     the objective.
//   - Operating point: capacity·(1 − Headroom).
//
// A tier at an infinite offered rate is judged and reported but stays off
// the rate axis.
func Analyze(points []Point, p Params) Analysis {
	p, paramNotes := p.resolve()
	a := Analysis{Params: p}
	a.Notes = append(a.Notes, fmt.Sprintf("objective: compliant request share ≥ %s per tier, judged with %s Wilson intervals; "+
		"headroom %s; plateau when raw throughput gains less than %s per doubling of offered load",
		pct(p.TargetShare), pct(p.Confidence), pct(p.Headroom), pct(p.PlateauGain)))
	a.Notes = append(a.Notes, paramNotes...)

	pts := slices.Clone(points)
	slices.SortStableFunc(pts, func(x, y Point) int {
		return cmp.Or(cmp.Compare(x.OfferedRate, y.OfferedRate), cmp.Compare(x.Tier, y.Tier))
	})
	a.Points = make([]PointVerdict, len(pts))
	for i, pt := range pts {
		a.Points[i] = judge(pt, p)
	}
	a.Notes = append(a.Notes, tierNotes(a.Points, p)...)

	axis := rateAxis(a.Points)
	if len(axis) == 0 {
		a.Notes = append(a.Notes, "no tier at a finite offered rate with requests issued: no curve to analyse")
		return a
	}
	a.plateau(axis)
	a.kneeAndCapacity(axis)
	a.operatingPoint(axis)
	a.stressNotes(axis)
	return a
}

// judge computes one tier's verdict.
func judge(pt Point, p Params) PointVerdict {
	v := PointVerdict{Point: pt, Stable: !pt.Trend.Growing, ShareLo: 0, ShareHi: 1}
	if pointProblem(pt) != "" {
		v.Verdict = VerdictInvalid
		return v
	}
	if pt.Issued == 0 {
		v.Verdict = VerdictNoData
		return v
	}
	v.CompliantShare = float64(pt.Compliant) / float64(pt.Issued)
	v.ShareLo, v.ShareHi = Wilson(pt.Compliant, pt.Issued, p.Confidence)
	switch {
	case v.CompliantShare >= p.TargetShare:
		v.Verdict = VerdictMeets
	case v.ShareHi < p.TargetShare:
		v.Verdict = VerdictFails
	default:
		v.Verdict = VerdictUncertain
	}
	v.MeetsTarget = v.Verdict == VerdictMeets
	return v
}

// pointProblem says what makes a point unusable, or "".
func pointProblem(pt Point) string {
	switch {
	case !(pt.OfferedRate > 0):
		return fmt.Sprintf("offered rate %s is not positive", fmtParam(pt.OfferedRate))
	case pt.Issued < 0 || pt.Compliant < 0 || pt.Compliant > pt.Issued:
		return fmt.Sprintf("%d compliant of %d issued is impossible", pt.Compliant, pt.Issued)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"raw output throughput", pt.RawOutputThroughput},
		{"compliant output throughput", pt.CompliantOutputThroughput},
	} {
		if !isFinite(f.v) || f.v < 0 {
			return fmt.Sprintf("%s %s is not a finite number ≥ 0", f.name, fmtParam(f.v))
		}
	}
	return ""
}

// meetsObjective: meets the share and stable.
func (v PointVerdict) meetsObjective() bool { return v.Verdict == VerdictMeets && v.Stable }

// systematic: fails clearly or unstable.
func (v PointVerdict) systematic() bool { return v.Verdict == VerdictFails || !v.Stable }

// rateAxis returns the points on the rate axis: finite offered rate, valid,
// requests issued, the first tier of each offered rate.
func rateAxis(vs []PointVerdict) []*PointVerdict {
	var axis []*PointVerdict
	for i := range vs {
		v := &vs[i]
		if v.Verdict == VerdictInvalid || v.Verdict == VerdictNoData || math.IsInf(v.Point.OfferedRate, 1) {
			continue
		}
		if n := len(axis); n > 0 && axis[n-1].Point.OfferedRate == v.Point.OfferedRate {
			continue
		}
		axis = append(axis, v)
	}
	return axis
}

// bracket finds, on the rate axis, the knee (first systematic tier after a
// tier meeting the objective), the last tier meeting the objective below it
// (or the last at all) and the tier just above that; -1 for none. Analyze
// interpolates capacity between last and next; the Planner bisects there.
func bracket(axis []*PointVerdict) (knee, last, next int) {
	knee, last, next = -1, -1, -1
	seen := false
	for i, v := range axis {
		if seen && v.systematic() {
			knee = i
			break
		}
		if v.meetsObjective() {
			seen = true
			last = i
		}
	}
	if last >= 0 && last+1 < len(axis) {
		next = last + 1
	}
	return knee, last, next
}

func (a *Analysis) plateau(axis []*PointVerdict) {
	gains := make([]*float64, len(axis))
	for i := 1; i < len(axis); i++ {
		prev, cur := axis[i-1].Point, axis[i].Point
		if prev.RawOutputThroughput > 0 {
			g := math.Pow(cur.RawOutputThroughput/prev.RawOutputThroughput, 1/math.Log2(cur.OfferedRate/prev.OfferedRate)) - 1
			if isFinite(g) {
				gains[i] = &g
				axis[i].GainPerDoubling = &g
			}
		}
	}
	if len(axis) < 2 {
		a.Notes = append(a.Notes, "one tier on the rate axis: no curve, so no plateau")
		return
	}
	start := len(axis) - 1
	for start >= 1 && gains[start] != nil && *gains[start] < a.Params.PlateauGain {
		start--
	}
	lastV := axis[len(axis)-1]
	if start == len(axis)-1 {
		if g := gains[start]; g != nil {
			a.Notes = append(a.Notes, fmt.Sprintf("raw throughput never saturates: the last step, %s → %s, still gains %s per doubling (≥ %s); "+
				"the sweep stopped before the plateau, extend it to higher rates",
				tierName(axis[start-1].Point), tierName(lastV.Point), pct(*g), pct(a.Params.PlateauGain)))
		} else {
			a.Notes = append(a.Notes, fmt.Sprintf("raw throughput never saturates: %s had no output, so the gain into %s is undefined",
				tierName(axis[start-1].Point), tierName(lastV.Point)))
		}
		return
	}
	s := axis[start].Point
	pl := &Plateau{StartTier: s.Tier, StartRate: s.OfferedRate, Tiers: len(axis) - start}
	for _, v := range axis[start:] {
		v.OnPlateau = true
		pl.Throughput = math.Max(pl.Throughput, v.Point.RawOutputThroughput)
	}
	if s.RawOutputThroughput > 0 {
		pl.MarginalGain = math.Pow(lastV.Point.RawOutputThroughput/s.RawOutputThroughput, 1/math.Log2(lastV.Point.OfferedRate/s.OfferedRate)) - 1
	}
	a.Plateau = pl
	note := fmt.Sprintf("raw throughput reaches its plateau at %s: from there to %s it gains %s per doubling of offered load (below %s); "+
		"highest raw output on the plateau %s tok/s",
		tierName(s), tierName(lastV.Point), pct(pl.MarginalGain), pct(a.Params.PlateauGain), fmtG(pl.Throughput))
	switch {
	case start == 0:
		note += "; the whole sweep is on the plateau: even the lightest tier saturates the deployment, so add lighter tiers"
	case gains[start] != nil:
		note += fmt.Sprintf("; the step into it, from %s, still gained %s", tierName(axis[start-1].Point), pct(*gains[start]))
	}
	if pl.Tiers == 2 {
		note += "; the plateau rests on a single step: extend the sweep to confirm it"
	}
	a.Notes = append(a.Notes, note)
}

func (a *Analysis) kneeAndCapacity(axis []*PointVerdict) {
	knee, last, next := bracket(axis)
	target := a.Params.TargetShare
	switch {
	case knee >= 0:
		k, prev := axis[knee], axis[last]
		a.Knee = &Knee{
			Tier: k.Point.Tier, Rate: k.Point.OfferedRate,
			CompliantShare: k.CompliantShare, ShareHi: k.ShareHi,
			ClearlyFails: k.Verdict == VerdictFails, Unstable: !k.Stable,
			AfterTier: prev.Point.Tier, AfterRate: prev.Point.OfferedRate,
		}
		var why []string
		if a.Knee.ClearlyFails {
			why = append(why, fmt.Sprintf("%d of %d compliant (%s), and even the upper end of its %s interval, %s, is below the %s target",
				k.Point.Compliant, k.Point.Issued, pct(k.CompliantShare), pct(a.Params.Confidence), pct(k.ShareHi), pct(target)))
		}
		if a.Knee.Unstable {
			why = append(why, "its queueing grows ("+k.Point.Trend.Reason+")")
		}
		a.Notes = append(a.Notes, fmt.Sprintf("knee at %s: non-compliance turns systematic: %s; after %s met the objective (%s compliant); "+
			"timeouts %s and other failures %s of issued requests at the knee",
			tierName(k.Point), strings.Join(why, "; "), tierName(prev.Point), pct(prev.CompliantShare),
			pct(k.Point.TimeoutRatio), pct(k.Point.FailureRatio)))
		for _, v := range axis[knee+1:] {
			if v.meetsObjective() {
				a.Notes = append(a.Notes, fmt.Sprintf("%s meets the objective again above the knee (%s compliant): the curve is not monotone, "+
					"so re-measure around the knee before trusting the capacity", tierName(v.Point), pct(v.CompliantShare)))
				break
			}
		}
	case last < 0:
		a.Notes = append(a.Notes, "no knee: no tier met the objective, so there is no compliant range for non-compliance to break out of")
	default:
		a.Notes = append(a.Notes, fmt.Sprintf("no knee: no tier showed systematic non-compliance (share clearly below %s or growing queueing) up to %s",
			pct(target), tierName(axis[len(axis)-1].Point)))
	}

	first := axis[0]
	if !first.meetsObjective() {
		a.Notes = append(a.Notes, "no capacity: even the lightest tier misses the objective: "+missWhy(first, a.Params))
		return
	}
	l := axis[last]
	c := &Capacity{Rate: l.Point.OfferedRate, FromTier: l.Point.Tier}
	switch {
	case next < 0:
		c.Method = CapacityLowerBound
		a.Notes = append(a.Notes, fmt.Sprintf("capacity at least %s req/s: %s meets the objective (%s compliant) and no tier above it was measured",
			fmtG(c.Rate), tierName(l.Point), pct(l.CompliantShare)))
	case axis[next].CompliantShare < target:
		n := axis[next]
		c.ToTier = &n.Point.Tier
		c.Method = CapacityInterpolated
		r1, s1, r2, s2 := l.Point.OfferedRate, l.CompliantShare, n.Point.OfferedRate, n.CompliantShare
		c.Rate = r1 + (s1-target)/(s1-s2)*(r2-r1)
		a.Notes = append(a.Notes, fmt.Sprintf("capacity %s req/s: the compliant share crosses %s between %s, at %s, and %s, at %s (%s); interpolated linearly in share against rate",
			fmtG(c.Rate), pct(target), tierName(l.Point), pct(s1), tierName(n.Point), pct(s2), n.Verdict))
	default:
		n := axis[next]
		c.ToTier = &n.Point.Tier
		c.Method = CapacityAtTier
		a.Notes = append(a.Notes, fmt.Sprintf("capacity %s req/s, at %s: the next tier, %s, still has %s compliant but its queueing grows, so no rate above %s is claimed",
			fmtG(c.Rate), tierName(l.Point), tierName(n.Point), pct(n.CompliantShare), tierName(l.Point)))
	}
	a.Capacity = c
	if a.Plateau != nil && a.Knee != nil {
		if a.Knee.Rate <= a.Plateau.StartRate {
			a.Notes = append(a.Notes, fmt.Sprintf("the objective gives out (knee at %s req/s) no later than raw throughput saturates (plateau from %s req/s): "+
				"latency and quality, not raw throughput, bound capacity", fmtG(a.Knee.Rate), fmtG(a.Plateau.StartRate)))
		} else {
			a.Notes = append(a.Notes, fmt.Sprintf("raw throughput saturates (plateau from %s req/s) before the objective gives out (knee at %s req/s): "+
				"the compliant range reaches onto the plateau", fmtG(a.Plateau.StartRate), fmtG(a.Knee.Rate)))
		}
	}
}

// missWhy says in words why a tier does not meet the objective.
func missWhy(v *PointVerdict, p Params) string {
	tier := fmt.Sprintf("%s has %d of %d compliant (%s, %s interval [%s, %s]) against a %s target",
		tierName(v.Point), v.Point.Compliant, v.Point.Issued, pct(v.CompliantShare), pct(p.Confidence),
		pct(v.ShareLo), pct(v.ShareHi), pct(p.TargetShare))
	switch {
	case v.Verdict == VerdictFails:
		return tier + ", clearly below it; loosen the objectives or fix the deployment"
	case v.Verdict == VerdictUncertain:
		return tier + ": below it, though the interval still reaches it; run lighter or longer tiers to decide"
	default:
		return tier + ", but its queueing grows (" + v.Point.Trend.Reason + ")"
	}
}

func (a *Analysis) operatingPoint(axis []*PointVerdict) {
	if a.Capacity == nil {
		return
	}
	h := a.Params.Headroom
	op := &OperatingPoint{Rate: a.Capacity.Rate * (1 - h)}
	op.ExpectedCompliantThroughput = interpolate(axis, op.Rate, func(pt Point) float64 { return pt.CompliantOutputThroughput })
	op.ExpectedRawThroughput = interpolate(axis, op.Rate, func(pt Point) float64 { return pt.RawOutputThroughput })
	op.Reason = fmt.Sprintf("capacity %s req/s at a %s compliant share, less %s headroom", fmtG(a.Capacity.Rate), pct(a.Params.TargetShare), pct(h))
	if a.Capacity.Method == CapacityLowerBound {
		op.Reason += "; capacity is only a lower bound, so this point is conservative"
	}
	a.OperatingPoint = op
	a.Notes = append(a.Notes, fmt.Sprintf("operating point %s req/s (%s), expecting about %s tok/s compliant and %s tok/s raw output (interpolated between tiers)",
		fmtG(op.Rate), op.Reason, fmtG(op.ExpectedCompliantThroughput), fmtG(op.ExpectedRawThroughput)))
	if h == 0 {
		a.Notes = append(a.Notes, "headroom is 0: the operating point sits at capacity, leaving no room to absorb bursts or recover from failures")
	}
	if a.Plateau != nil && op.Rate >= a.Plateau.StartRate {
		a.Notes = append(a.Notes, fmt.Sprintf("the operating point is on the raw-throughput plateau (from %s req/s): more load there buys no more output",
			fmtG(a.Plateau.StartRate)))
	}
}

// interpolate is the piecewise-linear value of f at rate over the axis, with
// (0, 0) before the first tier (no load, no output); beyond the last tier it
// is the last tier's value.
func interpolate(axis []*PointVerdict, rate float64, f func(Point) float64) float64 {
	r0, y0 := 0.0, 0.0
	for _, v := range axis {
		r1, y1 := v.Point.OfferedRate, f(v.Point)
		if rate <= r1 {
			return y0 + (rate-r0)/(r1-r0)*(y1-y0)
		}
		r0, y0 = r1, y1
	}
	return y0
}

// stressNotes compares a tier at an infinite offered rate with the curve.
func (a *Analysis) stressNotes(axis []*PointVerdict) {
	top := axis[len(axis)-1].Point
	for _, v := range a.Points {
		if !math.IsInf(v.Point.OfferedRate, 1) || v.Verdict == VerdictInvalid || v.Verdict == VerdictNoData {
			continue
		}
		note := fmt.Sprintf("%s sent everything at T0, so it is off the rate axis: raw output %s tok/s", tierName(v.Point), fmtG(v.Point.RawOutputThroughput))
		if top.RawOutputThroughput > 0 {
			note += fmt.Sprintf(", %s of the highest finite tier's %s tok/s at %s", pct(v.Point.RawOutputThroughput/top.RawOutputThroughput),
				fmtG(top.RawOutputThroughput), tierName(top))
		}
		a.Notes = append(a.Notes, note)
	}
}

// tierNotes states the per-tier judgements that deserve words.
func tierNotes(vs []PointVerdict, p Params) []string {
	var notes, untested []string
	for i := range vs {
		v := &vs[i]
		pt := v.Point
		if prob := pointProblem(pt); prob != "" {
			notes = append(notes, fmt.Sprintf("%s left out: %s", tierName(pt), prob))
			continue
		}
		if pt.Issued == 0 {
			notes = append(notes, fmt.Sprintf("%s left out: no request was issued", tierName(pt)))
			continue
		}
		if i > 0 && vs[i-1].Point.OfferedRate == pt.OfferedRate && vs[i-1].Verdict != VerdictInvalid && vs[i-1].Verdict != VerdictNoData {
			notes = append(notes, fmt.Sprintf("%s repeats the offered rate of tier %d: only the first is on the curve", tierName(pt), vs[i-1].Point.Tier))
		}
		if v.Verdict == VerdictUncertain {
			notes = append(notes, fmt.Sprintf("%s is uncertain: %d of %d compliant (%s) is below the %s target, but the %s Wilson interval [%s, %s] still reaches it; "+
				"a longer tier would decide", tierName(pt), pt.Compliant, pt.Issued, pct(v.CompliantShare), pct(p.TargetShare),
				pct(p.Confidence), pct(v.ShareLo), pct(v.ShareHi)))
		}
		if !v.Stable {
			notes = append(notes, fmt.Sprintf("%s is unstable: %s", tierName(pt), pt.Trend.Reason))
		}
		if !pt.Trend.Tested {
			untested = append(untested, tierName(pt))
		}
		if pt.ClientBound {
			notes = append(notes, fmt.Sprintf("%s was client-bound: the client, not the server, shaped its load, so its figures understate what the deployment would do at that rate",
				tierName(pt)))
		}
		if r := pt.RealisedRate; isFinite(pt.OfferedRate) && r > 0 && isFinite(r) && math.Abs(r/pt.OfferedRate-1) > realisedRateTolerance {
			notes = append(notes, fmt.Sprintf("%s realised %s req/s against %s nominal (%+.1f %%)", tierName(pt), fmtG(r), fmtG(pt.OfferedRate), 100*(r/pt.OfferedRate-1)))
		}
	}
	if len(untested) > 0 {
		notes = append(notes, fmt.Sprintf("stability not tested for %s (too few requests, or no trend given): they count as stable", strings.Join(untested, ", ")))
	}
	return notes
}

// realisedRateTolerance: a realised offered rate further than this from the
// nominal one is worth a note.
const realisedRateTolerance = 0.1

// tierName is "tier 3 (8 req/s)" or "tier 7 (inf)".
func tierName(pt Point) string {
	if math.IsInf(pt.OfferedRate, 1) {
		return fmt.Sprintf("tier %d (inf)", pt.Tier)
	}
	return fmt.Sprintf("tier %d (%s req/s)", pt.Tier, fmtG(pt.OfferedRate))
}

// pct prints a fraction as a percentage, 4 significant digits.
func pct(v float64) string { return fmt.Sprintf("%.4g %%", 100*v) }
