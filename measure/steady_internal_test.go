package measure

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// White-box checks of the batch-means variance factor against series whose variance inflation
// is known.
//
// Theory used by the tolerances. For a stationary series with variance σ² and autocorrelations
// ρ_j, the variance of a mean of m consecutive values is σ²·g_m/m with
//
//	g_m = 1 + 2 Σ_{j=1}^{m−1} (1 − j/m) ρ_j,   g_∞ = 1 + 2 Σ_j ρ_j (the variance factor).
//
// varianceFactor's f_b = b·s²_batch/s²_x. Over k = ⌊n/b⌋ batches (n' = kb values) the sum of
// squared deviations of the batch means from their mean has expectation k·(V_b − V_{n'}), with
// V_m = σ² g_m/m; so E[b·s²_batch] = σ²·k/(k−1)·(g_b − g_{n'}/k), and E[s²_x] = σ²·n/(n−1)·
// (1 − g_n/n). Their ratio is the expected f_b (ratioExpectation below). Its noise: for batches
// longer than the correlation, s²_batch is a variance of k nearly independent, nearly normal
// means, with relative standard deviation √(2/(k−1)); batches no longer than the correlation
// are themselves correlated (lag-j correlation about ρ^{bj} for a two-state chain), which
// multiplies the variance of s²_batch by c_b = Σ_{j∈ℤ} ρ^{2b|j|} = (1 + ρ^{2b})/(1 − ρ^{2b}).
// f is the largest f_b: E[f] ≤ max_b E[f_b] + Σ_b E[(f_b − E f_b)⁺], and E[X⁺] ≤ SD(X)/2 for any
// centred X (E|X| ≤ SD), which bounds the selection bias of the maximum.

// batchSizes are the batch sizes varianceFactor looks at for n values.
func batchSizes(n int) []int {
	var bs []int
	for b := 2; n/b >= MinBatches; b *= 2 {
		bs = append(bs, b)
	}
	return bs
}

// gOf is g_m for autocorrelations ρ^j.
func gOf(rho float64, m int) float64 {
	g, r := 1.0, 1.0
	for j := 1; j < m; j++ {
		r *= rho
		g += 2 * (1 - float64(j)/float64(m)) * r
	}
	return g
}

// ratioExpectation is E[f_b] for a series with autocorrelations ρ^j (see the theory above).
func ratioExpectation(rho float64, n, b int) float64 {
	k := n / b
	num := float64(k) / float64(k-1) * (gOf(rho, b) - gOf(rho, k*b)/float64(k))
	den := float64(n) / float64(n-1) * (1 - gOf(rho, n)/float64(n))
	return num / den
}

