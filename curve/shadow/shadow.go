// Package shadow sharpens a tier's compliant share with a control variate: a shadow queue.
//
// Near a 99 % target, misses come in clusters: a burst of arrivals builds a queue, and every
// request behind it waits. A tier's share therefore varies with the bursts its arrivals happened
// to contain, much more than independent requests would make it vary (measure.Steady's variance
// factor, 3 to 15 on M/D/c queues). The arrivals are known: the schedule drew them. A shadow
// queue, an M/D/c model of the deployment calibrated before the tier (Calibrate), is fed the same
// arrivals, as the client sent them, and its compliance is computed request by request; its
// expected share under the schedule's arrival process is known exactly (queueing.MDCWaitCDF for
// Poisson arrivals, a long simulation otherwise). Where the tier's bursts made the shadow's share
// come out low, they made the deployment's low too: the controlled share
//
//	share − β·(shadow share − expected shadow share)
//
// removes that part of the noise. It is an unbiased estimate of the tier's expected share for any
// fixed β, whatever the deployment is: a shadow that resembles it badly only removes less noise.
// β and the correlation ρ between the two shares are estimated by batch means (the series are
// autocorrelated). The controlled share is used whenever it can be computed (choosing it by how
// the tier's misses fell would bias it); the variance the verdict is credited with is the plain
// one times 1 − ρ_lo², ρ_lo a one-sided 95 % lower confidence bound of ρ, the reduction capped at
// MaxGain, and only when both missed often enough to measure ρ: otherwise the plain one.
package shadow

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Limits of the estimate.
const (
	// MaxGain caps the variance reduction credited to a verdict: the plain variance is divided by
	// at most this much, however well the shadow follows the deployment.
	MaxGain = 4
	// MinCorrelation: a lower bound of ρ below this earns no reduction (it would be under 5 %).
	MinCorrelation = 0.22
	// MinBatches is the fewest batches β and ρ are estimated over.
	MinBatches = 30
	// MaxLoad: a shadow whose slots would be busier than this at a tier's rate controls nothing
	// (its share over a tier no longer has a stationary expectation).
	MaxLoad = 0.95
	// MinMisses is the fewest misses, of the deployment and of the shadow each, the estimate
	// needs: without misses there is nothing to correlate.
	MinMisses = 5
)

// Control is a tier's shadow: the queue, and its expected compliant share under the tier's
// arrival process.
type Control struct {
	Queue    records.ShadowQueue
	Expected float64
}

// New returns the control of a tier whose arrivals are a steady process at rate (per second) with
// the given burstiness (the Gamma shape of the gaps; 1: Poisson; +Inf: constant spacing).
func New(q records.ShadowQueue, rate, burstiness float64) (*Control, error) {
	k := cacheKey{q, rate, burstiness}
	if c, ok := cache.Load(k); ok {
		return c.(*Control), nil
	}
	c, err := newControl(q, rate, burstiness)
	if err == nil {
		cache.Store(k, c)
	}
	return c, err
}

// cache keeps the controls computed: a tier's summary, its stop rule and a report of it ask for
// the same one, and without a closed form each costs a long simulation.
var cache sync.Map // cacheKey → *Control

type cacheKey struct {
	q                records.ShadowQueue
	rate, burstiness float64
}

func newControl(q records.ShadowQueue, rate, burstiness float64) (*Control, error) {
	cfg, err := queueConfig(q)
	if err != nil {
		return nil, err
	}
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("shadow queue: rate %v: want a finite positive rate", rate)
	}
	if !(burstiness > 0) {
		return nil, fmt.Errorf("shadow queue: burstiness %v: want > 0", burstiness)
	}
	if load := rate * q.ServiceS / float64(q.Servers); load >= MaxLoad {
		// Near or past its saturation the shadow's share over a tier depends on how long the
		// tier ran, not on a stationary expectation: no control there.
		return nil, fmt.Errorf("shadow queue: at %.4g req/s its %d slots would be %.0f %% busy, at least %.0f %%: no steady share to expect", rate, q.Servers, 100*load, 100*MaxLoad)
	}
	budget := seconds(q.BudgetS)
	c := &Control{Queue: q}
	if burstiness == 1 {
		if c.Expected, err = queueing.MDCWaitCDF(rate, cfg.Service, cfg.Servers, budget); err != nil {
			return nil, fmt.Errorf("shadow queue: %w", err)
		}
		return c, nil
	}
	// No closed form: a long run of the shadow on the process itself, seeded, past its first
	// tenth.
	offs, err := arrival.Spec{Rate: rate, Burstiness: arrival.Burstiness(burstiness)}.Arrivals(expectedArrivals, 0, 1, 0)
	if err != nil {
		return nil, fmt.Errorf("shadow queue: %w", err)
	}
	comply := c.Comply(offs)
	n, k := 0, 0
	for i := len(comply) / 10; i < len(comply); i++ {
		n++
		if comply[i] {
			k++
		}
	}
	c.Expected = float64(k) / float64(n)
	return c, nil
}

