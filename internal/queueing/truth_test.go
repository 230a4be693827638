package queueing_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/queueing"
)

// erlangMD1 is Erlang's closed form for the M/D/1 waiting time:
// P(W ≤ x) = (1-ρ) Σ_{j=0}^{⌊x/D⌋} (λ(jD-x))^j/j! · e^{-λ(jD-x)}.
// It is exact and independent of the method of MDCWaitCDF; the terms
// alternate, so it is only used for small x/D.
func erlangMD1(lambda, d, x float64) float64 {
	sum := 0.0
	for j := 0; float64(j)*d <= x; j++ {
		v := lambda * (float64(j)*d - x)
		lg, _ := math.Lgamma(float64(j + 1))
		term := math.Exp(-v - lg)
		if j > 0 {
			term *= math.Pow(v, float64(j))
		}
		sum += term
	}
	return (1 - lambda*d) * sum
}

func TestMDCWaitCDFMatchesErlangForOneServer(t *testing.T) {
	const d = 100 * time.Millisecond
	for _, rho := range []float64{0.1, 0.3, 0.7, 0.9, 0.97} {
		lambda := rho / d.Seconds()
		for _, x := range []time.Duration{0, time.Millisecond, 30 * time.Millisecond, d - 1, d, 150 * time.Millisecond, 2 * d, 330 * time.Millisecond, 5 * d} {
			got, err := queueing.MDCWaitCDF(lambda, d, 1, x)
			if err != nil {
				t.Fatal(err)
			}
			want := erlangMD1(lambda, d.Seconds(), x.Seconds())
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("ρ=%v x=%v: MDCWaitCDF %.12f, Erlang %.12f", rho, x, got, want)
			}
		}
	}
}

func TestMDCWaitCDFExact(t *testing.T) {
	// M/D/1: an arrival finds the server idle with probability 1-ρ.
	for _, rho := range []float64{0.01, 0.3, 0.5, 0.9, 0.99, 0.999} {
		p, err := queueing.MDCWaitCDF(rho/0.25, 250*time.Millisecond, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(p-(1-rho)) > 1e-9 {
			t.Errorf("c=1 ρ=%v: P(W=0) = %.12f, want %.12f", rho, p, 1-rho)
		}
	}
	// Non-decreasing in x, towards 1; non-increasing in λ.
	for _, c := range []int{1, 3, 8, 32} {
		const d = time.Second
		prev := 0.0
		for x := time.Duration(0); x <= 20*d; x += d / 8 {
			p, err := queueing.MDCWaitCDF(0.9*float64(c), d, c, x)
			if err != nil {
				t.Fatal(err)
			}
			if p < prev-1e-12 || p > 1+1e-12 {
				t.Fatalf("c=%d: P(W ≤ %v) = %v after %v", c, x, p, prev)
			}
			prev = p
		}
		if p, err := queueing.MDCWaitCDF(0.9*float64(c), d, c, 1000*d); err != nil || p < 1-1e-12 {
			t.Errorf("c=%d: P(W ≤ 1000D) = %v, %v; want 1", c, p, err)
		}
		prev = 1
		for rho := 0.05; rho < 0.999; rho += 0.05 {
			p, err := queueing.MDCWaitCDF(rho*float64(c), d, c, d/2)
			if err != nil {
				t.Fatal(err)
			}
			if p > prev+1e-12 {
				t.Fatalf("c=%d: P(W ≤ D/2) rises with load: %v at ρ=%v after %v", c, p, rho, prev)
			}
			prev = p
		}
	}
	// Edges.
	if p, err := queueing.MDCWaitCDF(0, time.Second, 2, 0); p != 1 || err != nil {
		t.Errorf("λ=0: %v, %v; want 1", p, err)
	}
	if p, err := queueing.MDCWaitCDF(1, time.Second, 2, -1); p != 0 || err != nil {
		t.Errorf("x<0: %v, %v; want 0", p, err)
	}
	if _, err := queueing.MDCWaitCDF(2, time.Second, 2, 0); !errors.Is(err, queueing.ErrQueueUnstable) {
		t.Errorf("ρ=1: %v, want ErrQueueUnstable", err)
	}
	for _, bad := range []struct {
		lambda float64
		d      time.Duration
		c      int
	}{{-1, time.Second, 1}, {math.NaN(), time.Second, 1}, {math.Inf(1), time.Second, 1}, {1, 0, 1}, {1, time.Second, 0}} {
		if _, err := queueing.MDCWaitCDF(bad.lambda, bad.d, bad.c, 0); err == nil {
			t.Errorf("MDCWaitCDF(%v, %v, %d): no error", bad.lambda, bad.d, bad.c)
		}
	}
}

// mcCase is one Monte-Carlo check: c servers, service d, load ρ, and the
// waits at which P(W ≤ x) is compared.
type mcCase struct {
	c   int
	d   time.Duration
	rho float64
	xs  []time.Duration
}

// waitsMC simulates n customers of the M/D/c FIFO queue with its own
// recursion (a customer takes the slot freed by the customer c places
// ahead of it: start_i = max(arrival_i, start_{i-c} + D)) and returns their
// waits in seconds, after discarding warm customers from the empty start.
func waitsMC(seed uint64, c int, d, lambda float64, warm, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x6d6463))
	starts := make([]float64, c) // ring of the last c starts
	for i := range starts {
		starts[i] = math.Inf(-1)
	}
	waits := make([]float64, 0, n)
	arrival := 0.0
	for i := 0; i < warm+n; i++ {
		arrival += rng.ExpFloat64() / lambda
		start := max(arrival, starts[i%c]+d)
		starts[i%c] = start
		if i >= warm {
			waits = append(waits, start-arrival)
		}
	}
	return waits
}

