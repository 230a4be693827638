package arrival

import (
	"math"
	"strconv"
	"strings"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Names of the inputs of an arrival process, as its errors name them (field.Error).
const (
	FieldRate       = "rate"
	FieldBurstiness = "burstiness"
	FieldRamp       = "ramp strategy"
	FieldRampStart  = "ramp start rate"
	FieldRampEnd    = "ramp end rate"
)

// Burstiness is the shape b of the gamma-distributed gaps between arrivals: 1 is Poisson
// (vLLM's default), below 1 burstier, +Inf constant spacing. It owns its rules: what is valid
// (Validate), its default (OrDefault: the zero value means "not given"), its text (Parse, and
// String, which gives the same text for equal values however they were written: "1" and "1.0"
// are both "1").
type Burstiness float64

// DefaultBurstiness is the burstiness of a Poisson process, vLLM's default.
const DefaultBurstiness Burstiness = 1

// ParseBurstiness reads a burstiness: a number > 0, or inf (any case). A zero, negative or
// unreadable value is a field.Error naming FieldBurstiness.
func ParseBurstiness(s string) (Burstiness, error) {
	v, err := parsePositive(FieldBurstiness, s)
	if err != nil {
		return 0, err
	}
	return Burstiness(v), nil
}

// ParseRate reads a request rate in requests/s: a number > 0, or inf (every request at T0).
// A zero, negative or unreadable value is a field.Error naming FieldRate.
func ParseRate(s string) (float64, error) { return parsePositive(FieldRate, s) }

func parsePositive(name, s string) (float64, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "inf") {
		return math.Inf(1), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || !(v > 0) {
		return 0, field.Errorf(name, "must be a number > 0 or inf, got %q", s)
	}
	return v, nil
}

// Validate returns nil for a burstiness > 0 or +Inf, and otherwise a field.Error naming
// FieldBurstiness.
func (b Burstiness) Validate() error {
	if math.IsNaN(float64(b)) || b <= 0 {
		return field.Errorf(FieldBurstiness, "must be > 0 or inf (1 = Poisson, inf = constant spacing), got %s", b)
	}
	return nil
}

// OrDefault returns b, or DefaultBurstiness when b is zero (not given).
func (b Burstiness) OrDefault() Burstiness {
	if b == 0 {
		return DefaultBurstiness
	}
	return b
}

// String is the shortest decimal that reads back as b, "inf" for +Inf.
func (b Burstiness) String() string { return fmtNum(float64(b)) }
