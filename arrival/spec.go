package arrival

import (
	"fmt"
	"math"
	"strconv"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Spec describes an arrival process. The zero value is not valid: at least
// Rate and Burstiness must be set (see Validate).
type Spec struct {
	// Rate is the constant request rate in requests/s; math.Inf(1) releases
	// every request at T0. Ignored when Ramp != RampNone.
	Rate float64
	// Burstiness is the shape b (> 0) of the gamma-distributed gaps: 1 is
	// Poisson, below 1 is burstier, math.Inf(1) is constant spacing.
	Burstiness Burstiness
	// Ramp selects a changing rate from RampStart to RampEnd.
	Ramp RampStrategy
	// RampStart and RampEnd are the first and last rates of a ramp in
	// requests/s, both finite and > 0, RampStart <= RampEnd. They must be
	// left zero when Ramp is RampNone.
	RampStart, RampEnd float64
}

// Validate reports every problem with s at once, or nil when s is valid. Each is a
// field.Error naming its input (FieldRate, FieldBurstiness, FieldRamp, …).
func (s Spec) Validate() []error {
	var errs []error
	bad := func(name, format string, a ...any) { errs = append(errs, field.Errorf(name, format, a...)) }
	if err := s.Burstiness.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch s.Ramp {
	case RampNone:
		if math.IsNaN(s.Rate) || s.Rate <= 0 {
			bad(FieldRate, "must be > 0 or inf, got %s", fmtNum(s.Rate))
		}
		if s.RampStart != 0 {
			bad(FieldRampStart, "is only allowed with %v linear or exponential, got %s with strategy none", field.Ref(FieldRamp), fmtNum(s.RampStart))
		}
		if s.RampEnd != 0 {
			bad(FieldRampEnd, "is only allowed with %v linear or exponential, got %s with strategy none", field.Ref(FieldRamp), fmtNum(s.RampEnd))
		}
	case RampLinear, RampExponential:
		startOK := finitePositive(s.RampStart)
		endOK := finitePositive(s.RampEnd)
		if !startOK {
			bad(FieldRampStart, "must be a finite number > 0 with %v %s, got %s", field.Ref(FieldRamp), s.Ramp, fmtNum(s.RampStart))
		}
		if !endOK {
			bad(FieldRampEnd, "must be a finite number > 0 with %v %s, got %s", field.Ref(FieldRamp), s.Ramp, fmtNum(s.RampEnd))
		}
		if startOK && endOK && s.RampStart > s.RampEnd {
			bad(FieldRampStart, "must be <= %v (%s), got %s", field.Ref(FieldRampEnd), fmtNum(s.RampEnd), fmtNum(s.RampStart))
		}
	default:
		bad(FieldRamp, "must be none, linear or exponential, got %s", s.Ramp)
	}
	return errs
}

// String identifies the process in result files, e.g. "poisson(rate=4/s)",
// "gamma(rate=4/s, burstiness=0.5)", "constant(rate=4/s)",
// "burst(rate=inf)", "linear-ramp(1→10/s, burstiness=1)" or
// "exponential-ramp(1→10/s, burstiness=inf)". The text is stable: numbers
// use the shortest representation that round-trips.
func (s Spec) String() string {
	if s.Ramp != RampNone {
		return fmt.Sprintf("%s-ramp(%s→%s/s, burstiness=%s)", s.Ramp, fmtNum(s.RampStart), fmtNum(s.RampEnd), s.Burstiness)
	}
	switch {
	case math.IsInf(s.Rate, 1):
		return "burst(rate=inf)"
	case math.IsInf(float64(s.Burstiness), 1):
		return fmt.Sprintf("constant(rate=%s/s)", fmtNum(s.Rate))
	case s.Burstiness == 1:
		return fmt.Sprintf("poisson(rate=%s/s)", fmtNum(s.Rate))
	default:
		return fmt.Sprintf("gamma(rate=%s/s, burstiness=%s)", fmtNum(s.Rate), s.Burstiness)
	}
}

// RateAt returns the nominal rate in requests/s of request i (0-based) of
// a count-bound tier of n requests: Rate without a ramp, otherwise
// RampStart + (RampEnd-RampStart)·i/(n-1) (linear) or
// RampStart·(RampEnd/RampStart)^(i/(n-1)) (exponential), RampStart when
// n <= 1. The result is meaningful only for a valid s and 0 <= i < n.
func (s Spec) RateAt(i, n int) float64 {
	if s.Ramp == RampNone {
		return s.Rate
	}
	frac := 0.0
	if n > 1 {
		frac = float64(i) / float64(n-1)
	}
	return s.rampRate(frac)
}

// rampRate is the ramp's rate at progress frac in [0, 1].
func (s Spec) rampRate(frac float64) float64 {
	if s.Ramp == RampExponential {
		return s.RampStart * math.Pow(s.RampEnd/s.RampStart, frac)
	}
	// The explicit conversion rounds the product, which forbids the
	// compiler from fusing it with the addition into an FMA; results then
	// agree across architectures.
	return float64((s.RampEnd-s.RampStart)*frac) + s.RampStart
}

func finitePositive(x float64) bool {
	return x > 0 && !math.IsInf(x, 1)
}

// fmtNum formats x as the shortest decimal that round-trips, with "inf" and
// "-inf" for the infinities.
func fmtNum(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	default:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
}
