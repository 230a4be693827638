package arrival

import (
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// Names of a tier's length, as its errors name them: the same inputs as package sweep's
// FieldRequests and FieldDuration.
const (
	FieldRequests = "requests per tier"
	FieldDuration = "tier duration"
)

// Params declares the spec's settings, bound to s: the rate and the burstiness read as
// ParseRate and ParseBurstiness read them ("inf"), the ramp strategy by its name. Read them
// back with Validate.
func (s *Spec) Params() []param.Param {
	return []param.Param{
		param.Var(FieldRate, rateText{&s.Rate}, "arrival rate in requests/s, or inf to send everything at once"),
		param.Var(FieldBurstiness, burstinessText{&s.Burstiness}, "Gamma shape of the inter-arrival gaps: 1 = Poisson, <1 burstier, inf = constant spacing"),
		param.Var(FieldRamp, rampText{&s.Ramp}, fmt.Sprintf("linear or exponential ramp of the rate from %v to %v", field.Ref(FieldRampStart), field.Ref(FieldRampEnd))).
			Default(fmt.Sprintf("none: %v throughout", field.Ref(FieldRate))),
		param.Float(FieldRampStart, &s.RampStart, "ramp start rate (requests/s)").Default("none"),
		param.Float(FieldRampEnd, &s.RampEnd, "ramp end rate (requests/s)").Default("none"),
	}
}

type rateText struct{ p *float64 }

func (r rateText) String() string { return fmtNum(*r.p) }
func (r rateText) Set(s string) (err error) {
	*r.p, err = ParseRate(s)
	return err
}

type burstinessText struct{ p *Burstiness }

func (b burstinessText) String() string { return b.p.String() }
func (b burstinessText) Set(s string) (err error) {
	*b.p, err = ParseBurstiness(s)
	return err
}

// rampText writes no strategy as nothing: the default is said in words.
type rampText struct{ p *RampStrategy }

func (r rampText) String() string {
	if *r.p == RampNone {
		return ""
	}
	return r.p.String()
}
func (r rampText) Set(s string) (err error) {
	*r.p, err = ParseRampStrategy(s)
	return err
}

// Length is how long one tier lasts: Requests arrivals, or, when Duration is > 0, the arrivals
// planned within Duration.
type Length struct {
	Requests int
	Duration time.Duration
}

// Params declares the length's settings, bound to l.
func (l *Length) Params() []param.Param {
	return []param.Param{
		param.Int(FieldRequests, &l.Requests, "requests of the tier (vLLM's --num-prompts)"),
		param.Duration(FieldDuration, &l.Duration, fmt.Sprintf("tier length instead of %v, e.g. 30s or 5m: arrivals planned within it are sent", field.Ref(FieldRequests))).
			Default(fmt.Sprintf("none: %v", field.Ref(FieldRequests))),
	}
}

// Resolve returns the length the params read (Params, applied): by duration when one was
// given, the count then 0, by count otherwise; a duration given must be > 0, a count >= 1; a
// count and a duration are not both given.
func (l Length) Resolve(ps []param.Param) (Length, []error) {
	if param.IsGiven(ps, FieldDuration) {
		var errs []error
		if l.Duration <= 0 {
			errs = append(errs, field.Errorf(FieldDuration, "must be > 0, got %v", l.Duration))
		}
		if param.IsGiven(ps, FieldRequests) {
			errs = append(errs, field.Sentencef(FieldDuration, "give %v or %v, not both", field.Ref(FieldRequests), field.Ref(FieldDuration)))
		}
		return Length{Duration: l.Duration}, errs
	}
	if l.Requests < 1 {
		return Length{Requests: l.Requests}, []error{field.Errorf(FieldRequests, "must be >= 1, got %d", l.Requests)}
	}
	return Length{Requests: l.Requests}, nil
}
