package measure

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// Trend-test constants. The practical-size rule (TrendMinGrowthMs,
// TrendMinGrowthFraction) is a judgement, not statistics: a queue that grows
// by less than this over a whole tier does not make the tier unstable in any
// sense a capacity plan cares about.
const (
	// TrendAlpha is the one-sided significance level of the trend test.
	// It is strict because a tier flagged unstable becomes a knee.
	TrendAlpha = 0.01
	// TrendMinPoints is the fewest requests a tier needs for a trend test;
	// below it the tier is reported as not tested (and not growing).
	TrendMinPoints = 20
	// TrendMaxPoints bounds the series the test works on: longer tiers are
	// reduced to this many consecutive blocks (block median of the value,
	// block mean of planned time), which keeps the test O(TrendMaxPoints²).
	TrendMaxPoints = 500
	// TrendMinGrowthMs is the smallest growth over the tier, in ms, that
	// counts as growing.
	TrendMinGrowthMs = 100
	// TrendMinGrowthFraction is the smallest growth over the tier, as a
	// fraction of the median value in the tier's first fifth, that counts as
	// growing.
	TrendMinGrowthFraction = 0.25
	// TrendMinSlopeMsPerS is the smallest slope that counts as growing. A
	// queue fed faster than it serves grows its wait by (λ − μ)/μ seconds a
	// second, so 5 ms/s is an arrival rate 0.5 % above what the deployment
	// completes. Below it, over a long tier, the two size rules above are
	// met by a stationary queue near its capacity drifting between the slow
	// stretches its bursts make: on a prefill-bound batching engine, tiers at
	// 0.85 to 0.94 of the capacity with every request compliant drifted by
	// 0.27 to 0.6 ms/s, 105 to 170 ms over 280 to 430 s, significant against
	// the autocorrelation correction (which sees only the short-range part
	// of a queue's memory), and were judged unstable; their tiers of truly
	// growing queues drifted by 84 to 1,300 ms/s.
	TrendMinSlopeMsPerS = 5
)

// Trend is the verdict of [TrendTest] on one tier.
type Trend struct {
	// Tested is false when the test did not run: too few pairs, all
	// planned at one instant, or (the zero Trend) never asked.
	Tested bool `json:"tested"`
	// N is the number of finite (planned, value) pairs given.
	N int `json:"n"`
	// SlopeMsPerS is the Theil–Sen slope of the value against planned time:
	// ms of extra waiting per second into the tier.
	SlopeMsPerS float64 `json:"slope_ms_per_s"`
	// Growth is SlopeMsPerS times the planned span of the tier, in ms.
	Growth float64 `json:"growth_ms"`
	// PValue is the one-sided (growing) p-value of the Mann–Kendall test
	// with its autocorrelation correction; 1 when not tested.
	PValue float64 `json:"p_value"`
	// Growing is true when PValue < TrendAlpha, SlopeMsPerS reaches
	// TrendMinSlopeMsPerS and Growth exceeds both TrendMinGrowthMs and
	// TrendMinGrowthFraction of the first fifth's median.
	Growing bool `json:"growing"`
	// Reason says the verdict in words, with its numbers.
	Reason string `json:"reason,omitempty"`
}

