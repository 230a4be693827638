package arrival_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/loadcurve/loadcurve/arrival"
)

// zTol is the two-sided normal quantile with tail probability 1e-6:
// P(|Z| > 4.892) = 1.0e-6. Every moment check below allows zTol standard
// errors, so a correct generator fails one check with probability ~1e-6
// (the seeds are fixed, so in practice a test either always passes or
// always fails; the tolerance says how surprising a failure would be).
const zTol = 4.892

// ksCrit001 is the asymptotic Kolmogorov critical value at α = 0.001:
// √(−ln(α/2)/2) = √(ln(2000)/2) ≈ 1.9495; D_n is compared with it/√n.
var ksCrit001 = math.Sqrt(math.Log(2/0.001) / 2)

// gapsOf returns the inter-arrival gaps in seconds, the first measured
// from T0. Offsets are rounded to the nanosecond, so each gap carries at
// most 1 ns of rounding error, negligible next to gaps of ~0.25 s.
func gapsOf(offsets []time.Duration) []float64 {
	gaps := make([]float64, len(offsets))
	prev := time.Duration(0)
	for i, o := range offsets {
		gaps[i] = (o - prev).Seconds()
		prev = o
	}
	return gaps
}

func meanStd(x []float64) (mean, std float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1))
}

// TestGapMoments checks the mean and the coefficient of variation of the
// gaps of Gamma(shape=b, scale=1/(r·b)) for several b.
//
// Mean: a gap has mean μ = 1/r and variance b·(1/(r·b))² = 1/(r²·b), so
// the mean of N independent gaps has standard error 1/(r·√(b·N)); by the
// CLT (N = 2e5, skewness of the mean 2/√(b·N) ≤ 0.01) it is normal.
//
// CV: ĉ = s/m with true value c = 1/√b. The delta method on f(m, v) = √v/m
// with Var(m̄) = σ²/N, Var(s²) = (μ₄−σ⁴)/N, Cov(m̄, s²) = μ₃/N gives
//
//	Var(ĉ) ≈ [c⁴ + (μ₄−σ⁴)/(4σ²μ²) − μ₃/μ³] / N.
//
// For a gamma of shape b and scale θ: μ = bθ, σ² = bθ², μ₃ = 2bθ³,
// μ₄ = (3b²+6b)θ⁴, so the bracket is 1/b² + (b+3)/(2b²) − 2/b² =
// (b+1)/(2b²), and SE(ĉ) = √((b+1)/(2N))/b (for b=1, 1/√N, the known
// result for exponential samples). For b=0.1 the sampling distribution of
// ĉ is visibly skewed at N = 2e5 (the gamma's kurtosis is 6/b = 60), so the
// 1e-6 figure is only approximate there.
func TestGapMoments(t *testing.T) {
	const (
		n    = 200_000
		rate = 4.0
	)
	for _, b := range []float64{0.1, 0.25, 1, 4} {
		s := arrival.Spec{Rate: rate, Burstiness: arrival.Burstiness(b)}
		offs, err := s.Offsets(n, 2024)
		if err != nil {
			t.Fatal(err)
		}
		mean, std := meanStd(gapsOf(offs))

		wantMean := 1 / rate
		seMean := 1 / (rate * math.Sqrt(b*n))
		if math.Abs(mean-wantMean) > zTol*seMean {
			t.Errorf("b=%v: mean gap %.6f s, want %.6f ± %.6f", b, mean, wantMean, zTol*seMean)
		}

		cv := std / mean
		wantCV := 1 / math.Sqrt(b)
		seCV := math.Sqrt((b+1)/(2*n)) / b
		if math.Abs(cv-wantCV) > zTol*seCV {
			t.Errorf("b=%v: CV %.5f, want %.5f ± %.5f", b, cv, wantCV, zTol*seCV)
		}
		t.Logf("b=%v: mean gap %.6f (%.2f SE off), CV %.5f (%.2f SE off)", b, mean, (mean-wantMean)/seMean, cv, (cv-wantCV)/seCV)
	}
}

// ksStatistic is the one-sample Kolmogorov–Smirnov distance between the
// sample x and the continuous CDF cdf: max over the sorted sample of
// max(i/n − F(x_i), F(x_i) − (i−1)/n) for 1-based i.
func ksStatistic(x []float64, cdf func(float64) float64) float64 {
	x = slices.Clone(x)
	slices.Sort(x)
	n := float64(len(x))
	var d float64
	for i, v := range x {
		f := cdf(v)
		d = max(d, float64(i+1)/n-f, f-float64(i)/n)
	}
	return d
}

// TestGapDistribution applies a Kolmogorov–Smirnov test at α = 0.001 to the
// gaps (scaled by the rate to unit mean) against the exact distribution:
// Exp(1) for b=1 and Gamma(shape=4, rate=4) for b=4. The nanosecond
// rounding of offsets moves a scaled gap by ≤ 4e-9, which moves the CDF by
// less than 1e-8, far below the critical value ~0.0044. (Small shapes such
// as b=0.25 are left to TestGapMoments: their CDF rises like x^b near 0, so
// nanosecond rounding alone would shift it by ~1e-3 there.)
func TestGapDistribution(t *testing.T) {
	const (
		n    = 200_000
		rate = 4.0
	)
	tests := []struct {
		b   float64
		cdf func(float64) float64
	}{
		{1, distuv.Exponential{Rate: 1}.CDF},
		{4, distuv.Gamma{Alpha: 4, Beta: 4}.CDF},
	}
	for _, tt := range tests {
		s := arrival.Spec{Rate: rate, Burstiness: arrival.Burstiness(tt.b)}
		offs, err := s.Offsets(n, 77)
		if err != nil {
			t.Fatal(err)
		}
		gaps := gapsOf(offs)
		for i := range gaps {
			gaps[i] *= rate
		}
		d := ksStatistic(gaps, tt.cdf)
		crit := ksCrit001 / math.Sqrt(n)
		if d > crit {
			t.Errorf("b=%v: KS distance %.5f exceeds the α=0.001 critical value %.5f", tt.b, d, crit)
		}
		t.Logf("b=%v: KS D=%.5f (critical %.5f)", tt.b, d, crit)
	}
}

