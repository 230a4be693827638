package measure_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/measure"
)

// series draws n requests with Poisson arrivals at rate req/s (planned
// times) and values mu + slope·t + noise, the noise an AR(1) process
// e_i = φ·e_{i−1} + N(0, σ²) started from its stationary law (φ = 0 gives
// iid noise), all from one seed.
func series(seed uint64, n int, rate, mu, slope, phi, sigma float64) (planned, value []float64) {
	rng := rand.New(rand.NewPCG(seed, 0x7e57))
	planned, value = make([]float64, n), make([]float64, n)
	t := 0.0
	e := rng.NormFloat64() * sigma / math.Sqrt(1-phi*phi)
	for i := range n {
		t += rng.ExpFloat64() / rate
		planned[i] = t
		value[i] = mu + slope*t + e
		e = phi*e + rng.NormFloat64()*sigma
	}
	return planned, value
}

func TestTrendTest(t *testing.T) {
	const seed = 42
	type gen func() ([]float64, []float64)
	tests := []struct {
		name    string
		gen     gen
		tested  bool
		growing bool
		slope   float64 // expected Theil–Sen slope (ms/s), checked when tol > 0
		tol     float64
		reason  string
	}{
		{
			// 30 s at 10 req/s, +50 ms/s: 1500 ms of growth. The OLS slope's
			// standard error is σ/√(n·span²/12) = 20/150 ≈ 0.13 ms/s and
			// Theil–Sen's is within 10 % of it for normal noise, so 1 ms/s
			// is over 7 standard errors.
			name: "linear growth, iid noise", gen: func() ([]float64, []float64) { return series(seed, 300, 10, 200, 50, 0, 20) },
			tested: true, growing: true, slope: 50, tol: 1, reason: "growing",
		},
		{
			name: "linear growth, AR(1) noise", gen: func() ([]float64, []float64) { return series(seed, 300, 10, 200, 50, 0.9, 20) },
			tested: true, growing: true, reason: "growing",
		},
		{
			name: "linear growth, long tier in blocks", gen: func() ([]float64, []float64) { return series(seed, 5000, 50, 200, 20, 0.9, 20) },
			tested: true, growing: true, slope: 20, tol: 1, reason: "growing",
		},
		{
			name: "stationary, iid", gen: func() ([]float64, []float64) { return series(seed, 300, 10, 200, 0, 0, 20) },
			tested: true, growing: false, reason: "stable",
		},
		{
			name: "stationary, AR(1) φ=0.9", gen: func() ([]float64, []float64) { return series(seed, 300, 10, 200, 0, 0.9, 20) },
			tested: true, growing: false, reason: "stable",
		},
		{
			name: "stationary, long tier in blocks", gen: func() ([]float64, []float64) { return series(seed, 5000, 50, 200, 0, 0.9, 20) },
			tested: true, growing: false, reason: "stable",
		},
		{
			// A draining queue is not instability: the test is one-sided.
			name: "decreasing", gen: func() ([]float64, []float64) { return series(seed, 300, 10, 2000, -50, 0, 20) },
			tested: true, growing: false, slope: -50, tol: 1, reason: "stable",
		},
		{
			// +1 ms/s with 1 ms noise is certain but only 30 ms over the tier,
			// under the 100 ms practical threshold.
			name: "significant but small", gen: func() ([]float64, []float64) { return series(seed, 300, 10, 200, 1, 0, 1) },
			tested: true, growing: false, slope: 1, tol: 0.1, reason: "significant but small",
		},
		{
			// +6 ms/s over 30 s is 180 ms: above the 100 ms floor, but a
			// 1000 ms first fifth needs 25 % = 250 ms of growth.
			name: "relative threshold", gen: func() ([]float64, []float64) { return series(seed, 300, 10, 1000, 6, 0, 1) },
			tested: true, growing: false, slope: 6, tol: 0.1, reason: "significant but small",
		},
		{
			// +3 ms/s over 300 s is 900 ms, above both growth thresholds, and certain;
			// but a queue fed faster than it serves grows by at least 5 ms/s.
			name: "slope under the floor", gen: func() ([]float64, []float64) { return series(seed, 3000, 10, 200, 3, 0, 20) },
			tested: true, growing: false, slope: 3, tol: 0.2, reason: "significant but small",
		},
		{
			name: "too few requests", gen: func() ([]float64, []float64) { return series(seed, measure.TrendMinPoints-1, 10, 200, 50, 0, 20) },
			tested: false, growing: false, reason: "not tested",
		},
		{
			name: "all planned at once", gen: func() ([]float64, []float64) {
				p, v := series(seed, 100, 10, 200, 0, 0, 20)
				for i := range p {
					p[i] = 0
				}
				return p, v
			},
			tested: false, growing: false, reason: "same instant",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, v := tt.gen()
			tr := measure.TrendTest(p, v)
			if tr.Tested != tt.tested || tr.Growing != tt.growing {
				t.Fatalf("Tested %v Growing %v, want %v %v (%s)", tr.Tested, tr.Growing, tt.tested, tt.growing, tr.Reason)
			}
			if tr.N != len(p) {
				t.Errorf("N = %d, want %d", tr.N, len(p))
			}
			if tt.tol > 0 && math.Abs(tr.SlopeMsPerS-tt.slope) > tt.tol {
				t.Errorf("slope %v ms/s, want %v ± %v", tr.SlopeMsPerS, tt.slope, tt.tol)
			}
			if tr.Tested {
				span := p[len(p)-1] - p[0]
				if math.Abs(tr.Growth-tr.SlopeMsPerS*span) > 1e-9*math.Abs(tr.Growth) {
					t.Errorf("growth %v ≠ slope %v × span %v", tr.Growth, tr.SlopeMsPerS, span)
				}
				if tt.growing && tr.PValue >= measure.TrendAlpha {
					t.Errorf("growing with p = %v", tr.PValue)
				}
			} else if tr.PValue != 1 {
				t.Errorf("untested PValue = %v, want 1", tr.PValue)
			}
			if !strings.HasPrefix(tr.Reason, tt.reason) && !strings.Contains(tr.Reason, tt.reason) {
				t.Errorf("reason %q does not say %q", tr.Reason, tt.reason)
			}
		})
	}
}