// TrendTest asks whether queueing grows over a tier: valueMs[i] is
// client_queue_time + TTFT of request i in ms and plannedS[i] its planned
// arrival in seconds from T0. Pairs with a non-finite member are skipped (the
// caller passes requests that produced a first token; timeouts carry no
// TTFT). The slices must have equal lengths (TrendTest panics otherwise).
//
// The test is Mann–Kendall's S (Kendall's tau between planned time and
// value) with an autocorrelation correction of its variance (after Hamed
// and Rao 1998, see varianceInflation), one-sided for growth at level
// TrendAlpha; the growth is measured by the Theil–Sen slope. Why:
//   - Queueing series are heavily autocorrelated: a slow request delays the
//     ones behind it, so neighbours share their waits. Plain Mann–Kendall
//     and least-squares slope tests assume independence; on stationary
//     AR(1) series with φ = 0.9 (n = 300) plain Mann–Kendall flags a trend
//     in 30 % of cases at a nominal 1 %, because the effective sample size
//     is only about (1−φ)/(1+φ) ≈ 1/19 of n. The correction estimates that
//     loss from the autocorrelation of the ranks of the detrended series
//     and inflates Var(S) by n/n* (never by less than 1); with it the same
//     series are flagged significant in 3.5 % of cases, and judged growing
//     (with the size rule below) in 0.5 % (see the package tests).
//   - Ranks and Theil–Sen (median of pairwise slopes) are robust to the
//     heavy right tail of latencies: one stalled request does not make a
//     trend.
//   - Statistical significance alone is not enough: with thousands of
//     requests a 5 ms drift is "significant". The verdict also needs the
//     growth over the tier to exceed TrendMinGrowthMs and
//     TrendMinGrowthFraction of the median of the tier's first fifth, and
//     the slope to reach TrendMinSlopeMsPerS, the growth of a queue fed
//     0.5 % faster than it serves (a long tier otherwise accumulates a
//     stationary queue's slow drift into a growth above both).
//
// Tiers longer than TrendMaxPoints requests are tested on block medians.
// Fewer than TrendMinPoints pairs, or all planned at one instant, give an
// untested Trend (PValue 1, not Growing) whose Reason says why.
func TrendTest(plannedS, valueMs []float64) Trend {
	if len(plannedS) != len(valueMs) {
		panic(fmt.Sprintf("measure.TrendTest: %d planned times but %d values", len(plannedS), len(valueMs)))
	}
	type pair struct{ t, x float64 }
	pairs := make([]pair, 0, len(plannedS))
	for i, t := range plannedS {
		x := valueMs[i]
		if isFinite(t) && isFinite(x) {
			pairs = append(pairs, pair{t, x})
		}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(a.t, b.t) })
	n := len(pairs)
	tr := Trend{N: n, PValue: 1}
	if n < TrendMinPoints {
		tr.Reason = fmt.Sprintf("not tested: %d requests with a value, fewer than the %d a trend test needs", n, TrendMinPoints)
		return tr
	}
	span := pairs[n-1].t - pairs[0].t
	if !(span > 0) {
		tr.Reason = fmt.Sprintf("not tested: all %d requests were planned at the same instant", n)
		return tr
	}
	first := make([]float64, (n+4)/5)
	for i := range first {
		first[i] = pairs[i].x
	}
	base := medianInPlace(first)

	// The series tested: the pairs themselves, or block summaries.
	m := min(n, TrendMaxPoints)
	ts, xs := make([]float64, m), make([]float64, m)
	if m == n {
		for i, p := range pairs {
			ts[i], xs[i] = p.t, p.x
		}
	} else {
		block := make([]float64, 0, n/m+1)
		for b := range m {
			lo, hi := b*n/m, (b+1)*n/m
			block = block[:0]
			sumT := 0.0
			for _, p := range pairs[lo:hi] {
				sumT += p.t
				block = append(block, p.x)
			}
			ts[b], xs[b] = sumT/float64(hi-lo), medianInPlace(block)
		}
	}

	tr.Tested = true
	slope := theilSen(ts, xs)
	s, varS := mannKendall(ts, xs)
	hr, ar1 := varianceInflation(ts, xs, slope)
	inflation := math.Max(hr, ar1)
	tr.SlopeMsPerS = slope
	tr.Growth = slope * span
	tr.PValue = upperPValue(s, varS*inflation)

	threshold := math.Max(TrendMinGrowthMs, TrendMinGrowthFraction*base)
	significant := tr.PValue < TrendAlpha
	large := tr.Growth > threshold && slope >= TrendMinSlopeMsPerS
	tr.Growing = significant && large
	stats := fmt.Sprintf("Theil–Sen %s ms/s, %s ms over %s s; Mann–Kendall S = %d, one-sided p = %.2g "+
		"(variance ×%.3g for autocorrelation, the larger of Hamed–Rao ×%.3g and AR(1) ×%.3g; level %g); growth threshold %s ms (max of %g ms and %g %% of the first fifth's median %s ms) at a slope of at least %g ms/s; n = %d",
		fmtSig(slope), fmtSig(tr.Growth), fmtSig(span), s, tr.PValue, inflation, hr, ar1, TrendAlpha,
		fmtSig(threshold), float64(TrendMinGrowthMs), 100*TrendMinGrowthFraction, fmtSig(base), float64(TrendMinSlopeMsPerS), n)
	switch {
	case tr.Growing:
		tr.Reason = "growing: " + stats
	case significant:
		tr.Reason = "stable (significant but small trend): " + stats
	case large:
		tr.Reason = "stable (large but not significant against the autocorrelation): " + stats
	default:
		tr.Reason = "stable: " + stats
	}
	return tr
}

