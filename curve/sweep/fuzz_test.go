package sweep_test

import (
	"math"
	"slices"
	"testing"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/field"
)

// FuzzParseRates: ParseRates never panics, and what it accepts is either auto or a non-empty,
// strictly ascending list of positive rates (only the last may be +Inf), at most MaxRateTiers
// long, whose String form parses back to the same rates.
func FuzzParseRates(f *testing.F) {
	for _, s := range []string{"1,2,4,8", "1:64:geom:7", "2:20:lin:10", "auto", "AUTO", "0.5,1:8:geom:4,inf", "inf",
		"inf,1", "1,1", "2,1", "0", "-1", "1:1:lin:2", "1:2:lin:1", "1:2:lin:10000000", "1:2:foo:3", "1:2", "",
		" , ", "1e308:1.7e308:geom:1000", "5e-324:1:geom:1000", "NaN", "1:inf:lin:3", "auto,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := sweep.ParseRates(s)
		if err != nil {
			if fe := field.Of(err); fe == nil || fe.Name != sweep.FieldRates {
				t.Fatalf("%q: the error does not name the rates: %v", s, err)
			}
			return
		}
		if r.Auto {
			if len(r.List) != 0 || r.String() != "auto" {
				t.Fatalf("%q: auto with list %v, prints %q", s, r.List, r.String())
			}
			return
		}
		if len(r.List) == 0 || len(r.List) > sweep.MaxRateTiers {
			t.Fatalf("%q: %d tiers", s, len(r.List))
		}
		for i, v := range r.List {
			if math.IsNaN(v) || v <= 0 || (math.IsInf(v, 1) && i != len(r.List)-1) || (i > 0 && v <= r.List[i-1]) {
				t.Fatalf("%q: rate %v at %d of %v", s, v, i, r.List)
			}
		}
		back, err := sweep.ParseRates(r.String())
		if err != nil || back.Auto || !slices.Equal(back.List, r.List) {
			t.Fatalf("%q: %v prints as %q, which parses to %+v (%v)", s, r.List, r.String(), back, err)
		}
	})
}