func TestTrendTestSkipsNonFinite(t *testing.T) {
	p, v := series(1, 100, 10, 200, 50, 0, 20)
	v[3], v[50], p[70] = math.NaN(), math.Inf(1), math.NaN()
	tr := measure.TrendTest(p, v)
	if tr.N != 97 || !tr.Growing {
		t.Errorf("N = %d growing %v, want 97 true", tr.N, tr.Growing)
	}
}

func TestTrendTestOrderFree(t *testing.T) {
	// The test sorts by planned time itself: a shuffled tier gives the same
	// verdict and statistics, and the input is left alone.
	p, v := series(3, 200, 10, 200, 30, 0.5, 20)
	tr := measure.TrendTest(p, v)
	rng := rand.New(rand.NewPCG(9, 9))
	rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i]; v[i], v[j] = v[j], v[i] })
	p2, v2 := append([]float64(nil), p...), append([]float64(nil), v...)
	tr2 := measure.TrendTest(p, v)
	if tr != tr2 {
		t.Errorf("shuffled: %+v\nwant %+v", tr2, tr)
	}
	for i := range p {
		if p[i] != p2[i] || v[i] != v2[i] {
			t.Fatal("TrendTest modified its input")
		}
	}
}

func TestTrendTestPanicsOnLengths(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for slices of different lengths")
		}
	}()
	measure.TrendTest([]float64{1, 2}, []float64{1})
}

// falseAlarms runs TrendTest on reps seeded stationary series and returns
// the shares that were significant at TrendAlpha and judged growing.
func falseAlarms(reps, n int, phi float64) (significant, growing float64) {
	for s := range reps {
		p, v := series(uint64(1000+s), n, 10, 200, 0, phi, 20)
		tr := measure.TrendTest(p, v)
		if tr.PValue < measure.TrendAlpha {
			significant++
		}
		if tr.Growing {
			growing++
		}
	}
	return significant / float64(reps), growing / float64(reps)
}

// binomialSlack is 3 standard deviations of a share estimated from reps
// replications whose true value is p.
func binomialSlack(p float64, reps int) float64 { return 3 * math.Sqrt(p*(1-p)/float64(reps)) }

func TestTrendFalseAlarmIID(t *testing.T) {
	// With independent values the Mann–Kendall normal approximation is
	// accurate at n = 300, so the false-alarm rate is the nominal level
	// TrendAlpha = 1 %; over 200 replications allow 3 binomial standard
	// deviations: 0.01 + 3·√(0.01·0.99/200) = 0.031.
	const reps = 200
	sig, grow := falseAlarms(reps, 300, 0)
	bound := measure.TrendAlpha + binomialSlack(measure.TrendAlpha, reps)
	t.Logf("iid: significant %.3f, growing %.3f (bound %.3f)", sig, grow, bound)
	if sig > bound || grow > bound {
		t.Errorf("false alarms: significant %.3f, growing %.3f, bound %.3f", sig, grow, bound)
	}
}

