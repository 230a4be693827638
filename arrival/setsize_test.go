package arrival_test

import (
	"math"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
)

func TestSetSize(t *testing.T) {
	replay, err := arrival.NewReplay([]time.Duration{0, time.Second, 2 * time.Second}, "trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	poisson := arrival.Spec{Rate: 10, Burstiness: 1}
	for _, tc := range []struct {
		name string
		s    arrival.Schedule
		n    int
		d    time.Duration
		want int
	}{
		{"a count is the set's size", poisson, 500, 0, 500},
		{"a count wins over a duration", poisson, 500, time.Hour, 500},
		{"a duration: the arrivals expected within it", poisson, 0, time.Minute, 600},
		{"a fractional expectation is rounded up", arrival.Spec{Rate: 0.25, Burstiness: 1}, 0, 10 * time.Second, 3},
		{"a ramp: its integrated rate", arrival.Spec{Rate: 1, Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 2, RampEnd: 6}, 0, 100 * time.Second, 400},
		{"rate inf is the schedule's to refuse", arrival.Spec{Rate: math.Inf(1), Burstiness: 1}, 0, time.Second, 0},
		{"more than MaxArrivals is the schedule's to refuse", poisson, 0, 100 * time.Hour, 0},
		{"a replay without a count: its trace's requests", replay, 0, 0, 0},
		{"a replay cut to a count", replay, 2, 0, 2},
		{"neither count nor duration", poisson, 0, 0, 0},
	} {
		if got := arrival.SetSize(tc.s, tc.n, tc.d); got != tc.want {
			t.Errorf("%s: SetSize(%v, %d, %v) = %d, want %d", tc.name, tc.s, tc.n, tc.d, got, tc.want)
		}
	}
}