// batchMeans returns the mean of y and its standard error from the means
// of nb consecutive batches (waits of nearby customers are correlated; the
// batches are long enough to be nearly independent).
func batchMeans(y []bool, nb int) (mean, se float64) {
	size := len(y) / nb
	means := make([]float64, nb)
	for b := range means {
		k := 0
		for _, v := range y[b*size : (b+1)*size] {
			if v {
				k++
			}
		}
		means[b] = float64(k) / float64(size)
		mean += means[b]
	}
	mean /= float64(nb)
	ss := 0.0
	for _, m := range means {
		ss += (m - mean) * (m - mean)
	}
	return mean, math.Sqrt(ss / float64(nb-1) / float64(nb))
}

func TestMDCWaitCDFMatchesMonteCarlo(t *testing.T) {
	cases := []mcCase{
		{1, 100 * time.Millisecond, 0.7, []time.Duration{0, 30 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond}},
		{1, 100 * time.Millisecond, 0.9, []time.Duration{0, 50 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond}},
		{2, 50 * time.Millisecond, 0.7, []time.Duration{0, 10 * time.Millisecond, 60 * time.Millisecond}},
		{4, 400 * time.Millisecond, 0.3, []time.Duration{0, 100 * time.Millisecond}},
		{4, 400 * time.Millisecond, 0.9, []time.Duration{0, 100 * time.Millisecond, 400 * time.Millisecond, time.Second}},
		{16, time.Second, 0.9, []time.Duration{0, 250 * time.Millisecond, 1500 * time.Millisecond}},
	}
	const n, warm, batches = 2_000_000, 20_000, 100
	for ci, tc := range cases {
		d := tc.d.Seconds()
		lambda := tc.rho * float64(tc.c) / d
		waits := waitsMC(uint64(1000+ci), tc.c, d, lambda, warm, n)
		y := make([]bool, len(waits))
		for _, x := range tc.xs {
			for i, w := range waits {
				// The formula's x is a whole number of nanoseconds; round
				// the simulated wait the same way.
				y[i] = time.Duration(math.Round(w*1e9)) <= x
			}
			mc, se := batchMeans(y, batches)
			p, err := queueing.MDCWaitCDF(lambda, tc.d, tc.c, x)
			if err != nil {
				t.Fatal(err)
			}
			z := (mc - p) / se
			t.Logf("c=%-2d D=%-5v ρ=%.1f x=%-6v: formula %.5f, Monte-Carlo %.5f ± %.5f (%+.2f SE)", tc.c, tc.d, tc.rho, x, p, mc, se, z)
			if se == 0 || math.Abs(z) > 4 {
				t.Errorf("c=%d D=%v ρ=%v x=%v: formula %.5f, Monte-Carlo %.5f ± %.5f: %.1f standard errors apart", tc.c, tc.d, tc.rho, x, p, mc, se, z)
			}
		}
	}
}

