package arrival

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// ErrInvalidSpec is wrapped by the errors of Offsets and OffsetsWithin when
// the Spec fails Validate; the individual problems are joined after it.
var ErrInvalidSpec = errors.New("invalid arrival spec")

// pcgStream is the second PCG seed word (ASCII "loadcurv"); the first is
// the user's seed. Changing it changes every schedule.
const pcgStream uint64 = 0x6c6f616463757276

// maxNanos is 2⁶³ as a float64: the first value a time.Duration cannot hold.
const maxNanos = float64(math.MaxInt64)

// sampler yields unit-mean gap multipliers. distuv.Gamma and
// distuv.Exponential satisfy it.
type sampler interface {
	Rand() float64
}

// unitGap is the sampler of b=+Inf: every gap is exactly one mean gap.
type unitGap struct{}

func (unitGap) Rand() float64 { return 1 }

// unitSampler returns the unit-mean Gamma(shape=b, rate=b) sampler for the
// seed. All draws of one schedule come from one PCG stream, one Rand call
// per request.
func unitSampler(b float64, seed int64) sampler {
	if math.IsInf(b, 1) {
		return unitGap{}
	}
	src := rand.NewPCG(uint64(seed), pcgStream)
	if b == 1 {
		return distuv.Exponential{Rate: 1, Src: src}
	}
	return distuv.Gamma{Alpha: b, Beta: b, Src: src}
}

