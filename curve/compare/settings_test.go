package compare_test

import (
	"testing"

	"github.com/loadcurve/loadcurve/curve/compare"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// TestSettingsOptions: a cost not given is none, and a cost given as 0 is a cost; the
// problems are Validate's, then CostsOf's.
func TestSettingsOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		given map[string]string
		costs *compare.Costs
		conf  float64
		bad   []string // the fields refused, in order
	}{
		{name: "nothing given", conf: 0.95},
		{name: "both costs, one zero", given: map[string]string{compare.FieldCostA: "0", compare.FieldCostB: "2.5", compare.FieldCurrency: "EUR"},
			costs: &compare.Costs{A: 0, B: 2.5, Currency: "EUR"}, conf: 0.95},
		{name: "one cost", given: map[string]string{compare.FieldCostA: "1"}, conf: 0.95, bad: []string{compare.FieldCostB}},
		{name: "bad confidence and cost", given: map[string]string{compare.FieldConfidence: "1", compare.FieldCostB: "-1"}, conf: 1,
			bad: []string{compare.FieldConfidence, compare.FieldCostA, compare.FieldCostB}},
		{name: "forced", given: map[string]string{compare.FieldForce: "true", compare.FieldConfidence: "0.9"}, conf: 0.9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := compare.DefaultSettings()
			ps := s.Params()
			if errs := param.Apply(ps, func(name string) ([]string, bool) {
				if v, ok := tc.given[name]; ok {
					return []string{v}, true
				}
				return nil, false
			}); len(errs) > 0 {
				t.Fatal(errs)
			}
			o, errs := s.Options(ps)
			var got []string
			for _, err := range errs {
				got = append(got, field.Of(err).Name)
			}
			if len(got) != len(tc.bad) {
				t.Fatalf("refused %v, want %v", got, tc.bad)
			}
			for i := range got {
				if got[i] != tc.bad[i] {
					t.Errorf("refusal %d names %q, want %q", i, got[i], tc.bad[i])
				}
			}
			if len(errs) > 0 {
				return
			}
			if o.Confidence != tc.conf || o.Force != (tc.given[compare.FieldForce] == "true") {
				t.Errorf("options %+v, want confidence %v", o, tc.conf)
			}
			if (o.Costs == nil) != (tc.costs == nil) || o.Costs != nil && *o.Costs != *tc.costs {
				t.Errorf("costs %+v, want %+v", o.Costs, tc.costs)
			}
		})
	}
}
