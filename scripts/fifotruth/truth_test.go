package main

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/internal/racedetector"
)

// The brute-force queue agrees with the exact M/D/c share (queueing.MDCWaitCDF) at the capacity the
// exact solution gives, within four standard errors of its run (the variance factor of its batch
// means counts the runs' autocorrelation): an independent check of both.
func TestBruteForceMeetsTheExactMDC(t *testing.T) {
	cases := []struct {
		name            string
		servers         int
		service, budget time.Duration
	}{
		{"8 slots, 320 ms, 70 ms wait", 8, 320 * time.Millisecond, 70 * time.Millisecond},
		{"4 slots, 400 ms, 480 ms wait", 4, 400 * time.Millisecond, 480 * time.Millisecond},
		{"16 slots, 2 s, 450 ms wait", 16, 2 * time.Second, 450 * time.Millisecond},
	}
	const n = 400_000
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rate, err := queueing.MDCCapacity(c.service, c.servers, c.budget, 0.99)
			if err != nil {
				t.Fatal(err)
			}
			m := queueModel{Servers: c.servers, Services: []float64{c.service.Seconds()}, MaxWait: c.budget.Seconds()}
			share, f := m.shareRun(rate, n, 1)
			se := math.Sqrt(f * 0.99 * 0.01 / float64(n-n/20))
			t.Logf("share %.5f at %.4f req/s (standard error %.5f, variance factor %.1f)", share, rate, se, f)
			if math.Abs(share-0.99) > 4*se {
				t.Errorf("at the exact capacity %.4f req/s the brute force's share is %.5f, want 0.99 ± %.5f (4 standard errors, variance factor %.1f)", rate, share, 4*se, f)
			}
		})
	}
}

// With exponential service times the queue is M/M/c, whose waiting time has a closed form
// (Erlang's C): P(W > t) = C·e^{−(cμ−λ)t}. The brute force on resampled exponential services
// agrees within four standard errors (the closed form taken at the drawn services' own mean:
// 200,000 draws miss 1/μ by half a percent, which moves the share by as much as the test's
// tolerance near ρ = 0.75).
func TestBruteForceMeetsErlangC(t *testing.T) {
	const (
		c      = 4
		lambda = 15.0
		wait   = 0.1
		n      = 400_000
	)
	rng := rand.New(rand.NewPCG(5, 6))
	services := make([]float64, 200_000)
	var mean float64
	for i := range services {
		services[i] = rng.ExpFloat64() / 5 // a mean service of 200 ms
		mean += services[i]
	}
	mu := float64(len(services)) / mean
	m := queueModel{Servers: c, Services: services, MaxWait: wait}
	share, f := m.shareRun(lambda, n, 1)
	want := 1 - erlangC(c, lambda/mu)*math.Exp(-(c*mu-lambda)*wait)
	se := math.Sqrt(f * want * (1 - want) / float64(n-n/20))
	t.Logf("brute force %.5f, Erlang's C %.5f (standard error %.5f)", share, want, se)
	if math.Abs(share-want) > 4*se {
		t.Errorf("M/M/%d at ρ = %.2f: P(W ≤ %v s) = %.5f by brute force, %.5f by Erlang's C; want within %.5f (4 standard errors)", c, lambda/(c*mu), wait, share, want, 4*se)
	}
}

// erlangC is the probability that an arrival waits in M/M/c with offered load a = λ/μ.
func erlangC(c int, a float64) float64 {
	rho := a / float64(c)
	term, sum := 1.0, 1.0 // a^k / k!
	for k := 1; k < c; k++ {
		term *= a / float64(k)
		sum += term
	}
	last := term * a / float64(c) / (1 - rho)
	return last / (sum + last)
}

// The capacity's bisection finds the exact M/D/c capacity within four of its standard errors: the
// share's (the variance factor of a run at the capacity) over the slope of the exact share there.
func TestCapacityByBisection(t *testing.T) {
	service, budget := 320*time.Millisecond, 70*time.Millisecond
	exact, err := queueing.MDCCapacity(service, 8, budget, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	n, reps := 300_000, 4
	if racedetector.Enabled {
		n, reps = 100_000, 2 // the detector costs ten times the CPU: the code paths are the same
	}
	m := queueModel{Servers: 8, Services: []float64{service.Seconds()}, MaxWait: budget.Seconds()}
	got, _, err := m.capacity(0.99, n, reps)
	if err != nil {
		t.Fatal(err)
	}
	_, f := m.shareRun(exact, n, 99)
	lo, err1 := queueing.MDCWaitCDF(0.99*exact, service, 8, budget)
	hi, err2 := queueing.MDCWaitCDF(1.01*exact, service, 8, budget)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	slope := (lo - hi) / (0.02 * exact) // share lost per req/s
	se := math.Sqrt(f*0.99*0.01/float64(n-n/20)/float64(reps)) / slope
	t.Logf("brute force %.4f req/s, exact %.4f, standard error %.4f (variance factor %.1f)", got, exact, se, f)
	if math.Abs(got-exact) > 4*se {
		t.Errorf("brute-force capacity %.4f req/s, exact %.4f: want within %.4f (4 standard errors)", got, exact, 4*se)
	}
}
