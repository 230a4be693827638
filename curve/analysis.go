package curve

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Verdict is a tier's standing against the target share, from its own steady-state window.
type Verdict string

// Verdicts. With share the steady-state compliant request share and [lo, hi] its confidence
// interval (Wilson's, on the effective sample size):
const (
	VerdictMeets        Verdict = "meets"        // lo ≥ target and the tier reached a steady state
	VerdictFails        Verdict = "fails"        // hi < target, or its queue never settled (unstable)
	VerdictUncertain    Verdict = "uncertain"    // lo < target ≤ hi: a longer tier would decide
	VerdictInsufficient Verdict = "insufficient" // fewer requests in the window than a steady state needs
	VerdictExcluded     Verdict = "excluded"     // not judged: client-bound, interrupted, cut, or no steady state at all
)

// PointVerdict is one tier of the curve with the analysis's judgement of it. Rates and
// throughputs are the steady-state ones (measure.Steady).
type PointVerdict struct {
	Tier        int     `json:"tier"`
	NominalRate float64 `json:"nominal_rate"`
	// Rate is the realised arrival rate in the steady-state window: the curve's x-axis.
	Rate                      float64 `json:"realised_rate"`
	RequestThroughput         float64 `json:"request_throughput"`
	RawOutputThroughput       float64 `json:"raw_output_throughput"`
	CompliantOutputThroughput float64 `json:"compliant_output_throughput"`
	// Share is the compliant request share in the window, over Requests requests planned in
	// it; EffectiveRequests the sample size its interval [ShareLo, ShareHi] rests on (requests
	// over the variance factor).
	Requests          int     `json:"window_requests"`
	Share             float64 `json:"compliant_request_share"`
	EffectiveRequests float64 `json:"effective_requests"`
	ShareLo           float64 `json:"share_lo"`
	ShareHi           float64 `json:"share_hi"`
	Verdict           Verdict `json:"verdict"`
	// Stable is false when the tier never reached a steady state (its queue kept growing).
	Stable bool `json:"stable"`
	// Fit is the monotone (isotonic) fit of the share against rate at this tier, pooled with
	// its neighbours where the measured shares violate the order; FitLo and FitHi bound it.
	Fit   float64 `json:"fitted_share"`
	FitLo float64 `json:"fitted_share_lo"`
	FitHi float64 `json:"fitted_share_hi"`
	// OnPlateau marks the tiers from the plateau's start on; GainPerDoubling is the relative
	// raw-throughput gain per doubling of rate from the previous tier (null for the first).
	OnPlateau       bool     `json:"on_plateau"`
	GainPerDoubling *float64 `json:"gain_per_doubling"`
	// Reason says the verdict in words.
	Reason string `json:"reason"`
	// Pooled lists the tiers measured at this point when there were several (Tier is the
	// first): tiers run at the same nominal rate are one measurement of it.
	Pooled []int `json:"pooled_tiers,omitempty"`
	// Controlled is how the shadow queue controlled the share (measure.Controlled), nil when it
	// did not: Share is then the controlled share, MeasuredShare the share as measured, and Rate
	// the nominal rate the controlled share estimates the curve at.
	Controlled    *measure.Controlled `json:"controlled,omitempty"`
	MeasuredShare float64             `json:"-"`
}

// Plateau is where raw throughput stops growing with the arrival rate.
type Plateau struct {
	StartTier int     `json:"start_tier"`
	StartRate float64 `json:"start_rate"`
	// Throughput is the highest raw output throughput on the plateau (tok/s).
	Throughput   float64 `json:"raw_output_throughput"`
	MarginalGain float64 `json:"marginal_gain"`
	Tiers        int     `json:"tiers"`
}

// Knee is where non-compliance turns systematic: the lightest tier that fails with confidence
// or never settles.
type Knee struct {
	Tier         int     `json:"tier"`
	Rate         float64 `json:"rate"`
	Share        float64 `json:"compliant_request_share"`
	ShareHi      float64 `json:"share_hi"`
	ClearlyFails bool    `json:"clearly_fails"`
	Unstable     bool    `json:"unstable"`
}

// How a capacity was found.
const (
	// CapacityInterpolated: the fitted share crosses the target between two tiers.
	CapacityInterpolated = "interpolated"
	// CapacityAtTier: the next tier still met the share but never settled, so no rate above the
	// last stable one is claimed.
	CapacityAtTier = "at_tier"
	// CapacityLowerBound: every tier meets the target: capacity is at least the highest rate.
	CapacityLowerBound = "lower_bound"
)

// Capacity is the highest arrival rate at which the compliant request share still meets the
// target in steady state.
type Capacity struct {
	// Rate is the estimate: where the monotone fit of the share against the realised rate
	// crosses the target (requests/s).
	Rate   float64 `json:"rate"`
	Method string  `json:"method"`
	// Low is the highest rate that meets the target with confidence (the fit's lower bound
	// reaches it; by monotonicity every lighter load does too), 0 when none does. High is the
	// lightest rate that fails with confidence (or never settles), null when none was measured.
	// The capacity lies between them at the analysis's confidence.
	Low      float64  `json:"low"`
	High     *float64 `json:"high"`
	LowTier  *int     `json:"low_tier"`
	HighTier *int     `json:"high_tier"`
	// LowPool, when set, is what set Low: the stable tiers from Low up to the estimate, pooled,
	// met the target with confidence where no one of them alone did (VerifyingPool: by the
	// curve's monotony each one's share is at most Low's); LowTier is then its lightest tier.
	LowPool *VerifyingPool `json:"low_pool,omitempty"`
	// FromTier and ToTier are the tiers Rate is interpolated between (ToTier null for a lower bound).
	FromTier int  `json:"from_tier"`
	ToTier   *int `json:"to_tier"`
	// Unit names the rates: "" for req/s (or sessions/s: see the result's notes), "users" on
	// the concurrency axis.
	Unit string `json:"unit,omitempty"`
	// RequestRate is, on the concurrency axis, the request rate the capacity's users produce
	// (the curve interpolated); 0 otherwise.
	RequestRate float64 `json:"request_rate,omitempty"`
	// LowRelative and HighRelative are the interval's ends relative to Rate: Low/Rate − 1 (≤ 0)
	// and High/Rate − 1 (≥ 0), the "−9.3 % / +10 %" the interval is stated as around the
	// capacity; null when that end was not measured (Around).
	LowRelative  *float64 `json:"low_relative"`
	HighRelative *float64 `json:"high_relative"`
}

// Around is the capacity interval stated around the capacity: how far below Rate its lower end
// is and how far above its upper end, as fractions of Rate (below ≥ 0, above ≥ 0); ok is false
// when an end is missing or Rate is not a rate.
func (c *Capacity) Around() (below, above float64, ok bool) {
	if c == nil || !(c.Rate > 0) || !(c.Low > 0) || c.High == nil || !(*c.High >= c.Rate) || c.Low > c.Rate {
		return 0, 0, false
	}
	return 1 - c.Low/c.Rate, *c.High/c.Rate - 1, true
}

// relate sets LowRelative and HighRelative from the interval's ends.
func (c *Capacity) relate() {
	if c == nil || !(c.Rate > 0) {
		return
	}
	c.LowRelative, c.HighRelative = nil, nil
	if c.Low > 0 {
		v := c.Low/c.Rate - 1
		c.LowRelative = &v
	}
	if c.High != nil {
		v := *c.High/c.Rate - 1
		c.HighRelative = &v
	}
}

