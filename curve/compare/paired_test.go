package compare_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/compare"
)

// pairs builds A and B maps with B_i = A_i + d[i]; the A values are
// arbitrary and distinct so that only the differences matter.
func pairs(d []float64) (map[int]float64, map[int]float64) {
	a, b := make(map[int]float64, len(d)), make(map[int]float64, len(d))
	for i, di := range d {
		a[i] = 1000 + 7*float64(i)
		b[i] = a[i] + di
	}
	return a, b
}

func TestMinPairs(t *testing.T) {
	// n must satisfy (½)ⁿ ≤ (1 − c)/2.
	tests := []struct {
		c    float64
		want int
	}{
		{0.95, 6}, // (½)⁵ = 0.03125 > 0.025 ≥ (½)⁶ = 0.015625
		{0.99, 8}, // (½)⁷ = 0.0078 > 0.005 ≥ (½)⁸ = 0.0039
		{0.90, 5}, // (½)⁴ = 0.0625 > 0.05 ≥ (½)⁵
		{0.50, 2}, // (½)² = 0.25 = 0.25: equality qualifies
		{0, 0}, {1, 0}, {math.NaN(), 0}, {-0.5, 0},
	}
	for _, tt := range tests {
		if got := compare.MinPairs(tt.c); got != tt.want {
			t.Errorf("MinPairs(%v) = %d, want %d", tt.c, got, tt.want)
		}
	}
}

// TestSignTestOrderStatistics checks the interval's ranks against binomial
// tails computed by hand. The differences are a permutation of 1..n, so the
// j-th smallest difference is j and the bounds read off as ranks.
func TestSignTestOrderStatistics(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		conf     float64
		lo, hi   float64 // ranks k and n+1−k
		achieved float64
	}{
		// n = 6, α/2 = 0.025: P(B ≤ 0) = 1/64 = 0.0156 ≤ 0.025 < P(B ≤ 1) = 7/64,
		// so k = 1: [d₍₁₎, d₍₆₎], coverage 1 − 2/64 = 0.96875.
		{"n=6 at 95%", 6, 0.95, 1, 6, 1 - 2.0/64},
		// n = 10: P(B ≤ 1) = (1+10)/1024 = 0.0107 ≤ 0.025 < P(B ≤ 2) = 56/1024 = 0.0547,
		// so k = 2: [d₍₂₎, d₍₉₎], coverage 1 − 22/1024 = 0.978515625.
		{"n=10 at 95%", 10, 0.95, 2, 9, 1 - 22.0/1024},
		// n = 20: P(B ≤ 5) = (1+20+190+1140+4845+15504)/2²⁰ = 21700/1048576 = 0.0207 ≤ 0.025,
		// P(B ≤ 6) = 60460/1048576 = 0.0577 > 0.025, so k = 6: [d₍₆₎, d₍₁₅₎],
		// coverage 1 − 43400/1048576 = 0.958611.
		{"n=20 at 95%", 20, 0.95, 6, 15, 1 - 43400.0/1048576},
		// n = 10 at 90 %: P(B ≤ 1) = 0.0107 ≤ 0.05 < P(B ≤ 2) = 0.0547, k = 2 again.
		{"n=10 at 90%", 10, 0.90, 2, 9, 1 - 22.0/1024},
		// n = 11 at 90 %: P(B ≤ 2) = (1+11+55)/2048 = 0.0327 ≤ 0.05 <
		// P(B ≤ 3) = 232/2048 = 0.113, so k = 3: [d₍₃₎, d₍₉₎], coverage 1 − 134/2048.
		{"n=11 at 90%", 11, 0.90, 3, 9, 1 - 134.0/2048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			perm := rand.New(rand.NewPCG(1, 2)).Perm(tt.n)
			d := make([]float64, tt.n)
			for i, p := range perm {
				d[i] = float64(p + 1)
			}
			a, b := pairs(d)
			r, err := compare.Paired(a, b, tt.conf, 1)
			if err != nil {
				t.Fatal(err)
			}
			if r.CILow != tt.lo || r.CIHigh != tt.hi {
				t.Errorf("interval [%v, %v], want [d(%v), d(%v)]", r.CILow, r.CIHigh, tt.lo, tt.hi)
			}
			if math.Abs(r.Achieved-tt.achieved) > 1e-12 {
				t.Errorf("achieved %v, want %v", r.Achieved, tt.achieved)
			}
			if r.Achieved < tt.conf {
				t.Errorf("achieved %v below nominal %v", r.Achieved, tt.conf)
			}
			if r.Method != compare.MethodSignTest || r.N != tt.n || r.Confidence != tt.conf {
				t.Errorf("method %q, n %d, confidence %v", r.Method, r.N, r.Confidence)
			}
			// Median of 1..n is (n+1)/2; so is the mean.
			if want := float64(tt.n+1) / 2; r.MedianDiff != want || math.Abs(r.MeanDiff-want) > 1e-12 {
				t.Errorf("median %v, mean %v, want %v", r.MedianDiff, r.MeanDiff, want)
			}
		})
	}
}

