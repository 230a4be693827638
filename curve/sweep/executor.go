package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/shadow"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Executor runs a sweep: it plans tiers, runs each through Runner until its verdict is decided
// (or its cap, or its fixed length), analyses the curve and confirms the operating point.
// Config is validated by Run. Log, when set, receives one short line per tier and per step a
// person follows (what ran and what it showed, in plain words); Detail, when set, the reasoning
// behind each (why a tier runs where it does, its full statistics).
type Executor struct {
	Config Config
	Runner Runner
	Log    func(format string, a ...any)
	Detail func(format string, a ...any)
	// Server, when set, is asked for what the target's metrics endpoint said over a tier (nil
	// when nothing was scraped); the result keeps it beside the tier's summary.
	Server func(tier int) json.RawMessage
	// Resume, when set, continues an interrupted sweep of the same configuration: its kept tiers
	// are replayed in place of the first tiers the sweep plans (each must be the tier planned
	// there, else a *MismatchError), and the tiers it discarded are removed from its records
	// file (Resume.Discard) before the first tier that runs.
	Resume *Resume
	// Fingerprint, when set, returns the workload fingerprint of a planned tier's request set
	// (records.Tier.WorkloadFingerprint), to check a kept tier against.
	Fingerprint func(Plan) (string, error)
	// Header, when set, returns the records header the result is built with: the one the
	// runner wrote (result.NewHeader's, completed at the first tier), asked for once the tiers
	// have run. Unset, the result has an empty header.
	Header func() records.Header
}

// Probe constants.
const (
	// ProbeRequests is the size of the burst that estimates the saturation rate first (without a
	// concurrency cap; with one, four times the cap and at least 32).
	ProbeRequests = 128
	// probeMinDuration and probeArrivals size the sustained probe: at least this long, and long
	// enough for this many arrivals.
	probeMinDuration = 10 * time.Second
	probeArrivals    = 100
	// probeSaturated: a sustained probe saturates the deployment when it completes fewer than
	// this share of its arrivals per second (in its steady window).
	probeSaturated = 0.85
	probeTries     = 4
)

// Run runs the sweep and returns its result (built from the tiers' records exactly as Build
// builds it from a records file). Interrupted (ctx canceled), it returns what it has, marked
// incomplete, with ctx's error.
func (x *Executor) Run(ctx context.Context) (*result.Result, error) {
	cfg := x.Config.withDefaults()
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if x.Runner == nil {
		return nil, errors.New("sweep: no runner")
	}
	e := &exec{x: x, cfg: cfg}
	var err error
	if x.Resume != nil {
		if e.kept, err = x.Resume.replaySummaries(cfg); err != nil {
			return nil, err
		}
	}
	for k := 0; k < cfg.Repeat && err == nil && ctx.Err() == nil; k++ {
		e.repeat = k
		if cfg.Repeat > 1 {
			e.logf("repetition %d of %d", k+1, cfg.Repeat)
		}
		err = e.decide(ctx)
	}
	if err == nil && x.Resume != nil && len(e.tiers) >= len(e.kept) {
		// Every kept tier was planned again and nothing more was needed: the interrupted tier's
		// records still go.
		err = e.discard()
	}
	var h records.Header
	if x.Header != nil {
		h = x.Header()
	}
	res := result.Build(h, cfg.Settings, e.tiers)
	if cfg.budgetBounds() {
		res.Budget = cfg.Budget
	}
	res.BudgetNotes = e.notes
	if ctx.Err() != nil {
		res.Complete = false
		return res, ctx.Err()
	}
	return res, err
}

// exec is the state of one Run.
type exec struct {
	x      *Executor
	cfg    Config
	tiers  []result.TierResult
	repeat int
	// confirmNeed is the arrivals the confirmation plans for (ConfirmRequests).
	confirmNeed float64
	// nextCap and nextStopConf are the cap and interim confidence of the tier being planned
	// (tierFor); zero: the defaults.
	nextCap      time.Duration
	nextStopConf float64
	// shadowQueue is the deployment's shadow queue, calibrated from the probes (nil: none); every
	// open tier after them names it, and its share is controlled with it (package shadow).
	shadowQueue *records.ShadowQueue
	// burst holds the time to first token and the end-to-end latency of the burst probe's
	// completed requests, to calibrate the shadow queue with.
	burstTTFT, burstE2EL []time.Duration
	// burstRate is the rate at which the burst probe's requests completed.
	burstRate float64
	// kept are the tiers of an interrupted sweep replayed in place of the first tiers planned
	// (Executor.Resume).
	kept []keptTier
	// exhausted is set once the budget left no room for a tier of this repetition: no further
	// tier runs but a confirmation (which fits what is left, or is skipped). notes are what the
	// budget changed, said as it happened (Result.BudgetNotes).
	exhausted bool
	notes     []string
	// saturation is the probed saturation rate the search started from; searchBudgetSpent says
	// whether the search last stopped because its share of the budget was spent (searchOn).
	saturation        float64
	searchBudgetSpent bool
}

// unit names the sweep's rates (its axis's unit).
func (e *exec) unit() string { return e.axis().Unit() }

func (e *exec) logf(format string, a ...any) {
	if e.x.Log != nil {
		e.x.Log(format, a...)
	}
}

// detailf writes a line of reasoning (Executor.Detail).
func (e *exec) detailf(format string, a ...any) {
	if e.x.Detail != nil {
		e.x.Detail(format, a...)
	}
}