func (c *Capacity) unit() string {
	if c.Unit == "" {
		return "req/s"
	}
	return c.Unit
}

// LowerBoundOnly reports whether the capacity is only known to be at least Rate.
func (c *Capacity) LowerBoundOnly() bool { return c.Method == CapacityLowerBound }

// String is the capacity as people read it: "at least 12.2 req/s" for a lower bound, else
// "12.2 req/s (11.0–13.5)" with the interval, a missing end said in words ("unconfirmed, below
// 13.5" when no tier meets the target with confidence).
func (c *Capacity) String() string {
	if c == nil {
		return "none"
	}
	if c.RequestRate > 0 {
		return c.text() + fmt.Sprintf(", producing %s req/s", fmtRate(c.RequestRate))
	}
	return c.text()
}

func (c *Capacity) text() string {
	if c.LowerBoundOnly() {
		return fmt.Sprintf("at least %s %s", fmtRate(c.Rate), c.unit())
	}
	switch {
	case c.Low > 0 && c.High != nil:
		return fmt.Sprintf("%s %s (%s–%s)", fmtRate(c.Rate), c.unit(), fmtRate(c.Low), fmtRate(*c.High))
	case c.Low > 0:
		return fmt.Sprintf("%s %s (at least %s, no upper bound measured)", fmtRate(c.Rate), c.unit(), fmtRate(c.Low))
	case c.High != nil:
		return fmt.Sprintf("%s %s (unconfirmed, below %s)", fmtRate(c.Rate), c.unit(), fmtRate(*c.High))
	}
	return fmt.Sprintf("%s %s (unconfirmed, unbracketed)", fmtRate(c.Rate), c.unit())
}

// OperatingPoint is where to run: capacity less the headroom, with what it should deliver and,
// when the sweep ran one, the tier that verified it.
type OperatingPoint struct {
	// Rate = Capacity.Rate·(1 − Params.Headroom), requests per second.
	Rate float64 `json:"rate"`
	// Expected* are the steady-state figures of the curve at Rate, interpolated linearly in rate
	// between the tiers (through the origin below the first): what the confirmation should see.
	ExpectedRawThroughput       float64 `json:"expected_raw_output_throughput"`
	ExpectedCompliantThroughput float64 `json:"expected_compliant_output_throughput"`
	Reason                      string  `json:"reason"`
	// Confirmation is the tier run at the operating point to verify it; nil when none ran.
	Confirmation *Confirmation `json:"confirmation"`
	// VerifiedBy says what verified the operating point: VerifiedByConfirmation (its own tier
	// met the target with confidence), VerifiedByHeavierTier (a tier at a heavier load met it
	// with confidence, so by the curve's monotony every lighter load does, and the confirmation
	// tier agrees), VerifiedByHeavierTiers (the tiers at or above it and below the capacity,
	// pooled, met it), or "" (not verified).
	VerifiedBy string `json:"verified_by"`
	// HeavierTier is the tier that verified it when VerifiedBy is VerifiedByHeavierTier.
	HeavierTier *int `json:"heavier_tier,omitempty"`
	// Pool is what verified it when VerifiedBy is VerifiedByHeavierTiers.
	Pool *VerifyingPool `json:"verifying_pool,omitempty"`
	// Verification says in a sentence whether the operating point was verified and why: by
	// which tier or tiers, with what they measured, or what is missing ("not verified yet:
	// confirmation tier 9 was 100 % compliant … short of 95 %"). The terminal, report.html and
	// a capacity plan all state it.
	Verification string `json:"verification"`
}

// VerifyingPool is the tiers that verified an operating point together: every stable tier from
// the operating point up to the capacity estimate, confirmations included. By the curve's
// monotony each one's share is at most the operating point's, so their pooled share (weighted
// by effective sample) is too, and a lower bound of it that clears the target is one for the
// operating point: no tier alone ran long enough for that, together they did.
type VerifyingPool struct {
	Tiers             []int   `json:"tiers"`
	Share             float64 `json:"share"`
	EffectiveRequests float64 `json:"effective_requests"`
	ShareLo           float64 `json:"share_lo"`
	// From and To are the rates of the lightest and the heaviest of them.
	From float64 `json:"from_rate"`
	To   float64 `json:"to_rate"`
}

// What verified an operating point (OperatingPoint.VerifiedBy).
const (
	VerifiedByConfirmation = "confirmation"
	VerifiedByHeavierTier  = "heavier_tier"
	VerifiedByHeavierTiers = "heavier_tiers"
)

// Verified reports whether the operating point was verified: its confirmation tier met the
// target with confidence, or a tier at a heavier load did and no tier at the operating point
// contradicts it (VerifiedBy).
func (o *OperatingPoint) Verified() bool {
	if o == nil {
		return false
	}
	if o.VerifiedBy == VerifiedByHeavierTier || o.VerifiedBy == VerifiedByHeavierTiers {
		return true
	}
	return o.Confirmation != nil && o.Confirmation.AtThisPoint && o.Confirmation.Verdict == VerdictMeets
}

// Confirmation is what the tier run at the operating point measured, in its steady state.
type Confirmation struct {
	Tier        int     `json:"tier"`
	NominalRate float64 `json:"nominal_rate"`
	// AtThisPoint: the tier ran at this analysis's operating point (within 0.5 %); false when it
	// was run for another one (for example before the objectives were changed in a report).
	AtThisPoint               bool    `json:"at_this_operating_point"`
	Rate                      float64 `json:"realised_rate"`
	Share                     float64 `json:"compliant_request_share"`
	ShareLo                   float64 `json:"share_lo"`
	ShareHi                   float64 `json:"share_hi"`
	EffectiveRequests         float64 `json:"effective_requests"`
	Verdict                   Verdict `json:"verdict"`
	RequestThroughput         float64 `json:"request_throughput"`
	RawOutputThroughput       float64 `json:"raw_output_throughput"`
	CompliantOutputThroughput float64 `json:"compliant_output_throughput"`
	Reason                    string  `json:"reason"`
	// ConfidenceReached is the highest two-sided confidence at which its interval's lower end
	// still reaches the target (0 when its share is below it): what a confirmation cut short by
	// its budget did show.
	ConfidenceReached float64 `json:"confidence_reached"`
	// Pooled lists the confirmation tiers measured at this point when there were several.
	Pooled []int `json:"pooled_tiers,omitempty"`
	// RequestsToDecide, for a confirmation that did not decide, is how many requests in the
	// window at this point would decide it, if they showed the share and the clustering this one
	// did (its window's requests per effective request): what "a longer budget" means. 0 when it
	// decided or its share is not above the target.
	RequestsToDecide float64 `json:"requests_to_decide,omitempty"`
}

// Analysis is the load curve judged: per-tier verdicts and the monotone fit, plateau, knee,
// capacity with its interval and the operating point, each nil when it does not exist, and the
// reasons in words.
type Analysis struct {
	// Params are the parameters used, defaults filled.
	Params Params `json:"params"`
	// Axis is what every rate of the analysis counts (capacity, operating point, the points'
	// Rate): requests or sessions per second, or users (see Axis; curve.json leaves the
	// request rate's out).
	Axis           Axis            `json:"axis,omitempty"`
	Points         []PointVerdict  `json:"points"`
	Plateau        *Plateau        `json:"plateau"`
	Knee           *Knee           `json:"knee"`
	Capacity       *Capacity       `json:"capacity"`
	OperatingPoint *OperatingPoint `json:"operating_point"`
	// Notes give every judgement in words with the numbers behind it.
	Notes []string `json:"notes"`
}

