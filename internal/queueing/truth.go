package queueing

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"time"
)

// The exact steady state of the M/D/c FIFO queue (Poisson arrivals at rate
// λ, c servers, every service lasting D, first come first served), which
// Queue and SimulateQueue implement.
//
// # Number in system, D apart
//
// Let N(t) be the number of requests present at time t and a = λD. The
// min(N(t), c) requests in service at t all end by t + D. The other
// max(N(t)-c, 0) wait at t, so they start after t and end after t + D:
// all are still present at t + D, and so is every arrival of (t, t+D]. So
//
//	N(t+D) = max(N(t) - c, 0) + A,  A ~ Poisson(a), independent of N(t),
//
// and with ρ = a/c < 1 the stationary law π of N is the law that this map
// leaves unchanged. Write Q = max(N-c, 0), the requests "carried over" past
// the next D; then Q(t+D) = max(Q(t) + A - c, 0), a reflected random walk
// with mean step a - c < 0.
//
// # Waiting time
//
// Tag a request arriving at t; by PASTA it finds the stationary state. It
// is in service as soon as at most c-1 of the requests ahead of it (those
// present just before t) are still present: FIFO serves them first, and
// later arrivals never delay them. Count those requests from s = t + u - D,
// where x = kD + u with k ≥ 0 and 0 ≤ u < D. From s to s + D the count
// follows the map above with the arrivals of (s, t) only, Poisson(λ(D-u));
// after that nobody joins them, so each further D removes c of them (or all).
// At t + x = s + (k+1)D the count is max(Z - kc, 0), with
// Z = max(N(s) - c, 0) + A', A' ~ Poisson(λ(D-u)), N(s) ~ π. Hence
//
//	P(W ≤ kD + u) = P(Q + A' ≤ (k+1)c - 1),  Q ~ law of max(N-c, 0).
//
// For c = 1 and x = 0 this is P(W = 0) = 1 - ρ.
//
// # Computing the law of Q
//
// Let K(z) = exp(a(z-1)), the generating function of A. Stationarity of
// N = Q + A and Q = max(N-c, 0) gives, with π_j = P(N = j),
//
//	Q(z) (z^c - K(z)) = Σ_{j<c} π_j (z^c - z^j).
//
// The right side is a polynomial of degree c with leading coefficient
// P(N<c). Q(z) is bounded on the unit disc, so the right side vanishes at
// every root of z^c = K(z) in the disc. That equation says that
// z·exp(-ρ(z-1)) is a c-th root of unity ω_k = e^{2πik/c}, i.e. that z is a
// fixed point of z ↦ ω_k exp(ρ(z-1)); this map sends the disc into itself
// with a derivative of modulus at most ρ, so it has exactly one fixed point
// there, z_0 = 1 for k = 0 and z_k for k = 1..c-1, found by iterating the
// map (Newton polishes it). These c roots are distinct, so the right side
// is P(N<c)·(z-1)·Π_k (z-z_k), and Q(1) = 1 fixes P(N<c):
//
//	Q(z) = (c-a)(z-1)/(z^c - K(z)) · Π_{k=1..c-1} (z-z_k)/(1-z_k).
//
// Q's coefficients are recovered by a discrete Fourier transform of Q at L
// points of the unit circle; the result is the law of Q with the mass of
// indices j ≥ L folded onto j mod L. Q has a simple pole at the root R > 1
// of ln z = ρ(z-1), so P(Q = j) falls like R^-j: L is chosen so that the
// mass beyond the kept range (the first 3L/4 indices: the truncated state
// space) is below about 1e-16, and doubled if the computed top quarter
// stands out of the rounding noise. z - 1, z^c - 1 and K(z) - 1 are formed
// without cancellation so that the values near z = 1 keep their precision.

// ErrQueueUnstable is returned (wrapped) when the offered load ρ = λD/c is
// at least 1: the queue has no steady state.
var ErrQueueUnstable = errors.New("M/D/c queue is unstable (load λD/c ≥ 1): no steady state")

// mdcMaxPoints bounds the Fourier transform: about ρ < 1 - 1e-5.
const mdcMaxPoints = 1 << 22

