package measure

import (
	"math/bits"
	"slices"
	"sort"
)

// selectRanks reorders x so that x[k] holds the value it would hold if x were sorted, for every
// k in ranks (ascending, distinct, each in [0, len(x))). That is all the statistics read, and
// it costs O(n·log(len(ranks))) expected instead of a sort's O(n·log n): a quickselect that
// follows several ranks at once, with a three-way partition (durations repeat a lot: equal
// values end in one block and are never touched again) and pivots drawn from a fixed-seed
// generator, falling back to a full sort of a range past a depth of 2·log2(n), so the worst
// case stays O(n·log n) (introselect).
func selectRanks[T sample](x []T, ranks []int) {
	if len(x) == 0 || len(ranks) == 0 {
		return
	}
	rng := uint64(0x9E3779B97F4A7C15)
	selectRange(x, 0, len(x), ranks, 2*bits.Len(uint(len(x))), &rng)
}

func selectRange[T sample](x []T, lo, hi int, ranks []int, depth int, rng *uint64) {
	for len(ranks) > 0 {
		if hi-lo <= 24 {
			slices.Sort(x[lo:hi])
			return
		}
		if depth == 0 {
			slices.Sort(x[lo:hi])
			return
		}
		depth--
		lt, gt := partition3(x, lo, hi, pivot(x, lo, hi, rng))
		// x[lo:lt] < pivot, x[lt:gt] == pivot (final), x[gt:hi] > pivot.
		i := sort.SearchInts(ranks, lt)
		j := sort.SearchInts(ranks, gt)
		left, right := ranks[:i], ranks[j:]
		if lt-lo < hi-gt { // recurse into the smaller side, loop on the larger
			selectRange(x, lo, lt, left, depth, rng)
			lo, ranks = gt, right
		} else {
			selectRange(x, gt, hi, right, depth, rng)
			hi, ranks = lt, left
		}
	}
}

// pivot is the median of three elements of x[lo:hi] drawn with a xorshift generator.
func pivot[T sample](x []T, lo, hi int, rng *uint64) T {
	n := uint64(hi - lo)
	draw := func() T {
		*rng ^= *rng << 13
		*rng ^= *rng >> 7
		*rng ^= *rng << 17
		return x[lo+int(*rng%n)]
	}
	a, b, c := draw(), draw(), draw()
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}

// partition3 is Dijkstra's three-way partition of x[lo:hi] around p.
func partition3[T sample](x []T, lo, hi int, p T) (lt, gt int) {
	lt, i, gt := lo, lo, hi
	for i < gt {
		switch v := x[i]; {
		case v < p:
			x[lt], x[i] = v, x[lt]
			lt++
			i++
		case v > p:
			gt--
			x[i], x[gt] = x[gt], v
		default:
			i++
		}
	}
	return lt, gt
}

// ranksFor lists the ranks that the median and the percentiles ps of n values read.
func ranksFor(n int, ps []float64) []int {
	if n == 0 {
		return nil
	}
	rs := make([]int, 0, 2*len(ps)+2)
	add := func(i int) {
		if i >= 0 && i < n {
			rs = append(rs, i)
		}
	}
	add(n / 2)
	if n%2 == 0 {
		add(n/2 - 1)
	}
	for _, p := range ps {
		if i, ok := percentileRank(n, p); ok {
			add(i)
			add(i + 1)
		}
	}
	slices.Sort(rs)
	return slices.Compact(rs)
}