// Analyze judges a sweep from the summaries of its tiers (in any order; the input is not
// modified). The curve's points are the tiers at a finite rate that are not confirmations;
// a confirmation tier (records.RoleConfirm) verifies the operating point instead. Zero fields of
// p take their defaults; an invalid field is replaced by its default and a note says so
// (callers should check [Params.Validate] first).
//
// Per tier, from its steady state (measure.Steady): share and its Wilson interval at
// p.Confidence on the effective sample size; "meets" when the lower bound reaches the target and
// the tier settled, "fails" when the upper bound is below it or the queue never settled,
// "uncertain" otherwise. Across tiers: the isotonic (non-increasing) regression of the share on
// the realised rate, weighted by effective sample size (pool adjacent violators), and for each
// pooled block its own interval. Capacity is where the fit crosses the target, interpolated
// linearly between the tiers on either side; its interval runs from the highest rate whose
// fitted lower bound reaches the target to the lightest rate whose fitted upper bound is below
// it (or that never settled). No rate above a tier that never settled is claimed.
func Analyze(tiers []measure.Summary, p Params) Analysis {
	p, notes := p.resolve()
	a := Analysis{Params: p, Notes: notes, Axis: SweepAxis(tiers)}
	tiers, members := pool(tiers)
	var confirm []measure.Summary
	for _, s := range tiers {
		switch {
		case !a.Axis.Holds(s):
			if s.Role != records.RoleProbe {
				a.Notes = append(a.Notes, fmt.Sprintf("tier %d is not a closed-loop tier among closed-loop tiers (or the other way round): it is off the concurrency axis", s.Tier))
			}
		case s.Role == records.RoleConfirm:
			confirm = append(confirm, s)
		case math.IsInf(s.NominalRate, 1):
			if s.Role != records.RoleProbe {
				a.Notes = append(a.Notes, fmt.Sprintf("tier %d sent everything at T0: it is off the rate axis", s.Tier))
			}
		default:
			v := judge(s, p)
			v.Pooled = members[v.Tier]
			a.Points = append(a.Points, v)
		}
	}
	slices.SortStableFunc(a.Points, func(x, y PointVerdict) int {
		return cmp.Or(cmpRate(x.Rate, y.Rate), cmp.Compare(x.Tier, y.Tier))
	})
	if a.Axis.Open() { // a closed loop cannot offer more than it completes
		boundByService(a.Points, tiers)
	}
	onlyFailingProbes(a.Points, tiers)
	a.Notes = append(a.Notes, tierNotes(a.Points)...)
	axis := a.axis()
	if len(axis) == 0 {
		a.Notes = append(a.Notes, "no tier has a steady state to judge: no curve")
		return a
	}
	fit(axis, p)
	a.plateau(axis)
	a.kneeAndCapacity(axis)
	a.operatingPoint(axis, confirm, members)
	a.Capacity.relate()
	return a
}

func cmpRate(x, y float64) int {
	switch {
	case math.IsNaN(x) && math.IsNaN(y):
		return 0
	case math.IsNaN(x):
		return 1
	case math.IsNaN(y):
		return -1
	}
	return cmp.Compare(x, y)
}

// judge computes one tier's own verdict.
func judge(s measure.Summary, p Params) PointVerdict {
	v := PointVerdict{Tier: s.Tier, NominalRate: s.NominalRate, Rate: math.NaN(), ShareLo: 0, ShareHi: 1, Stable: true,
		Fit: math.NaN(), FitLo: math.NaN(), FitHi: math.NaN(), Share: math.NaN()}
	st := s.Steady
	switch {
	case st == nil:
		v.Verdict, v.Reason = VerdictExcluded, "no request was issued"
		return v
	case s.Interrupted:
		v.Verdict, v.Reason = VerdictExcluded, "the run was interrupted during the tier"
	case s.Recorded < s.Planned:
		v.Verdict, v.Reason = VerdictExcluded, fmt.Sprintf("cut: %d of its %d planned requests were recorded (the run was killed)", s.Recorded, s.Planned)
	case s.ClientBound:
		v.Verdict, v.Reason = VerdictExcluded, "client-bound: the client, not the server, shaped its load ("+s.ClientBoundReason+")"
	}
	// A closed loop's level is its users, its request rate an outcome; a controlled share
	// stands at the rate the schedule was drawn at.
	v.NominalRate, v.Rate = AxisOf(s).Level(s, st)
	v.RequestThroughput = st.RequestThroughput
	v.RawOutputThroughput, v.CompliantOutputThroughput = st.RawOutputThroughput, st.CompliantOutputThroughput
	share, eff := st.Judged()
	v.Share, v.EffectiveRequests, v.Requests = share, eff, st.Requests
	if st.Requests > 0 {
		v.ShareLo, v.ShareHi = WilsonN(share, eff, p.Confidence)
	}
	if c := st.Controlled; c != nil {
		// The controlled share estimates the share at the rate the schedule was drawn at: the
		// shadow took out the noise of the arrivals that happened, the realised rate's with it.
		v.Controlled, v.MeasuredShare = c, st.CompliantShare
	}
	if v.Verdict == VerdictExcluded {
		return v
	}
	if !isFinite(v.Rate) || !(v.Rate > 0) {
		v.Verdict, v.Reason = VerdictExcluded, "its steady-state window has no length"
		return v
	}
	target := p.TargetShare
	switch {
	case st.Requests < measure.MinSteadyRequests || st.TooShort:
		v.Verdict, v.Reason = VerdictInsufficient, st.Note
	case !st.Stationary:
		v.Stable = false
		v.Verdict, v.Reason = VerdictFails, "unstable: "+st.Note
	case v.ShareLo >= target:
		v.Verdict = VerdictMeets
		v.Reason = fmt.Sprintf("%s compliant%s, %s interval [%s, %s] on %.0f effective requests: the lower bound reaches the %s target",
			pct(v.Share), controlledText(v), pct(p.Confidence), pct(v.ShareLo), pct(v.ShareHi), v.EffectiveRequests, pct(target))
	case v.ShareHi < target:
		v.Verdict = VerdictFails
		v.Reason = fmt.Sprintf("%s compliant%s, %s interval [%s, %s] on %.0f effective requests: even the upper bound is below the %s target",
			pct(v.Share), controlledText(v), pct(p.Confidence), pct(v.ShareLo), pct(v.ShareHi), v.EffectiveRequests, pct(target))
	default:
		v.Verdict = VerdictUncertain
		v.Reason = fmt.Sprintf("%s compliant%s, %s interval [%s, %s] on %.0f effective requests contains the %s target: a longer tier would decide",
			pct(v.Share), controlledText(v), pct(p.Confidence), pct(v.ShareLo), pct(v.ShareHi), v.EffectiveRequests, pct(target))
	}
	return v
}

// controlledText says how the shadow queue controlled a share (" (controlled …)"), "" when it
// did not.
func controlledText(v PointVerdict) string {
	c := v.Controlled
	switch {
	case c == nil:
		return ""
	case c.Expected == 0 && c.ShadowShare == 0: // a pool of tiers, each controlled
		return fmt.Sprintf(" (controlled with the shadow queue: %s measured, the variance divided by %.2g)", pct(v.MeasuredShare), c.Gain)
	}
	return fmt.Sprintf(" (controlled with the shadow queue: %s measured, the shadow %s against the %s it expects, the variance divided by %.2g)",
		pct(v.MeasuredShare), pct(c.ShadowShare), pct(c.Expected), c.Gain)
}