// decide runs one repetition: its tiers, then the confirmation of its operating point.
func (e *exec) decide(ctx context.Context) error {
	var err error
	e.exhausted, e.searchBudgetSpent = false, false
	if sch := e.cfg.Schedule; sch != nil {
		rate := 0.0 // a ramp or a replay has no one nominal rate
		if sp, ok := sch.(arrival.Spec); ok && sp.Ramp == arrival.RampNone {
			rate = sp.Rate
		}
		_, err = e.run(ctx, records.RoleTier, sch, rate, e.cfg.Seed)
		return err
	}
	err = e.axisTiers(ctx)
	if err != nil || ctx.Err() != nil || !e.cfg.Confirm || !e.cfg.StartAt.IsZero() {
		return err
	}
	if e.confirmedHere() {
		return nil
	}
	if err := e.confirmJudged(ctx); err != nil || ctx.Err() != nil {
		return err
	}
	if more, err := e.searchOn(ctx); err != nil || !more || ctx.Err() != nil || e.confirmedHere() {
		return err
	}
	return e.confirmJudged(ctx)
}

// confirmJudged runs the confirmation, and once more when the analysis could not judge it (the
// client could not carry it, say): such a tier tells nothing about the operating point.
func (e *exec) confirmJudged(ctx context.Context) error {
	if err := e.confirm(ctx); err != nil || ctx.Err() != nil {
		return err
	}
	if op := curve.Analyze(e.summaries(), e.cfg.Settings.Params).OperatingPoint; op != nil && op.Confirmation != nil &&
		op.Confirmation.AtThisPoint && op.Confirmation.Verdict == curve.VerdictExcluded && !op.Verified() {
		e.logf("the confirmation could not be judged: once more")
		return e.confirm(ctx)
	}
	return nil
}

// searchOn gives the search what the budget still holds after a confirmation that decided
// early. The search keeps back what a confirmation that verifies on its own may need, and stops
// when its share is spent; a confirmation that then verified the operating point in a fraction
// of that leaves the rest unused, while the capacity may rest on one short tier. When the
// search stopped for its budget, the capacity is not certified and the operating point is
// verified, the search goes on within the budget less what that confirmation took (its drain
// included, and at least a measuring confirmation's): room to confirm again should the
// operating point move, at about the same cost. Nothing is said or run when the search would
// place no tier in that. more reports whether any tier ran; the caller then confirms the
// operating point again unless a confirmation at it already verifies it.
func (e *exec) searchOn(ctx context.Context) (more bool, err error) {
	left, bounded := e.budgetLeft()
	if !bounded || !e.searchBudgetSpent || e.exhausted || e.axis() == curve.AxisUsers {
		return false, nil
	}
	a := curve.Analyze(e.summaries(), e.cfg.Settings.Params)
	op := a.OperatingPoint
	last := e.tiers[len(e.tiers)-1].Summary
	if op == nil || !op.Verified() || Certified(a.Capacity, e.cfg.Precision) || last.Role != records.RoleConfirm || !(last.Duration > 0) {
		return false, nil
	}
	took := time.Duration(last.Duration * float64(time.Second))
	again := took + e.cfg.Drain
	if light, ok := e.lightConfirmation(a); ok {
		again = max(again, light+e.leastGrace())
	}
	pl := e.planner()
	pl.Budget = e.cfg.Budget - again
	if _, ok := pl.Next(e.summaries(), e.spent()); !ok {
		return false, nil // nothing the search would place fits
	}
	e.budgetNote("the operating point is verified after %v of confirmation, and the budget (%v) leaves %v: the search goes on with it, keeping %v back to confirm again should the operating point move",
		took.Round(time.Second), e.cfg.Budget, left.Round(time.Second), again.Round(time.Second))
	n := len(e.tiers)
	if err := e.searchWithin(ctx, pl, false); err != nil {
		return false, err
	}
	return len(e.tiers) > n, nil
}

// confirmedHere reports whether the operating point of the tiers so far already has what it
// needs: a confirmation tier at it (within 0.5 %), and a verdict — that tier met the target, or
// a heavier tier did.
func (e *exec) confirmedHere() bool {
	op := curve.Analyze(e.summaries(), e.cfg.Settings.Params).OperatingPoint
	return op != nil && op.Confirmation != nil && op.Confirmation.AtThisPoint && op.Verified()
}

// confirm runs the confirmation tier at the operating point of the tiers so far: an open tier
// at its rate, or a closed loop of its users. When a heavier tier already met the target with
// confidence (the capacity interval's lower end is at or above the operating point), every
// lighter load meets it too, and the confirmation measures what the operating point delivers
// and checks that nothing contradicts it: a tier of half the usual size. Otherwise it is planned
// long enough to verify the operating point on its own (ConfirmRequests). Either way it stops
// once decided, and stays within what the budget leaves (shortened to fit, or skipped when
// even the shortest tier does not fit, said as such).
func (e *exec) confirm(ctx context.Context) error {
	a := curve.Analyze(e.summaries(), e.cfg.Settings.Params)
	op := a.OperatingPoint
	if op == nil {
		e.logf("no operating point to confirm: %s", lastNote(a))
		return nil
	}
	e.confirmNeed = ConfirmRequests(e.summaries(), e.cfg.Settings.Params)
	if e.axis() == curve.AxisUsers {
		return e.confirmUsers(ctx, a)
	}
	cap, why := e.cfg.tierCap(op.Rate, true, e.confirmNeed), confirmWhy(e.confirmNeed, e.cfg)
	if light, ok := e.lightConfirmation(a); ok {
		cap = light
		why = "a heavier tier already met the target with confidence, so it measures what the operating point delivers"
	}
	if left, bounded := e.budgetLeft(); bounded && e.cfg.Requests == 0 && e.cfg.Duration == 0 {
		fitted, _, ok := e.fit(left, cap, e.cfg.MinTierDuration)
		if !ok {
			e.budgetNote("no confirmation: the budget (%v) leaves %v of load, too little for a confirmation tier (%v of arrivals at least, and its drain): the operating point %s %s is not verified; a larger budget would verify it",
				e.cfg.Budget, max(left, 0).Round(time.Second), min(cap, e.cfg.MinTierDuration), fmtRate(op.Rate), e.unit())
			return nil
		}
		if fitted < cap {
			e.budgetNote("the confirmation is shortened to %v of arrivals, what the budget (%v) leaves, from the %v it would plan: it may end undecided, and then says how far it got",
				fitted.Round(time.Second), e.cfg.Budget, cap.Round(time.Second))
			why += fmt.Sprintf("; the budget leaves %v", fitted.Round(time.Second))
			cap = fitted
		}
	}
	switch {
	case e.cfg.Duration > 0:
		e.logf("confirming the operating point %s %s for %v", fmtRate(op.Rate), e.unit(), e.cfg.Duration)
	case e.cfg.Requests > 0:
		e.logf("confirming the operating point %s %s with %d requests", fmtRate(op.Rate), e.unit(), e.cfg.Requests)
	default:
		e.logf("confirming the operating point %s %s, for up to %v", fmtRate(op.Rate), e.unit(), cap.Round(time.Second))
		e.detailf("capacity %s; the confirmation is sized for %s", a.Capacity.String(), why)
	}
	_, err := e.tierFor(ctx, records.RoleConfirm, op.Rate, cap, 0)
	return err
}