func TestPairedCounts(t *testing.T) {
	// Ids 0..7 in both; 100 only in A and 200 only in B are ignored.
	a := map[int]float64{0: 10, 1: 10, 2: 10, 3: 10, 4: 10, 5: 10, 6: 10, 7: 10, 100: 1}
	b := map[int]float64{0: 5, 1: 7, 2: 10, 3: 12, 4: 9, 5: 10, 6: 30, 7: 8, 200: 1}
	// d = −5, −3, 0, 2, −1, 0, 20, −2 → sorted −5 −3 −2 −1 0 0 2 20.
	r, err := compare.Paired(a, b, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.N != 8 || r.Wins != 4 || r.Losses != 2 || r.Ties != 2 {
		t.Errorf("n %d wins %d losses %d ties %d, want 8 4 2 2", r.N, r.Wins, r.Losses, r.Ties)
	}
	// Median: mean of the 4th and 5th sorted values, (−1 + 0)/2; mean 11/8.
	if r.MedianDiff != -0.5 || r.MeanDiff != 11.0/8 {
		t.Errorf("median %v mean %v, want -0.5 and 1.375", r.MedianDiff, r.MeanDiff)
	}
	// n = 8 at 95 %: P(B ≤ 0) = 1/256 ≤ 0.025 < P(B ≤ 1) = 9/256, so k = 1:
	// [d₍₁₎, d₍₈₎] = [−5, 20].
	if r.CILow != -5 || r.CIHigh != 20 {
		t.Errorf("interval [%v, %v], want [-5, 20]", r.CILow, r.CIHigh)
	}
}

func TestPairedErrors(t *testing.T) {
	five, fiveB := pairs([]float64{1, 2, 3, 4, 5})
	six, sixB := pairs([]float64{1, 2, 3, 4, 5, 6})
	tests := []struct {
		name    string
		a, b    map[int]float64
		conf    float64
		is      error
		wantHas []string
	}{
		{"five pairs at 95%", five, fiveB, 0.95, compare.ErrTooFewPairs, []string{"5 pairs", "at least 6", "95 %"}},
		{"six pairs at 99%", six, sixB, 0.99, compare.ErrTooFewPairs, []string{"6 pairs", "at least 8", "99 %"}},
		{"no common ids", map[int]float64{1: 1}, map[int]float64{2: 1}, 0.95, compare.ErrTooFewPairs, []string{"0 pairs"}},
		{"confidence given in percent", six, sixB, 95, nil, []string{"confidence = 95", "between 0 and 1"}},
		{"confidence 1", six, sixB, 1, nil, []string{"confidence = 1"}},
		{"NaN value", map[int]float64{0: 1, 1: math.NaN(), 2: 1, 3: 1, 4: 1, 5: 1},
			map[int]float64{0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1}, 0.95, nil, []string{"request 1", "finite"}},
		{"infinite value", six, map[int]float64{0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: math.Inf(1)}, 0.95, nil, []string{"request 5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for method, run := range map[string]func() error{
				"sign test": func() error { _, err := compare.Paired(tt.a, tt.b, tt.conf, 1); return err },
				"bootstrap": func() error { _, err := compare.PairedBootstrap(tt.a, tt.b, tt.conf, 100, 1); return err },
			} {
				err := run()
				if err == nil {
					t.Fatalf("%s: no error", method)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("%s: %v is not %v", method, err, tt.is)
				}
				for _, w := range tt.wantHas {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: error %q lacks %q", method, err, w)
					}
				}
			}
		})
	}
	if _, err := compare.PairedBootstrap(six, sixB, 0.95, -1, 1); err == nil {
		t.Error("negative resamples accepted")
	}
}

// shifted draws n pairs with B = A + shift + ε, A lognormal-ish latencies and
// ε ~ N(0, sd²), so the true median difference is shift.
func shifted(n int, shift, sd float64, seed uint64) (map[int]float64, map[int]float64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	a, b := make(map[int]float64, n), make(map[int]float64, n)
	for i := range n {
		a[i] = 200 * math.Exp(0.5*rng.NormFloat64())
		b[i] = a[i] + shift + sd*rng.NormFloat64()
	}
	return a, b
}

