package arrival_test

import (
	"slices"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
)

func TestSchedulesSatisfyOneInterface(t *testing.T) {
	spec := arrival.Spec{Rate: 4, Burstiness: 1}
	want, err := spec.Offsets(5, 3)
	if err != nil {
		t.Fatal(err)
	}
	got, err := spec.Arrivals(5, 0, 3, 0)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Spec.Arrivals(5) = %v, %v; want Offsets(5) = %v", got, err, want)
	}
	within, err := spec.Arrivals(0, want[2]+1, 3, 100)
	if err != nil || !slices.Equal(within, want[:3]) {
		t.Errorf("Spec.Arrivals(within) = %v, %v; want %v", within, err, want[:3])
	}
	r, err := arrival.NewReplay([]time.Duration{0, time.Second, 2 * time.Second}, "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n      int
		within time.Duration
		want   int
	}{{0, 0, 3}, {2, 0, 2}, {9, 0, 3}, {0, 1500 * time.Millisecond, 2}} {
		got, err := r.Arrivals(tc.n, tc.within, 99, 0)
		if err != nil || len(got) != tc.want {
			t.Errorf("Replay.Arrivals(%d, %v) = %v, %v; want %d offsets", tc.n, tc.within, got, err, tc.want)
		}
	}
	if r.String() != "trace(t.csv)" {
		t.Errorf("String = %q", r.String())
	}
	if _, err := arrival.NewReplay([]time.Duration{time.Second, 0}, "bad"); err == nil {
		t.Error("a decreasing replay was accepted")
	}
}