func TestTrendFalseAlarmAR1(t *testing.T) {
	// Stationary AR(1), φ = 0.9, n = 300. Measured over these 200 seeds:
	// 3.5 % significant, 0.5 % growing (with the practical-size rule); the
	// uncorrected Mann–Kendall test is significant on 30.5 % of them.
	//
	// Bound: the autocorrelation correction is estimated from the series
	// itself, which holds only about n(1−φ)/(1+φ) ≈ 16 effective
	// observations, so the inflation it estimates has a relative error of
	// order √(2/16) ≈ 0.35. Underestimating Var(S) by that much moves the
	// one-sided critical value z = 2.326 of the 1 % level to
	// 2.326·√(1 − 0.35) = 1.876, a level of 3.0 %. Add 3 binomial standard
	// deviations at that rate for 200 replications: bound ≈ 6.6 %.
	const reps = 200
	z := 2.3263478740408408 // z at 1 − TrendAlpha
	level := 0.5 * math.Erfc(z*math.Sqrt(1-0.35)/math.Sqrt2)
	bound := level + binomialSlack(level, reps)
	sig, grow := falseAlarms(reps, 300, 0.9)
	t.Logf("AR(1) φ=0.9: significant %.3f, growing %.3f (bound %.3f)", sig, grow, bound)
	if sig > bound || grow > bound {
		t.Errorf("false alarms: significant %.3f, growing %.3f, bound %.3f", sig, grow, bound)
	}
}

func TestTrendPowerAR1(t *testing.T) {
	// A queue growing by 20 ms/s for 30 s (600 ms) under AR(1) noise
	// (φ = 0.9, stationary sd 46 ms) is flagged in every one of 50 seeds.
	for s := range 50 {
		p, v := series(uint64(5000+s), 300, 10, 200, 20, 0.9, 20)
		if tr := measure.TrendTest(p, v); !tr.Growing {
			t.Errorf("seed %d: not flagged: %s", s, tr.Reason)
		}
	}
}

// md1 is the time to first token (wait for the server, plus a first token of serviceS) of n
// Poisson arrivals at rate to an M/D/1 queue of service time serviceS, after warm arrivals left
// out (0: it starts empty).
func md1(seed uint64, n int, rate, serviceS float64, warm int) (planned, value []float64) {
	rng := rand.New(rand.NewPCG(seed, 0x0d1))
	planned, value = make([]float64, n), make([]float64, n)
	t, w := 0.0, 0.0
	for range warm {
		w = max(0, w+serviceS-rng.ExpFloat64()/rate)
	}
	for i := range n {
		gap := rng.ExpFloat64() / rate
		t += gap
		w = max(0, w+serviceS-gap) // Lindley's recursion
		planned[i] = t
		value[i] = 1000 * (w + serviceS)
	}
	return planned, value
}

func TestTrendFalseAlarmQueue(t *testing.T) {
	// A stationary M/D/1 queue 90 % busy (150 ms a request, warmed by 20,000 arrivals), 4,000
	// requests (10 minutes): its wait drifts between slow stretches far longer than the
	// autocorrelation correction sees, so the Mann–Kendall test is significant in 3.5 % of
	// these 200 seeds, and its growth over the window passes both size rules. The slope rule
	// (TrendMinSlopeMsPerS) keeps "growing" at the nominal level: bound as for iid values.
	const reps = 200
	sig, grow := 0, 0
	for s := range reps {
		p, v := md1(uint64(s), 4000, 0.9/0.15, 0.15, 20000)
		tr := measure.TrendTest(p, v)
		if tr.PValue < measure.TrendAlpha {
			sig++
		}
		if tr.Growing {
			grow++
		}
	}
	bound := measure.TrendAlpha + binomialSlack(measure.TrendAlpha, reps)
	t.Logf("M/D/1 at 0.9: significant %d, growing %d of %d (bound %.3f)", sig, grow, reps, bound)
	if float64(grow)/reps > bound {
		t.Errorf("%d of %d stationary queues judged growing, above %.3f", grow, reps, bound)
	}
}

func TestTrendSlopeRuleKeepsPower(t *testing.T) {
	// An M/D/1 queue fed 2 % faster than it serves, from empty, 4,000 requests: its wait grows
	// by 20 ms/s. Whether a window shows it is the significance test's to say (the random walk
	// hides the drift in about half of the windows); every window where it is significant
	// has a slope above TrendMinSlopeMsPerS, so the slope rule loses none of them.
	sig, grow := 0, 0
	for s := range 200 {
		p, v := md1(uint64(s), 4000, 1.02/0.15, 0.15, 0)
		tr := measure.TrendTest(p, v)
		if tr.PValue < measure.TrendAlpha {
			sig++
		}
		if tr.Growing {
			grow++
		}
	}
	t.Logf("M/D/1 at 1.02: significant %d, growing %d of 200", sig, grow)
	if grow != sig || sig < 60 {
		t.Errorf("significant %d, growing %d of 200: want them equal, and at least 60", sig, grow)
	}
}

func BenchmarkTrendTest(b *testing.B) {
	for _, n := range []int{measure.TrendMaxPoints, 20000} {
		p, v := series(1, n, 50, 200, 0, 0.9, 20)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				measure.TrendTest(p, v)
			}
		})
	}
}