// lightConfirmation is the cap of a confirmation that only measures what the operating point
// delivers: when analysis a already verifies its operating point (a heavier tier, or a pool of
// them, met the target with confidence), every lighter load meets it too, and half the usual
// tier's requests say what the point delivers. ok is false when the point still needs verifying.
func (e *exec) lightConfirmation(a curve.Analysis) (time.Duration, bool) {
	op := a.OperatingPoint
	if op == nil || !(op.Rate > 0) || !(op.Verified() || (a.Capacity != nil && a.Capacity.Low >= op.Rate)) {
		return 0, false
	}
	return min(max(time.Duration(float64(e.cfg.TierRequests)/2/op.Rate*float64(time.Second)), e.cfg.MinTierDuration), e.cfg.MaxTierDuration), true
}

// confirmWhy says how the confirmation was sized.
func confirmWhy(need float64, cfg Config) string {
	if need <= float64(ConfirmFactor*cfg.TierRequests) {
		return fmt.Sprintf("%d arrivals, %d× --tier-requests", ConfirmFactor*cfg.TierRequests, ConfirmFactor)
	}
	return fmt.Sprintf("%.0f arrivals: what verifying the target takes with misses as clustered as the search measured", need)
}

// summaries are the summaries of this repetition's tiers.
func (e *exec) summaries() []measure.Summary {
	var out []measure.Summary
	for _, t := range e.tiers {
		if t.Tier.Repeat == e.repeat {
			out = append(out, t.Summary)
		}
	}
	return out
}

func lastNote(a curve.Analysis) string {
	if len(a.Notes) == 0 {
		return "no tier to analyse"
	}
	return a.Notes[len(a.Notes)-1]
}

// search probes the saturation rate, then lets the Planner place the tiers within the budget,
// keeping back what the confirmation will need.
func (e *exec) search(ctx context.Context) error {
	sat, err := e.probe(ctx)
	if err != nil || ctx.Err() != nil || !(sat > 0) {
		return err
	}
	e.calibrateShadow()
	e.saturation = sat
	pl := e.planner()
	if left, bounded := e.budgetLeft(); bounded {
		pl.Budget = e.cfg.Budget - e.searchReserve(left, sat)
		if e.exhausted {
			return nil
		}
	}
	return e.searchWithin(ctx, pl, true)
}

// planner is the search's Planner, its budget unbounded (the caller bounds it).
func (e *exec) planner() Planner {
	cfg := e.cfg
	return Planner{Saturation: e.saturation, Params: cfg.Settings.Params, Precision: cfg.Precision, MaxTiers: cfg.MaxTiers, Axis: e.axis(),
		MinTier: cfg.MinTierDuration, MaxTier: cfg.MaxTierDuration}
}

// searchWithin runs the tiers pl places until it stops. With mayRelease, a search whose share
// is spent while its tiers already verify the operating point takes, once, what the
// confirmation's reserve holds beyond a measuring confirmation. searchBudgetSpent says whether
// it stopped for its budget.
func (e *exec) searchWithin(ctx context.Context, pl Planner, mayRelease bool) error {
	cfg := e.cfg
	e.searchBudgetSpent = false
	released := !mayRelease
	for ctx.Err() == nil {
		step, ok := pl.Next(e.summaries(), e.spent())
		if !ok && step.Budget && !released && pl.Budget > 0 {
			// The search's share is spent, but the tiers so far already verify the operating
			// point: the confirmation will only measure it, and what the reserve holds beyond
			// that goes to the search, once.
			released = true
			if light, lok := e.lightConfirmation(curve.Analyze(e.summaries(), cfg.Settings.Params)); lok {
				if more := cfg.Budget - light - e.leastGrace() - pl.Budget; more >= cfg.MinTierDuration {
					pl.Budget += more
					e.detailf("the tiers so far verify the operating point, so the confirmation only measures it: %v of the budget it kept goes to the search", more.Round(time.Second))
					continue
				}
			}
		}
		if !ok {
			if step.Budget {
				e.searchBudgetSpent = true
				e.budgetNote("the search stopped: %s", step.Why)
			}
			e.detailf("search done: %s", step.Why)
			return nil
		}
		cap := cfg.tierCap(step.Rate, false, 0)
		if step.Cap > 0 {
			cap = step.Cap
		}
		if pl.Budget > 0 {
			fitted, _, ok := e.fit(pl.Budget-e.spent(), cap, cfg.MinTierDuration)
			if !ok {
				e.searchBudgetSpent = true
				e.budgetNote("the search stopped: its share of the budget is spent (%v of load so far; what is left is kept for the confirmation)", e.spent().Round(time.Second))
				return nil
			}
			cap = fitted
		}
		e.detailf("next tier at %.3g %s for up to %v: %s", step.Rate, e.unit(), cap.Round(time.Second), step.Why)
		if _, err := e.tierFor(ctx, records.RoleTier, step.Rate, cap, 0); err != nil || e.exhausted {
			return err
		}
	}
	return nil
}

