package sweeptest

import (
	"fmt"
	"math"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure"
)

// Oracle is the load an oracle needs to certify the capacity of an M/D/c queue to ±Precision:
// it knows the true capacity T and only has to show it, by running one tier at (1 − Precision)·T
// and one at (1 + Precision)·T, each just long enough for the interval of its compliant share
// (Wilson's, on the effective sample, as the sweep computes it) to exclude the target: the first
// meets, the second fails, so the capacity lies in [(1 − Precision)·T, (1 + Precision)·T] at
// the stated confidence. It is the physical limit of a method that judges requests only by
// whether they complied: no search, no sequential looks, no error in where to put the tiers.
//
// Its tiers need the expected share at those rates (exact: queueing.MDCWaitCDF) and how much the
// misses cluster there: the true variance factor of the steady-state share, measured over
// Replications independent tiers (the variance of their shares over the binomial variance). The
// time of a tier is its requests over its rate, plus the warm-up the sweep leaves out of every
// tier (measure.WarmupMultiple times the service time, at most measure.MaxWarmupFraction of it).
// The time is a median: with that many requests, about half of an oracle's tiers decide.
type Oracle struct {
	Queue     sim.QueueConfig
	Objective time.Duration // the TTFT objective
	// Target and Confidence are the target share and the interval's confidence (defaults: 0.99
	// and 0.95); Precision the half-width to certify (default 0.1).
	Target, Confidence, Precision float64
	// Replications and TierRequests size the measurement of the variance factors (defaults 300
	// tiers of 4,000 arrivals).
	Replications, TierRequests int
}

// OracleTier is one of the oracle's two tiers.
type OracleTier struct {
	Rate           float64 `json:"rate"`            // requests per second
	Share          float64 `json:"share"`           // the steady-state compliant share there
	VarianceFactor float64 `json:"variance_factor"` // measured over the replications
	// EffectiveRequests is the smallest effective sample whose interval excludes the target;
	// Requests = EffectiveRequests · VarianceFactor.
	EffectiveRequests float64 `json:"effective_requests"`
	Requests          float64 `json:"requests"`
	Seconds           float64 `json:"seconds"` // Requests / Rate, plus the warm-up
}

// OracleResult is what the oracle needs: its two tiers and their total time.
type OracleResult struct {
	Capacity float64    `json:"capacity"` // the true capacity T
	Below    OracleTier `json:"below"`
	Above    OracleTier `json:"above"`
	Seconds  float64    `json:"seconds"` // Below.Seconds + Above.Seconds
}

func (o Oracle) withDefaults() Oracle {
	if o.Target == 0 {
		o.Target = curve.DefaultTargetShare
	}
	if o.Confidence == 0 {
		o.Confidence = curve.DefaultConfidence
	}
	if o.Precision == 0 {
		o.Precision = 0.1
	}
	if o.Replications == 0 {
		o.Replications = 300
	}
	if o.TierRequests == 0 {
		o.TierRequests = 4000
	}
	return o
}

// Run computes the oracle's time (deterministic: the replications are seeded 1…Replications).
func (o Oracle) Run() (OracleResult, error) {
	o = o.withDefaults()
	q := o.Queue
	if err := q.Validate(); err != nil {
		return OracleResult{}, err
	}
	maxWait := o.Objective - q.FirstToken
	truth, err := queueing.MDCCapacity(q.Service, q.Servers, maxWait, o.Target)
	if err != nil {
		return OracleResult{}, err
	}
	res := OracleResult{Capacity: truth}
	for i, m := range []float64{1 - o.Precision, 1 + o.Precision} {
		rate := m * truth
		share, err := queueing.MDCWaitCDF(rate, q.Service, q.Servers, maxWait)
		if err != nil {
			return OracleResult{}, err
		}
		f, err := o.varianceFactor(rate)
		if err != nil {
			return OracleResult{}, err
		}
		eff, err := curve.NeededEffective(share, o.Target, o.Confidence)
		if err != nil {
			return OracleResult{}, fmt.Errorf("at %.4g req/s: %w", rate, err)
		}
		t := OracleTier{Rate: rate, Share: share, VarianceFactor: f, EffectiveRequests: eff, Requests: eff * f}
		phase := t.Requests / rate
		warm := math.Min(measure.WarmupMultiple*q.Service.Seconds(), measure.MaxWarmupFraction/(1-measure.MaxWarmupFraction)*phase)
		t.Seconds = phase + warm
		if i == 0 {
			res.Below = t
		} else {
			res.Above = t
		}
	}
	res.Seconds = res.Below.Seconds + res.Above.Seconds
	return res, nil
}

// varianceFactor is the true variance factor of the steady-state compliant share at rate: the
// variance of the shares of Replications independent Poisson tiers over the binomial variance
// of their mean share at their mean window size.
func (o Oracle) varianceFactor(rate float64) (float64, error) {
	var sum, sumSq, n float64
	for seed := int64(1); seed <= int64(o.Replications); seed++ {
		offs, err := arrival.Spec{Rate: rate, Burstiness: 1}.Arrivals(o.TierRequests, 0, seed, 0)
		if err != nil {
			return 0, err
		}
		obs := make([]measure.Obs, 0, len(offs))
		err = sim.SimulateQueue(o.Queue, offs, func(r sim.QueueResult) bool {
			x := measure.Obs{Planned: r.Arrival, First: r.First, Last: r.Last, End: r.End, Tokens: int32(r.Tokens), Flags: measure.ObsOK}
			if r.First-r.Arrival <= o.Objective {
				x.Flags |= measure.ObsCompliant
			}
			obs = append(obs, x)
			return false
		})
		if err != nil {
			return 0, err
		}
		st := measure.SteadyState(obs, 0, measure.SteadyWindow{})
		sum += st.CompliantShare
		sumSq += st.CompliantShare * st.CompliantShare
		n += float64(st.Requests)
	}
	r := float64(o.Replications)
	mean := sum / r
	v := (sumSq - r*mean*mean) / (r - 1)
	binom := mean * (1 - mean) / (n / r)
	if !(binom > 0) {
		return 1, nil
	}
	return math.Max(1, v/binom), nil
}
