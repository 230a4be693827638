package plan

import (
	"errors"
	"fmt"

	"github.com/loadcurve/loadcurve/curve"
)

// FromAnalysis is the deployment a sweep measured, named name: the operating point's rate,
// the capacity (and whether it is only a lower bound), and tokens per request estimated from
// what [curve.Analysis.OperatingFigures] prices (the confirmation tier's measured throughputs
// over its realised rate, or the curve's expectation at the operating point when no
// confirmation ran there). That estimate is a ratio of rates, not a count: it can differ from
// the tokens the requests output (128.023 for requests of exactly 128). [FromResult] counts
// them from the records, and is what a plan from a result uses. verified reports
// whether a confirmation tier verified the operating point: planning from an unverified one
// is the caller's decision. CostPerHour and OneTimeCost are left for the caller to set.
//
// It fails when the analysis counts users or sessions rather than requests (its axis), has no
// operating point, or its figures carry no output.
func FromAnalysis(name string, a curve.Analysis) (d Deployment, verified bool, err error) {
	if a.Axis != curve.AxisRate {
		// Replicas serve requests: a rate of sessions or a number of users is not one.
		return Deployment{}, false, fmt.Errorf("the sweep's operating point is in %s, not requests per second: plan from a sweep of requests", a.Axis.UnitWords())
	}
	op := a.OperatingPoint
	if op == nil || a.Capacity == nil {
		return Deployment{}, false, errors.New("the sweep found no capacity, so there is no operating point to plan from")
	}
	fig, ok := a.OperatingFigures()
	rate := float64(fig.Rate)
	if !ok || !(rate > 0) || !(fig.RawOutputThroughput > 0) {
		return Deployment{}, false, fmt.Errorf("the operating point's figures (%s) carry no output to price", fig.Source)
	}
	d = Deployment{
		Name:                      name,
		OperatingRate:             op.Rate,
		Capacity:                  a.Capacity.Rate,
		CapacityIsLowerBound:      a.Capacity.LowerBoundOnly(),
		CompliantTokensPerRequest: fig.CompliantOutputThroughput / rate,
		RawTokensPerRequest:       fig.RawOutputThroughput / rate,
		Source:                    fig.Source,
		Verified:                  op.Verified(),
		Verification:              op.Verification,
	}
	if d.Verification == "" && !d.Verified { // an analysis that kept no sentence
		d.Verification = "not verified"
	}
	return d, op.Verified(), nil
}
