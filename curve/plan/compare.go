package plan

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/loadcurve/loadcurve/curve/cost"
)

// Bases of a [Verdict].
const (
	BasisFollowing = "following" // replicas follow the profile
	BasisStatic    = "static"    // replicas for the peak, all the time
)

// maxEvents bounds the step boundaries [CompareDeployments] examines per basis (each costs a heap
// operation); a search that reaches it says where it stopped.
const maxEvents = 2_000_000

// tieTolerance: two unit costs within this relative distance are equal.
const tieTolerance = 1e-9

// Comparison is two deployments planned for the same forecast.
type Comparison struct {
	A Result `json:"a"`
	B Result `json:"b"`
	// Following compares them with replicas following the profile, Static with replicas for
	// the peak all the time.
	Following Verdict `json:"following"`
	Static    Verdict `json:"static"`
	// Curve is both deployments' cost per million effective tokens over forecasts scaled from
	// 1/100 to [Options].MaxScale times the given one, for plotting (geometric steps, 30 a
	// decade; the costs are step functions, so see the verdicts' break-evens for the exact
	// changes).
	Curve []CurvePoint `json:"curve"`
	// Stamp is "NOT COMPARABLE (n differences)" when a comparability check found that the two
	// were measured differently ([Options].Comparability) and they were planned anyway;
	// Differences says what differs. Both empty otherwise.
	Stamp       string   `json:"stamp,omitempty"`
	Differences []string `json:"differences,omitempty"`
	Notes       []string `json:"notes"`
}

// Comparability is what a check of how two deployments were measured found (package compare's
// Check: the request set, its lengths, the schedule, objectives, cache policy, request body):
// [CompareDeployments]'s notes claim no sameness that it did not establish.
type Comparability struct {
	// Differences are what the check found differ, each in words ("request-set fingerprint
	// differs: A=…, B=…"); none: the two were measured alike.
	Differences []string
}

// Verdict is which deployment is cheaper, on one basis, for the forecast and for every level
// of it.
type Verdict struct {
	// Basis is BasisFollowing or BasisStatic.
	Basis string `json:"basis"`
	// Cheaper names the deployment with the lower cost per million effective tokens for the
	// forecast as given; "" when they cost the same.
	Cheaper string `json:"cheaper"`
	// CostPerMonthDifference is B's monthly cost less A's, serving the same forecast.
	CostPerMonthDifference float64 `json:"cost_per_month_difference"`
	// CostPerMillionEffectiveDifference is B's cost per million effective tokens less A's.
	CostPerMillionEffectiveDifference float64 `json:"cost_per_million_effective_difference"`
	// UnitCostChange is B's cost per effective token over A's, less 1: +0.05 means B costs
	// 5 % more per effective token.
	UnitCostChange float64 `json:"unit_cost_change"`
	// BreakEvens are the forecast levels where the cheaper deployment changes, in increasing
	// order, over every level from 0 to SearchedUpToPeak.
	BreakEvens []BreakEven `json:"break_evens"`
	// SearchedUpToPeak is the highest forecast peak (req/s) the search covered.
	SearchedUpToPeak float64 `json:"searched_up_to_peak"`
	// Exhaustive is true when no change is possible above SearchedUpToPeak either: there the
	// rounding of replica counts up to whole ones (at most one replica per step) can no longer
	// outweigh the difference in cost per request at the operating points.
	Exhaustive bool `json:"exhaustive"`
	// Summary says it in one sentence: "B is cheaper up to 4 req/s peak, A above".
	Summary string `json:"summary"`
	// PaybackFrom and PaybackTo name the move the payback judges: to the deployment with the
	// higher one-time cost (A to B when they are equal). NetSavingsPerMonth is its saving per
	// month at equal effective volume (the compliant tokens the forecast demands of PaybackFrom,
	// each deployment priced at its cost per effective token on this basis). PaybackMonths is
	// the difference in one-time cost over those net savings when they are positive (0 when the
	// one-time costs are equal), null when they are zero or negative: the move never pays back.
	// PaybackNote says it in words, package cost's words ([cost.Move.Payback]: the same rule,
	// its period a month).
	PaybackFrom        string   `json:"payback_from"`
	PaybackTo          string   `json:"payback_to"`
	NetSavingsPerMonth float64  `json:"net_savings_per_month"`
	PaybackMonths      *float64 `json:"payback_months"`
	PaybackNote        string   `json:"payback_note"`
}

