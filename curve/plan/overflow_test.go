package plan_test

import (
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/plan"
)

// TestHugePeaksAreRefused: a peak whose replica count does not fit the count a plan keeps was
// once converted to an int that overflowed (`plan --peak 1e20` planned 1 replica). It is
// refused, naming the replicas it would need; a peak at the limit is still planned exactly.
func TestHugePeaksAreRefused(t *testing.T) {
	d := workedDeployment
	d.OperatingRate, d.Capacity = 10, 0
	cases := []struct {
		name  string
		peak  float64
		want  int    // the replicas planned; 0: refused
		says  string // what the refusal says
		opts  plan.Options
		twoOf bool // CompareDeployments A with a copy of itself
	}{
		{name: "1e20 req/s", peak: 1e20, says: "a peak of 1e+20 req/s needs 1e+19 replicas of A at its operating rate of 10 req/s, more than the 1000000000 a plan counts"},
		{name: "the largest float", peak: 1.7e308, says: "needs 1.7e+307 replicas"},
		{name: "one replica above the limit", peak: 10*plan.MaxReplicas + 10, says: "more than the 1000000000"},
		{name: "at the limit", peak: 10 * plan.MaxReplicas, want: plan.MaxReplicas},
		{name: "compare: within the limit at the peak, beyond it at 100 times the peak", peak: 2e8, twoOf: true,
			says: "(100 times the peak of 200000000 req/s, the highest level compared)"},
		{name: "compare: within the limit at its highest level", peak: 1e8, twoOf: true, opts: plan.Options{MaxScale: 10}, want: 10_000_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r plan.Result
			var err error
			if c.twoOf {
				b := d
				b.Name = "B"
				var cmp plan.Comparison
				cmp, err = plan.CompareDeployments(d, b, plan.PeakForecast(c.peak), c.opts)
				r = cmp.A
			} else {
				r, err = plan.Plan(d, plan.PeakForecast(c.peak), c.opts)
			}
			if c.want == 0 {
				if err == nil {
					t.Fatalf("planned %d replicas for a peak of %g req/s, want a refusal", r.PeakReplicas, c.peak)
				}
				if !strings.Contains(err.Error(), c.says) {
					t.Errorf("%q does not say %q", err, c.says)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.PeakReplicas != c.want {
				t.Errorf("%d replicas, want %d", r.PeakReplicas, c.want)
			}
		})
	}
}