// searchReserve is what the search keeps back of the budget for the confirmation, with left
// of it after the probes: the confirmation's likely length (confirmReserve) and its drain, but
// at most half of left, and never so much that the search cannot run one tier of the shortest
// cap with its drain (the search comes first: without it there is nothing to confirm). The
// confirmation then gets what the search leaves, shortened to fit, or none; a reserve cut
// short is said as such.
func (e *exec) searchReserve(left time.Duration, sat float64) time.Duration {
	want := e.confirmReserve(sat) + e.leastGrace()
	tier := e.cfg.MinTierDuration + e.leastGrace()
	reserve := min(want, left/2)
	if left-reserve < tier {
		reserve = max(left-tier, 0)
	}
	switch {
	case left < tier:
		e.exhausted = true
		e.budgetNote("the budget (%v) leaves %v of load after the probes, too little for a search tier (%v of arrivals at least, and its drain): the answer is what the probes showed",
			e.cfg.Budget, max(left, 0).Round(time.Second), e.cfg.MinTierDuration)
	case reserve < want:
		e.budgetNote("the budget (%v) leaves %v of load after the probes: the search keeps back %v of it for the confirmation, less than the %v a confirmation plans here",
			e.cfg.Budget, left.Round(time.Second), reserve.Round(time.Second), want.Round(time.Second))
	}
	return reserve
}

// calibrateShadow makes the deployment's shadow queue from the burst probe (shadow.Calibrate:
// its slots from the rate at which the burst completed, every slot busy), for the open tiers
// that follow; sessions have none (their later turns are not the schedule's arrivals).
func (e *exec) calibrateShadow() {
	e.shadowQueue = nil
	if e.axis() != curve.AxisRate || e.cfg.NoShadow {
		return
	}
	o := e.cfg.Settings.Measure.Objectives
	ttft := o.TTFT
	if o.TTFA > 0 && (ttft == 0 || o.TTFA < ttft) {
		ttft = o.TTFA
	}
	q, err := shadow.Calibrate(e.burstTTFT, e.burstE2EL, e.burstRate, ttft, o.E2EL)
	if err != nil {
		e.detailf("no shadow queue: %v", err)
		return
	}
	e.shadowQueue = &q
	e.detailf("shadow queue: %d slots serving each request for %.3g s, complying within a %.3g s wait", q.Servers, q.ServiceS, q.BudgetS)
}

// confirmReserve is the load kept back for the confirmation out of the budget: the time of
// ConfirmFactor·TierRequests arrivals at a likely operating point (40 % of the saturation
// rate), within the bounds of a confirmation.
func (e *exec) confirmReserve(sat float64) time.Duration {
	d := time.Duration(float64(ConfirmFactor*e.cfg.TierRequests) / (0.4 * sat) * float64(time.Second))
	return min(max(d, e.cfg.MinTierDuration), ConfirmFactor*e.cfg.MaxTierDuration)
}

// spent is the load this repetition's tiers put on the target so far (their durations).
func (e *exec) spent() time.Duration {
	var s float64
	for _, t := range e.tiers {
		if d := t.Summary.Duration; t.Tier.Repeat == e.repeat && !math.IsNaN(d) && !math.IsInf(d, 0) {
			s += d
		}
	}
	return time.Duration(s * float64(time.Second))
}

// probe estimates the saturation rate: a burst first (fast, but a server that sheds excess load
// with 429s completes only what it admitted), then open-loop tiers at a multiple of the estimate,
// long enough for their steady-state completion rate to show what the deployment sustains. A
// probe that completes nearly everything it was offered did not saturate: the next one is
// heavier.
func (e *exec) probe(ctx context.Context) (float64, error) {
	burst, err := e.tier(ctx, records.RoleProbe, math.Inf(1))
	if err != nil || burst == nil {
		return 0, err
	}
	s0 := burst.Summary.RequestThroughput
	e.burstRate = s0
	if ss := burst.Summary.Sessions; ss != nil && ss.MeanTurns > 0 {
		s0 /= float64(ss.MeanTurns) // sessions completed per second: the schedule's unit
	}
	if !(s0 > 0) {
		return 0, fmt.Errorf("the saturation probe (a burst of %d requests) completed none: nothing to sweep; check the target", burst.Summary.Planned)
	}
	rate, best := 2*s0, 0.0
	for try := 0; try < probeTries && ctx.Err() == nil; try++ {
		t, err := e.tier(ctx, records.RoleProbe, rate)
		if err != nil {
			return 0, err
		}
		if t == nil { // the budget left no room for it
			if best == 0 {
				best = s0
			}
			e.logf("using %.3g %s as the saturation rate: the best the probes that ran showed", best, e.unit())
			return best, nil
		}
		st := t.Summary.Steady
		if st == nil || !(st.RequestThroughput > 0) {
			return 0, fmt.Errorf("the saturation probe at %.3g %s completed no request in its steady window: nothing to sweep; check the target", rate, e.unit())
		}
		done := st.ArrivalThroughput() // the schedule's unit: requests, or sessions, per second
		best = math.Max(best, done)
		if done < probeSaturated*st.RealisedRate {
			e.logf("saturation: %.3g %s completed in steady state at %.3g %[2]s offered (the burst completed %.3[4]g)", done, e.unit(), st.RealisedRate, s0)
			return done, nil
		}
		rate *= 3
	}
	e.logf("the deployment completed everything offered up to %.3g %s: using %.3g %[2]s as its saturation rate", rate/3, e.unit(), best)
	return best, nil
}