// BreakEven is a forecast level at which the cheaper deployment changes.
type BreakEven struct {
	// PeakRate is the forecast's peak (req/s) at the change: Below is cheaper up to and
	// including it, Above just above it (replica counts step up just above a whole multiple
	// of the operating rate).
	PeakRate float64 `json:"peak_rate"`
	// Scale is PeakRate over the given forecast's peak: the forecast times Scale.
	Scale float64 `json:"scale"`
	// Below and Above name the cheaper deployment on either side; "" means both cost the same.
	Below string `json:"below"`
	Above string `json:"above"`
}

// CurvePoint is both deployments' cost per million effective tokens at one forecast level.
type CurvePoint struct {
	PeakRate   float64 `json:"peak_rate"`
	Scale      float64 `json:"scale"`
	FollowingA float64 `json:"following_a"`
	FollowingB float64 `json:"following_b"`
	StaticA    float64 `json:"static_a"`
	StaticB    float64 `json:"static_b"`
}

// CompareDeployments plans deployments a and b for forecast f and says which is cheaper per effective
// token, with replicas following the profile and with replicas for the peak, and at which
// levels of the forecast (the forecast scaled, its shape kept) the cheaper one changes. An
// empty name becomes "A" or "B"; the two names must differ. Errors are [Plan]'s, for both.
//
// The break-even levels are exact. A deployment's cost per effective token at level p (the
// forecast's peak) is proportional to cost per hour × replica-hours(p) / compliant tokens
// per request, and replica-hours(p) changes only where p·r/operating rate crosses a whole
// number for one of the rates r the replicas are sized for. CompareDeployments walks those boundaries
// of both deployments in increasing order from 0 and records every one at which the sign of
// the difference changes; it stops where the sign is provably fixed (the rounding to whole
// replicas adds at most one replica per step, which beyond some level cannot outweigh the
// difference in cost per request), at [Options].MaxScale times the forecast, or after
// 2,000,000 boundaries, whichever comes first, and says which.
func CompareDeployments(a, b Deployment, f Forecast, o Options) (Comparison, error) {
	if a.Name == "" {
		a.Name = "A"
	}
	if b.Name == "" {
		b.Name = "B"
	}
	var errs []error
	if a.Name == b.Name {
		errs = append(errs, fmt.Errorf("both deployments are named %q: name them apart", a.Name))
	}
	if err := check(f, o, o.withDefaults().MaxScale, a, b); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return Comparison{}, fmt.Errorf("compare: %w", errors.Join(errs...))
	}
	o = o.withDefaults()
	prof := newProfile(f, o.ScaleUpLag)
	c := Comparison{A: plan(a, prof, o), B: plan(b, prof, o)}
	maxPeak := prof.peak * o.MaxScale

	following := make(map[float64]float64) // ready-for rate / peak → hours a period
	for _, pc := range prof.pieces {
		following[pc.ready/prof.peak] += (pc.end - pc.start).Hours()
	}
	static := map[float64]float64{1: prof.period.Hours()}
	c.Following = verdict(BasisFollowing, c.A, c.B, c.A.Following, c.B.Following, following, prof.peak, maxPeak)
	c.Static = verdict(BasisStatic, c.A, c.B, c.A.Static, c.B.Static, static, prof.peak, maxPeak)

	lo, hi := 0.01, o.MaxScale
	steps := int(math.Ceil(30*math.Log10(hi/lo) - 1e-9))
	for i := 0; i <= steps; i++ {
		k := lo * math.Pow(hi/lo, float64(i)/float64(steps))
		s := prof.scaled(k)
		ra, rb := plan(a, s, o), plan(b, s, o)
		c.Curve = append(c.Curve, CurvePoint{PeakRate: s.peak, Scale: k,
			FollowingA: ra.Following.CostPerMillionEffectiveTokens, FollowingB: rb.Following.CostPerMillionEffectiveTokens,
			StaticA: ra.Static.CostPerMillionEffectiveTokens, StaticB: rb.Static.CostPerMillionEffectiveTokens})
	}
	if k := o.Comparability; k != nil && len(k.Differences) > 0 {
		c.Stamp = fmt.Sprintf("NOT COMPARABLE (%d differences)", len(k.Differences))
		c.Differences = slices.Clone(k.Differences)
	}
	c.Notes = compareNotes(c, o.Comparability)
	return c, nil
}