// TestRampByIndexRates measures the first and last tenth of a long
// count-bound ramp. The time spanned by requests i ∈ [lo, hi) is the sum of
// their independent gaps, with mean Σ 1/r_i and variance Σ 1/(b·r_i²)
// (gap variance 1/(r²b), see TestGapMoments); over 10⁴ gaps it is normal.
// The realised rate over that tenth, (hi−lo)/span, must then be within the
// matching band around (hi−lo)/Σ(1/r_i), a harmonic mean of the rates that
// lies between r_lo and r_{hi−1}: close to the start rate at the start and
// to the end rate at the end.
func TestRampByIndexRates(t *testing.T) {
	const n = 100_000
	tests := []arrival.Spec{
		{Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 10, RampEnd: 100},
		{Burstiness: 0.5, Ramp: arrival.RampLinear, RampStart: 10, RampEnd: 100},
		{Burstiness: 1, Ramp: arrival.RampExponential, RampStart: 10, RampEnd: 100},
		{Burstiness: 4, Ramp: arrival.RampExponential, RampStart: 10, RampEnd: 100},
	}
	for _, s := range tests {
		offs, err := s.Offsets(n, 5)
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range []struct {
			name   string
			lo, hi int
		}{{"first tenth", 0, n / 10}, {"last tenth", n - n/10, n}} {
			var wantSpan, variance float64
			for i := part.lo; i < part.hi; i++ {
				r := s.RateAt(i, n)
				wantSpan += 1 / r
				variance += 1 / (float64(s.Burstiness) * r * r)
			}
			start := time.Duration(0)
			if part.lo > 0 {
				start = offs[part.lo-1]
			}
			span := (offs[part.hi-1] - start).Seconds()
			if math.Abs(span-wantSpan) > zTol*math.Sqrt(variance) {
				t.Errorf("%s, %s: span %.4f s, want %.4f ± %.4f", s, part.name, span, wantSpan, zTol*math.Sqrt(variance))
			}
			k := float64(part.hi - part.lo)
			t.Logf("%s, %s: realised rate %.3f/s, expected %.3f/s (r from %.2f to %.2f)",
				s, part.name, k/span, k/wantSpan, s.RateAt(part.lo, n), s.RateAt(part.hi-1, n))
		}
	}
}

// TestRampByTimeCounts checks duration-bound ramps. With b=1 the
// time-rescaled process is an inhomogeneous Poisson process of intensity
// r(t), so the number of arrivals in [t₀, t₁) is Poisson with mean
// Λ(t₁) − Λ(t₀), Λ(t) = ∫₀ᵗ r, and its variance equals its mean (counts of
// ~10³–10⁴ are normal to a good approximation). The first and last tenth
// of the tier, and the whole tier, must hold a count within zTol standard
// deviations of the mean.
func TestRampByTimeCounts(t *testing.T) {
	const (
		a, c = 10.0, 100.0
		dSec = 1000.0
	)
	d := time.Duration(dSec) * time.Second
	tests := []struct {
		spec   arrival.Spec
		lambda func(t float64) float64
	}{
		{
			arrival.Spec{Burstiness: 1, Ramp: arrival.RampLinear, RampStart: a, RampEnd: c},
			func(t float64) float64 { return a*t + (c-a)*t*t/(2*dSec) },
		},
		{
			arrival.Spec{Burstiness: 1, Ramp: arrival.RampExponential, RampStart: a, RampEnd: c},
			func(t float64) float64 {
				l := math.Log(c / a)
				return a * dSec / l * math.Expm1(l*t/dSec)
			},
		},
	}
	for _, tt := range tests {
		offs, err := tt.spec.OffsetsWithin(d, 11, 10_000_000)
		if err != nil {
			t.Fatal(err)
		}
		count := func(t0, t1 float64) float64 {
			var k int
			for _, o := range offs {
				if s := o.Seconds(); s >= t0 && s < t1 {
					k++
				}
			}
			return float64(k)
		}
		for _, w := range []struct {
			name   string
			t0, t1 float64
		}{{"first tenth", 0, dSec / 10}, {"last tenth", dSec - dSec/10, dSec}, {"whole tier", 0, dSec}} {
			got := count(w.t0, w.t1)
			want := tt.lambda(w.t1) - tt.lambda(w.t0)
			if math.Abs(got-want) > zTol*math.Sqrt(want) {
				t.Errorf("%s, %s: %v arrivals, want %.1f ± %.1f", tt.spec, w.name, got, want, zTol*math.Sqrt(want))
			}
			t.Logf("%s, %s: rate %.3f/s, expected %.3f/s", tt.spec, w.name, got/(w.t1-w.t0), want/(w.t1-w.t0))
		}
	}
}