// expectedArrivals is the length of the run that measures an expected share without a closed
// form: its standard error is then well under a tenth of a tier's.
const expectedArrivals = 400_000

// Comply simulates the shadow on arrivals (offsets from T0, in any order) and returns, for each,
// whether it complied: waited at most the budget for a slot.
func (c *Control) Comply(arrivals []time.Duration) []bool {
	cfg, err := queueConfig(c.Queue)
	if err != nil {
		return make([]bool, len(arrivals))
	}
	order := make([]int, len(arrivals))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return compareDurations(arrivals[a], arrivals[b]) })
	sorted := make([]time.Duration, len(arrivals))
	for i, j := range order {
		sorted[i] = arrivals[j]
	}
	budget := seconds(c.Queue.BudgetS)
	out := make([]bool, len(arrivals))
	_ = queueing.Simulate(cfg, sorted, func(r queueing.Result) bool {
		out[order[r.Index]] = !r.Rejected && r.Wait() <= budget
		return false
	})
	return out
}

// Result is a controlled share and how it was made.
type Result struct {
	// Share is the controlled share; Gain the variance reduction credited to it (≥ 1); the
	// effective sample of its interval is the plain one times Gain.
	Share, Gain float64
	// ShadowShare is the shadow's share over the same requests, Expected its expectation; Beta
	// the coefficient; Correlation the lower confidence bound of ρ the gain rests on.
	ShadowShare, Expected, Beta, Correlation float64
}

// ErrNoControl says why a window's share was not controlled.
var ErrNoControl = errors.New("no control")

// Estimate controls the share of a window: real[i] and shadow[i] say whether request i (in the
// order of their arrivals) complied at the deployment and at the shadow; expected is the shadow's
// expected share. The controlled share is computed whenever the window holds MinBatches batches
// and the shadow's share varies between them: whether to use it must not depend on how the
// tier's misses fell, or the choice would bias the share. The variance reduction is credited
// only when both the deployment and the shadow missed at least MinMisses times and the lower
// bound of their correlation reaches MinCorrelation; otherwise Gain is 1 and the interval is the
// plain one. It returns ErrNoControl (wrapped with why) when no controlled share can be made.
func Estimate(real, shadow []bool, expected float64) (Result, error) {
	n := len(real)
	if n != len(shadow) {
		return Result{}, fmt.Errorf("%w: %d requests, %d shadow outcomes", ErrNoControl, n, len(shadow))
	}
	missR, missS := 0, 0
	x, y := make([]float64, n), make([]float64, n)
	for i := range real {
		if real[i] {
			x[i] = 1
		} else {
			missR++
		}
		if shadow[i] {
			y[i] = 1
		} else {
			missS++
		}
	}
	// Batches as long as they can be while leaving MinBatches of them: the longest batches hold
	// the clustering of both series.
	b := 1
	for n/(2*b) >= MinBatches {
		b *= 2
	}
	k := n / b
	if k < MinBatches {
		return Result{}, fmt.Errorf("%w: %d requests, fewer than %d batches", ErrNoControl, n, MinBatches)
	}
	var mx, my float64
	bx, by := make([]float64, k), make([]float64, k)
	for j := range k {
		for i := j * b; i < (j+1)*b; i++ {
			bx[j] += x[i]
			by[j] += y[i]
		}
		bx[j] /= float64(b)
		by[j] /= float64(b)
		mx += bx[j]
		my += by[j]
	}
	mx /= float64(k)
	my /= float64(k)
	var vx, vy, cxy float64
	for j := range k {
		vx += (bx[j] - mx) * (bx[j] - mx)
		vy += (by[j] - my) * (by[j] - my)
		cxy += (bx[j] - mx) * (by[j] - my)
	}
	if !(vy > 0) {
		return Result{}, fmt.Errorf("%w: the shadow's share does not vary between batches", ErrNoControl)
	}
	var share, shadowShare float64
	for i := range x {
		share += x[i]
		shadowShare += y[i]
	}
	share /= float64(n)
	shadowShare /= float64(n)
	beta := cxy / vy
	res := Result{ShadowShare: shadowShare, Expected: expected, Beta: beta, Gain: 1,
		Share: math.Min(1, math.Max(0, share-beta*(shadowShare-expected)))}
	if missR < MinMisses || missS < MinMisses || !(vx > 0) {
		return res, nil
	}
	rho := cxy / math.Sqrt(vx*vy)
	// Fisher's z: atanh(ρ̂) is about normal with variance 1/(k − 3).
	z := distuv.UnitNormal.Quantile(0.95)
	lo := math.Tanh(math.Atanh(math.Min(rho, 1-1e-12)) - z/math.Sqrt(float64(k-3)))
	if lo >= MinCorrelation {
		res.Correlation, res.Gain = lo, math.Min(MaxGain, 1/(1-lo*lo))
	}
	return res, nil
}