func compareNotes(c Comparison, k *Comparability) []string {
	a, b := c.A.Deployment, c.B.Deployment
	var ns []string
	switch {
	case k == nil:
		ns = append(ns, fmt.Sprintf("whether %s and %s were measured with the same requests, objectives and lengths was not checked", a.Name, b.Name))
	case len(k.Differences) > 0:
		ns = append(ns, fmt.Sprintf("%s: %s and %s were measured differently, and planned anyway: %s; each plan holds for its own measurement, and their comparison only as far as these differences allow",
			c.Stamp, a.Name, b.Name, strings.Join(k.Differences, "; ")))
	default:
		ns = append(ns, fmt.Sprintf("%s and %s were measured alike: the comparability check found the same request set (and lengths), schedule, objectives, cache policy and request body", a.Name, b.Name))
	}
	if a.CompliantTokensPerRequest != b.CompliantTokensPerRequest {
		ns = append(ns, fmt.Sprintf("%s delivers %s compliant tokens per request and %s %s, so the cheaper is judged per effective token, not per month",
			a.Name, num(a.CompliantTokensPerRequest), b.Name, num(b.CompliantTokensPerRequest)))
	}
	opCost := func(d Deployment) string {
		return money(d.CostPerHour/(d.OperatingRate*secondsPerHour*d.CompliantTokensPerRequest)*perMillion, c.A.Currency)
	}
	ns = append(ns, fmt.Sprintf("a replica busy at its operating point delivers a million effective tokens for %s on %s and %s on %s; whole replicas and idle hours raise the plans' costs above these",
		opCost(a), a.Name, opCost(b), b.Name))
	for _, v := range []Verdict{c.Following, c.Static} {
		how := fmt.Sprintf("%s: every replica-count step of both deployments from 0 to %s req/s peak was examined", v.Basis, num(v.SearchedUpToPeak))
		if v.Exhaustive {
			how += "; above it no change is possible"
		} else {
			how += "; changes above it were not searched"
		}
		ns = append(ns, how)
	}
	return ns
}

