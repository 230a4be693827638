package sweep

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestInterimConfidenceMatchesSimulation holds the computed boundary to a simulation of the
// statistic it bounds: standardised Brownian paths observed at the stop rule's looks. With
// 100,000 paths, the crossing frequency's standard error at 2.5 % is 0.05 points: it must lie
// within 4 of them of the nominal one-sided error. It also checks two known values: one look is
// the fixed-sample quantile, and nine looks at 95 % is Pocock's constant (2.53).
func TestInterimConfidenceMatchesSimulation(t *testing.T) {
	for _, conf := range []float64{0.9, 0.95} {
		c := distuv.UnitNormal.Quantile(1 - (1-InterimConfidence(conf))/2)
		alpha := (1 - conf) / 2
		rng := rand.New(rand.NewPCG(uint64(conf*1000), 1))
		const paths = 100_000
		crossed := 0
		for range paths {
			b, prev := 0.0, 0.0
			for k := 1; k <= StopLooks; k++ {
				tk := float64(k) / float64(StopLooks+1)
				b += rng.NormFloat64() * math.Sqrt(tk-prev)
				prev = tk
				if b >= c*math.Sqrt(tk) {
					crossed++
					break
				}
			}
		}
		got := float64(crossed) / paths
		se := math.Sqrt(alpha * (1 - alpha) / paths)
		if math.Abs(got-alpha) > 4*se {
			t.Errorf("confidence %v: boundary z = %.4f crossed by %.4f of paths, want %.4f ± %.4f", conf, c, got, alpha, 4*se)
		}
	}
	if z := distuv.UnitNormal.Quantile(1 - (1-InterimConfidence(0.95))/2); math.Abs(z-2.532) > 0.01 {
		t.Errorf("nine looks at 95 %%: z = %.4f, want Pocock's 2.532", z)
	}
	if got := interimConfidence(0.95); math.Abs(got-InterimConfidence(0.95)) > 2e-5 {
		t.Errorf("the constant at 95 %% is %v, the computation gives %v", InterimConfidence(0.95), got)
	}
	if p := crossProbability([]float64{1}, 1.959964); math.Abs(p-0.025) > 5e-4 {
		t.Errorf("one look at z = 1.96 is crossed with probability %.5f, want 0.025", p)
	}
}
