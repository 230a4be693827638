package compare

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval methods reported in [PairedResult].Method.
const (
	MethodSignTest  = "sign-test order statistics"
	MethodBootstrap = "paired bootstrap percentile"
)

// DefaultResamples is the number of bootstrap resamples used by [Paired] and
// by [PairedBootstrap] when given 0.
const DefaultResamples = 2000

// ErrTooFewPairs is returned (wrapped) when there are too few common ids for
// an interval at the requested confidence; see [MinPairs].
var ErrTooFewPairs = errors.New("too few pairs")

// PairedResult compares a per-request metric of run B against run A over the
// request ids present in both, through the differences d_i = b_i − a_i.
type PairedResult struct {
	// N is the number of pairs.
	N int `json:"n"`
	// MedianDiff is the median of the differences (type-7 percentile 50:
	// the mean of the two middle values when N is even).
	MedianDiff float64 `json:"median_diff"`
	// MeanDiff is the mean of the differences.
	MeanDiff float64 `json:"mean_diff"`
	// CILow and CIHigh bound the confidence interval of the median
	// difference, computed by Method.
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// Confidence is the requested confidence level, e.g. 0.95.
	Confidence float64 `json:"confidence"`
	// Achieved is the interval's actual coverage. For the sign-test interval
	// it is exact for continuous data, 1 − 2·P(Binomial(N, ½) ≤ k−1), and at
	// least Confidence (the interval is conservative; ties only make it more
	// so). For the bootstrap it is the nominal Confidence (an approximation).
	Achieved float64 `json:"achieved_confidence"`
	// Method is MethodSignTest or MethodBootstrap.
	Method string `json:"method"`
	// BootLow and BootHigh are the seeded paired-bootstrap percentile
	// interval of the median, computed with Resamples resamples, as a second
	// opinion beside the sign-test interval. When Method is MethodBootstrap
	// they equal CILow and CIHigh.
	BootLow  float64 `json:"bootstrap_low"`
	BootHigh float64 `json:"bootstrap_high"`
	// Resamples is the number of bootstrap resamples behind BootLow/BootHigh.
	Resamples int `json:"resamples"`
	// Wins counts pairs with B < A (d < 0: B better for a latency), Losses
	// pairs with B > A, Ties pairs with B = A.
	Wins   int `json:"b_better"`
	Losses int `json:"b_worse"`
	Ties   int `json:"ties"`
}

// MinPairs is the smallest number of pairs for which a two-sided sign-test
// interval exists at the given confidence: the widest interval, from the
// smallest to the largest difference, covers the median with probability
// 1 − 2·(½)ⁿ, so n must satisfy (½)ⁿ ≤ (1 − confidence)/2. That is 6 at
// 95 %, 8 at 99 %. It returns 0 for a confidence outside (0, 1).
func MinPairs(confidence float64) int {
	if !validConfidence(confidence) {
		return 0
	}
	half := (1 - confidence) / 2
	n := 1
	for math.Pow(0.5, float64(n)) > half*(1+cdfSlack) {
		n++
	}
	return n
}

// cdfSlack absorbs the rounding of gonum's binomial CDF (a regularised
// incomplete beta function) when it should equal α/2 exactly, as it can for
// dyadic levels such as confidence 0.5.
const cdfSlack = 1e-10

func validConfidence(c float64) bool { return c > 0 && c < 1 }

// Paired compares b against a over the ids present in both maps. The
// interval (CILow, CIHigh) is the distribution-free order-statistic interval
// of the median difference that inverts the sign test: with the differences
// sorted, d₍₁₎ ≤ … ≤ d₍ₙ₎, it is [d₍ₖ₎, d₍ₙ₊₁₋ₖ₎] for the largest k with
// P(Binomial(n, ½) ≤ k−1) ≤ (1 − confidence)/2. BootLow/BootHigh hold a
// paired bootstrap of the median with DefaultResamples resamples drawn from
// seed, as a cross-check. It fails for a confidence outside (0, 1), a NaN or
// infinite value on a common id, or fewer than MinPairs(confidence) pairs.
func Paired(a, b map[int]float64, confidence float64, seed int64) (PairedResult, error) {
	r, d, err := prepare(a, b, confidence)
	if err != nil {
		return PairedResult{}, fmt.Errorf("paired comparison: %w", err)
	}
	k, achieved := signTestRank(len(d), confidence)
	r.CILow, r.CIHigh = d[k-1], d[len(d)-k]
	r.Achieved = achieved
	r.Method = MethodSignTest
	r.Resamples = DefaultResamples
	r.BootLow, r.BootHigh = bootstrapMedianCI(d, confidence, DefaultResamples, seed)
	return r, nil
}

