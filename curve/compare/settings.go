package compare

import "github.com/loadcurve/loadcurve/internal/param"

// Names of the settings that have no rule of their own to report; they are the words a user
// knows them by.
const (
	FieldForce    = "force"
	FieldCurrency = "currency"
)

// DefaultConfidence is the confidence of the paired intervals nobody chose.
const DefaultConfidence = 0.95

// Settings are a comparison's options as a user gives them: whether to compare results that
// are not comparable, the two sides' hourly costs (a cost that was not given is none) with
// their currency, and the confidence of the paired intervals. Options reads them.
type Settings struct {
	Force        bool
	CostA, CostB float64
	Currency     string
	Confidence   float64
}

// DefaultSettings returns the settings nobody chose.
func DefaultSettings() Settings { return Settings{Confidence: DefaultConfidence} }

// Params declares the settings, bound to s.
func (s *Settings) Params() []param.Param {
	return []param.Param{
		param.Bool(FieldForce, &s.Force, "compare even when the results are not comparable (output stamped NOT COMPARABLE)"),
		param.Float(FieldCostA, &s.CostA, "A's running cost per hour (enables the cost ledger)").Default("none: no cost ledger"),
		param.Float(FieldCostB, &s.CostB, "B's running cost per hour").Default("none"),
		param.String(FieldCurrency, &s.Currency, "currency label"),
		param.Float(FieldConfidence, &s.Confidence, "confidence level of the paired intervals"),
	}
}

// Options returns the options the settings give, the params (Params, applied) saying which
// costs were given, and every problem with them at once (Validate's, then CostsOf's).
func (s Settings) Options(ps []param.Param) (Options, []error) {
	o := Options{Confidence: s.Confidence, Force: s.Force}
	given := func(name string, v float64) *float64 {
		if !param.IsGiven(ps, name) {
			return nil
		}
		return &v
	}
	costs, errs := CostsOf(given(FieldCostA, s.CostA), given(FieldCostB, s.CostB), s.Currency)
	o.Costs = costs
	return o, append(o.Validate(), errs...)
}
