package cost

import (
	"fmt"
	"strings"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// Names of the settings besides an option's figures. A side's settings are named with the
// side's prefix (Side.Field): side A's result is "a", its tier "a-tier", its cost per hour
// "a-cost-per-hour".
const (
	FieldResult         = ""
	FieldTier           = "tier"
	FieldOneTime        = "one-time"
	FieldHoursPerPeriod = "hours-per-period"
	FieldCurrency       = "currency"
)

// Side is one side of a cost comparison as its user gives it: its cost, and its throughput and
// compliant share either as figures or read from a result (Result), at its operating point or
// at a tier (Tier >= 0).
type Side struct {
	Option
	Result string
	Tier   int
}

// NewSide returns the side called name ("A") before the user's settings: no result, its
// operating point.
func NewSide(name string) Side { return Side{Option: Option{Name: name}, Tier: -1} }

// Field names one of the side's settings: the side's prefix, its lower-case name, then the
// Field* constant ("a-cost-per-hour"); FieldResult is the prefix alone.
func (s Side) Field(name string) string {
	prefix := strings.ToLower(s.Name)
	if name == FieldResult {
		return prefix
	}
	return prefix + "-" + name
}

// Params declares the side's settings, bound to s.
func (s *Side) Params() []param.Param {
	n, f := s.Name, s.Field
	return []param.Param{
		param.Float(f(FieldCostPerHour), &s.CostPerHour, n+"'s total running cost per hour").Default("none: required"),
		param.Float(f(FieldRawThroughput), &s.RawThroughput, fmt.Sprintf("%s's raw output throughput, tok/s (or from %v)", n, field.Ref(f(FieldResult)))).Default("none"),
		param.Float(f(FieldCompliantShare), &s.CompliantShare, fmt.Sprintf("%s's compliant token share in [0,1] (or from %v)", n, field.Ref(f(FieldResult)))).Default("none"),
		param.Float(f(FieldMaintenance), &s.Maintenance, n+"'s extra maintenance cost per period"),
		param.String(f(FieldResult), &s.Result, fmt.Sprintf("take %s's throughput and share from a result directory or records file: at its verified operating point (the confirmation tier's measured figures), else the curve there, or %v", n, field.Ref(f(FieldTier)))),
		param.Int(f(FieldTier), &s.Tier, fmt.Sprintf("with %v: use this tier's steady-state figures instead", field.Ref(f(FieldResult)))).Default("none: the operating point"),
	}
}

// Check returns what the side lacks or has twice, the params (Params, applied) saying what was
// given: its cost per hour, and its throughput and share, which a result or the figures give,
// not both.
func (s Side) Check(ps []param.Param) []error {
	var errs []error
	if !param.IsGiven(ps, s.Field(FieldCostPerHour)) {
		errs = append(errs, field.Errorf(s.Field(FieldCostPerHour), "is required"))
	}
	if s.Result != "" {
		if param.IsGiven(ps, s.Field(FieldRawThroughput)) || param.IsGiven(ps, s.Field(FieldCompliantShare)) {
			errs = append(errs, field.Sentencef(s.Field(FieldResult), "give %v or %v/%v, not both",
				field.Ref(s.Field(FieldResult)), field.Ref(s.Field(FieldRawThroughput)), field.Ref(s.Field(FieldCompliantShare))))
		}
		return errs
	}
	for _, name := range []string{FieldRawThroughput, FieldCompliantShare} {
		if !param.IsGiven(ps, s.Field(name)) {
			errs = append(errs, field.Errorf(s.Field(name), "is required (or %v DIR to read it from a result)", field.Ref(s.Field(FieldResult))))
		}
	}
	return errs
}

// DefaultParams returns the ledger's settings nobody chose: a period of DefaultHoursPerPeriod.
func DefaultParams() Params { return Params{HoursPerPeriod: DefaultHoursPerPeriod} }

// Inputs declares the ledger's settings a user gives, bound to p.
func (p *Params) Inputs() []param.Param {
	return []param.Param{
		param.Float(FieldOneTime, &p.OneTime, "one-time investment of moving from A to B (migration, acceptance)"),
		param.Float(FieldHoursPerPeriod, &p.HoursPerPeriod, "hours in one period for maintenance and payback (730 = a month)"),
		param.String(FieldCurrency, &p.Currency, "currency label"),
	}
}
