package measure

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// selectRanks must put exactly the sorted value at every requested rank, on inputs that break
// naive quickselects: sorted, reversed, all equal, few distinct values, organ pipe.
func TestSelectRanksAgreesWithSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	shapes := []struct {
		name string
		gen  func(n int) []time.Duration
	}{
		{"random", func(n int) []time.Duration { return fill(n, func(int) int64 { return rng.Int64N(1e9) }) }},
		{"sorted", func(n int) []time.Duration { return fill(n, func(i int) int64 { return int64(i) }) }},
		{"reversed", func(n int) []time.Duration { return fill(n, func(i int) int64 { return int64(n - i) }) }},
		{"all equal", func(n int) []time.Duration { return fill(n, func(int) int64 { return 5e6 }) }},
		{"few distinct", func(n int) []time.Duration { return fill(n, func(int) int64 { return rng.Int64N(3) * 1e6 }) }},
		{"organ pipe", func(n int) []time.Duration { return fill(n, func(i int) int64 { return int64(min(i, n-i)) }) }},
	}
	ps := []float64{0, 0.1, 25, 50, 90, 95, 99, 99.9, 100}
	for _, sh := range shapes {
		for _, n := range []int{0, 1, 2, 3, 10, 24, 25, 26, 100, 1000, 20000} {
			x := sh.gen(n)
			want := slices.Clone(x)
			slices.Sort(want)
			got := describe(x, 1e6, ps)
			for _, k := range ranksFor(n, ps) {
				if x[k] != want[k] {
					t.Fatalf("%s n=%d: rank %d holds %v, sorted has %v", sh.name, n, k, x[k], want[k])
				}
			}
			ref := withOrder(moments(want, 1e6, len(ps)), want, 1e6, ps)
			if n > 0 && (got.Median != ref.Median || !sameMaps(got.Percentiles, ref.Percentiles)) {
				t.Fatalf("%s n=%d: stats %+v, from a full sort %+v", sh.name, n, got, ref)
			}
			if !slices.Equal(sortedCopy(x), want) {
				t.Fatalf("%s n=%d: selection lost or duplicated values", sh.name, n)
			}
		}
	}
}

// Past the depth limit a range is sorted outright (introselect), still correct.
func TestSelectRangeDepthFallback(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	x := fill(5000, func(int) int64 { return rng.Int64N(1000) })
	want := sortedCopy(x)
	seed := uint64(1)
	ranks := []int{0, 17, 2500, 4999}
	selectRange(x, 0, len(x), ranks, 1, &seed)
	for _, k := range ranks {
		if x[k] != want[k] {
			t.Errorf("rank %d holds %v, want %v", k, x[k], want[k])
		}
	}
}

func fill(n int, f func(i int) int64) []time.Duration {
	x := make([]time.Duration, n)
	for i := range x {
		x[i] = time.Duration(f(i))
	}
	return x
}

func sortedCopy(x []time.Duration) []time.Duration {
	c := slices.Clone(x)
	slices.Sort(c)
	return c
}

func sameMaps(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