// factorBounds returns, for series of n values with autocorrelations ρ^j: the largest E[f_b]
// and the bound on E[f] (that plus half the sum of the f_b's standard deviations).
func factorBounds(rho float64, n int) (maxMean, meanBound float64) {
	extra := 0.0
	for _, b := range batchSizes(n) {
		e := ratioExpectation(rho, n, b)
		k := n / b
		r2b := math.Pow(rho, 2*float64(b))
		c := (1 + r2b) / (1 - r2b)
		maxMean = math.Max(maxMean, e)
		extra += e * math.Sqrt(2*c/float64(k-1)) / 2
	}
	return maxMean, maxMean + extra
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// TestVarianceFactorIID: on independent Bernoulli(p) series the factor is 1 up to noise.
//
//   - Every replication: under independence (k−1)·f_b is nearly χ²_{k−1} (a sum of k squared,
//     nearly normal batch means; its variance, 2/(k−1) for f_b, holds for any distribution of
//     the values: f_b − 1 is to first order 2/(nσ²) times a sum of k·b(b−1)/2 uncorrelated
//     products of centred values within batches, of variance 2(b−1)/n ≈ 2/k). The factor must
//     stay below the largest χ² quantile over the batch sizes at 1 − 0.01/checks, Bonferroni
//     over every batch size of every replication of every case, so that a correct estimator
//     fails the whole test with probability below about 1 %.
//   - The mean over the replications: E[f] ≤ 1 + ½ Σ_b √(2/(k_b−1)) (the maximum's selection
//     bias, see above), plus 3 standard errors of the mean.
func TestVarianceFactorIID(t *testing.T) {
	const reps = 200
	cases := []struct {
		p float64
		n int
	}{
		{0.5, 200},   // batch sizes 2…8, 25 batches at the largest
		{0.5, 2000},  // 2…64, 31 batches
		{0.2, 2000},  // batch sums of 64 values ~ Binomial(64, 0.2): mean 12.8, nearly normal
		{0.05, 5000}, // 2…128, 39 batches of sums with mean 6.4
	}
	checks := 0
	for _, c := range cases {
		checks += reps * len(batchSizes(c.n))
	}
	alpha := 0.01 / float64(checks)
	for ci, c := range cases {
		bs := batchSizes(c.n)
		limit := 0.0
		for _, b := range bs {
			k := float64(c.n / b)
			limit = math.Max(limit, distuv.ChiSquared{K: k - 1}.Quantile(1-alpha)/(k-1))
		}
		_, meanBound := factorBounds(0, c.n)
		rng := rand.New(rand.NewPCG(uint64(ci+1), 0x11d))
		xs := make([]float64, c.n)
		fs := make([]float64, 0, reps)
		worst := 0.0
		for range reps {
			for i := range xs {
				xs[i] = 0
				if rng.Float64() < c.p {
					xs[i] = 1
				}
			}
			f := varianceFactor(xs)
			if f < 1 {
				t.Errorf("p=%v n=%d: factor %v below 1", c.p, c.n, f)
			}
			worst = math.Max(worst, f)
			fs = append(fs, f)
		}
		mean, sd := meanSD(fs)
		t.Logf("iid Bernoulli(%v), n=%d: factor mean %.3f (bound %.3f), SD %.3f, largest %.3f (limit %.3f)", c.p, c.n, mean, meanBound, sd, worst, limit)
		if worst > limit {
			t.Errorf("p=%v n=%d: a factor of %.3f on independent values, above the χ² limit %.3f", c.p, c.n, worst, limit)
		}
		if bound := meanBound + 3*sd/math.Sqrt(reps); mean > bound {
			t.Errorf("p=%v n=%d: mean factor %.3f on independent values, above %.3f", c.p, c.n, mean, bound)
		}
	}
}

// markov draws n values of the two-state chain that stays at 1 with probability a and at 0
// with probability d, started from its stationary law (P(1) = (1−d)/(2−a−d)). Its
// autocorrelations are ρ^j with ρ = a + d − 1, so the variance factor of its mean is
// 1 + 2 Σ ρ^j = (1+ρ)/(1−ρ).
func markov(rng *rand.Rand, a, d float64, xs []float64) {
	x := 0.0
	if rng.Float64() < (1-d)/(2-a-d) {
		x = 1
	}
	for i := range xs {
		xs[i] = x
		stay := d
		if x == 1 {
			stay = a
		}
		if rng.Float64() >= stay {
			x = 1 - x
		}
	}
}

// TestVarianceFactorMarkov: on clustered two-state chains (misses that come in runs, as behind a
// slow stretch) the factor's mean over replications lies between the largest expected f_b (the
// maximum is at least any one f_b; the expectation falls short of (1+ρ)/(1−ρ) by the batches'
// finite length) and that plus the maximum's selection bias, each widened by 3 standard errors
// of the mean (the replications' spread over √R).
func TestVarianceFactorMarkov(t *testing.T) {
	const reps, n = 200, 5000
	cases := []struct{ a, d float64 }{
		{0.95, 0.55}, // ρ = 0.5, 90 % ones: factor 3
		{0.99, 0.80}, // ρ = 0.79, 95 % ones: factor 8.52
		{0.995, 0.9}, // ρ = 0.895, 95 % ones in runs of 10 zeros: factor 18.0
	}
	for ci, c := range cases {
		rho := c.a + c.d - 1
		want := (1 + rho) / (1 - rho)
		lo, hi := factorBounds(rho, n)
		rng := rand.New(rand.NewPCG(uint64(ci+1), 0x3a7))
		xs := make([]float64, n)
		fs := make([]float64, 0, reps)
		for range reps {
			markov(rng, c.a, c.d, xs)
			fs = append(fs, varianceFactor(xs))
		}
		mean, sd := meanSD(fs)
		se := sd / math.Sqrt(reps)
		t.Logf("two-state chain a=%v d=%v (ρ=%.3f, (1+ρ)/(1−ρ) = %.2f): factor mean %.2f ± %.2f (SE), SD %.2f; expected between %.2f and %.2f",
			c.a, c.d, rho, want, mean, se, sd, lo, hi)
		if mean < lo-3*se || mean > hi+3*se {
			t.Errorf("ρ=%.3f: mean factor %.2f, want in [%.2f, %.2f] ((1+ρ)/(1−ρ) = %.2f)", rho, mean, lo-3*se, hi+3*se, want)
		}
	}
}

func TestVarianceFactorDegenerate(t *testing.T) {
	// Constants whose sums are exact (see TestVarianceFactorConstantSeries for the others).
	for _, c := range []float64{0, 0.5, 1, 3} {
		for _, n := range []int{0, 1, 2*MinBatches - 1, 2 * MinBatches, 1000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = c
			}
			if f := varianceFactor(xs); f != 1 {
				t.Errorf("constant series of %d × %v: factor %v, want 1", n, c, f)
			}
		}
	}
	// Too short to form MinBatches batches of 2: 1, however clustered.
	xs := make([]float64, 2*MinBatches-1)
	for i := range 10 {
		xs[i] = 1
	}
	if f := varianceFactor(xs); f != 1 {
		t.Errorf("%d values: factor %v, want 1", len(xs), f)
	}
	// Alternating values are negatively correlated: the batch means do not vary at all, and the
	// factor is floored at 1.
	xs = make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i % 2)
	}
	if f := varianceFactor(xs); f != 1 {
		t.Errorf("alternating series: factor %v, want 1", f)
	}
	// By hand: 1, 1, 0, 0 repeated. With 40 values only b = 2 leaves 20 batches; their means
	// alternate 1, 0 (variance 20·¼/19 = 5/19), the values' variance is 40·¼/39 = 10/39:
	// f = 2·(5/19)/(10/39) = 39/19. With 80 values, f_2 = 2·(40·¼/39)/(80·¼/79) = 79/39, and the
	// 20 batches of 4 all have mean ½ (f_4 = 0).
	for _, c := range []struct {
		n    int
		want float64
	}{{40, 39.0 / 19}, {80, 79.0 / 39}} {
		xs = make([]float64, c.n)
		for i := range xs {
			xs[i] = float64(1 - i/2%2)
		}
		if f := varianceFactor(xs); math.Abs(f-c.want) > 1e-12 {
			t.Errorf("1, 1, 0, 0, … (%d values): factor %v, want %v", c.n, f, c.want)
		}
	}
}