// serviceBoundMargin: arrivals must exceed the best completion rate by this factor before a
// tier counts as beyond what the deployment can serve (completion rates are measured too).
const serviceBoundMargin = 1.05

// boundByService marks unstable every judged tier whose arrivals came faster than the highest
// rate at which the deployment completed requests anywhere in the sweep (probes included):
// such a queue can only grow, even when the tier ended before that showed as a trend or broke
// the objectives, so the load is not sustainable and cannot meet them.
func boundByService(pts []PointVerdict, tiers []measure.Summary) {
	best := 0.0
	for _, s := range tiers {
		// In the unit of the arrivals (requests, or sessions), which v.Rate counts.
		r := s.RequestThroughput
		if ss := s.Sessions; ss != nil && ss.MeanTurns > 0 {
			r /= float64(ss.MeanTurns)
		}
		if st := s.Steady; st != nil && !math.IsInf(s.NominalRate, 1) && isFinite(st.RequestThroughput) {
			r = st.ArrivalThroughput()
		}
		if isFinite(r) {
			best = math.Max(best, r)
		}
	}
	if !(best > 0) {
		return
	}
	for i := range pts {
		v := &pts[i]
		if v.Verdict == VerdictExcluded || v.Verdict == VerdictInsufficient || !v.Stable || !(v.Rate > serviceBoundMargin*best) {
			continue
		}
		v.Stable, v.Verdict = false, VerdictFails
		v.Reason = fmt.Sprintf("unstable: arrivals at %s req/s exceed the highest completion rate the deployment reached in this sweep, %s req/s: the queue can only grow, even if the tier ended before that broke the objectives",
			fmtRate(v.Rate), fmtRate(best))
	}
}

// onlyFailingProbes excludes every saturation probe (records.RoleProbe) at a finite rate that
// did not fail. A probe is short (about a hundred arrivals) and starts on an idle deployment: a
// batching engine absorbs an overload that short into a growing batch, and finishes it before
// its queue, its KV cache or its latencies show that the rate cannot be sustained. Its failure
// is evidence (the load broke the objectives even from idle); its compliance is not, and fitted
// it would claim a capacity far above the truth.
func onlyFailingProbes(pts []PointVerdict, tiers []measure.Summary) {
	probe := map[int]bool{}
	for _, s := range tiers {
		if s.Role == records.RoleProbe {
			probe[s.Tier] = true
		}
	}
	for i := range pts {
		v := &pts[i]
		if !probe[v.Tier] || v.Verdict == VerdictExcluded || v.Verdict == VerdictFails {
			continue
		}
		v.Verdict = VerdictExcluded
		v.Reason = fmt.Sprintf("a saturation probe that did not fail (%s compliant on %d requests): too short, from idle, to show whether its rate can be sustained; a probe counts only when it fails",
			pct(v.Share), v.Requests)
	}
}

// noCapacity says why no rate meets the target when even first, the lightest judged tier,
// misses it, and what to do: excluded tiers below it (interrupted, client-bound, cut) mean the
// lighter loads were not judged, which is not the deployment's fault.
func (a *Analysis) noCapacity(first *PointVerdict, q float64) string {
	how := fmt.Sprintf("fitted share %s against a %s target", pct(first.Fit), pct(q))
	if !first.Stable {
		how = "it never reaches a steady state: its queue keeps growing"
	}
	note := fmt.Sprintf("no capacity: even the lightest judged tier, %s, misses the objective (%s)", tierName(first), how)
	var lighter []string
	for _, v := range a.Points {
		if v.Verdict == VerdictExcluded && v.Rate < first.Rate {
			lighter = append(lighter, fmt.Sprintf("tier %d", v.Tier))
		}
	}
	if len(lighter) > 0 {
		return note + fmt.Sprintf("; lighter loads were not judged: %s excluded (see why in the table), so rerun them", strings.Join(lighter, ", "))
	}
	return note + ": loosen the objectives, fix the deployment, or sweep lighter loads"
}

// axis returns the points the curve is made of: judged, with a rate.
func (a *Analysis) axis() []*PointVerdict {
	var axis []*PointVerdict
	for i := range a.Points {
		if v := &a.Points[i]; v.Verdict != VerdictExcluded {
			axis = append(axis, v)
		}
	}
	return axis
}

// fit computes the isotonic (non-increasing in rate) regression of the share over the stable
// points of the axis, weighted by effective requests, and each pooled block's interval.
// Unstable points are not fitted (their share describes a transient): they fail by definition.
func fit(axis []*PointVerdict, p Params) {
	type block struct {
		w, wy float64
		pts   []*PointVerdict
	}
	var stack []block
	for _, v := range axis {
		if !v.Stable || !(v.EffectiveRequests > 0) {
			continue
		}
		stack = append(stack, block{w: v.EffectiveRequests, wy: v.EffectiveRequests * v.Share, pts: []*PointVerdict{v}})
		for len(stack) >= 2 {
			x, y := stack[len(stack)-2], stack[len(stack)-1]
			if x.wy/x.w >= y.wy/y.w {
				break
			}
			stack = stack[:len(stack)-2]
			stack = append(stack, block{w: x.w + y.w, wy: x.wy + y.wy, pts: append(x.pts, y.pts...)})
		}
	}
	for _, b := range stack {
		share := b.wy / b.w
		lo, hi := WilsonN(share, b.w, p.Confidence)
		for _, v := range b.pts {
			v.Fit, v.FitLo, v.FitHi = share, lo, hi
		}
	}
}

func (a *Analysis) plateau(axis []*PointVerdict) {
	if len(axis) < 2 {
		a.Notes = append(a.Notes, "one tier on the rate axis: no curve, so no plateau")
		return
	}
	gains := make([]*float64, len(axis))
	for i := 1; i < len(axis); i++ {
		prev, cur := axis[i-1], axis[i]
		if prev.RawOutputThroughput > 0 && cur.Rate > prev.Rate {
			g := math.Pow(cur.RawOutputThroughput/prev.RawOutputThroughput, 1/math.Log2(cur.Rate/prev.Rate)) - 1
			if isFinite(g) {
				gains[i] = &g
				axis[i].GainPerDoubling = &g
			}
		}
	}
	start := len(axis) - 1
	for start >= 1 && gains[start] != nil && *gains[start] < a.Params.PlateauGain {
		start--
	}
	last := axis[len(axis)-1]
	if start == len(axis)-1 {
		if g := gains[start]; g != nil {
			a.Notes = append(a.Notes, fmt.Sprintf("raw throughput never saturates: the last step, %s → %s, still gains %s per doubling (≥ %s); "+
				"the sweep stopped before the plateau", tierName(axis[start-1]), tierName(last), pct(*g), pct(a.Params.PlateauGain)))
		}
		return
	}
	s := axis[start]
	pl := &Plateau{StartTier: s.Tier, StartRate: s.Rate, Tiers: len(axis) - start}
	for _, v := range axis[start:] {
		v.OnPlateau = true
		pl.Throughput = math.Max(pl.Throughput, v.RawOutputThroughput)
	}
	if s.RawOutputThroughput > 0 && last.Rate > s.Rate {
		pl.MarginalGain = math.Pow(last.RawOutputThroughput/s.RawOutputThroughput, 1/math.Log2(last.Rate/s.Rate)) - 1
	}
	a.Plateau = pl
	note := fmt.Sprintf("raw throughput reaches its plateau at %s: from there to %s it gains %s per doubling of the arrival rate (below %s); "+
		"highest raw output on the plateau %s tok/s", tierName(s), tierName(last), pct(pl.MarginalGain), pct(a.Params.PlateauGain), fmtG(pl.Throughput))
	if start == 0 {
		note += "; the whole sweep is on the plateau: even the lightest tier saturates the deployment"
	}
	a.Notes = append(a.Notes, note)
}