// verdict compares the two plans on one basis. ready maps the rates the replicas are sized
// for (relative to the peak) to their hours in a period.
func verdict(basis string, ra, rb Result, pa, pb Provisioning, ready map[float64]float64, peak, maxPeak float64) Verdict {
	v := Verdict{Basis: basis, BreakEvens: []BreakEven{},
		CostPerMonthDifference:            pb.CostPerMonth - pa.CostPerMonth,
		CostPerMillionEffectiveDifference: pb.CostPerMillionEffectiveTokens - pa.CostPerMillionEffectiveTokens,
		UnitCostChange:                    pb.CostPerMillionEffectiveTokens/pa.CostPerMillionEffectiveTokens - 1,
	}
	switch ua, ub := pa.CostPerMillionEffectiveTokens, pb.CostPerMillionEffectiveTokens; {
	case math.Abs(ua-ub) <= tieTolerance*(ua+ub):
	case ua < ub:
		v.Cheaper = ra.Deployment.Name
	default:
		v.Cheaper = rb.Deployment.Name
	}
	names := [3]string{ra.Deployment.Name, "", rb.Deployment.Name}
	s := newScan(ra.Deployment, rb.Deployment, ready)
	start, changes, to, exhaustive := s.run(maxPeak)
	for _, ch := range changes {
		v.BreakEvens = append(v.BreakEvens, BreakEven{PeakRate: ch.peak, Scale: ch.peak / peak,
			Below: names[ch.below+1], Above: names[ch.above+1]})
	}
	v.SearchedUpToPeak, v.Exhaustive = to, exhaustive
	v.Summary = summary(names[start+1], v.BreakEvens, to, exhaustive)
	pay, moveFrom, moveTo := payback(ra, rb, pa, pb)
	v.PaybackFrom, v.PaybackTo, v.NetSavingsPerMonth, v.PaybackMonths, v.PaybackNote = moveFrom, moveTo, pay.NetSavings, pay.Periods, pay.Note
	return v
}

// summary is "B is cheaper up to 6 req/s peak, A up to 10, B above".
func summary(start string, bes []BreakEven, to float64, exhaustive bool) string {
	who := func(name string, first bool) string {
		switch {
		case name == "" && first:
			return "both cost the same"
		case name == "":
			return "the same"
		case first:
			return name + " is cheaper"
		}
		return name
	}
	var b strings.Builder
	if len(bes) == 0 {
		b.WriteString(who(start, true) + " per effective token at every peak")
	} else {
		for i, be := range bes {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s up to %s", who(be.Below, i == 0), num(be.PeakRate))
			if i == 0 {
				b.WriteString(" req/s peak")
			}
		}
		fmt.Fprintf(&b, ", %s above", who(bes[len(bes)-1].Above, false))
	}
	if !exhaustive {
		fmt.Fprintf(&b, " (searched up to %s req/s peak)", num(to))
	}
	return b.String()
}

// payback applies package cost's payback rule ([cost.Move]) to the move to the deployment
// with the higher one-time cost (from A to B when they are equal): the running-cost saving per
// month at equal effective volume (the compliant tokens the forecast demands of the deployment
// moved from, priced at each one's cost per effective token on this basis), less no maintenance
// difference (a plan has none); no payback when that is zero or negative.
func payback(ra, rb Result, pa, pb Provisioning) (cost.Payback, string, string) {
	from, to, pf, pt := ra, rb, pa, pb
	if ra.Deployment.OneTimeCost > rb.Deployment.OneTimeCost {
		from, to, pf, pt = rb, ra, pb, pa
	}
	p := cost.Move{From: from.Deployment.Name, To: to.Deployment.Name,
		FromCostPerMillion: pf.CostPerMillionEffectiveTokens, ToCostPerMillion: pt.CostPerMillionEffectiveTokens,
		Volume:  from.EffectiveTokensPerMonth / perMillion,
		OneTime: to.Deployment.OneTimeCost - from.Deployment.OneTimeCost, HoursPerPeriod: ra.HoursPerMonth,
		Currency: ra.Currency}.Payback()
	return p, from.Deployment.Name, to.Deployment.Name
}

// scan walks the replica-count steps of two deployments over the forecast's level p.
//
// At level p a deployment runs max(1, ⌈p·u/operating rate⌉) replicas for h hours of the
// period, for each pair (u, h) of the sizing rates relative to the peak; its cost per
// effective token is proportional to α·Σ h·replicas, α = cost per hour / compliant tokens
// per request (the requests, common to both, cancel). The sign of D = α_A·RH_A − α_B·RH_B
// says which is cheaper.
type scan struct {
	alpha [2]float64
	rate  [2]float64 // operating rates
	u, h  []float64  // groups: relative sizing rate and hours
	m     [2][]int   // replicas per group at the current level
	rh    [2]float64 // replica-hours a period
}

type change struct {
	peak         float64
	below, above int // -1: A cheaper, +1: B cheaper, 0: equal
}