// TestVarianceFactorConstantSeries: a series that does not vary has factor 1 (as documented),
// whatever its value. A constant time in system is what a deterministic deployment shows at a
// load where no request waits (on an M/D/c queue: every request in system for exactly D).
func TestVarianceFactorConstantSeries(t *testing.T) {
	for _, c := range []float64{0.42, 0.7, 1.1} {
		for _, n := range []int{1000, 1480, 5000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = c
			}
			if f := varianceFactor(xs); f != 1 {
				t.Errorf("constant series of %d × %v: factor %v, want 1", n, c, f)
			}
		}
	}
}

// TestSteadyConstantTimeInSystem: every request of these tiers spends exactly 420 ms in the
// system and meets its objective; nothing varies, so nothing clusters: the variance factor must
// be 1 and the effective sample the whole window.
func TestSteadyConstantTimeInSystem(t *testing.T) {
	for _, n := range []int{600, 800, 1042, 1200, 1500} {
		obs := make([]Obs, n)
		for k := range obs {
			p := time.Duration(k) * 100 * time.Millisecond
			obs[k] = Obs{Planned: p, First: p + 100*time.Millisecond, Last: p + 420*time.Millisecond, End: p + 420*time.Millisecond,
				Tokens: 4, Flags: ObsOK | ObsCompliant}
		}
		st := SteadyState(obs, time.Duration(n)*100*time.Millisecond, SteadyWindow{})
		if st.VarianceFactor != 1 || st.EffectiveRequests != float64(st.Requests) {
			t.Errorf("%d requests in [%v s, %v s], all 420 ms in system: variance factor %v, %v effective requests; want 1, %d",
				st.Requests, st.Start, st.End, st.VarianceFactor, st.EffectiveRequests, st.Requests)
		}
	}
}