func TestPairedShift(t *testing.T) {
	// n = 200 pairs, noise sd σ = 10. The sample median of d has standard
	// error ≈ √(π/2)·σ/√n = 1.2533·10/14.14 ≈ 0.89, so it must lie within
	// 4 se ≈ 3.5 of the true shift (a miss has probability ~6e-5). The
	// intervals are asked at 99 %, so with this fixed seed a miss of the true
	// value had ≤ 1 % probability a priori; a shift of 25 is ~28 se from 0, so
	// a shifted interval cannot reach 0 by chance.
	const n, sd, seSlack = 200, 10.0, 3.5
	tests := []struct {
		name     string
		shift    float64
		exclude0 bool
	}{
		{"B slower by 25", 25, true},
		{"B faster by 25", -25, true},
		{"no shift", 0, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := shifted(n, tt.shift, sd, uint64(100+i))
			for _, r := range []compare.PairedResult{
				must(compare.Paired(a, b, 0.99, 7)),
				must(compare.PairedBootstrap(a, b, 0.99, 0, 7)),
			} {
				if math.Abs(r.MedianDiff-tt.shift) > seSlack {
					t.Errorf("%s: median diff %v, want %v ± %v", r.Method, r.MedianDiff, tt.shift, seSlack)
				}
				for _, iv := range [][2]float64{{r.CILow, r.CIHigh}, {r.BootLow, r.BootHigh}} {
					if !(iv[0] <= tt.shift && tt.shift <= iv[1]) {
						t.Errorf("%s: interval %v misses the true shift %v", r.Method, iv, tt.shift)
					}
					if tt.exclude0 && iv[0] <= 0 && 0 <= iv[1] {
						t.Errorf("%s: interval %v contains 0 despite the shift", r.Method, iv)
					}
					if !(iv[0] <= r.MedianDiff && r.MedianDiff <= iv[1]) {
						t.Errorf("%s: interval %v excludes the sample median %v", r.Method, iv, r.MedianDiff)
					}
				}
			}
		})
	}
}

func must(r compare.PairedResult, err error) compare.PairedResult {
	if err != nil {
		panic(err)
	}
	return r
}

func TestPairedBootstrapDeterministic(t *testing.T) {
	a, b := shifted(50, 3, 5, 1)
	r1 := must(compare.PairedBootstrap(a, b, 0.95, 500, 11))
	r2 := must(compare.PairedBootstrap(a, b, 0.95, 500, 11))
	if r1 != r2 {
		t.Errorf("same seed, different results: %+v vs %+v", r1, r2)
	}
	if r1.Method != compare.MethodBootstrap || r1.Resamples != 500 || r1.CILow != r1.BootLow || r1.CIHigh != r1.BootHigh {
		t.Errorf("bootstrap result fields: %+v", r1)
	}
	// Paired's bootstrap cross-check uses the same seed and DefaultResamples.
	p := must(compare.Paired(a, b, 0.95, 11))
	q := must(compare.PairedBootstrap(a, b, 0.95, compare.DefaultResamples, 11))
	if p.BootLow != q.CILow || p.BootHigh != q.CIHigh || p.Resamples != compare.DefaultResamples {
		t.Errorf("Paired bootstrap [%v, %v] vs PairedBootstrap [%v, %v]", p.BootLow, p.BootHigh, q.CILow, q.CIHigh)
	}
}

// TestSignTestCoverage replicates a paired comparison 500 times with a skewed
// difference distribution whose median is known: d = shift + (E − ln 2) with
// E ~ Exp(1), median shift, mean shift + 1 − ln 2 (so an interval around the
// mean would be caught). For continuous d the sign-test interval's coverage
// is exactly p = 1 − 2·P(Binomial(20, ½) ≤ 5) = 0.958611 at n = 20 — above
// the nominal 0.95, the interval being conservative. The number of covering
// replications is then Binomial(500, p): mean 479.3, sd √(500·p·(1−p)) ≈ 4.45.
// We accept ±4 sd (≈ 17.8), a two-sided false-alarm probability of about 6e-5.
func TestSignTestCoverage(t *testing.T) {
	const reps, n, shift = 500, 20, 3.0
	rng := rand.New(rand.NewPCG(2024, 7))
	covered := 0
	var achieved float64
	for rep := range reps {
		d := make([]float64, n)
		for i := range d {
			d[i] = shift + rng.ExpFloat64() - math.Ln2
		}
		a, b := pairs(d)
		r, err := compare.Paired(a, b, 0.95, int64(rep))
		if err != nil {
			t.Fatal(err)
		}
		achieved = r.Achieved
		if r.CILow <= shift && shift <= r.CIHigh {
			covered++
		}
	}
	if want := 1 - 43400.0/1048576; math.Abs(achieved-want) > 1e-12 {
		t.Fatalf("achieved coverage %v, want %v", achieved, want)
	}
	mean := reps * achieved
	sd := math.Sqrt(reps * achieved * (1 - achieved))
	t.Logf("covered %d of %d (expected %.1f ± %.2f)", covered, reps, mean, sd)
	if math.Abs(float64(covered)-mean) > 4*sd {
		t.Errorf("covered %d of %d, expected %.1f ± %.1f (4 sd)", covered, reps, mean, 4*sd)
	}
}