func TestMDCCapacity(t *testing.T) {
	const d = 400 * time.Millisecond
	// Round trip.
	for _, c := range []int{1, 4, 16} {
		for _, share := range []float64{0.5, 0.9, 0.99} {
			for _, wait := range []time.Duration{0, 100 * time.Millisecond, d, 3 * d} {
				lam, err := queueing.MDCCapacity(d, c, wait, share)
				if err != nil {
					t.Fatal(err)
				}
				p, err := queueing.MDCWaitCDF(lam, d, c, wait)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(p-share) > 1e-6 {
					t.Errorf("c=%d wait=%v share=%v: λ*=%v gives P=%v", c, wait, share, lam, p)
				}
			}
		}
	}
	// M/D/1 with no wait allowed: P(W = 0) = 1-ρ, so λ* = (1-share)/D.
	lam, err := queueing.MDCCapacity(d, 1, 0, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.1 / d.Seconds(); math.Abs(lam-want) > 1e-9*want {
		t.Errorf("c=1, wait 0, share 0.9: λ*=%.12f, want %.12f", lam, want)
	}
	// More patience or more servers: more capacity.
	prev := 0.0
	for wait := time.Duration(0); wait <= 2*time.Second; wait += 100 * time.Millisecond {
		lam, err := queueing.MDCCapacity(d, 4, wait, 0.99)
		if err != nil {
			t.Fatal(err)
		}
		if lam <= prev || lam >= 4/d.Seconds() {
			t.Errorf("wait %v: λ*=%v after %v (bound %v)", wait, lam, prev, 4/d.Seconds())
		}
		prev = lam
	}
	prev = 0
	for c := 1; c <= 64; c *= 2 {
		lam, err := queueing.MDCCapacity(d, c, 200*time.Millisecond, 0.99)
		if err != nil {
			t.Fatal(err)
		}
		if lam <= prev {
			t.Errorf("c=%d: λ*=%v after %v", c, lam, prev)
		}
		prev = lam
	}
	for _, bad := range []struct {
		d     time.Duration
		c     int
		wait  time.Duration
		share float64
	}{{0, 1, 0, 0.9}, {d, 0, 0, 0.9}, {d, 1, -1, 0.9}, {d, 1, 0, 0}, {d, 1, 0, 1}, {d, 1, 0, math.NaN()}} {
		if _, err := queueing.MDCCapacity(bad.d, bad.c, bad.wait, bad.share); err == nil {
			t.Errorf("MDCCapacity(%v, %d, %v, %v): no error", bad.d, bad.c, bad.wait, bad.share)
		}
	}
}

// The capacity of the embedded deployment's default queue (4 slots, 400 ms a request, the first
// token 20 ms into it) for a TTFT objective of 250 ms met by 99 % of requests, with 5 ms allowed
// for the network: requests may wait 225 ms.
func ExampleMDCCapacity() {
	service, servers, firstToken := 400*time.Millisecond, 4, 20*time.Millisecond
	lam, err := queueing.MDCCapacity(service, servers, 250*time.Millisecond-firstToken-5*time.Millisecond, 0.99)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.3f req/s, ρ = %.3f\n", lam, lam*service.Seconds()/float64(servers))
	// Output:
	// 4.183 req/s, ρ = 0.418
}
