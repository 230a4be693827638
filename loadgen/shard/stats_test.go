package shard_test

import (
	"math"
	"os"
	"slices"
	"sort"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/workloads"
)

func unsetenv(t *testing.T, key string) {
	t.Helper()
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}

// ids returns requests with IDs 0..n-1 (Filter only reads the ID).
func ids(n int) []workloads.Request {
	reqs := make([]workloads.Request, n)
	for i := range reqs {
		reqs[i].ID = i
	}
	return reqs
}

// ksStatistic is the Kolmogorov–Smirnov distance between the sample and the CDF.
func ksStatistic(sample []float64, cdf func(float64) float64) float64 {
	x := slices.Clone(sample)
	sort.Float64s(x)
	n := float64(len(x))
	d := 0.0
	for i, v := range x {
		f := cdf(v)
		d = max(d, f-float64(i)/n, float64(i+1)/n-f)
	}
	return d
}

// ksCritical is the asymptotic Kolmogorov critical value for m samples at level
// Q(λ) = 2·Σ(−1)^(j−1)·exp(−2j²λ²): λ = 2.2 gives about 1.25e-4, so a correct hypothesis fails
// this check with that probability per row (the seeds are fixed, so a pass is reproducible).
func ksCritical(m int) float64 { return 2.2 / math.Sqrt(float64(m)) }

// TestShardGapsAreGammaKB checks the package documentation's claim: with Gamma(b) gaps of mean 1/r,
// a shard's gaps are i.i.d. Gamma(shape k·b, rate r·b): mean k/r, CV 1/√(kb).
func TestShardGapsAreGammaKB(t *testing.T) {
	const (
		r    = 10.0  // requests/s of the global schedule
		m    = 20000 // gaps per shard
		seed = 20260501
	)
	tests := []struct {
		name    string
		b       float64
		k       int
		shardIx int
	}{
		{"poisson split in 3 is Erlang-3", 1, 3, 1},
		{"bursty b=0.5 split in 4", 0.5, 4, 3},
		{"smooth b=2.5 split in 2", 2.5, 2, 0},
		{"poisson in 1 shard stays poisson", 1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.k*(m+1) + tt.shardIx
			offsets, err := arrival.Spec{Rate: r, Burstiness: arrival.Burstiness(tt.b)}.Offsets(n, seed)
			if err != nil {
				t.Fatal(err)
			}
			offs, _ := shard.Spec{Index: tt.shardIx, Count: tt.k}.Filter(offsets, ids(n))
			gaps := make([]float64, len(offs)-1)
			for j := range gaps {
				gaps[j] = (offs[j+1] - offs[j]).Seconds()
			}
			if len(gaps) < m {
				t.Fatalf("only %d gaps", len(gaps))
			}
			gaps = gaps[:m]
			shape := float64(tt.k) * tt.b
			mean, cv := float64(tt.k)/r, 1/math.Sqrt(shape)

			// Sample mean: standard error σ/√m = mean·cv/√m; 5 standard errors (the CLT holds well
			// at m = 20000) are exceeded with probability 6e-7.
			gotMean, gotSD := meanSD(gaps)
			if tol := 5 * mean * cv / math.Sqrt(m); math.Abs(gotMean-mean) > tol {
				t.Errorf("mean gap %.6g s, want k/r = %.6g ± %.2g", gotMean, mean, tol)
			}
			// Sample CV: by the delta method Var(ĉ) ≈ (c²/m)·((κ−1)/4 + c² − γc), with skewness
			// γ and kurtosis κ; for a Gamma of CV c, γ = 2c and κ = 3 + 6c², so Var(ĉ) = c²(1+c²)/(2m).
			if tol := 5 * cv * math.Sqrt((1+cv*cv)/(2*m)); math.Abs(gotSD/gotMean-cv) > tol {
				t.Errorf("gap CV %.4f, want 1/√(kb) = %.4f ± %.2g", gotSD/gotMean, cv, tol)
			}
			// Whole distribution: Kolmogorov–Smirnov against Gamma(kb, rate r·b).
			g := distuv.Gamma{Alpha: shape, Beta: r * tt.b}
			if d := ksStatistic(gaps, g.CDF); d > ksCritical(m) {
				t.Errorf("KS distance to Gamma(shape %g, rate %g) is %.4f > %.4f", shape, r*tt.b, d, ksCritical(m))
			}
			// Renewal: consecutive gaps are sums over disjoint blocks of independent gaps, so their
			// lag-1 correlation is 0; its estimate has standard error 1/√m.
			if rho := lag1(gaps); math.Abs(rho) > 5/math.Sqrt(m) {
				t.Errorf("lag-1 correlation of gaps %.4f, want 0 ± %.3f", rho, 5/math.Sqrt(m))
			}
			// For k > 1 the shard is NOT Poisson at rate r/k (the split is not random thinning):
			// the KS distance to Exponential(r/k) must be large. For Erlang-3 against the
			// exponential of the same mean the true distance is about 0.15, far beyond the
			// critical value.
			if tt.k > 1 && tt.b == 1 {
				e := distuv.Exponential{Rate: r / float64(tt.k)}
				if d := ksStatistic(gaps, e.CDF); d < 10*ksCritical(m) {
					t.Errorf("KS distance to Exponential(r/k) is only %.4f: the shard looks Poisson, which an every-k-th split cannot be", d)
				}
			}
		})
	}
}