func (a *Analysis) kneeAndCapacity(axis []*PointVerdict) {
	q := a.Params.TargetShare
	ax := judgedAxis{pts: axis, unstable: -1}
	for i, v := range axis { // the lightest unstable rate: nothing at or above it is claimed
		if !v.Stable {
			ax.unstable = i
			break
		}
	}
	lowIdx, highIdx := ax.ends(q)
	if highIdx >= 0 {
		a.knee(axis[highIdx], q)
	}
	c, last, next, ok := ax.estimate(q)
	if !ok {
		a.Notes = append(a.Notes, a.noCapacity(axis[0], q))
		return
	}
	if lowIdx >= 0 {
		c.Low, c.LowTier = axis[lowIdx].Rate, &axis[lowIdx].Tier
	}
	if highIdx >= 0 {
		h := axis[highIdx].Rate
		c.High, c.HighTier = &h, &axis[highIdx].Tier
		if c.Method == CapacityLowerBound {
			c.Method = CapacityAtTier
		}
	}
	if c.Method == CapacityInterpolated {
		a.poolLowerEnd(ax, c, last)
	}
	c.Rate = math.Max(c.Rate, c.Low)
	if c.High != nil {
		c.Rate = math.Min(c.Rate, *c.High)
	}
	if c.Unit = a.Axis.capacityUnit(); !a.Axis.Open() {
		c.RequestRate = interpolateRequests(axis, c.Rate) // what the capacity's users produce
	}
	a.Capacity = c
	a.Notes = append(a.Notes, a.capacityNote(axis, last, next))
	a.monotonyNotes(axis)
}

// judgedAxis is the curve's points in rate order and the index of the lightest unstable one
// (-1: none).
type judgedAxis struct {
	pts      []*PointVerdict
	unstable int
}

// fitted reports whether point i counts for the fit and the interval: stable, fitted, and
// lighter than the lightest unstable point.
func (ax judgedAxis) fitted(i int) bool {
	return (ax.unstable < 0 || i < ax.unstable) && ax.pts[i].Stable && isFinite(ax.pts[i].Fit)
}

// ends are the interval's: the lightest rate that fails with confidence or never settles; the
// heaviest below it that meets with confidence (-1: none). Each end rests on the tier's own
// measurement (tiers run at one rate pooled): the monotone fit pools tiers of different rates,
// whose shares differ, so its intervals alone are not intervals of the share at one rate. The
// fit must agree too, so that one tier contradicted by its neighbours (a failure below a tier
// that meets) does not set an end on its own.
func (ax judgedAxis) ends(q float64) (lowIdx, highIdx int) {
	lowIdx, highIdx = -1, -1
	for i, v := range ax.pts {
		if i == ax.unstable || (ax.fitted(i) && v.ShareHi < q && v.FitHi < q) {
			highIdx = i
			break
		}
	}
	for i, v := range ax.pts {
		if ax.fitted(i) && v.ShareLo >= q && v.FitLo >= q && (highIdx < 0 || i < highIdx) {
			lowIdx = i
		}
	}
	return lowIdx, highIdx
}

// knee sets the knee at k, the interval's upper end, and says why it is there.
func (a *Analysis) knee(k *PointVerdict, q float64) {
	a.Knee = &Knee{Tier: k.Tier, Rate: k.Rate, Share: k.Share, ShareHi: k.ShareHi, ClearlyFails: k.Stable && k.ShareHi < q, Unstable: !k.Stable}
	why := "its queue never settled (" + k.Reason + ")"
	if a.Knee.ClearlyFails {
		why = fmt.Sprintf("its share, %s, has an upper bound of %s, below the %s target", pct(k.Share), pct(k.ShareHi), pct(q))
	}
	a.Notes = append(a.Notes, fmt.Sprintf("knee at %s: non-compliance turns systematic: %s", tierName(k), why))
}

// estimate is where the fit crosses the target: between the last fitted point at or above it
// and the next below (last, next; next -1 when none is), at the heaviest point before the
// lightest unstable one, or a lower bound. ok is false when no fitted point meets the target.
func (ax judgedAxis) estimate(q float64) (c *Capacity, last, next int, ok bool) {
	last, next = -1, -1
	for i := range ax.pts {
		if !ax.fitted(i) {
			continue
		}
		if ax.pts[i].Fit >= q {
			last = i
			continue
		}
		next = i
		break
	}
	c = &Capacity{}
	switch {
	case last < 0:
		return nil, last, next, false
	case next >= 0:
		l, n := ax.pts[last], ax.pts[next]
		c.Rate, _ = Crossing(l, n, q)
		c.Method, c.FromTier, c.ToTier = CapacityInterpolated, l.Tier, &n.Tier
	case ax.unstable >= 0 && (ax.unstable == 0 || last == ax.unstable-1):
		u := ax.pts[ax.unstable]
		c.Rate, c.Method, c.FromTier, c.ToTier = ax.pts[last].Rate, CapacityAtTier, ax.pts[last].Tier, &u.Tier
	default:
		c.Rate, c.Method, c.FromTier = ax.pts[last].Rate, CapacityLowerBound, ax.pts[last].Tier
	}
	return c, last, next, true
}

// poolLowerEnd raises c's lower end to the heaviest tier below the estimate (and below High)
// whose pool, it and every stable tier above it up to the estimate, meets the target.
func (a *Analysis) poolLowerEnd(ax judgedAxis, c *Capacity, last int) {
	for i := last; i >= 0 && ax.pts[i].Rate > c.Low; i-- {
		v := ax.pts[i]
		if !ax.fitted(i) || (c.High != nil && v.Rate >= *c.High) {
			continue
		}
		if pool := a.verifyingPool(ax.pts, nil, v.Rate, c.Rate); pool != nil {
			c.Low, c.LowTier, c.LowPool = pool.From, &v.Tier, pool
			return
		}
	}
}

// MinLogMisses is the fewest misses, in a point's effective sample, at which Crossing takes the
// logarithm of its miss rate (whose relative standard error is then at most 0.7).
const MinLogMisses = 2

