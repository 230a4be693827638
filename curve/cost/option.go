package cost

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Field names used by [FieldError]. They are the flag suffixes of the CLI:
// with the prefix "a" the cost per hour is --a-cost-per-hour.
const (
	FieldCostPerHour    = "cost-per-hour"
	FieldRawThroughput  = "raw-throughput"
	FieldCompliantShare = "compliant-share"
	FieldMaintenance    = "maintenance"
)

// ErrNoEffectiveThroughput is returned (wrapped) when a unit cost is asked of
// an option whose effective throughput is zero: the cost per effective token
// is then unbounded, and the package reports that instead of +Inf.
var ErrNoEffectiveThroughput = errors.New("effective throughput is 0")

// Option is one deployment option as priced and measured.
type Option struct {
	// Name labels the option in messages and output (e.g. "H100 TP8").
	Name string
	// CostPerHour is the total running cost per hour, in the ledger's currency.
	CostPerHour float64
	// RawThroughput is the raw output throughput in tokens per second: every
	// output token received, whatever the request's outcome.
	RawThroughput float64
	// CompliantShare is the compliant token share in [0, 1]: output tokens of
	// compliant requests divided by raw output tokens. Not a request share.
	CompliantShare float64
	// Maintenance is the recurring extra maintenance cost per period that is
	// not already part of CostPerHour (regression after upgrades, operations).
	Maintenance float64
}

// FieldError is one invalid field of an [Option]. Validation returns every
// FieldError at once, so a user can fix all of them in one go.
type FieldError struct {
	// Option is the option's name ([Option.Name]); may be empty.
	Option string
	// Field is one of the Field* constants.
	Field string
	// Value is the rejected value.
	Value float64
	// Allowed says what would be accepted.
	Allowed string
}

// Error implements error: `option "A": cost-per-hour = -5: must be a finite
// number ≥ 0` (without the option's name when it has none). A command that
// knows how its user gave the field writes it with [FieldError.Render].
func (e *FieldError) Error() string {
	v := strconv.FormatFloat(e.Value, 'g', -1, 64)
	if e.Option != "" {
		return fmt.Sprintf("option %q: %s = %s: must be %s", e.Option, e.Field, v, e.Allowed)
	}
	return fmt.Sprintf("%s = %s: must be %s", e.Field, v, e.Allowed)
}

// Render writes the error for a reader who knows the field as input (a flag, a
// file's key): "INPUT = -5: must be a finite number ≥ 0".
func (e *FieldError) Render(input string) string {
	return fmt.Sprintf("%s = %s: must be %s", input, strconv.FormatFloat(e.Value, 'g', -1, 64), e.Allowed)
}

// Validate checks every field and returns all problems (nil when valid), each
// a *FieldError naming the option by [Option.Name] and the field by a Field*
// constant.
func (o Option) Validate() []error {
	var errs []error
	add := func(field string, v float64, allowed string) {
		errs = append(errs, &FieldError{Option: o.Name, Field: field, Value: v, Allowed: allowed})
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if !finite(o.CostPerHour) || o.CostPerHour < 0 {
		add(FieldCostPerHour, o.CostPerHour, "a finite number ≥ 0")
	}
	if !finite(o.RawThroughput) || o.RawThroughput <= 0 {
		add(FieldRawThroughput, o.RawThroughput, "a finite number of tokens per second > 0")
	}
	if !finite(o.CompliantShare) || o.CompliantShare < 0 || o.CompliantShare > 1 {
		add(FieldCompliantShare, o.CompliantShare, "a token share between 0 and 1 (0.95 means 95 %)")
	}
	if !finite(o.Maintenance) || o.Maintenance < 0 {
		add(FieldMaintenance, o.Maintenance, "a finite number ≥ 0")
	}
	return errs
}

// EffectiveThroughput is the effective (compliant) output throughput in
// tokens per second: RawThroughput · CompliantShare.
func (o Option) EffectiveThroughput() float64 {
	return o.RawThroughput * o.CompliantShare
}

// CostPerMillionEffective is the running cost per million effective tokens:
// CostPerHour / (EffectiveThroughput · 3600) · 10⁶. It returns an error
// wrapping [ErrNoEffectiveThroughput] when the effective throughput is zero,
// and the validation errors when the option is invalid.
func (o Option) CostPerMillionEffective() (float64, error) {
	if errs := o.Validate(); len(errs) > 0 {
		return 0, fmt.Errorf("cost per million effective tokens: %w", errors.Join(errs...))
	}
	eff := o.EffectiveThroughput()
	if eff == 0 {
		return 0, fmt.Errorf("cost per million effective tokens of option %q: %w (compliant share %g)",
			o.Name, ErrNoEffectiveThroughput, o.CompliantShare)
	}
	return o.CostPerHour / (eff * secondsPerHour) * perMillion, nil
}

const (
	secondsPerHour = 3600
	perMillion     = 1e6
)