// tier plans and runs one tier of the given role at rate (+Inf: a burst), seeded from the
// sweep's seed and the rate, and keeps its result. It returns nil without error for a tier whose
// schedule plans nothing.
func (e *exec) tier(ctx context.Context, role records.Role, rate float64) (*result.TierResult, error) {
	return e.tierFor(ctx, role, rate, 0, 0)
}

// tierFor is tier with a cap for a tier that runs until decided (0: Config.tierCap's) and the
// confidence of its stop rule's interim looks (0: the sweep's, corrected for the looks). A tier
// at a rate that already ran (an extension) gets a seed of its own.
func (e *exec) tierFor(ctx context.Context, role records.Role, rate float64, cap time.Duration, stopConf float64) (*result.TierResult, error) {
	salt := uint64(e.repeat) << 8
	if role == records.RoleConfirm {
		salt |= 1
	}
	for _, t := range e.tiers {
		if t.Tier.Repeat == e.repeat && t.Tier.Role == role && float64(t.Tier.RequestRate) == rate {
			salt += 1 << 16 // the same rate again: fresh arrivals and requests
		}
	}
	spec := arrival.Spec{Rate: rate, Burstiness: e.cfg.Burstiness}
	e.nextCap, e.nextStopConf = cap, stopConf
	defer func() { e.nextCap, e.nextStopConf = 0, 0 }()
	return e.run(ctx, role, spec, rate, TierSeed(e.cfg.Seed, rate, salt))
}

// run plans and runs one tier of schedule sch.
func (e *exec) run(ctx context.Context, role records.Role, sch arrival.Schedule, rate float64, seed int64) (*result.TierResult, error) {
	cfg := e.cfg
	idx := len(e.tiers)
	id := records.Tier{Tier: idx, Role: role, Repeat: e.repeat, Arrival: sch.String(), RequestRate: rateOrInf(rate),
		Burstiness: rateOrInf(cfg.Burstiness), MaxConcurrency: cfg.MaxConcurrency, Seed: seed}
	if sp, ok := sch.(arrival.Spec); ok {
		id.Burstiness = rateOrInf(sp.Burstiness)
	}
	if q := e.shadowQueue; q != nil && role != records.RoleProbe && cfg.Schedule == nil && !math.IsInf(rate, 1) && rate > 0 {
		id.Shadow = q
	}
	d, fits, err := e.draw(&id, sch, rate)
	if err != nil || !fits {
		return nil, err
	}
	if len(d.offsets) == 0 {
		if cfg.Schedule != nil {
			return nil, fmt.Errorf("%s plans no request within %v: raise the duration or the rate", sch, cfg.Duration)
		}
		e.logf("WARNING: tier %d (%s) plans no request: skipped (raise the duration or the rate)", idx, sch)
		return nil, nil
	}
	if d.end == 0 {
		d.end = d.offsets[len(d.offsets)-1]
	}
	id.Planned = len(d.offsets)
	plan := Plan{Tier: id, Offsets: d.offsets, ArrivalsEnd: d.end, Grace: d.grace,
		Label: e.label(role, idx, rateText(rate, e.unit())), Status: e.status(role, d.end, d.grace, d.stop != nil)}
	if !cfg.StartAt.IsZero() {
		// Fixed slots: every shard starts tier k at the same wall-clock time, whatever its own
		// drain took. A tier ends by duration + drain; the cooldown follows.
		slot := cfg.Duration + cfg.Drain + cfg.Cooldown + time.Second
		plan.StartAt = cfg.StartAt.Add(time.Duration(idx) * slot)
	}
	return e.execute(ctx, plan, d.stop)
}

// tierDraw is a tier's arrivals as drawn: their offsets, the end of the arrival phase (0: the
// last arrival), the drain after it, and a sequential tier's stop rule.
type tierDraw struct {
	offsets    []time.Duration
	end, grace time.Duration
	stop       *stopRule
}

