package cost_test

import (
	"testing"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/cost"
)

// TestMeasured: an option takes its raw throughput and compliant token share from a result's
// figures, and its name says at which rate and where they were measured.
func TestMeasured(t *testing.T) {
	for _, tc := range []struct {
		f         curve.Figures
		raw, comp float64
		name      string
	}{
		{curve.Figures{Rate: 12.345, RawOutputThroughput: 1000, CompliantOutputThroughput: 900, Source: "confirmation tier 4"}, 1000, 0.9, "A (12.3 req/s, confirmation tier 4)"},
		{curve.Figures{Rate: 0.5, RawOutputThroughput: 200, CompliantOutputThroughput: 300, Source: "tier 1, steady state"}, 200, 1, "A (0.5 req/s, tier 1, steady state)"},
		{curve.Figures{Rate: 1234.5, RawOutputThroughput: 10, CompliantOutputThroughput: 5, Source: "the curve interpolated"}, 10, 0.5, "A (1.23e+03 req/s, the curve interpolated)"},
	} {
		o := cost.Option{Name: "A", CostPerHour: 7, Maintenance: 2}.Measured(tc.f)
		want := cost.Option{Name: tc.name, CostPerHour: 7, Maintenance: 2, RawThroughput: tc.raw, CompliantShare: tc.comp}
		if o != want {
			t.Errorf("%+v: %+v, want %+v", tc.f, o, want)
		}
	}
}
