package curve

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Wilson returns the Wilson score interval for a binomial proportion:
// successes out of n at the given two-sided confidence (e.g. 0.95). With
// p̂ = successes/n and z the standard normal quantile at 1 − (1−confidence)/2,
//
//	centre = (p̂ + z²/2n) / (1 + z²/n)
//	half   = z/(1 + z²/n) · √(p̂(1−p̂)/n + z²/4n²)
//
// and the interval is [centre − half, centre + half], inside [0, 1]; it is
// exactly 0 below when successes = 0 and exactly 1 above when successes = n.
// Unlike the normal ("Wald") interval it stays sensible for small n and for
// shares near 0 or 1, which is where compliance targets live.
//
// n = 0 gives the uninformative interval [0, 1]. Wilson panics when
// successes is outside [0, n] or confidence outside (0, 1): those are
// programming errors, and [Analyze] checks its points before calling it.
func Wilson(successes, n int, confidence float64) (lo, hi float64) {
	if n < 0 || successes < 0 || successes > n {
		panic(fmt.Sprintf("curve.Wilson: %d successes of %d trials", successes, n))
	}
	if !(confidence > 0 && confidence < 1) {
		panic(fmt.Sprintf("curve.Wilson: confidence %v outside (0, 1)", confidence))
	}
	if n == 0 {
		return 0, 1
	}
	z := distuv.UnitNormal.Quantile(1 - (1-confidence)/2)
	nf := float64(n)
	p := float64(successes) / nf
	z2n := z * z / nf
	centre := (p + z2n/2) / (1 + z2n)
	half := z / (1 + z2n) * math.Sqrt(p*(1-p)/nf+z2n/(4*nf))
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	if successes == 0 {
		lo = 0
	}
	if successes == n {
		hi = 1
	}
	return lo, hi
}

// WilsonN is the Wilson score interval of a share measured on an effective sample size n (a
// real number: requests over their variance factor, see measure.Steady) at the given two-sided
// confidence: Wilson's formula with p̂ = share and n. n ≤ 0 gives [0, 1]. A share of exactly 1
// (or 0) keeps 1 (or 0) as its upper (lower) end.
func WilsonN(share, n, confidence float64) (lo, hi float64) {
	if !(n > 0) || math.IsNaN(share) {
		return 0, 1
	}
	if !(confidence > 0 && confidence < 1) {
		panic(fmt.Sprintf("curve.WilsonN: confidence %v outside (0, 1)", confidence))
	}
	p := math.Min(1, math.Max(0, share))
	z := distuv.UnitNormal.Quantile(1 - (1-confidence)/2)
	z2n := z * z / n
	centre := (p + z2n/2) / (1 + z2n)
	half := z / (1 + z2n) * math.Sqrt(p*(1-p)/n+z2n/(4*n))
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	if p == 0 {
		lo = 0
	}
	if p == 1 {
		hi = 1
	}
	return lo, hi
}

// NeededEffective is the smallest effective sample size at which the Wilson interval of a share
// measured exactly at share excludes target at confidence: its lower end reaches the target
// when share > target, its upper end falls below it when share < target. It is the size a tier
// must reach to decide, when its share comes out as expected; for a share of 1 (no miss) it is
// ⌈z²·q/(1 − q)⌉.
func NeededEffective(share, target, confidence float64) (float64, error) {
	if share == target || !(share >= 0 && share <= 1) || !(target > 0 && target < 1) {
		return 0, errors.New("no sample size separates a share equal to the target (or outside [0, 1])")
	}
	decides := func(n float64) bool {
		lo, hi := WilsonN(share, n, confidence)
		if share > target {
			return lo >= target
		}
		return hi < target
	}
	lo, hi := 1.0, 1.0
	for !decides(hi) {
		lo, hi = hi, 2*hi
		if hi > 1e12 {
			return 0, errors.New("no sample size below 10^12 separates the share from the target")
		}
	}
	for hi-lo > 0.5 {
		mid := (lo + hi) / 2
		if decides(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return math.Ceil(hi), nil
}