// draw draws the arrivals of tier id of schedule sch at rate, by how the tier is bounded: a
// burst, a probe, a count, a duration, a whole replay, or a sequential tier until decided; it
// sets id's duration or cap. Every tier of a sweep with a budget ends, drain included, within
// what the budget leaves (budget.go): a tier that runs until decided is shortened to fit, a
// fixed one runs only if it fits. fits is false when it does not (said).
func (e *exec) draw(id *records.Tier, sch arrival.Schedule, rate float64) (d tierDraw, fits bool, err error) {
	cfg, role, seed := e.cfg, id.Role, id.Seed
	left, bounded := e.budgetLeft()
	d.grace = cfg.Drain
	what := fmt.Sprintf("%s %d (%s)", roleLabel(role), id.Tier, rateText(rate, e.unit()))
	fit := func(want, least time.Duration) (time.Duration, bool) {
		if !bounded {
			return want, true
		}
		got, g, ok := e.fit(left, want, least)
		if !ok {
			e.outOfBudget(left, role, what, min(least, want)+e.leastGrace())
		}
		d.grace = g
		return got, ok
	}
	switch {
	case math.IsInf(rate, 1) && role == records.RoleProbe:
		n := ProbeRequests
		if cfg.MaxConcurrency > 0 {
			n = max(4*cfg.MaxConcurrency, 32)
		}
		d.offsets, err = sch.Arrivals(n, 0, seed, 0)
		// The burst is the deployment's whole queue at once: a slow deployment takes longer
		// than a drain to work through it (128 requests of 1.4 s on 8 slots: 22 s), and
		// cutting it would count a healthy deployment's burst as incomplete.
		d.grace = max(cfg.Drain, cfg.MaxTierDuration)
		if bounded {
			d.grace = min(d.grace, left)
		}
	case role == records.RoleProbe:
		dur := min(max(probeMinDuration, time.Duration(float64(probeArrivals)/rate*float64(time.Second))), cfg.MaxTierDuration)
		if dur, fits = fit(dur, dur); !fits {
			return d, false, nil
		}
		id.DurationS, d.end = dur.Seconds(), dur
		d.offsets, err = sch.Arrivals(0, dur, seed, MaxDurationRequests)
	case cfg.Requests > 0:
		d.offsets, err = sch.Arrivals(cfg.Requests, 0, seed, 0)
		if err == nil && len(d.offsets) > 0 {
			if _, fits = fit(d.offsets[len(d.offsets)-1], d.offsets[len(d.offsets)-1]); !fits {
				return d, false, nil
			}
		}
	case cfg.Duration > 0:
		if _, fits = fit(cfg.Duration, cfg.Duration); !fits {
			return d, false, nil
		}
		id.DurationS, d.end = cfg.Duration.Seconds(), cfg.Duration
		// Validate refused a duration expected to plan more than the bound; one that draws
		// more by chance is refused here, not cut.
		d.offsets, err = sch.Arrivals(0, cfg.Duration, seed, MaxDurationRequests+1)
		if err == nil {
			err = arrival.CheckDrawn(sch, d.offsets, cfg.Duration)
		}
	case cfg.Schedule != nil: // a replay, whole
		d.offsets, err = sch.Arrivals(0, 0, seed, 0)
	default:
		cap := e.nextCap
		if cap <= 0 {
			cap = cfg.tierCap(rate, role == records.RoleConfirm, e.confirmNeed)
		}
		if cap, fits = fit(cap, cfg.MinTierDuration); !fits {
			return d, false, nil
		}
		id.MaxDurationS, d.end = cap.Seconds(), cap
		d.offsets, err = sch.Arrivals(0, cap, seed, MaxDurationRequests)
		if err == nil {
			d.stop = newStopRule(d.offsets, cap, cfg.Settings.Measure.Objectives, cfg.Settings.Params, e.nextStopConf, measure.ShadowOf(*id))
		}
	}
	return d, true, err
}

// execute runs a planned tier (after the cooldown between tiers), summarises it and logs it.
// stop, when not nil, is the sequential tier's stop rule.
func (e *exec) execute(ctx context.Context, plan Plan, stop *stopRule) (*result.TierResult, error) {
	cfg := e.cfg
	idx := plan.Tier.Tier
	if idx < len(e.kept) {
		return e.replay(plan)
	}
	if err := e.discard(); err != nil {
		return nil, err
	}
	if len(e.tiers) > 0 && cfg.Cooldown > 0 && cfg.StartAt.IsZero() {
		select {
		case <-time.After(cfg.Cooldown):
		case <-ctx.Done():
			return nil, nil
		}
	}
	col, err := newCollector(cfg.Settings.Measure, cfg.Bounded, stop)
	if err != nil {
		return nil, err
	}
	var stopCh <-chan struct{}
	if stop != nil {
		stopCh = stop.stop
	}
	ran, err := e.x.Runner.RunTier(ctx, plan, col, stopCh)
	var lost *RecordsLostError
	if err != nil && !errors.As(err, &lost) {
		return nil, fmt.Errorf("tier %d: %w", idx, err)
	}
	t := result.TierResult{Tier: ran, Summary: col.summary(ran, cfg.Settings.Measure)}
	if ran.Role == records.RoleProbe && math.IsInf(float64(ran.RequestRate), 1) {
		e.burstTTFT, e.burstE2EL = col.ttft, col.e2el
	}
	if e.x.Server != nil {
		t.Server = e.x.Server(idx)
	}
	e.tiers = append(e.tiers, t)
	e.logf("%s", shortTierLine(t, stop, cfg.Settings.Params, e.beyondService(idx)))
	e.detailf("%s", tierLine(t, stop, cfg.Settings.Params))
	if lost != nil {
		// The tier counts; nothing more is run without a place for its records.
		return &e.tiers[len(e.tiers)-1], fmt.Errorf("tier %d: %w", idx, err)
	}
	return &e.tiers[len(e.tiers)-1], nil
}

// replay keeps the interrupted sweep's tier in the place of the planned tier, once it is the
// same tier.
func (e *exec) replay(plan Plan) (*result.TierResult, error) {
	idx := plan.Tier.Tier
	k := e.kept[idx]
	if why := planDiffers(k.result.Tier, plan.Tier); why != "" {
		return nil, &MismatchError{Tier: idx, What: why}
	}
	if e.x.Fingerprint != nil {
		fp, err := e.x.Fingerprint(plan)
		if err != nil {
			return nil, fmt.Errorf("tier %d: %w", idx, err)
		}
		if kfp := k.result.Tier.WorkloadFingerprint; kfp != "" && fp != kfp {
			return nil, &MismatchError{Tier: idx, What: fmt.Sprintf("sent the request set %s, this sweep's would be %s (--workload and its flags)", kfp, fp)}
		}
	}
	if plan.Tier.Role == records.RoleProbe && math.IsInf(float64(plan.Tier.RequestRate), 1) {
		e.burstTTFT, e.burstE2EL = k.ttft, k.e2el
	}
	e.tiers = append(e.tiers, k.result)
	e.logf("%s (kept)", shortTierLine(k.result, nil, e.cfg.Settings.Params, e.beyondService(idx)))
	e.detailf("%s (kept from the interrupted sweep)", tierLine(k.result, nil, e.cfg.Settings.Params))
	return &e.tiers[len(e.tiers)-1], nil
}