// slopeBuffers holds theilSen's scratch slices: up to TrendMaxPoints²/2 slopes (1 MB), which
// a fresh allocation would clear on every tier analysed.
var slopeBuffers = sync.Pool{New: func() any { return new([]float64) }}

// theilSen is the median of the slopes between all pairs with distinct t.
func theilSen(ts, xs []float64) float64 {
	buf := slopeBuffers.Get().(*[]float64)
	defer slopeBuffers.Put(buf)
	if need := len(ts) * (len(ts) - 1) / 2; cap(*buf) < need {
		*buf = make([]float64, 0, need)
	}
	slopes := (*buf)[:0]
	for i := range ts {
		for j := i + 1; j < len(ts); j++ {
			if dt := ts[j] - ts[i]; dt != 0 {
				slopes = append(slopes, (xs[j]-xs[i])/dt)
			}
		}
	}
	if len(slopes) == 0 {
		return 0
	}
	return medianInPlace(slopes)
}

// mannKendall returns S = Σ_{i<j} sgn(t_j−t_i)·sgn(x_j−x_i) and its variance
// under independence, corrected for ties in x. Ties in t contribute 0 to S;
// leaving them out of the variance overstates it slightly (conservative).
func mannKendall(ts, xs []float64) (s int, varS float64) {
	n := len(xs)
	for i := range n {
		for j := i + 1; j < n; j++ {
			s += sign(ts[j]-ts[i]) * sign(xs[j]-xs[i])
		}
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	tieTerm := 0.0
	for i := 0; i < n; {
		j := i + 1
		for j < n && sorted[j] == sorted[i] {
			j++
		}
		if g := float64(j - i); g > 1 {
			tieTerm += g * (g - 1) * (2*g + 5)
		}
		i = j
	}
	nf := float64(n)
	return s, (nf*(nf-1)*(2*nf+5) - tieTerm) / 18
}

// varianceInflation estimates n/n*, the factor by which autocorrelation
// inflates Var(S), from the autocorrelation ρ_k of the ranks of the series
// detrended by slope, through Hamed and Rao's
//
//	n/n* = 1 + 2/(n(n−1)(n−2)) · Σ_k (n−k)(n−k−1)(n−k−2) ρ_k
//
// twice: hr keeps the lags whose ρ_k is significant at 5 % (|ρ_k| >
// z_0.975/√n), as Hamed and Rao do; ar1 puts ρ_k = ρ₁^k, the AR(1) pattern
// of the lag-1 value, after correcting ρ₁'s small-sample downward bias
// ((1+3ρ₁)/n, Marriott and Pope). Each is floored at 1. The test uses the
// larger: screening drops the many small lags of a slowly decaying
// correlation, which leaves hr far too small on strongly correlated series
// (measured: a 9 % false-alarm rate at nominal 1 % for AR(1), φ = 0.9), while
// ar1 alone would trust a parametric shape that queues need not have.
func varianceInflation(ts, xs []float64, slope float64) (hr, ar1 float64) {
	n := len(xs)
	if n < 4 {
		return 1, 1
	}
	det := make([]float64, n)
	for i := range xs {
		det[i] = xs[i] - slope*ts[i]
	}
	r := ranks(det)
	mean := (float64(n) + 1) / 2
	den := 0.0
	for _, v := range r {
		den += (v - mean) * (v - mean)
	}
	if den == 0 {
		return 1, 1
	}
	nf := float64(n)
	norm := 2 / (nf * (nf - 1) * (nf - 2))
	band := distuv.UnitNormal.Quantile(0.975) / math.Sqrt(nf)
	sumHR, rho1 := 0.0, 0.0
	for k := 1; k < n-2; k++ {
		num := 0.0
		for i := 0; i+k < n; i++ {
			num += (r[i] - mean) * (r[i+k] - mean)
		}
		rho := num / den
		if k == 1 {
			rho1 = rho
		}
		if math.Abs(rho) > band {
			kf := float64(k)
			sumHR += (nf - kf) * (nf - kf - 1) * (nf - kf - 2) * rho
		}
	}
	rho1 = math.Min(maxRho1, rho1+(1+3*rho1)/nf)
	sumAR, pow := 0.0, 1.0
	for k := 1; k < n-2; k++ {
		pow *= rho1
		if math.Abs(pow) < 1e-12 {
			break
		}
		kf := float64(k)
		sumAR += (nf - kf) * (nf - kf - 1) * (nf - kf - 2) * pow
	}
	return math.Max(1, 1+norm*sumHR), math.Max(1, 1+norm*sumAR)
}

// maxRho1 caps the bias-corrected lag-1 autocorrelation below 1 (a unit
// root would make the AR(1) inflation unbounded).
const maxRho1 = 0.995

// upperPValue is P(S ≥ s) under the normal approximation with continuity
// correction.
func upperPValue(s int, varS float64) float64 {
	if varS <= 0 {
		if s > 0 {
			return 0
		}
		return 1
	}
	sd := math.Sqrt(varS)
	var z float64
	switch {
	case s > 0:
		z = (float64(s) - 1) / sd
	case s < 0:
		z = (float64(s) + 1) / sd
	}
	return distuv.UnitNormal.Survival(z)
}

// ranks gives 1-based ranks, ties sharing their average rank.
func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // mean of the 1-based ranks i+1 .. j
		for k := i; k < j; k++ {
			r[idx[k]] = avg
		}
		i = j
	}
	return r
}