// PairedBootstrap is [Paired] with the interval from a paired percentile
// bootstrap of the median: resamples (0 means DefaultResamples) resamples of
// the n differences drawn with replacement from a generator seeded by seed;
// the interval is the type-7 (1−confidence)/2 and (1+confidence)/2
// percentiles of the resampled medians. The same inputs and seed give the
// same interval. The same minimum number of pairs applies as for Paired.
func PairedBootstrap(a, b map[int]float64, confidence float64, resamples int, seed int64) (PairedResult, error) {
	if resamples < 0 {
		return PairedResult{}, fmt.Errorf("paired bootstrap: resamples = %d: must be ≥ 0 (0 means %d)", resamples, DefaultResamples)
	}
	if resamples == 0 {
		resamples = DefaultResamples
	}
	r, d, err := prepare(a, b, confidence)
	if err != nil {
		return PairedResult{}, fmt.Errorf("paired bootstrap: %w", err)
	}
	r.BootLow, r.BootHigh = bootstrapMedianCI(d, confidence, resamples, seed)
	r.CILow, r.CIHigh = r.BootLow, r.BootHigh
	r.Achieved = confidence
	r.Method = MethodBootstrap
	r.Resamples = resamples
	return r, nil
}

// prepare validates the inputs and returns the result with the point
// statistics filled in and the sorted differences, taken in ascending id order.
func prepare(a, b map[int]float64, confidence float64) (PairedResult, []float64, error) {
	if !validConfidence(confidence) {
		return PairedResult{}, nil, fmt.Errorf("confidence = %g: must be strictly between 0 and 1 (0.95 means 95 %%)", confidence)
	}
	ids := make([]int, 0, min(len(a), len(b)))
	for id := range a {
		if _, ok := b[id]; ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	r := PairedResult{N: len(ids), Confidence: confidence}
	d := make([]float64, 0, len(ids))
	sum := 0.0
	for _, id := range ids {
		x, y := a[id], b[id]
		if !finite(x) || !finite(y) {
			return PairedResult{}, nil, fmt.Errorf("request %d: values must be finite, got A=%g, B=%g", id, x, y)
		}
		diff := y - x
		switch {
		case diff < 0:
			r.Wins++
		case diff > 0:
			r.Losses++
		default:
			r.Ties++
		}
		sum += diff
		d = append(d, diff)
	}
	if need := MinPairs(confidence); len(d) < need {
		return PairedResult{}, nil, fmt.Errorf("%w: %d pairs with ids in both runs, need at least %d for a %g %% interval of the median",
			ErrTooFewPairs, len(d), need, confidence*100)
	}
	slices.Sort(d)
	r.MedianDiff = medianSorted(d)
	r.MeanDiff = sum / float64(len(d))
	return r, d, nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// medianSorted is the type-7 50th percentile of sorted x (len(x) > 0).
func medianSorted(x []float64) float64 {
	n := len(x)
	return (x[(n-1)/2] + x[n/2]) / 2
}

// signTestRank returns the largest k ≥ 1 with P(Binomial(n, ½) ≤ k−1) ≤ α/2,
// α = 1 − confidence, and the interval's exact coverage 1 − 2·P(B ≤ k−1).
// The caller guarantees n ≥ MinPairs(confidence), so k = 1 qualifies.
func signTestRank(n int, confidence float64) (int, float64) {
	bin := distuv.Binomial{N: float64(n), P: 0.5}
	half := (1 - confidence) / 2
	ok := func(k int) bool { return bin.CDF(float64(k-1)) <= half*(1+cdfSlack) }
	// ok is true for k = 1 and false from some k ≤ n/2+1 on (the CDF passes
	// ½ at the median, and α/2 < ½): binary search for the last true k.
	lo, hi := 1, n/2+1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo, 1 - 2*bin.CDF(float64(lo-1))
}

// bootstrapMedianCI resamples the sorted differences d with replacement and
// returns type-7 percentiles of the resampled medians. Since d is sorted, a
// resample is represented by how often each index was drawn, and its middle
// order statistics are found by a cumulative scan: O(n) per resample, no sort.
func bootstrapMedianCI(d []float64, confidence float64, resamples int, seed int64) (float64, float64) {
	n := len(d)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6c6f6164637276)) // second word: fixed stream constant
	counts := make([]int, n)
	medians := make([]float64, resamples)
	lo, hi := (n-1)/2, n/2 // 0-based ranks of the middle order statistics
	for r := range medians {
		clear(counts)
		for range n {
			counts[rng.IntN(n)]++
		}
		var vlo float64
		cum := 0
		for j, c := range counts {
			if c == 0 {
				continue
			}
			prev := cum
			cum += c
			if prev <= lo && lo < cum {
				vlo = d[j]
			}
			if hi < cum {
				medians[r] = (vlo + d[j]) / 2
				break
			}
		}
	}
	slices.Sort(medians)
	alpha := 1 - confidence
	return percentileSorted(medians, 100*alpha/2), percentileSorted(medians, 100*(1-alpha/2))
}

// percentileSorted is the type-7 percentile p (0–100) of sorted x.
func percentileSorted(x []float64, p float64) float64 {
	h := float64(len(x)-1) * p / 100
	i := int(math.Floor(h))
	if i >= len(x)-1 {
		return x[len(x)-1]
	}
	return x[i] + (h-float64(i))*(x[i+1]-x[i])
}