// discard removes what a resumed sweep discards from its records file, once (Resume.Discard).
func (e *exec) discard() error {
	r := e.x.Resume
	if r == nil || r.discarded {
		return nil
	}
	if err := r.Discard(); err != nil {
		return err
	}
	switch {
	case r.SavedTo == "":
	case len(r.Dropped) == 0: // no tier, only a line cut by a kill after the kept ones
		e.logf("removed the last line of %s, cut by a kill; it is kept in %s", result.RecordsName, filepath.Base(r.SavedTo))
	default:
		e.logf("removed the interrupted tier %d's %d records from %s; they are kept in %s", r.Dropped[0].Tier, r.DroppedRecords, result.RecordsName, filepath.Base(r.SavedTo))
	}
	return nil
}

func roleLabel(r records.Role) string {
	switch r {
	case records.RoleProbe:
		return "probe"
	case records.RoleConfirm:
		return "confirmation"
	}
	return "tier"
}

// fmtRate prints a rate with 3 significant digits.
func fmtRate(r float64) string { return fmt.Sprintf("%.3g", r) }

// rateText writes a tier's nominal rate in unit.
func rateText(r float64, unit string) string {
	switch {
	case math.IsInf(r, 1):
		return "burst at rate inf"
	case math.IsNaN(r) || r == 0:
		return "no one rate: a ramp or a replay" // its arrival rate changes over the tier
	}
	return fmt.Sprintf("%.3g %s", r, unit)
}

// tierLine says what one tier measured, in a line.
func tierLine(t result.TierResult, stop *stopRule, p curve.Params) string {
	s := t.Summary
	// A closed loop's level is its users, and its realised rate the requests they produced.
	unit := curve.AxisOf(s).ArrivalUnit()
	line := fmt.Sprintf("%s %d (%s): %d ok of %d", roleLabel(t.Tier.Role), t.Tier.Tier, curve.LevelName(s, rateText), s.Completed, s.Planned)
	if st := s.Steady; st != nil && !math.IsInf(s.NominalRate, 1) {
		judged, eff := st.Judged()
		lo, hi := curve.WilsonN(judged, eff, p.WithDefaults().Confidence)
		line += fmt.Sprintf("; steady state from %.3g s: %.3g %s realised, %.0f tok/s raw, %.0f tok/s compliant, compliant share %.4f [%.4f, %.4f] on %.0f effective requests (variance factor %.3g)",
			st.Start, st.RealisedRate, unit, st.RawOutputThroughput, st.CompliantOutputThroughput, judged, lo, hi, eff, st.VarianceFactor)
		if c := st.Controlled; c != nil {
			line += fmt.Sprintf("; controlled with the shadow queue: %.4f measured, the shadow's %.4f against %.4f expected, beta %.3g, correlation at least %.2f, variance divided by %.2g",
				st.CompliantShare, c.ShadowShare, c.Expected, c.Beta, c.Correlation, c.Gain)
		} else if st.ControlNote != "" {
			line += "; " + st.ControlNote
		}
		if !st.Stationary {
			line += "; " + st.Note
		}
		if c := st.Client; c != nil {
			line += fmt.Sprintf("; %s; of %d requests timed at the socket, p50 %.3g ms to write, %.3g ms to read", c.Text(), c.Requests, c.SendP50, c.ReadP50)
		}
	} else {
		line += fmt.Sprintf(", %.3g req/s completed", s.RequestThroughput)
	}
	if stop != nil && stop.decided != "" && t.Tier.End != nil {
		line += fmt.Sprintf(" (decided: %s, stopped at %.3g s)", stop.decided, t.Tier.End.ArrivalsEndS)
	}
	if s.ClientBound {
		line += "; CLIENT-BOUND: " + s.ClientBoundReason
	}
	return line
}

// beyondService reports whether the analysis of the tiers so far judges tier idx overloaded
// although its own trend settled: its arrivals came faster than the deployment completed
// requests anywhere in the sweep, so its queue can only grow. The tier's line then says what
// the sweep's table will say.
func (e *exec) beyondService(idx int) bool {
	a := curve.Analyze(e.summaries(), e.cfg.Settings.Params)
	for _, v := range a.Points {
		if v.Tier == idx || slices.Contains(v.Pooled, idx) {
			return !v.Stable && v.Verdict == curve.VerdictFails
		}
	}
	return false
}