// Crossing is where the fitted share crosses q between l, whose fit meets it, and n, the next
// heavier point, whose fit does not: interpolated in log(miss rate) against log(rate), in which a
// queue's miss rate near its capacity is close to a straight line (it grows like a power of the
// rate). Linear in share, the chord of a share that falls ever faster, it crossed q too close to
// l: on an M/D/8 queue whose share is 99.35 % at 10.27 req/s and 98 % at 12.6, at 10.87 req/s
// against the true 11.23 (−3.2 %), where this puts it at 11.11 (−1.1 %). The logarithms need
// both miss rates measured well: a point with fewer than MinLogMisses misses in its effective
// sample (short tiers of a fixed grid), or a lighter point that missed less than a quarter of
// the target's miss rate, says little of where its logarithm lies, and a small error in it moves
// the crossing far; the crossing is then interpolated linearly, as when there are no two rates
// to span.
// inLogs says which: true in the logarithms, false linearly.
func Crossing(l, n *PointVerdict, q float64) (rate float64, inLogs bool) {
	linear := l.Rate + (l.Fit-q)/(l.Fit-n.Fit)*(n.Rate-l.Rate)
	m0, m1 := 1-l.Fit, 1-n.Fit
	if !(l.Rate > 0 && n.Rate > l.Rate && m1 > 1-q && 1-q >= m0 && m0 >= (1-q)/4 &&
		m0*l.EffectiveRequests >= MinLogMisses && m1*n.EffectiveRequests >= MinLogMisses) {
		return linear, false
	}
	t := math.Log((1-q)/m0) / math.Log(m1/m0)
	return l.Rate * math.Pow(n.Rate/l.Rate, t), true
}

func (a *Analysis) capacityNote(axis []*PointVerdict, last, next int) string {
	c, q := a.Capacity, a.Params.TargetShare
	var b strings.Builder
	switch c.Method {
	case CapacityInterpolated:
		l, n := axis[last], axis[next]
		how := "interpolated linearly in rate (too few misses to place the miss rates' logarithms)"
		if _, logs := Crossing(l, n, q); logs {
			how = "interpolated in log(miss rate) against log(rate)"
		}
		fmt.Fprintf(&b, "capacity %s req/s: the monotone fit of the share crosses %s between %s (fitted %s) and %s (fitted %s), %s",
			fmtRate(c.Rate), pct(q), tierName(l), pct(l.Fit), tierName(n), pct(n.Fit), how)
	case CapacityAtTier:
		fmt.Fprintf(&b, "capacity %s req/s, at %s: the next tier never settled, so no rate above it is claimed", fmtRate(c.Rate), tierName(axis[last]))
	default:
		fmt.Fprintf(&b, "capacity at least %s req/s: every tier up to %s meets the objective; sweep higher rates to find where it gives out",
			fmtRate(c.Rate), tierName(axis[last]))
	}
	switch {
	case c.LowPool != nil:
		pl := c.LowPool
		fmt.Fprintf(&b, "; it meets the target with %s confidence up to %s req/s: the %d stable tiers from there to the estimate, pooled, were %s compliant on %s effective requests (lower bound %s), and each one's load is at least %s req/s (the curve is monotone)",
			pct(a.Params.Confidence), fmtRate(c.Low), len(pl.Tiers), pct(pl.Share), fmtG(pl.EffectiveRequests), pct(pl.ShareLo), fmtRate(c.Low))
	case c.Low > 0:
		fmt.Fprintf(&b, "; it meets the target with %s confidence up to %s req/s", pct(a.Params.Confidence), fmtRate(c.Low))
	default:
		fmt.Fprintf(&b, "; no tier meets the target with %s confidence, so the estimate is not confirmed by any tier", pct(a.Params.Confidence))
	}
	if c.High != nil {
		fmt.Fprintf(&b, " and fails it with confidence from %s req/s", fmtRate(*c.High))
	}
	return b.String()
}

// monotonyNotes says where the measured shares contradict the order the fit assumes.
func (a *Analysis) monotonyNotes(axis []*PointVerdict) {
	for i, lo := range axis {
		if lo.Verdict != VerdictFails || !lo.Stable {
			continue
		}
		for _, hi := range axis[i+1:] {
			if hi.Verdict == VerdictMeets {
				a.Notes = append(a.Notes, fmt.Sprintf("the curve is not monotone: %s fails but %s, at a higher rate, meets; the fit pools them, and the capacity rests on both: re-measure around them",
					tierName(lo), tierName(hi)))
				return
			}
		}
	}
}

func (a *Analysis) operatingPoint(axis []*PointVerdict, confirm []measure.Summary, members map[int][]int) {
	c := a.Capacity
	if c == nil {
		return
	}
	h := a.Params.Headroom
	// Users come in whole numbers: on their axis, the largest one within the headroom.
	op := &OperatingPoint{Rate: a.Axis.operatingLevel(c.Rate * (1 - h))}
	op.ExpectedRawThroughput, op.ExpectedCompliantThroughput = interpolate(axis, op.Rate)
	op.Reason = fmt.Sprintf("capacity %s at a %s compliant share, less %s headroom", c.String(), pct(a.Params.TargetShare), pct(h))
	a.OperatingPoint = op
	if h == 0 {
		a.Notes = append(a.Notes, "headroom is 0: the operating point sits at capacity, leaving no room to absorb bursts or recover from failures")
	}
	var heavierConfirm *Confirmation // the last confirmation that met the target at or above the operating point
	for _, s := range confirm {      // the last confirmation is the one that counts
		v := judge(s, a.Params)
		cf := &Confirmation{Tier: s.Tier, NominalRate: v.NominalRate, Rate: v.Rate, Share: v.Share, ShareLo: v.ShareLo, ShareHi: v.ShareHi,
			EffectiveRequests: v.EffectiveRequests, Verdict: v.Verdict, RequestThroughput: v.RequestThroughput,
			RawOutputThroughput: v.RawOutputThroughput, CompliantOutputThroughput: v.CompliantOutputThroughput, Reason: v.Reason,
			AtThisPoint: math.Abs(v.NominalRate/op.Rate-1) <= 0.005, Pooled: members[s.Tier],
			ConfidenceReached: confidenceReached(v.Share, v.EffectiveRequests, a.Params.TargetShare)}
		if v.Verdict == VerdictUncertain && v.EffectiveRequests > 0 && v.Share > a.Params.TargetShare {
			if n, err := NeededEffective(v.Share, a.Params.TargetShare, a.Params.Confidence); err == nil {
				cf.RequestsToDecide = n * float64(v.Requests) / v.EffectiveRequests
			}
		}
		op.Confirmation = cf
		if cf.Verdict == VerdictMeets && cf.NominalRate >= op.Rate*(1-0.005) {
			heavierConfirm = cf
		}
	}
	cf := op.Confirmation
	// A confirmation that met the target is a measurement of the curve like any tier: the
	// capacity interval's lower end is at least its rate.
	if cf != nil && cf.Verdict == VerdictMeets && cf.Rate > c.Low && (c.High == nil || cf.Rate < *c.High) && a.Axis.Open() {
		c.Low, c.LowTier = cf.Rate, &cf.Tier
		a.Notes = append(a.Notes, fmt.Sprintf("the confirmation tier %d met the target with confidence at %s req/s: the capacity is at least that", cf.Tier, fmtRate(cf.Rate)))
	}
	contradicted := cf != nil && cf.AtThisPoint && (cf.Verdict == VerdictFails || cf.Verdict == VerdictExcluded)
	switch {
	case cf != nil && cf.AtThisPoint && cf.Verdict == VerdictMeets:
		op.VerifiedBy = VerifiedByConfirmation
	case contradicted:
	case c.Low >= op.Rate && c.LowTier != nil:
		op.VerifiedBy, op.HeavierTier = VerifiedByHeavierTier, c.LowTier
	case heavierConfirm != nil:
		op.VerifiedBy, op.HeavierTier = VerifiedByHeavierTier, &heavierConfirm.Tier
	default:
		if pool := a.verifyingPool(axis, confirm, op.Rate, c.Rate); pool != nil {
			op.VerifiedBy, op.Pool = VerifiedByHeavierTiers, pool
		}
	}
	heavy := c.Low
	if heavierConfirm != nil && op.HeavierTier != nil && *op.HeavierTier == heavierConfirm.Tier {
		heavy = heavierConfirm.Rate
	}
	heavyName := ""
	if op.HeavierTier != nil {
		heavyName = fmt.Sprintf("tier %d", *op.HeavierTier)
		for _, v := range axis {
			if v.Tier == *op.HeavierTier && len(v.Pooled) > 1 {
				heavyName = "tiers " + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(v.Pooled)), "+"), "[]")
			}
		}
		// A lower end set by a pool (the tiers from it up to the estimate) is that pool's claim,
		// not its lightest tier's, which alone may not have decided.
		if pl := a.LowerEndPool(); pl != nil {
			names := make([]string, len(pl.Tiers))
			for i, t := range pl.Tiers {
				names[i] = strconv.Itoa(t)
				if m := members[t]; len(m) > 1 {
					names[i] = tierList(m)
				}
			}
			heavyName = fmt.Sprintf("tiers %s, pooled (%s compliant on %s effective requests, lower bound %s),",
				strings.Join(names, ", "), pct(pl.Share), fmtG(pl.EffectiveRequests), pct(pl.ShareLo))
		}
	}
	op.Verification = verification(op, heavy, heavyName, a.Params, a.Axis.Unit())
	a.Notes = append(a.Notes, fmt.Sprintf("operating point %s req/s (%s), expecting about %s tok/s compliant and %s tok/s raw output (the curve interpolated); %s",
		fmtRate(op.Rate), op.Reason, fmtG(op.ExpectedCompliantThroughput), fmtG(op.ExpectedRawThroughput), op.Verification))
}