// Offsets returns the planned offsets from T0 of n requests, in
// non-decreasing order, for the given seed. Request i waits the gap
// u_i/RateAt(i, n) after request i-1 (after T0 for i=0). It fails when s is
// invalid (wrapping ErrInvalidSpec), n < 0, or an offset would overflow a
// time.Duration (about 292 years).
func (s Spec) Offsets(n int, seed int64) ([]time.Duration, error) {
	if n < 0 {
		return nil, fmt.Errorf("arrival: number of requests must be >= 0, got %d", n)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	out := make([]time.Duration, n)
	if s.burst() {
		return out, nil
	}
	u := unitSampler(float64(s.Burstiness), seed)
	t := 0.0
	for i := range out {
		t += u.Rand() / s.RateAt(i, n)
		off, ok := toDuration(t)
		if !ok {
			return nil, fmt.Errorf("arrival: offset of request %d (%g s) is beyond the time.Duration range", i, t)
		}
		out[i] = off
	}
	return out, nil
}

// OffsetsWithin returns the planned offsets of a duration-bound tier: every
// offset strictly before d, in non-decreasing order, but at most
// maxRequests of them. Reaching maxRequests is not an error: generation
// stops and the offsets so far are returned, so a caller can tell the cap
// was hit from len(result) == maxRequests. With a rate of +Inf every
// request is at T0 and exactly maxRequests zeros are returned (and
// allocated), so maxRequests must be a real bound, not math.MaxInt.
//
// Without a ramp, the result is the prefix of s.Offsets(m, seed) (for any
// large enough m) that lies before d. With a ramp, the rate follows elapsed
// time instead of the request index: r(t) = start + (end-start)·t/d or
// start·(end/start)^(t/d), and offset k = Λ⁻¹(u_0 + … + u_k) where
// Λ(t) = ∫₀ᵗ r (see the package documentation).
//
// It fails when s is invalid (wrapping ErrInvalidSpec), d <= 0 or
// maxRequests < 0.
func (s Spec) OffsetsWithin(d time.Duration, seed int64, maxRequests int) ([]time.Duration, error) {
	if d <= 0 {
		return nil, fmt.Errorf("arrival: tier duration must be > 0, got %s", d)
	}
	if maxRequests < 0 {
		return nil, fmt.Errorf("arrival: maximum number of requests must be >= 0, got %d", maxRequests)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.burst() {
		return make([]time.Duration, maxRequests), nil
	}
	dur := d.Seconds()
	out := make([]time.Duration, 0, s.capacityHint(dur, maxRequests))
	u := unitSampler(float64(s.Burstiness), seed)
	var t, sum float64
	for len(out) < maxRequests {
		x := u.Rand()
		if s.Ramp == RampNone {
			t += x / s.Rate // the same arithmetic as Offsets, so prefixes agree
		} else {
			sum += x
			t = s.invIntegratedRate(sum, dur)
		}
		off, ok := toDuration(t)
		if !ok || off >= d {
			break
		}
		// Λ⁻¹ is increasing, but its floating-point evaluation could in
		// principle step back by an ulp across a rounding boundary.
		if n := len(out); n > 0 && off < out[n-1] {
			off = out[n-1]
		}
		out = append(out, off)
	}
	return out, nil
}

// invIntegratedRate returns the time t in seconds at which the integrated
// rate Λ(t) = ∫₀ᵗ r of a time-based ramp over dur seconds reaches sum.
func (s Spec) invIntegratedRate(sum, dur float64) float64 {
	a, c := s.RampStart, s.RampEnd
	if s.Ramp == RampExponential {
		// r(t) = a·e^(L·t/dur), L = ln(c/a): Λ(t) = a·dur/L·(e^(L·t/dur) - 1).
		l := math.Log(c / a)
		if l == 0 {
			return sum / a
		}
		return dur / l * math.Log1p(sum*l/(a*dur))
	}
	// r(t) = a + k·t, k = (c-a)/dur: Λ(t) = a·t + k·t²/2. The positive root
	// in the cancellation-free form 2·sum/(a + √(a² + 2·k·sum)); explicit
	// conversions keep the products from being fused into FMAs.
	k := (c - a) / dur
	return 2 * sum / (a + math.Sqrt(float64(a*a)+float64(2*k*sum)))
}

// maxCapacityHint bounds the initial allocation of OffsetsWithin; longer
// schedules grow by append.
const maxCapacityHint = 1 << 20

// capacityHint guesses how many offsets OffsetsWithin will return.
func (s Spec) capacityHint(dur float64, maxRequests int) int {
	peak := s.Rate
	if s.Ramp != RampNone {
		peak = s.RampEnd
	}
	want := peak*dur*1.05 + 16
	return int(min(want, float64(maxRequests), maxCapacityHint))
}

// burst reports whether every request is released at T0.
func (s Spec) burst() bool {
	return s.Ramp == RampNone && math.IsInf(s.Rate, 1)
}

func (s Spec) check() error {
	if errs := s.Validate(); len(errs) > 0 {
		return fmt.Errorf("arrival: %w %s: %w", ErrInvalidSpec, s, errors.Join(errs...))
	}
	return nil
}

// toDuration rounds sec to the nearest nanosecond; ok is false when the
// result does not fit a time.Duration (or sec is NaN).
func toDuration(sec float64) (time.Duration, bool) {
	ns := math.Round(sec * 1e9)
	if !(ns >= 0 && ns < maxNanos) {
		return 0, false
	}
	return time.Duration(ns), true
}

// FromOffsets validates a replayed schedule, such as the arrival times of a
// trace: every offset must be >= 0 and none may precede the one before it.
// It returns a copy, so the caller may reuse its slice.
func FromOffsets(offsets []time.Duration) ([]time.Duration, error) {
	for i, off := range offsets {
		if off < 0 {
			return nil, fmt.Errorf("arrival: offset %d is negative (%s)", i, off)
		}
		if i > 0 && off < offsets[i-1] {
			return nil, fmt.Errorf("arrival: offset %d (%s) is before offset %d (%s); offsets must be non-decreasing", i, off, i-1, offsets[i-1])
		}
	}
	out := make([]time.Duration, len(offsets))
	copy(out, offsets)
	return out, nil
}

// RealisedRate is the offered rate a schedule actually realises: the number
// of requests divided by the last offset in seconds. It is +Inf when the
// last offset is 0 (or negative) and 0 for an empty schedule.
func RealisedRate(offsets []time.Duration) float64 {
	n := len(offsets)
	if n == 0 {
		return 0
	}
	last := offsets[n-1]
	if last <= 0 {
		return math.Inf(1)
	}
	return float64(n) / last.Seconds()
}
