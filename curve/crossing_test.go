package curve_test

import (
	"math"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/internal/queueing"
)

// The capacity between two points is where the miss rate, straight in log(miss) against
// log(rate), reaches the target's: exact for a miss rate that is a power of the rate, within a
// percent of an M/D/8 queue's true capacity from points 20 % apart (where the chord of the share
// falls further short), between the two points always, and linear where a point's sample holds
// too few misses to place its logarithm, the lighter point missed too little, or there is no
// rate to take one of.
func TestCrossing(t *testing.T) {
	const q = 0.99
	pt := func(rate, fit, eff float64) *curve.PointVerdict {
		return &curve.PointVerdict{Rate: rate, Fit: fit, EffectiveRequests: eff}
	}
	power := func(r float64) float64 { return 1 - 0.01*math.Pow(r/11, 8) } // misses ∝ rate⁸, 1 % at 11
	for _, tc := range []struct {
		name     string
		l, n     *curve.PointVerdict
		want     float64
		tol      float64
		isLinear bool
	}{
		{"a power law, exactly", pt(10, power(10), 1000), pt(13, power(13), 1000), 11, 1e-9, false},
		{"a power law, one point on the target", pt(11, power(11), 1000), pt(13, power(13), 1000), 11, 1e-9, false},
		{"no miss at the lighter point: linear", pt(9, 1, 500), pt(13, 0.98, 500), 11, 1e-9, true},
		{"under a quarter of the target's misses at the lighter point: linear", pt(9, 0.998, 500), pt(13, 0.98, 500), 9 + 4*0.008/0.018, 1e-9, true},
		{"a third of the target's misses at the lighter point", pt(9, 0.997, 1000), pt(13, 0.98, 1000), 9 * math.Pow(13.0/9, math.Log(0.01/0.003)/math.Log(0.02/0.003)), 1e-9, false},
		{"too few misses in the lighter point's sample: linear", pt(9, 0.997, 500), pt(13, 0.98, 1000), 9 + 4*0.007/0.017, 1e-9, true},
		{"too few misses in the heavier point's sample: linear", pt(9, 0.997, 1000), pt(13, 0.98, 50), 9 + 4*0.007/0.017, 1e-9, true},
		{"no rate to take a logarithm of", pt(0, 1, 500), pt(2, 0.98, 500), 1, 1e-9, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, logs := curve.Crossing(tc.l, tc.n, q)
			if logs == tc.isLinear {
				t.Errorf("in logarithms %v, want %v", logs, !tc.isLinear)
			}
			if math.Abs(got-tc.want) > tc.tol {
				t.Errorf("crossing %v, want %v", got, tc.want)
			}
			if got < tc.l.Rate || got > tc.n.Rate {
				t.Errorf("crossing %v outside [%v, %v]", got, tc.l.Rate, tc.n.Rate)
			}
			linear := tc.l.Rate + (tc.l.Fit-q)/(tc.l.Fit-tc.n.Fit)*(tc.n.Rate-tc.l.Rate)
			if tc.isLinear && math.Abs(got-linear) > 1e-12 {
				t.Errorf("crossing %v, want the linear %v", got, linear)
			}
		})
	}
	// An M/D/8 queue (320 ms, a 70 ms wait budget) between its exact shares at 0.9 and 1.1 times
	// its capacity: the chord of the share lands short, the logarithms within a percent.
	const service, slots, wait = 320 * time.Millisecond, 8, 70 * time.Millisecond
	truth, err := queueing.MDCCapacity(service, slots, wait, q)
	if err != nil {
		t.Fatal(err)
	}
	share := func(r float64) float64 {
		s, err := queueing.MDCWaitCDF(r, service, slots, wait)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	l, n := pt(0.9*truth, share(0.9*truth), 1e4), pt(1.1*truth, share(1.1*truth), 1e4)
	got, _ := curve.Crossing(l, n, q)
	linear := l.Rate + (l.Fit-q)/(l.Fit-n.Fit)*(n.Rate-l.Rate)
	if math.Abs(got/truth-1) > 0.01 || !(math.Abs(got/truth-1) < math.Abs(linear/truth-1)) {
		t.Errorf("M/D/8 between %.4f (%.4f) and %.4f (%.4f): crossing %.4f, linear %.4f, true %.4f", l.Rate, l.Fit, n.Rate, n.Fit, got, linear, truth)
	}
}
