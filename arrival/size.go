package arrival

import (
	"fmt"
	"math"
	"time"
)

// MaxArrivals is the most arrivals one tier may plan. Every planned arrival costs memory before
// the first request is sent (8 B of schedule here; its request and, kept for exact percentiles,
// its record, elsewhere), so a larger tier is refused, never silently cut: see [Spec.CheckSize].
const MaxArrivals = 2_000_000

// Expected is the expected number of arrivals of s strictly before d: Λ(d), the integrated
// rate (rate·d without a ramp; (start+end)/2·d for a linear ramp; (end−start)/ln(end/start)·d
// for an exponential one). It is +Inf at rate inf (every arrival at T0: the count is whatever
// bound the caller gives) and 0 for d ≤ 0.
func (s Spec) Expected(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	sec := d.Seconds()
	switch s.Ramp {
	case RampLinear:
		return (s.RampStart + s.RampEnd) / 2 * sec
	case RampExponential:
		if s.RampStart == s.RampEnd {
			return s.RampStart * sec
		}
		return (s.RampEnd - s.RampStart) / math.Log(s.RampEnd/s.RampStart) * sec
	}
	return s.Rate * sec
}

// SizeError refuses a schedule of more than MaxArrivals arrivals, before it is made.
type SizeError struct {
	Spec     Spec
	N        int           // the arrivals asked of a count-bound tier, or 0
	Within   time.Duration // the duration of a duration-bound tier, or 0
	Expected float64       // the arrivals expected before Within
	Drawn    int           // the arrivals drawn, when the schedule was made and drew too many
}

func (e *SizeError) Error() string {
	if e.N > 0 {
		return fmt.Sprintf("arrival: %d arrivals are more than the %d one tier may plan", e.N, MaxArrivals)
	}
	if e.Drawn > 0 {
		return fmt.Sprintf("arrival: %s within %v drew more than %d arrivals (about %.0f expected), more than the %d one tier may plan",
			e.Spec, e.Within, e.Drawn-1, e.Expected, MaxArrivals)
	}
	return fmt.Sprintf("arrival: %s within %v plans about %.0f arrivals, more than the %d one tier may plan",
		e.Spec, e.Within, e.Expected, MaxArrivals)
}

// CheckSize refuses (with a *SizeError) a tier of n arrivals (n > 0), or of those expected
// before within, above MaxArrivals, before anything is allocated. A schedule expected within
// the bound may still draw more by chance: [Spec.Arrivals] given max = MaxArrivals stops there,
// and a caller that must not cut a schedule short asks for MaxArrivals + 1 and refuses a
// longer result ([CheckDrawn]).
func (s Spec) CheckSize(n int, within time.Duration) error {
	if n > 0 {
		if n > MaxArrivals {
			return &SizeError{Spec: s, N: n}
		}
		return nil
	}
	if exp := s.Expected(within); !(exp <= MaxArrivals) {
		return &SizeError{Spec: s, Within: within, Expected: exp}
	}
	return nil
}

// Whole draws the schedule of a tier of n arrivals (n > 0), or of those before within, whole or
// not at all: one too large to plan is refused before anything is allocated (CheckSize), or
// once drawn (CheckDrawn), never cut short.
func (s Spec) Whole(n int, within time.Duration, seed int64) ([]time.Duration, error) {
	if err := s.CheckSize(n, within); err != nil {
		return nil, err
	}
	offsets, err := s.Arrivals(n, within, seed, MaxArrivals+1)
	if err != nil {
		return nil, err
	}
	return offsets, CheckDrawn(s, offsets, within)
}

// CheckDrawn refuses the offsets of an arrival process's duration-bound tier drawn with
// max = MaxArrivals + 1 that reached it: the schedule is longer than a tier may plan, though its
// expected count was not.
func CheckDrawn(s Schedule, offsets []time.Duration, within time.Duration) error {
	sp, ok := s.(Spec)
	if !ok || len(offsets) <= MaxArrivals {
		return nil // a replay's offsets are its trace's, already held
	}
	return &SizeError{Spec: sp, Within: within, Expected: sp.Expected(within), Drawn: len(offsets)}
}