// medianInPlace is the median of xs (reordered in place); 0 for none. Linear time on average
// (quickselect), which matters for Theil–Sen's n(n−1)/2 slopes.
func medianInPlace(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	hi := kth(xs, n/2)
	if n%2 == 1 {
		return hi
	}
	// After kth, xs[:n/2] holds the n/2 smallest values; the lower middle
	// is their maximum.
	return (slices.Max(xs[:n/2]) + hi) / 2
}

// kth reorders xs so that xs[k] is the value of rank k (0-based), every
// element before it ≤ it and every one after ≥ it, and returns xs[k].
func kth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		// Median of three as pivot, then Hoare partition.
		mid := lo + (hi-lo)/2
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

func sign(v float64) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// fmtSig prints a number with 4 significant digits, without exponent for
// ordinary magnitudes.
func fmtSig(v float64) string { return fmt.Sprintf("%.4g", v) }

// trendJSON is Trend on the wire, with null for a non-finite number.
type trendJSON struct {
	Tested      bool     `json:"tested"`
	N           int      `json:"n"`
	SlopeMsPerS *float64 `json:"slope_ms_per_s"`
	Growth      *float64 `json:"growth_ms"`
	PValue      *float64 `json:"p_value"`
	Growing     bool     `json:"growing"`
	Reason      string   `json:"reason,omitempty"`
}

// MarshalJSON writes snake_case keys with null for a non-finite number (TrendTest itself never
// produces one).
func (t Trend) MarshalJSON() ([]byte, error) {
	return json.Marshal(trendJSON{Tested: t.Tested, N: t.N, SlopeMsPerS: finiteOrNil(t.SlopeMsPerS), Growth: finiteOrNil(t.Growth),
		PValue: finiteOrNil(t.PValue), Growing: t.Growing, Reason: t.Reason})
}

// UnmarshalJSON reads what MarshalJSON writes; a null number reads as NaN.
func (t *Trend) UnmarshalJSON(b []byte) error {
	var j trendJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("trend: %w", err)
	}
	*t = Trend{Tested: j.Tested, N: j.N, SlopeMsPerS: nanIfNil(j.SlopeMsPerS), Growth: nanIfNil(j.Growth),
		PValue: nanIfNil(j.PValue), Growing: j.Growing, Reason: j.Reason}
	return nil
}

func finiteOrNil(v float64) *float64 {
	if !isFinite(v) {
		return nil
	}
	return &v
}

func nanIfNil(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}