// TestSteadyFactorSources: the share's variance factor is that of the time in system, and also
// that of the compliance indicator once it holds MinClusterMisses misses.
func TestSteadyFactorSources(t *testing.T) {
	build := func(misses int, clusteredTimes bool) ([]Obs, []float64, []float64) {
		obs := make([]Obs, 1000)
		var xs, tis []float64
		for k := range obs {
			p := time.Duration(k) * 100 * time.Millisecond
			tis0 := time.Second
			if clusteredTimes && (k/40)%2 == 1 {
				tis0 = 1300 * time.Millisecond
			}
			o := Obs{Planned: p, First: p + 200*time.Millisecond, Last: p + tis0, End: p + tis0, Tokens: 5, Flags: ObsOK | ObsCompliant}
			// The misses come in one run starting at k = 500.
			if k >= 500 && k < 500+misses {
				o.Flags = ObsOK
			}
			obs[k] = o
		}
		// The window of these tiers is [10 s, 100 s] (10 × the median time in system, 1 s):
		// k = 100…999.
		for _, o := range obs[100:] {
			x := 0.0
			if o.Flags&ObsCompliant != 0 {
				x = 1
			}
			xs = append(xs, x)
			tis = append(tis, (o.End - o.Planned).Seconds())
		}
		return obs, xs, tis
	}
	for _, tt := range []struct {
		misses         int
		clusteredTimes bool
	}{
		{MinClusterMisses - 1, false}, // too few misses: the time in system's factor (1)
		{MinClusterMisses, false},     // the indicator's
		{MinClusterMisses, true},      // the larger of both
		{MinClusterMisses - 1, true},  // the time in system's
	} {
		obs, xs, tis := build(tt.misses, tt.clusteredTimes)
		st := SteadyState(obs, 100*time.Second, SteadyWindow{})
		if st.Start != 10 || st.Requests != 900 {
			t.Fatalf("window [%v, %v] with %d requests, want [10, 100] with 900", st.Start, st.End, st.Requests)
		}
		want := varianceFactor(tis)
		if tt.misses >= MinClusterMisses {
			want = math.Max(want, varianceFactor(xs))
		}
		if st.VarianceFactor != want || st.EffectiveRequests != 900/want {
			t.Errorf("%d misses, clustered times %v: factor %v (effective %v), want %v (%v)", tt.misses, tt.clusteredTimes,
				st.VarianceFactor, st.EffectiveRequests, want, 900/want)
		}
		if tt.misses >= MinClusterMisses && !(st.VarianceFactor > 1) {
			t.Errorf("%d misses in one run: factor %v, want above 1", tt.misses, st.VarianceFactor)
		}
	}
}