// queueConfig is the M/D/c queue of a shadow.
func queueConfig(q records.ShadowQueue) (queueing.Config, error) {
	if q.Servers < 1 || !(q.ServiceS > 0) || math.IsInf(q.ServiceS, 0) || math.IsNaN(q.BudgetS) {
		return queueing.Config{}, fmt.Errorf("shadow queue: %d servers, service %v s, budget %v s: want at least one server and a finite positive service time", q.Servers, q.ServiceS, q.BudgetS)
	}
	return queueing.Config{Servers: q.Servers, Service: seconds(q.ServiceS)}, nil
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

func compareDurations(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Calibrate makes the shadow of a deployment from what the sweep's probes measured: a burst of
// requests sent at once (the time to first token and the end-to-end latency of each that
// completed, in any order) and the saturation rate it sustains. The first requests of a burst
// start at once: the shortest time to first token is the deployment's own, without a wait; every
// request's decode time is its latency less its time to first token, at the full batch the burst
// makes. Each slot serves a request for D = first token + median decode, and the deployment's
// saturation rate is slots/D: c = saturation·D slots, at least one. A request complies at the
// shadow when it waited at most the budget its objectives leave: the TTFT objective less the
// first token, and the E2EL objective less D (the shorter). It fails when the burst has no
// completed request, no objective is one a wait delays, or the objectives leave no time to wait.
func Calibrate(ttft, e2el []time.Duration, saturation float64, ttftObjective, e2elObjective time.Duration) (records.ShadowQueue, error) {
	if len(ttft) == 0 || len(ttft) != len(e2el) {
		return records.ShadowQueue{}, errors.New("no completed request of the burst to calibrate a shadow queue with")
	}
	if !(saturation > 0) || math.IsInf(saturation, 0) {
		return records.ShadowQueue{}, fmt.Errorf("saturation rate %v: want a finite positive rate", saturation)
	}
	first := slices.Min(ttft)
	decode := make([]time.Duration, len(ttft))
	for i := range ttft {
		decode[i] = max(e2el[i]-ttft[i], 0)
	}
	slices.Sort(decode)
	d := first + decode[len(decode)/2]
	if d <= 0 {
		return records.ShadowQueue{}, errors.New("the burst's requests took no time: nothing to model")
	}
	budget := time.Duration(math.MaxInt64)
	if ttftObjective > 0 {
		budget = min(budget, ttftObjective-first)
	}
	if e2elObjective > 0 {
		budget = min(budget, e2elObjective-d)
	}
	switch {
	case budget == time.Duration(math.MaxInt64):
		return records.ShadowQueue{}, errors.New("no objective a wait for a slot delays (ttft, ttfa or e2el)")
	case budget <= 0:
		return records.ShadowQueue{}, fmt.Errorf("the objectives leave no time to wait (the first token takes %v, a request %v)", first, d)
	}
	servers := max(1, int(math.Round(saturation*d.Seconds())))
	return records.ShadowQueue{Servers: servers, ServiceS: d.Seconds(), BudgetS: budget.Seconds()}, nil
}
