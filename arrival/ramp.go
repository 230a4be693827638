package arrival

import (
	"fmt"
	"strconv"

	"github.com/loadcurve/loadcurve/internal/field"
)

// RampStrategy selects how the request rate changes over a tier. The names
// and semantics follow vLLM's ramp-up strategies.
type RampStrategy int

const (
	// RampNone keeps the rate constant at Spec.Rate.
	RampNone RampStrategy = iota
	// RampLinear moves the rate linearly from Spec.RampStart to Spec.RampEnd.
	RampLinear
	// RampExponential moves the rate geometrically from Spec.RampStart to
	// Spec.RampEnd.
	RampExponential
)

// String returns the flag value of the strategy: "none", "linear" or
// "exponential"; an unknown value prints as RampStrategy(n).
func (r RampStrategy) String() string {
	switch r {
	case RampNone:
		return "none"
	case RampLinear:
		return "linear"
	case RampExponential:
		return "exponential"
	default:
		return "RampStrategy(" + strconv.Itoa(int(r)) + ")"
	}
}

// ParseRampStrategy parses a ramp strategy. The empty string and "none" mean RampNone;
// "linear" and "exponential" select a ramp. Anything else is a field.Error naming FieldRamp.
func ParseRampStrategy(s string) (RampStrategy, error) {
	switch s {
	case "", "none":
		return RampNone, nil
	case "linear":
		return RampLinear, nil
	case "exponential":
		return RampExponential, nil
	default:
		return RampNone, field.Errorf(FieldRamp, "must be none, linear or exponential, got %q", s)
	}
}

// MarshalText implements encoding.TextMarshaler, so result files carry the
// strategy by name.
func (r RampStrategy) MarshalText() ([]byte, error) {
	if !r.valid() {
		return nil, fmt.Errorf("arrival: cannot marshal unknown ramp strategy %s", r)
	}
	return []byte(r.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with the rules of
// ParseRampStrategy.
func (r *RampStrategy) UnmarshalText(text []byte) error {
	v, err := ParseRampStrategy(string(text))
	if err != nil {
		return fmt.Errorf("arrival: %w", err)
	}
	*r = v
	return nil
}

func (r RampStrategy) valid() bool {
	return r == RampNone || r == RampLinear || r == RampExponential
}
