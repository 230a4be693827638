package arrival_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
)

// TestExpected: the expected count of a duration-bound tier is the integrated rate, by hand.
func TestExpected(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec arrival.Spec
		d    time.Duration
		want float64
	}{
		{"constant: rate × d", arrival.Spec{Rate: 10, Burstiness: 1}, time.Hour, 36_000},
		{"linear ramp: the mean of its ends × d", arrival.Spec{Rate: 1, Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 2, RampEnd: 6}, 100 * time.Second, 400},
		// ∫₀¹⁰⁰ 1·e^(t·ln4/100) dt = 100/ln4 · (4 − 1)
		{"exponential ramp: (end − start)/ln(end/start) × d", arrival.Spec{Rate: 1, Burstiness: 1, Ramp: arrival.RampExponential, RampStart: 1, RampEnd: 4}, 100 * time.Second, 300 / math.Log(4)},
		{"exponential ramp with equal ends", arrival.Spec{Rate: 1, Burstiness: 1, Ramp: arrival.RampExponential, RampStart: 3, RampEnd: 3}, 10 * time.Second, 30},
		{"rate inf", arrival.Spec{Rate: math.Inf(1), Burstiness: 1}, time.Second, math.Inf(1)},
		{"no duration", arrival.Spec{Rate: 10, Burstiness: 1}, 0, 0},
	} {
		if got := tc.spec.Expected(tc.d); math.Abs(got-tc.want) > 1e-9*math.Max(1, math.Abs(tc.want)) && got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCheckSize: a tier planning more than MaxArrivals is refused before it is made (it was
// cut at 2,000,000 without a word, or allocated 8 GB for `schedule --num-requests 1000000000`);
// one at the bound is not; a schedule that draws more than the bound by chance is refused too.
func TestCheckSize(t *testing.T) {
	ten := arrival.Spec{Rate: 10, Burstiness: 1}
	for _, tc := range []struct {
		name    string
		spec    arrival.Spec
		n       int
		d       time.Duration
		refused bool
	}{
		{"a billion requests", ten, 1_000_000_000, 0, true},
		{"one more than the bound", ten, arrival.MaxArrivals + 1, 0, true},
		{"the bound", ten, arrival.MaxArrivals, 0, false},
		{"60 h at 10/s: 2,160,000 expected", ten, 0, 60 * time.Hour, true},
		{"55 h at 10/s: 1,980,000 expected", ten, 0, 55 * time.Hour, false},
		{"rate inf within a duration", arrival.Spec{Rate: math.Inf(1), Burstiness: 1}, 0, time.Second, true},
		{"a linear ramp to 100/s over 12 h: 2,160,000 expected", arrival.Spec{Rate: 1, Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 20, RampEnd: 80}, 0, 12 * time.Hour, true},
	} {
		err := tc.spec.CheckSize(tc.n, tc.d)
		var se *arrival.SizeError
		if got := errors.As(err, &se); got != tc.refused {
			t.Errorf("%s: refused %v (%v), want %v", tc.name, got, err, tc.refused)
		}
	}
	// Expected exactly at the bound, the draw may exceed it: asked for one more, the schedule
	// says so, and CheckDrawn refuses it instead of cutting it.
	sp := arrival.Spec{Rate: 2000, Burstiness: 1}
	d := time.Duration(float64(arrival.MaxArrivals) / sp.Rate * float64(time.Second))
	for seed := int64(0); seed < 20; seed++ {
		if err := sp.CheckSize(0, d); err != nil {
			t.Fatal(err)
		}
		off, err := sp.Arrivals(0, d, seed, arrival.MaxArrivals+1)
		if err != nil {
			t.Fatal(err)
		}
		err = arrival.CheckDrawn(sp, off, d)
		if over := len(off) > arrival.MaxArrivals; over != (err != nil) {
			t.Fatalf("seed %d: %d arrivals drawn, CheckDrawn says %v", seed, len(off), err)
		}
		// Whole takes the same steps: the same schedule, or the same refusal.
		if whole, werr := sp.Whole(0, d, seed); (werr != nil) != (err != nil) || werr == nil && len(whole) != len(off) {
			t.Fatalf("seed %d: Whole drew %d arrivals (%v), the steps %d (%v)", seed, len(whole), werr, len(off), err)
		}
		if err != nil {
			return // one seed that overshot is enough
		}
	}
	t.Error("no seed of 20 drew more than the bound at an expected count equal to it: the test does not test CheckDrawn")
}
