package curve_test

import (
	"math"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
)

func TestWilson(t *testing.T) {
	// References by hand from the Wilson formula with z = 1.959964 (95 %),
	// z² = 3.841459:
	//   0/10:   lo = 0; hi = (z²/n)/(1+z²/n) = 0.3841459/1.3841459 = 0.27753
	//   10/10:  lo = 1/(1+z²/n) = 0.72247; hi = 1
	//   5/10:   centre 0.5; half = z/1.3841459·√(0.025 + z²/400) = 1.41602·0.186021 = 0.26341
	//   81/263: p̂ = 0.307985, z²/n = 0.0146063; centre = (p̂ + 0.0073032)/1.0146063 = 0.310749;
	//           half = z/1.0146063·√(p̂(1−p̂)/263 + z²/(4·263²)) = 1.931746·0.0287101 = 0.055461
	//   9/10:   centre = (0.9 + 0.1920730)/1.3841459 = 0.788985; half = 1.41602·√(0.009 + 0.0096037) = 0.193138
	//   0/0:    no information, [0, 1]
	// At 99 % (z = 2.575829, z² = 6.634897), 5/10: half = z/1.6634897·√(0.025 + z²/400) = 1.548449·0.203929 = 0.315774
	tests := []struct {
		s, n           int
		conf           float64
		wantLo, wantHi float64
	}{
		{0, 10, 0.95, 0, 0.27753},
		{10, 10, 0.95, 0.72247, 1},
		{5, 10, 0.95, 0.23659, 0.76341},
		{81, 263, 0.95, 0.25529, 0.36621},
		{9, 10, 0.95, 0.59585, 0.98212},
		{0, 0, 0.95, 0, 1},
		{5, 10, 0.99, 0.5 - 0.31577, 0.5 + 0.31577},
	}
	for _, tt := range tests {
		lo, hi := curve.Wilson(tt.s, tt.n, tt.conf)
		// The references carry 5 decimals: allow half a unit of the last one
		// plus the rounding of the intermediate figures above.
		const tol = 2e-5
		if math.Abs(lo-tt.wantLo) > tol || math.Abs(hi-tt.wantHi) > tol {
			t.Errorf("Wilson(%d, %d, %v) = [%.5f, %.5f], want [%.5f, %.5f]", tt.s, tt.n, tt.conf, lo, hi, tt.wantLo, tt.wantHi)
		}
	}
}

func TestWilsonProperties(t *testing.T) {
	for n := 1; n <= 60; n++ {
		for s := 0; s <= n; s++ {
			p := float64(s) / float64(n)
			lo, hi := curve.Wilson(s, n, 0.95)
			if !(0 <= lo && lo <= p && p <= hi && hi <= 1) {
				t.Fatalf("Wilson(%d, %d) = [%v, %v] does not hold %v inside [0, 1]", s, n, lo, hi, p)
			}
			// Symmetry: the interval of failures mirrors the one of successes.
			flo, fhi := curve.Wilson(n-s, n, 0.95)
			if math.Abs(lo-(1-fhi)) > 1e-12 || math.Abs(hi-(1-flo)) > 1e-12 {
				t.Fatalf("Wilson(%d, %d) not symmetric", s, n)
			}
			// Higher confidence, wider interval.
			lo99, hi99 := curve.Wilson(s, n, 0.99)
			if lo99 > lo || hi99 < hi {
				t.Fatalf("Wilson(%d, %d): 99 %% [%v, %v] inside 95 %% [%v, %v]", s, n, lo99, hi99, lo, hi)
			}
		}
	}
}

func TestWilsonPanics(t *testing.T) {
	for _, tt := range []struct {
		s, n int
		conf float64
	}{{11, 10, 0.95}, {-1, 10, 0.95}, {1, -1, 0.95}, {5, 10, 0}, {5, 10, 1}, {5, 10, math.NaN()}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Wilson(%d, %d, %v) did not panic", tt.s, tt.n, tt.conf)
				}
			}()
			curve.Wilson(tt.s, tt.n, tt.conf)
		}()
	}
}

// TestNeededEffective: the sample at which a share's Wilson interval excludes the target, for a
// share of 1 ⌈z²·q/(1 − q)⌉ (381 for 99 % at 95 %) and, by symmetry, for a share of 0 ⌈z²·(1 −
// q)/q⌉; a share equal to the target, or outside [0, 1], has none.
func TestNeededEffective(t *testing.T) {
	z2 := 1.959964 * 1.959964
	for _, tc := range []struct {
		share, target, want float64
	}{
		{1, 0.99, math.Ceil(z2 * 0.99 / 0.01)},
		{0, 0.01, math.Ceil(z2 * 0.99 / 0.01)},
		{1, 0.5, math.Ceil(z2)},
	} {
		got, err := curve.NeededEffective(tc.share, tc.target, 0.95)
		if err != nil || got != tc.want {
			t.Errorf("NeededEffective(%v, %v) = %v, %v; want %v", tc.share, tc.target, got, err, tc.want)
		}
	}
	for _, share := range []float64{0.99, -0.1, 1.1} {
		if n, err := curve.NeededEffective(share, 0.99, 0.95); err == nil {
			t.Errorf("NeededEffective(%v, 0.99) = %v, want an error", share, n)
		}
	}
	// Between: the size decides and one request fewer does not.
	n, err := curve.NeededEffective(0.995, 0.99, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if lo, _ := curve.WilsonN(0.995, n, 0.95); lo < 0.99 {
		t.Errorf("%v effective requests do not decide (lower end %v)", n, lo)
	}
	if lo, _ := curve.WilsonN(0.995, n-1, 0.95); lo >= 0.99 {
		t.Errorf("%v effective requests decide already (lower end %v)", n-1, lo)
	}
}