// LowerEndPool is the pool that set the capacity's lower end (Capacity.LowPool) when that end is
// what verified the operating point (VerifiedByHeavierTier): the pool's claim, not its lightest
// tier's, which alone may not have decided. Nil otherwise.
func (a Analysis) LowerEndPool() *VerifyingPool {
	c, op := a.Capacity, a.OperatingPoint
	if c == nil || op == nil || c.LowPool == nil || c.LowTier == nil || op.VerifiedBy != VerifiedByHeavierTier ||
		op.HeavierTier == nil || *c.LowTier != *op.HeavierTier {
		return nil
	}
	return c.LowPool
}

// verification is OperatingPoint.Verification: whether op is verified and why, heavy being the
// rate at which its heavier tier (heavyName: "tier 5", or "tiers 3+8" pooled at one rate) met
// the target, when that verified it, in unit.
func verification(op *OperatingPoint, heavy float64, heavyName string, p Params, unit string) string {
	cf := op.Confirmation
	switch {
	case op.VerifiedBy == VerifiedByHeavierTier:
		s := fmt.Sprintf("verified: %s met the target with confidence at %s %s, a heavier load, so every lighter load meets it too (the curve is monotone)",
			heavyName, fmtRate(heavy), unit)
		if cf != nil && cf.AtThisPoint {
			s += fmt.Sprintf("; confirmation tier %d at the operating point agrees: %s compliant, interval [%s, %s]", cf.Tier, pct(cf.Share), pct(cf.ShareLo), pct(cf.ShareHi))
			if cf.Verdict != VerdictMeets {
				s += " (too few requests to verify it on its own: it measured what the operating point delivers)"
			}
		}
		return s
	case op.VerifiedBy == VerifiedByHeavierTiers:
		pl := op.Pool
		s := fmt.Sprintf("verified: the %d stable tiers from it up to the capacity (%s to %s %s: tiers %s), pooled, met the target with confidence (%s compliant on %s effective requests, lower bound %s), and each of their loads is at least the operating point's (the curve is monotone)",
			len(pl.Tiers), fmtRate(pl.From), fmtRate(pl.To), unit, strings.ReplaceAll(tierList(pl.Tiers), "+", ", "), pct(pl.Share), fmtG(pl.EffectiveRequests), pct(pl.ShareLo))
		if cf != nil && cf.AtThisPoint {
			s += fmt.Sprintf("; the confirmation tier %d at the operating point alone: %s compliant, interval [%s, %s]", cf.Tier, pct(cf.Share), pct(cf.ShareLo), pct(cf.ShareHi))
		}
		return s
	case cf == nil:
		return "not verified: no confirmation tier ran at it"
	case !cf.AtThisPoint:
		return fmt.Sprintf("not verified: the confirmation tier %d ran at %s %s, another operating point (the analysis inputs changed since)", cf.Tier, fmtRate(cf.NominalRate), unit)
	case op.VerifiedBy == VerifiedByConfirmation:
		return fmt.Sprintf("verified by confirmation tier %d: %s", cf.Tier, cf.Reason)
	case cf.Verdict == VerdictUncertain && cf.Share >= p.TargetShare:
		reached := ""
		if cf.ConfidenceReached > 0 {
			reached = fmt.Sprintf(", meeting it at %s confidence, short of %s", pct(cf.ConfidenceReached), pct(p.Confidence))
		}
		more := ""
		if cf.RequestsToDecide > 0 {
			more = fmt.Sprintf(" (about %.0f requests there, at the share and the clustering it showed)", TwoDigits(cf.RequestsToDecide))
		}
		return fmt.Sprintf("not verified yet: confirmation tier %d was %s compliant, interval [%s, %s] on %.0f effective requests%s: a longer confirmation would decide%s",
			cf.Tier, pct(cf.Share), pct(cf.ShareLo), pct(cf.ShareHi), cf.EffectiveRequests, reached, more)
	}
	return fmt.Sprintf("NOT verified: confirmation tier %d %s: %s", cf.Tier, cf.Verdict, cf.Reason)
}

// verifyingPool pools the stable, judged tiers (search tiers and confirmations) whose rate lies
// in [from, to] (within 0.5 % below from): their share weighted by effective sample and its
// Wilson lower bound on the summed effective sample. It returns the pool when it holds at least
// two tiers and the bound reaches the target, nil otherwise. A tier's rate is the one it realised,
// or its nominal one when the shadow queue controlled its share (the arrivals' own noise then
// taken out); a confirmation at from (the operating point, within 0.5 %) counts at its nominal
// rate either way, as it does when it verifies on its own: its arrivals are the operating
// point's, and a realised rate 0.6 % short of it (a confirmation's Poisson noise is about 1 %)
// would leave out of the pool the one tier that ran at the point.
func (a *Analysis) verifyingPool(axis []*PointVerdict, confirm []measure.Summary, from, to float64) *VerifyingPool {
	tiers, w, wy, lo, hi := a.poolOf(axis, confirm, from, to)
	if len(tiers) < 2 {
		return nil
	}
	share := wy / w
	shareLo, _ := WilsonN(share, w, a.Params.Confidence)
	if shareLo < a.Params.TargetShare {
		return nil
	}
	slices.Sort(tiers)
	return &VerifyingPool{Tiers: tiers, Share: share, EffectiveRequests: w, ShareLo: shareLo, From: lo, To: hi}
}

