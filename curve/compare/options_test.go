package compare_test

import (
	"math"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/compare"
	"github.com/loadcurve/loadcurve/internal/field"
)

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		conf float64
		want string // "" valid
	}{
		{0.95, ""},
		{0.5, ""},
		{0, "must be in (0,1), got 0"}, // as a user gave it: Results alone takes 0 for 0.95
		{1, "must be in (0,1), got 1"},
		{math.NaN(), "must be in (0,1), got NaN"},
	} {
		errs := compare.Options{Confidence: tc.conf}.Validate()
		if tc.want == "" {
			if len(errs) > 0 {
				t.Errorf("confidence %v: %v", tc.conf, errs)
			}
			continue
		}
		if len(errs) != 1 || field.Of(errs[0]) == nil || field.Of(errs[0]).Name != compare.FieldConfidence || field.Of(errs[0]).Msg != tc.want {
			t.Errorf("confidence %v: %v, want %s: %s", tc.conf, errs, compare.FieldConfidence, tc.want)
		}
	}
}

func TestCostsOf(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	for _, tc := range []struct {
		name  string
		a, b  *float64
		costs *compare.Costs
		errs  []string // "FIELD: message" of each refusal
	}{
		{"neither: no ledger", nil, nil, nil, nil},
		{"both", v(3), v(0), &compare.Costs{A: 3, B: 0, Currency: "EUR"}, nil},
		{"A alone", v(3), nil, nil, []string{compare.FieldCostB + ": is required for the cost ledger"}},
		{"B alone, negative", nil, v(-1), nil, []string{compare.FieldCostA + ": is required for the cost ledger", compare.FieldCostB + ": must be a finite number >= 0, got -1"}},
		{"NaN", v(math.NaN()), v(1), nil, []string{compare.FieldCostA + ": must be a finite number >= 0, got NaN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			costs, errs := compare.CostsOf(tc.a, tc.b, "EUR")
			var got []string
			for _, err := range errs {
				got = append(got, err.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.errs, "\n") {
				t.Errorf("errors %q, want %q", got, tc.errs)
			}
			if (costs == nil) != (tc.costs == nil) || (costs != nil && *costs != *tc.costs) {
				t.Errorf("costs %+v, want %+v", costs, tc.costs)
			}
		})
	}
}