func mdcCheck(lambda float64, service time.Duration, servers int) error {
	var errs []error
	if !(lambda >= 0) || math.IsInf(lambda, 0) {
		errs = append(errs, fmt.Errorf("arrival rate %v: must be a finite number ≥ 0", lambda))
	}
	if service <= 0 {
		errs = append(errs, fmt.Errorf("service time %v: must be positive", service))
	}
	if servers < 1 {
		errs = append(errs, fmt.Errorf("servers %d: must be at least 1", servers))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if rho := lambda * service.Seconds() / float64(servers); rho >= 1 {
		return fmt.Errorf("λ=%v/s, D=%v, c=%d: ρ=%.6g: %w", lambda, service, servers, rho, ErrQueueUnstable)
	}
	return nil
}

// MDCWaitCDF is P(W ≤ x) for the waiting time W (arrival to start of
// service) of a request in the steady state of the M/D/c FIFO queue with
// Poisson arrivals at lambda per second, service time service and servers
// slots. It is 0 for x < 0 and 1 for lambda = 0; the error wraps
// ErrQueueUnstable when lambda·service/servers ≥ 1. Its cost is
// O(servers·L), L a power of two near 40/(1-ρ) (4096 for ρ = 0.99, at
// least 64); it fails when ρ is within about 1e-5 of 1.
func MDCWaitCDF(lambda float64, service time.Duration, servers int, x time.Duration) (float64, error) {
	if err := mdcCheck(lambda, service, servers); err != nil {
		return 0, err
	}
	if x < 0 {
		return 0, nil
	}
	if lambda == 0 {
		return 1, nil
	}
	q, err := mdcCarried(lambda*service.Seconds(), servers)
	if err != nil {
		return 0, err
	}
	return mdcWaitCDF(q, lambda, service, servers, x), nil
}

// mdcWaitCDF is P(Q + A' ≤ (k+1)c - 1), x = kD + u, A' ~ Poisson(λ(D-u)).
func mdcWaitCDF(q []float64, lambda float64, service time.Duration, c int, x time.Duration) float64 {
	k, u := int64(x/service), x%service
	b := lambda * (service - u).Seconds()
	cdf := poissonCDF(b)
	// Beyond len(q)-1 + len(cdf)-1 both laws have no mass left.
	top := int64(len(q) + len(cdf))
	m := top
	if k < top/int64(c) {
		m = min((k+1)*int64(c)-1, top)
	}
	p := 0.0
	for j := int64(0); j <= m && j < int64(len(q)); j++ {
		p += q[j] * cdf[min(m-j, int64(len(cdf)-1))]
	}
	return min(p, 1)
}

// poissonCDF returns P(A ≤ i) for A ~ Poisson(b), for i up to a point
// beyond which the remaining mass is negligible (< 1e-20).
func poissonCDF(b float64) []float64 {
	n := int(b+12*math.Sqrt(b)) + 40
	cdf := make([]float64, n+1)
	s := 0.0
	for i := range cdf {
		if b > 0 {
			lg, _ := math.Lgamma(float64(i + 1))
			s += math.Exp(float64(i)*math.Log(b) - b - lg)
		} else if i == 0 {
			s = 1
		}
		cdf[i] = min(s, 1)
	}
	return cdf
}

// mdcCarried returns P(Q = j) for the stationary Q = max(N-c, 0), for j up
// to where the remaining mass is below about 1e-16.
func mdcCarried(a float64, c int) ([]float64, error) {
	rho := a / float64(c)
	roots := mdcRoots(rho, c)
	// The pole R = 1 + δ > 1 of Q: log1p(δ) = ρδ; f is concave, so Newton
	// from the right of the root converges monotonically.
	f := func(d float64) float64 { return math.Log1p(d) - rho*d }
	d := max(1/rho-1, 1)
	for f(d) >= 0 && d < 1e300 {
		d *= 2
	}
	for range 200 {
		step := f(d) / (1/(1+d) - rho)
		d -= step
		if math.Abs(step) <= 1e-15*d {
			break
		}
	}
	// Mass beyond index n is about R^-n/(1-1/R) (times a constant of order
	// one): keep it below 1e-16 at 3L/4.
	need := 4.0 / 3 * (math.Log(1e16) + math.Log((1+d)/d)) / math.Log1p(d)
	L := 64
	for float64(L) < need && L < mdcMaxPoints {
		L *= 2
	}
	if float64(L) < need {
		return nil, fmt.Errorf("M/D/c steady state: load ρ=%.9g is too close to 1 to compute", rho)
	}
	// The computed coefficients carry rounding noise of about c·1e-16 (the
	// product over the roots); a top quarter above that says the estimate
	// of L was short.
	noise := 1e-15 * float64(c+10)
	for tries := 0; tries < 3 && L <= mdcMaxPoints; tries, L = tries+1, 2*L {
		q := mdcInvert(a, c, roots, L)
		tail := 0.0
		for _, v := range q[3*L/4:] {
			tail = max(tail, math.Abs(v))
		}
		if tail > noise {
			continue
		}
		q = q[:3*L/4]
		for j, v := range q {
			q[j] = max(v, 0)
		}
		return q, nil
	}
	return nil, fmt.Errorf("M/D/c steady state: load ρ=%.9g is too close to 1 to compute", rho)
}

// mdcRoots returns the roots z_1..z_{c-1} of z^c = exp(cρ(z-1)) inside the
// unit disc other than 1: the fixed points of z ↦ ω_k exp(ρ(z-1)).
func mdcRoots(rho float64, c int) []complex128 {
	roots := make([]complex128, c-1)
	r := complex(rho, 0)
	for k := 1; k < c; k++ {
		s, co := math.Sincos(2 * math.Pi * float64(k) / float64(c))
		w := complex(co, s)
		z := complex(0, 0)
		// Contraction with factor ≤ ρ: converges from anywhere in the disc.
		for range 1_000_000 {
			nz := w * cmplx.Exp(r*(z-1))
			step := cmplx.Abs(nz - z)
			z = nz
			if step < 1e-6 {
				break
			}
		}
		// Newton on z - g(z), g(z) = ω exp(ρ(z-1)), g' = ρ g.
		for range 50 {
			g := w * cmplx.Exp(r*(z-1))
			step := (z - g) / (1 - r*g)
			z -= step
			if cmplx.Abs(step) <= 1e-16 {
				break
			}
		}
		roots[k-1] = z
	}
	return roots
}

// mdcInvert returns the coefficients of Q(z), folded modulo L, from its
// values at the L-th roots of unity.
func mdcInvert(a float64, c int, roots []complex128, L int) []float64 {
	v := make([]complex128, L)
	v[0] = 1 // Q(1)
	norm := complex(1, 0)
	for _, zk := range roots {
		norm *= 1 - zk
	}
	ca := complex(float64(c)-a, 0)
	// e^{iφ} - 1 without cancellation near φ = 0.
	expim1 := func(phi float64) complex128 {
		s := math.Sin(phi / 2)
		return complex(-2*s*s, math.Sin(phi))
	}
	for m := 1; m <= L/2; m++ {
		theta := 2 * math.Pi * float64(m) / float64(L)
		zm1 := expim1(theta)
		z := 1 + zm1
		// z^c - 1, with c·θ reduced exactly modulo 2π.
		r := int64(c) * int64(m) % int64(L)
		if r > int64(L/2) {
			r -= int64(L)
		}
		zc1 := expim1(2 * math.Pi * float64(r) / float64(L))
		// K(z) - 1 = e^{x+iy} - 1 with x = a(cos θ - 1), y = a sin θ.
		sh := math.Sin(theta / 2)
		x, y := -2*a*sh*sh, a*math.Sin(theta)
		sy := math.Sin(y / 2)
		k1 := complex(math.Expm1(x)*math.Cos(y)-2*sy*sy, math.Exp(x)*math.Sin(y))
		p := complex(1, 0)
		for _, zk := range roots {
			p *= z - zk
		}
		qz := ca * zm1 / (zc1 - k1) * p / norm
		v[m] = qz
		if m < L-m {
			v[L-m] = cmplx.Conj(qz)
		}
	}
	fft(v)
	q := make([]float64, L)
	for j := range q {
		q[j] = real(v[j]) / float64(L)
	}
	return q
}

// fft replaces v (length a power of 2) by its discrete Fourier transform
// Σ_m v_m e^{-2πi jm/L}.
func fft(v []complex128) {
	n := len(v)
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j ^= bit
		if i < j {
			v[i], v[j] = v[j], v[i]
		}
	}
	tw := make([]complex128, n/2)
	for k := range tw {
		s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
		tw[k] = complex(c, s)
	}
	for size := 2; size <= n; size <<= 1 {
		half, step := size/2, n/size
		for start := 0; start < n; start += size {
			for k := 0; k < half; k++ {
				t := tw[k*step] * v[start+k+half]
				v[start+k+half] = v[start+k] - t
				v[start+k] += t
			}
		}
	}
}