// poolOf gathers the tiers verifyingPool pools: their tier numbers, summed effective sample w,
// summed effective compliant wy, and the lowest and highest of their rates.
func (a *Analysis) poolOf(axis []*PointVerdict, confirm []measure.Summary, from, to float64) (tiers []int, w, wy, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	add := func(v *PointVerdict, confirmation bool) {
		rate := v.NominalRate
		if v.Controlled == nil && !(confirmation && math.Abs(v.NominalRate/from-1) <= 0.005) {
			rate = v.Rate
		}
		if !v.Stable || !(v.EffectiveRequests > 0) || !isFinite(v.Share) || v.Verdict == VerdictExcluded || v.Verdict == VerdictInsufficient ||
			rate < from*(1-0.005) || rate > to {
			return
		}
		tiers = append(tiers, v.Tier)
		w += v.EffectiveRequests
		wy += v.EffectiveRequests * v.Share
		lo, hi = math.Min(lo, rate), math.Max(hi, rate)
	}
	for _, v := range axis {
		add(v, false)
	}
	for _, s := range confirm {
		v := judge(s, a.Params)
		add(&v, true)
	}
	return tiers, w, wy, lo, hi
}

// confidenceReached is the highest two-sided confidence at which the Wilson interval of share
// on n effective requests still has its lower end at or above target (0 when share ≤ target or
// not even 1 % is reached), to 0.1 %.
func confidenceReached(share, n, target float64) float64 {
	if !(share > target) || !(n > 0) {
		return 0
	}
	if lo, _ := WilsonN(share, n, 0.01); lo < target {
		return 0
	}
	lo, hi := 0.01, 0.999999
	for hi-lo > 1e-4 {
		mid := (lo + hi) / 2
		if l, _ := WilsonN(share, n, mid); l >= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// TwoDigits is x rounded to two significant digits (21,826 to 22,000), as the answer states a
// count it can only estimate.
func TwoDigits(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return x
	}
	scale := math.Pow(10, math.Floor(math.Log10(x))-1)
	return math.Round(x/scale) * scale
}

// Figures are steady-state throughputs at one arrival rate.
type Figures struct {
	Rate                      records.Rate `json:"rate"`
	RawOutputThroughput       float64      `json:"raw_output_throughput"`
	CompliantOutputThroughput float64      `json:"compliant_output_throughput"`
	// Source says where they come from: "confirmation tier N" or "the curve interpolated".
	Source string `json:"source"`
}

// CompliantTokenShare is compliant over raw output: the share the cost ledger prices.
func (f Figures) CompliantTokenShare() float64 {
	if !(f.RawOutputThroughput > 0) {
		return math.NaN()
	}
	return math.Min(1, f.CompliantOutputThroughput/f.RawOutputThroughput)
}

// At returns the curve's steady-state figures at rate: the one interpolation of the project
// (linear between the tiers on the axis, through the origin below the first, the last tier's
// beyond it). ok is false when the curve has no judged tier.
func (a Analysis) At(rate float64) (f Figures, ok bool) {
	axis := a.axis()
	if len(axis) == 0 {
		return Figures{}, false
	}
	f.Rate = records.Rate(rate)
	f.RawOutputThroughput, f.CompliantOutputThroughput = interpolate(axis, rate)
	f.Source = "the curve interpolated"
	return f, true
}

// OperatingFigures are what the cost ledger prices for this sweep: the confirmation tier's
// measured figures when it verified the operating point, else the curve's expectation there
// (Source says which). ok is false without an operating point.
func (a Analysis) OperatingFigures() (Figures, bool) {
	op := a.OperatingPoint
	if op == nil {
		return Figures{}, false
	}
	if cf := op.Confirmation; cf != nil && cf.AtThisPoint {
		return Figures{Rate: records.Rate(cf.Rate), RawOutputThroughput: cf.RawOutputThroughput, CompliantOutputThroughput: cf.CompliantOutputThroughput,
			Source: fmt.Sprintf("confirmation tier %d", cf.Tier)}, true
	}
	return Figures{Rate: records.Rate(op.Rate), RawOutputThroughput: op.ExpectedRawThroughput, CompliantOutputThroughput: op.ExpectedCompliantThroughput,
		Source: "the curve interpolated at the operating point (no tier ran there)"}, true
}

// interpolate is the piecewise-linear value of the raw and compliant throughputs at rate over
// the axis, with (0, 0) before the first tier (no load, no output); beyond the last tier it is
// the last tier's value. Unstable tiers take part: their throughput is what the deployment did.
func interpolate(axis []*PointVerdict, rate float64) (raw, compliant float64) {
	r0, y0, z0 := 0.0, 0.0, 0.0
	for _, v := range axis {
		r1, y1, z1 := v.Rate, v.RawOutputThroughput, v.CompliantOutputThroughput
		if rate <= r1 {
			if r1 == r0 {
				return y1, z1
			}
			w := (rate - r0) / (r1 - r0)
			return y0 + w*(y1-y0), z0 + w*(z1-z0)
		}
		r0, y0, z0 = r1, y1, z1
	}
	return y0, z0
}

// interpolateRequests is the request rate the curve's tiers produced at x on the axis,
// interpolated linearly between the tiers on either side (through the origin below the first).
func interpolateRequests(axis []*PointVerdict, x float64) float64 {
	x0, y0 := 0.0, 0.0
	for _, v := range axis {
		if x <= v.Rate {
			if v.Rate == x0 {
				return v.RequestThroughput
			}
			return y0 + (x-x0)/(v.Rate-x0)*(v.RequestThroughput-y0)
		}
		x0, y0 = v.Rate, v.RequestThroughput
	}
	return y0
}

// tierNotes states the per-tier judgements that deserve words.
func tierNotes(vs []PointVerdict) []string {
	var notes []string
	for _, v := range vs {
		switch v.Verdict {
		case VerdictExcluded, VerdictInsufficient, VerdictUncertain:
			notes = append(notes, fmt.Sprintf("%s is %s: %s", tierName(&v), v.Verdict, v.Reason))
		case VerdictFails:
			if !v.Stable {
				notes = append(notes, fmt.Sprintf("%s is %s", tierName(&v), v.Reason))
			}
		}
		if r := v.Rate; isFinite(v.NominalRate) && isFinite(r) && r > 0 && math.Abs(r/v.NominalRate-1) > realisedRateTolerance {
			notes = append(notes, fmt.Sprintf("%s realised %s req/s in its steady-state window against %s nominal (%+.1f %%); the curve uses the realised rate",
				tierName(&v), fmtG(r), fmtG(v.NominalRate), 100*(r/v.NominalRate-1)))
		}
	}
	return notes
}

// realisedRateTolerance: a realised rate further than this from the nominal one is worth a note.
const realisedRateTolerance = 0.1

// tierName is "tier 3 (8.02 req/s)", or "tiers 3+7 (8.02 req/s)" for tiers pooled at one rate.
func tierName(v *PointVerdict) string {
	if len(v.Pooled) > 1 {
		return fmt.Sprintf("tiers %s (%s req/s)", tierList(v.Pooled), fmtRate(v.Rate))
	}
	return fmt.Sprintf("tier %d (%s req/s)", v.Tier, fmtRate(v.Rate))
}

// fmtRate prints a rate with 3 significant digits, more for large rates.
func fmtRate(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "inf"
	case math.Abs(r) >= 1000:
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.3g", r)
}

// pct prints a fraction as a percentage, 4 significant digits.
func pct(v float64) string { return fmt.Sprintf("%.4g %%", 100*v) }

func fmtG(v float64) string { return fmt.Sprintf("%.4g", v) }

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