// shortTierLine says what one tier showed in plain words: its rate, its requests, its compliant
// share with its interval, and its verdict (or what would decide it), and how it ended.
// overloaded says the sweep judges the tier beyond what the deployment serves
// (exec.beyondService), whatever its own trend showed.
func shortTierLine(t result.TierResult, stop *stopRule, p curve.Params, overloaded bool) string {
	s := t.Summary
	p = p.WithDefaults()
	name := fmt.Sprintf("%s %d", roleLabel(t.Tier.Role), t.Tier.Tier)
	at := " " + curve.LevelText(s, rateText)
	if curve.AxisOf(s).Open() && math.IsInf(s.NominalRate, 1) {
		return fmt.Sprintf("%s: a burst of %s requests at once: %s req/s completed", name, curve.Count(s.Planned), fmtRate(s.RequestThroughput))
	}
	st := s.Steady
	if st == nil {
		return fmt.Sprintf("%s%s: no request was issued", name, at)
	}
	judged, eff := st.Judged()
	lo, hi := curve.WilsonN(judged, eff, p.Confidence)
	share := fmt.Sprintf("%s compliant [%s, %s]", pctShort(judged), pctShort(lo), pctShort(hi))
	if st.Controlled != nil {
		share = fmt.Sprintf("%s compliant, %s with the shadow queue [%s, %s]", pctShort(st.CompliantShare), pctShort(judged), pctShort(lo), pctShort(hi))
	}
	var verdict string
	switch {
	case s.ClientBound:
		why, _, _ := strings.Cut(s.ClientBoundReason, ":")
		verdict = "NOT JUDGED, the client limited it: " + why
	case s.Interrupted:
		verdict = "interrupted"
	case st.Requests < measure.MinSteadyRequests:
		verdict = curve.VerdictWords(curve.VerdictInsufficient, true, judged, p.TargetShare, "")
	case !st.Stationary || overloaded:
		verdict = curve.VerdictWords(curve.VerdictFails, false, judged, p.TargetShare, "")
	case lo >= p.TargetShare:
		verdict = curve.VerdictWords(curve.VerdictMeets, true, judged, p.TargetShare, "")
	case hi < p.TargetShare:
		verdict = curve.VerdictWords(curve.VerdictFails, true, judged, p.TargetShare, "")
	default: // the words the report's tables use for the verdict the analysis gives it
		verdict = curve.VerdictWords(curve.VerdictUncertain, true, judged, p.TargetShare, "")
	}
	ended := ""
	if e := t.Tier.End; e != nil {
		switch {
		case stop != nil && stop.decided != "":
			ended = fmt.Sprintf(" (decided after %s)", durationText(e.ArrivalsEndS))
		case e.Reason == records.EndedCap:
			ended = fmt.Sprintf(" (ran its %s cap)", durationText(e.ArrivalsEndS))
		}
	}
	if s.Stalls > 0 {
		// The server's failure, not the run's: said where the tier is, not only in its files.
		ended += fmt.Sprintf("; %s requests stalled (the server sent nothing on them until the drain deadline: timeouts)", curve.Count(s.Stalls))
	}
	if c := st.Client; c != nil && c.Notable() {
		ended += "; " + c.Text() // what the client's own delays may have added, said with the verdict
	}
	if b := measure.BusyText(s.CPU); b != "" {
		ended += "; " + b
	}
	return fmt.Sprintf("%s%s: %s requests, %s: %s%s", name, at, curve.Count(st.Requests), share, verdict, ended)
}

// pctShort writes a share as a percentage with two decimals at most ("99.92 %", "100 %").
func pctShort(v float64) string {
	return strconv.FormatFloat(math.Round(10000*v)/100, 'f', -1, 64) + " %"
}

// durationText writes seconds as "9 s", "1m45s".
func durationText(sec float64) string {
	d := time.Duration(math.Round(sec)) * time.Second
	if d < time.Minute {
		return fmt.Sprintf("%d s", int(d.Seconds()))
	}
	return d.String()
}

// collector is the sink of one tier: it keeps the records (or, bounded, a streaming summary)
// and feeds the stop rule of a sequential tier.
type collector struct {
	recs   []records.Record
	approx *measure.ApproxAccumulator
	stop   *stopRule
	// ttft and e2el of the first maxTimings requests that ended ok (a burst's calibrate the
	// shadow queue), counted from when each request was written to the socket where its record
	// says (burstTimes).
	ttft, e2el []time.Duration
}

// burstTimes is the time to first token and the end-to-end latency of r as the deployment
// served it: counted from its written moment (the start of the write that handed its last
// bytes to the socket) when the record has one, else from sent. A burst dials every connection
// at once, and on a busy machine the client's own time to connect and write took 20 to 30 ms
// at the median (issue 35): counted from sent, the shortest of the burst's times to first token,
// which the shadow takes for the deployment's own, was 57 ms against a server's 30.
func burstTimes(r *records.Record) (ttft, e2el time.Duration, ok bool) {
	from := r.Sent
	if r.Written != records.Unset && r.Written >= r.Sent {
		from = r.Written
	}
	if from == records.Unset || r.First == records.Unset || r.Last == records.Unset || r.First < from {
		return 0, 0, false
	}
	return r.First - from, r.Last - from, true
}

// maxTimings bounds the timings a collector keeps.
const maxTimings = 1024

func newCollector(opts measure.Options, bounded bool, stop *stopRule) (*collector, error) {
	c := &collector{stop: stop}
	if bounded {
		a, err := measure.NewApproxAccumulator(opts, 0)
		if err != nil {
			return nil, result.BoundedError(err)
		}
		c.approx = a
	}
	return c, nil
}

func (c *collector) Write(r *records.Record) error {
	if r.Outcome == records.OK && len(c.ttft) < maxTimings {
		if ttft, e2el, ok := burstTimes(r); ok {
			c.ttft, c.e2el = append(c.ttft, ttft), append(c.e2el, e2el)
		}
	}
	if c.approx != nil {
		c.approx.Add(r)
	} else {
		c.recs = append(c.recs, *r)
	}
	if c.stop != nil {
		c.stop.add(r)
	}
	return nil
}

// summary summarises the tier exactly as Build does from a records file.
func (c *collector) summary(t records.Tier, opts measure.Options) measure.Summary {
	if c.approx != nil {
		return c.approx.Summary(t)
	}
	return measure.Summarize(c.recs, t, opts)
}