// MDCCapacity is the arrival rate λ* (requests per second) at which a
// share of the requests of the M/D/c FIFO queue wait at most maxWait in
// steady state: P(W ≤ maxWait) = share. P(W ≤ maxWait) falls as λ grows,
// from 1 towards 0 at servers/service, so λ* is found by bisection on
// (0, servers/service), to a relative precision of 1e-10.
//
// On Queue, a request meets a time-to-first-token objective T when
// W + FirstToken (+ network time) ≤ T: use maxWait = T - FirstToken less an
// allowance for the network.
func MDCCapacity(service time.Duration, servers int, maxWait time.Duration, share float64) (float64, error) {
	var errs []error
	if service <= 0 {
		errs = append(errs, fmt.Errorf("service time %v: must be positive", service))
	}
	if servers < 1 {
		errs = append(errs, fmt.Errorf("servers %d: must be at least 1", servers))
	}
	if maxWait < 0 {
		errs = append(errs, fmt.Errorf("max wait %v: must not be negative", maxWait))
	}
	if !(share > 0 && share < 1) {
		errs = append(errs, fmt.Errorf("share %v: must be in (0, 1)", share))
	}
	if len(errs) > 0 {
		return 0, fmt.Errorf("M/D/c capacity: %w", errors.Join(errs...))
	}
	lo, hi := 0.0, float64(servers)/service.Seconds()
	for range 200 {
		if lo > 0 && hi-lo <= 1e-10*lo {
			break
		}
		mid := lo + (hi-lo)/2
		p, err := MDCWaitCDF(mid, service, servers, maxWait)
		if err != nil {
			return 0, fmt.Errorf("M/D/c capacity for P(W ≤ %v) = %v: %w", maxWait, share, err)
		}
		if p >= share {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2, nil
}
