package workloads_test

import (
	"math"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/workloads"
)

// TestSyntheticLengthDistributions checks the sample mean (and, for the log-normal, the mean of
// the logarithm) of the drawn lengths against the distribution's parameters.
//
// Tolerances, for n independent draws: the sample mean of X has standard deviation sd(X)/√n. With
// mean L = 100, ratio r and n = 4000 (two draws per request, input and output, both checked):
//   - normal, r = 0.2: sd(X) = 20, so sd(mean) = 20/√4000 ≈ 0.316. Rounding to integers changes a
//     draw by at most 0.5 with a mean error that is negligible (exponentially small) for a smooth
//     density 20 wide, and the clamp at 1 acts only below -4.97 sd (probability ≈ 3e-7).
//     Bound: 4.5·0.316 ≈ 1.42.
//   - lognormal, r = 0.5: sd(X) = 50, sd(mean) ≈ 0.791; bound 4.5·0.791 ≈ 3.56. And ln X ~ N(μ, σ²)
//     with σ² = ln(1.25), μ = ln(100) - σ²/2: sd(mean ln X) = σ/√4000 ≈ 0.00747; bound 4.5× ≈
//     0.0336. Rounding moves ln X by δ/X with δ uniform in ±0.5: zero mean to first order, and
//     -E[δ²]/(2X²) ≈ -4e-6 at X ≈ 100 to second order; X < 20 has probability ≈ 8e-4. Negligible.
//
// 4.5 standard deviations: a false failure has probability below 1e-5 per check; the seed is
// fixed, so the outcome is deterministic anyway.
func TestSyntheticLengthDistributions(t *testing.T) {
	const n, L = 4000, 100
	tests := []struct {
		dist      string
		ratio     float64
		meanBound float64
		logMu     float64 // expected mean of ln X (lognormal only)
		logBound  float64
	}{
		{workloads.DistNormal, 0.2, 4.5 * 20 / math.Sqrt(n), 0, 0},
		{workloads.DistLogNormal, 0.5, 4.5 * 50 / math.Sqrt(n),
			math.Log(L) - math.Log1p(0.25)/2, 4.5 * math.Sqrt(math.Log1p(0.25)) / math.Sqrt(n)},
	}
	for _, tc := range tests {
		t.Run(tc.dist, func(t *testing.T) {
			s := workloads.Synthetic{InputLen: L, OutputLen: L, RangeRatio: tc.ratio, Dist: tc.dist, Seed: 11}
			set, err := s.Generate(n)
			if err != nil {
				t.Fatal(err)
			}
			for _, which := range []string{"input", "output"} {
				var sum, sumLog float64
				for _, r := range set.Requests {
					x := r.InputTokens
					if which == "output" {
						x = r.MaxTokens
					}
					if x < 1 {
						t.Fatalf("length %d < 1", x)
					}
					sum += float64(x)
					sumLog += math.Log(float64(x))
				}
				mean := sum / n
				if math.Abs(mean-L) > tc.meanBound {
					t.Errorf("%s mean %.2f, want %d ± %.2f", which, mean, L, tc.meanBound)
				}
				if tc.logBound > 0 {
					if m := sumLog / n; math.Abs(m-tc.logMu) > tc.logBound {
						t.Errorf("%s mean of ln %.4f, want %.4f ± %.4f", which, m, tc.logMu, tc.logBound)
					}
				}
			}
			if got := workloads.CountWords(set.Requests[7].Text()); got != set.Requests[7].InputTokens {
				t.Errorf("prompt has %d words, InputTokens %d", got, set.Requests[7].InputTokens)
			}
			again, _ := s.Generate(n)
			if again.Fingerprint != set.Fingerprint {
				t.Error("same seed, different set")
			}
		})
	}
}

func TestSyntheticDistValidation(t *testing.T) {
	tests := []struct {
		s    workloads.Synthetic
		want string // "" = valid
	}{
		{workloads.Synthetic{InputLen: 5, OutputLen: 5, Dist: workloads.DistNormal, RangeRatio: 2}, ""},
		{workloads.Synthetic{InputLen: 5, OutputLen: 5, Dist: workloads.DistLogNormal, RangeRatio: 0}, ""},
		{workloads.Synthetic{InputLen: 5, OutputLen: 5, Dist: workloads.DistUniform, RangeRatio: 1}, "length range ratio: must be in [0, 1)"},
		{workloads.Synthetic{InputLen: 5, OutputLen: 5, Dist: workloads.DistNormal, RangeRatio: -0.1}, "must be in [0, 10], got -0.1"},
		{workloads.Synthetic{InputLen: 5, OutputLen: 5, Dist: workloads.DistLogNormal, RangeRatio: math.Inf(1)}, "must be in [0, 10], got +Inf"},
		{workloads.Synthetic{InputLen: 5, OutputLen: 5, Dist: workloads.DistLogNormal, RangeRatio: 1e308}, "coefficient of variation of the lognormal distribution: it must be in [0, 10], got 1e+308"},
		{workloads.Synthetic{InputLen: 5, OutputLen: 5, Dist: workloads.DistNormal, RangeRatio: math.NaN()}, "got NaN"},
		{workloads.Synthetic{InputLen: 5, OutputLen: 5, Dist: "pareto"}, `length distribution: must be uniform, normal or lognormal, got "pareto"`},
	}
	for _, tc := range tests {
		errs := tc.s.Validate()
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%v: %v", tc.s, errs)
		case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.s, errs, tc.want)
		}
	}
	// A ratio of 0 gives fixed lengths for every distribution, and the uniform recipe keeps
	// its earlier name.
	for _, d := range []string{"", workloads.DistUniform, workloads.DistNormal, workloads.DistLogNormal} {
		set, err := workloads.Synthetic{InputLen: 37, OutputLen: 3, Dist: d, Seed: 1}.Generate(50)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range set.Requests {
			if r.InputTokens != 37 || r.MaxTokens != 3 {
				t.Fatalf("%q with ratio 0: lengths %d/%d", d, r.InputTokens, r.MaxTokens)
			}
		}
	}
	if got := (workloads.Synthetic{InputLen: 1024, OutputLen: 128}).String(); got != "random(input=1024, output=128, range=0, seed=0)" {
		t.Errorf("uniform String %q", got)
	}
	if got := (workloads.Synthetic{InputLen: 8, OutputLen: 2, Dist: "lognormal", RangeRatio: 0.5, Seed: 3}).String(); got != "random(input=8, output=2, dist=lognormal, ratio=0.5, seed=3)" {
		t.Errorf("lognormal String %q", got)
	}
}