// TestShardFirstArrival: shard i's first request is at t_i, the sum of i+1 global gaps:
// Gamma(shape (i+1)·b, rate r·b). One value per seed, so the sample is over seeds.
func TestShardFirstArrival(t *testing.T) {
	const (
		r, b  = 4.0, 0.7
		k, ix = 5, 2
		seeds = 3000
	)
	first := make([]float64, seeds)
	for s := range seeds {
		offsets, err := arrival.Spec{Rate: r, Burstiness: b}.Offsets(k, int64(1000+s))
		if err != nil {
			t.Fatal(err)
		}
		offs, _ := shard.Spec{Index: ix, Count: k}.Filter(offsets, ids(k))
		first[s] = offs[0].Seconds()
	}
	g := distuv.Gamma{Alpha: float64(ix+1) * b, Beta: r * b}
	if d := ksStatistic(first, g.CDF); d > ksCritical(seeds) {
		t.Errorf("first arrival of shard %d/%d: KS distance to Gamma(%g, rate %g) is %.4f > %.4f", ix, k, g.Alpha, g.Beta, d, ksCritical(seeds))
	}
}

// TestConstantSpacingSplitsIntoConstantSpacing: b = inf has no randomness: every shard gap is
// exactly k/r, up to the nanosecond rounding of each offset (so within 1 ns).
func TestConstantSpacingSplitsIntoConstantSpacing(t *testing.T) {
	const r, k, n = 7.0, 3, 300
	offsets, err := arrival.Spec{Rate: r, Burstiness: arrival.Burstiness(math.Inf(1))}.Offsets(n, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Duration(math.Round(float64(k) / r * 1e9))
	for i := range k {
		offs, _ := shard.Spec{Index: i, Count: k}.Filter(offsets, ids(n))
		for j := 1; j < len(offs); j++ {
			if d := offs[j] - offs[j-1] - want; d < -1 || d > 1 {
				t.Fatalf("shard %d/%d gap %d is %v, want %v ± 1ns", i, k, j, offs[j]-offs[j-1], want)
			}
		}
	}
}

// TestUnionIsTheSingleMachineSchedule: over all shards, every request appears once at its global
// offset, for every kind of schedule.
func TestUnionIsTheSingleMachineSchedule(t *testing.T) {
	specs := []arrival.Spec{
		{Rate: 20, Burstiness: 1},
		{Rate: 20, Burstiness: 0.3},
		{Rate: math.Inf(1), Burstiness: 1},
		{Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 1, RampEnd: 30},
	}
	const n = 1001
	for _, sp := range specs {
		offsets, err := sp.Offsets(n, 9)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{1, 2, 3, 7} {
			got := make([]time.Duration, n)
			seen := make([]int, n)
			for i := range k {
				offs, reqs := shard.Spec{Index: i, Count: k}.Filter(offsets, ids(n))
				for j, r := range reqs {
					got[r.ID] = offs[j]
					seen[r.ID]++
				}
			}
			for id := range n {
				if seen[id] != 1 || got[id] != offsets[id] {
					t.Fatalf("%s, k=%d: request %d seen %d times at %v, want once at %v", sp, k, id, seen[id], got[id], offsets[id])
				}
			}
		}
	}
}

func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)))
}

func lag1(x []float64) float64 {
	mean, sd := meanSD(x)
	s := 0.0
	for i := 1; i < len(x); i++ {
		s += (x[i] - mean) * (x[i-1] - mean)
	}
	return s / float64(len(x)-1) / (sd * sd)
}
