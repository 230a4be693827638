package curve

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// autoFractions: see AutoFractions.
var autoFractions = [...]float64{0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.25}

// AutoFractions returns the initial tiers of an automatic sweep, as
// fractions of the probed saturation rate: light load (0.1, 0.25), the
// rising part of the curve (0.5, 0.75), close to saturation where knees
// usually sit (0.9, 1.0) and one tier past it (1.25) so the plateau and the
// failure side are seen.
func AutoFractions() []float64 { return slices.Clone(autoFractions[:]) }

// AutoMaxFactor bounds the planner's extension upwards: when every tier so
// far meets the objective it doubles the highest rate, but never past
// AutoMaxFactor times the probed saturation rate.
const AutoMaxFactor = 8

// Planner plans the tiers of an automatic sweep (--request-rates auto). The
// sweep probes the saturation rate (e.g. the request throughput of an "inf"
// tier), makes a Planner, and then alternates: Next(done) gives the next
// rate, the sweep runs that tier and appends its Point to done. The plan:
//
//  1. the initial tiers, AutoFractions() × the saturation rate, lightest first;
//  2. then geometric bisection (√(lo·hi)) between the last tier meeting the
//     objective and the tier above it (the bracket Analyze interpolates
//     capacity in), until (hi − lo)/lo ≤ precision;
//  3. if every tier met the objective, the highest rate doubles instead
//     (up to AutoMaxFactor × saturation), to find a failing tier;
//  4. it stops when len(done) reaches maxTiers, when the lightest tier
//     misses the objective (nothing to bisect), or when no tier can be
//     added.
//
// Next is a pure function of done, so a Planner holds no per-run state and
// may be asked again after a restart.
type Planner struct {
	saturation float64
	params     Params
	precision  float64
	maxTiers   int
}

// NewPlanner returns a planner around the probed saturation rate (req/s),
// judging tiers with p (zero fields take their defaults), bisecting to a
// relative precision (e.g. 0.1) and running at most maxTiers tiers in all.
// Check [Planner.Validate] before use: an invalid planner plans nothing.
func NewPlanner(saturationRate float64, p Params, precision float64, maxTiers int) *Planner {
	return &Planner{saturation: saturationRate, params: p.WithDefaults(), precision: precision, maxTiers: maxTiers}
}

// Validate returns every problem with the planner's inputs at once.
func (pl *Planner) Validate() []error {
	var errs []error
	if !(pl.saturation > 0) || math.IsInf(pl.saturation, 0) {
		errs = append(errs, fmt.Errorf("auto sweep: probed saturation rate %s req/s is not a positive finite number; the probe tier produced no usable throughput",
			fmtParam(pl.saturation)))
	}
	if !(pl.precision > 0) || math.IsInf(pl.precision, 0) {
		errs = append(errs, fmt.Errorf("auto sweep: precision %s must be a positive relative width (e.g. 0.1)", fmtParam(pl.precision)))
	}
	if pl.maxTiers < len(autoFractions) {
		errs = append(errs, fmt.Errorf("auto sweep: at most %d tiers leaves no room for the %d initial tiers", pl.maxTiers, len(autoFractions)))
	}
	errs = append(errs, pl.params.Validate()...)
	return errs
}

// Next returns the rate of the next tier given the tiers done so far (in any
// order; their OfferedRate must be the rates Next returned), or ok = false
// when the sweep is finished.
func (pl *Planner) Next(done []Point) (rate float64, ok bool) {
	if len(pl.Validate()) > 0 || len(done) >= pl.maxTiers {
		return 0, false
	}
	for _, f := range autoFractions {
		r := pl.saturation * f
		if !slices.ContainsFunc(done, func(pt Point) bool { return sameRate(pt.OfferedRate, r) }) {
			return r, true
		}
	}
	p, _ := pl.params.resolve()
	vs := make([]PointVerdict, len(done))
	for i, pt := range done {
		vs[i] = judge(pt, p)
	}
	slices.SortStableFunc(vs, func(x, y PointVerdict) int {
		return cmp.Compare(x.Point.OfferedRate, y.Point.OfferedRate)
	})
	axis := rateAxis(vs)
	if len(axis) == 0 || !axis[0].meetsObjective() {
		return 0, false
	}
	_, last, next := bracket(axis)
	lo := axis[last].Point.OfferedRate
	if next < 0 {
		up := 2 * lo
		if up > AutoMaxFactor*pl.saturation*(1+1e-9) {
			return 0, false
		}
		return up, true
	}
	hi := axis[next].Point.OfferedRate
	if (hi-lo)/lo <= pl.precision {
		return 0, false
	}
	return math.Sqrt(lo * hi), true
}

// String describes the plan.
func (pl *Planner) String() string {
	fr := make([]string, len(autoFractions))
	for i, f := range autoFractions {
		fr[i] = fmtParam(f)
	}
	return fmt.Sprintf("auto: %d tiers at %s × %s req/s (the probed saturation rate), then geometric bisection between the last tier meeting "+
		"a %s compliant request share (stable) and the next, until (hi−lo)/lo ≤ %s; doubling upwards (to %d× saturation) while every tier meets it; at most %d tiers",
		len(autoFractions), strings.Join(fr, ", "), fmtG(pl.saturation), pct(pl.params.TargetShare), pct(pl.precision), AutoMaxFactor, pl.maxTiers)
}

// sameRate: equal within floating-point noise.
func sameRate(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