func newScan(a, b Deployment, ready map[float64]float64) *scan {
	s := &scan{
		alpha: [2]float64{a.CostPerHour / a.CompliantTokensPerRequest, b.CostPerHour / b.CompliantTokensPerRequest},
		rate:  [2]float64{a.OperatingRate, b.OperatingRate},
	}
	us := make([]float64, 0, len(ready))
	for u := range ready {
		us = append(us, u)
	}
	slices.Sort(us)
	for _, u := range us {
		s.u = append(s.u, u)
		s.h = append(s.h, ready[u])
	}
	for x := range 2 {
		s.m[x] = make([]int, len(s.u))
		for i := range s.u {
			s.m[x][i] = 1 // near 0, one replica everywhere
			s.rh[x] += s.h[i]
		}
	}
	return s
}

// state is the sign of D: -1 when A is cheaper, +1 when B is, 0 when within tieTolerance.
func (s *scan) state() int {
	ca, cb := s.alpha[0]*s.rh[0], s.alpha[1]*s.rh[1]
	switch {
	case math.Abs(ca-cb) <= tieTolerance*(ca+cb):
		return 0
	case ca < cb:
		return -1
	}
	return 1
}

// bound is the level above which the sign of D cannot change (+Inf when the deployments cost
// the same per request at their operating points). With W = Σ h·u and H = Σ h, each RH_x lies
// in [p·W/rate_x, p·W/rate_x + H], so D lies in [p·W·Δ − α_B·H, p·W·Δ + α_A·H] with
// Δ = α_A/rate_A − α_B/rate_B, whose sign is fixed once p·W·|Δ| > max(α_A, α_B)·H.
func (s *scan) bound() float64 {
	var w, hours float64
	for i := range s.u {
		w += s.h[i] * s.u[i]
		hours += s.h[i]
	}
	pa, pb := s.alpha[0]/s.rate[0], s.alpha[1]/s.rate[1]
	delta := math.Abs(pa - pb)
	if delta <= tieTolerance*(pa+pb) {
		return math.Inf(1)
	}
	return max(s.alpha[0], s.alpha[1]) * hours / (w * delta)
}

// run walks every step boundary up to min(bound, maxPeak): the state at levels just above 0,
// the changes, how far it searched, and whether no change is possible beyond.
func (s *scan) run(maxPeak float64) (start int, changes []change, to float64, exhaustive bool) {
	bound := s.bound()
	limit := min(bound, maxPeak)
	var h events
	for x := range 2 {
		for i, u := range s.u {
			if u > 0 {
				h = append(h, event{p: s.rate[x] / u, x: x, i: i})
			}
		}
	}
	heap.Init(&h)
	start = s.state()
	cur := start
	n := 0
	for len(h) > 0 && h[0].p <= limit {
		p := h[0].p
		// Every boundary at this level at once (two that coincide in exact arithmetic may
		// differ in the last bits).
		for len(h) > 0 && h[0].p <= p*(1+1e-12) {
			e := &h[0]
			s.m[e.x][e.i]++
			s.rh[e.x] += s.h[e.i]
			e.p = float64(s.m[e.x][e.i]) * s.rate[e.x] / s.u[e.i]
			heap.Fix(&h, 0)
			n++
		}
		if next := s.state(); next != cur {
			changes = append(changes, change{peak: p, below: cur, above: next})
			cur = next
		}
		if n >= maxEvents {
			return start, changes, p, false
		}
	}
	return start, changes, limit, bound <= maxPeak
}

// event is the next step boundary of deployment x in group i: at level p its replicas there
// go from m to m+1 just above p.
type event struct {
	p    float64
	x, i int
}

type events []event

func (h events) Len() int           { return len(h) }
func (h events) Less(i, j int) bool { return h[i].p < h[j].p }
func (h events) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *events) Push(v any)        { *h = append(*h, v.(event)) }
func (h *events) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}
