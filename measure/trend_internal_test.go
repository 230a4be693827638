package measure

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// White-box checks of the order statistics the trend test rests on.

func TestMedianMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n < 120; n++ {
		for range 10 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(rng.IntN(7)) // many ties
			}
			c := slices.Clone(xs)
			slices.Sort(c)
			want := c[n/2]
			if n%2 == 0 {
				want = (c[n/2-1] + c[n/2]) / 2
			}
			if got := medianInPlace(xs); got != want {
				t.Fatalf("median of %v = %v, want %v", c, got, want)
			}
		}
	}
	if medianInPlace(nil) != 0 {
		t.Error("medianInPlace(nil) != 0")
	}
}

func TestRanksAverageTies(t *testing.T) {
	got := ranks([]float64{10, 30, 20, 30, 10, 40})
	want := []float64{1.5, 4.5, 3, 4.5, 1.5, 6}
	if !slices.Equal(got, want) {
		t.Errorf("ranks = %v, want %v", got, want)
	}
}

func TestMannKendallSmall(t *testing.T) {
	// x = 1, 3, 2, 4 against t = 0..3: pairs (i<j) concordant except (3, 2):
	// S = 5 − 1 = 4; Var(S) = n(n−1)(2n+5)/18 = 4·3·13/18 = 8.667.
	s, v := mannKendall([]float64{0, 1, 2, 3}, []float64{1, 3, 2, 4})
	if s != 4 || v < 8.666 || v > 8.667 {
		t.Errorf("S = %d, Var = %v; want 4, 8.667", s, v)
	}
	// Ties: x = 1, 1, 2: one tie group of 2 removes 2·1·9 = 18: Var = (3·2·11 − 18)/18 = 2.667.
	s, v = mannKendall([]float64{0, 1, 2}, []float64{1, 1, 2})
	if s != 2 || v < 2.666 || v > 2.667 {
		t.Errorf("S = %d, Var = %v; want 2, 2.667", s, v)
	}
}
