package plan_test

import (
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/plan"
)

// TestFromArrivals: a trace cut into buckets gives each bucket's arrivals over its length.
func TestFromArrivals(t *testing.T) {
	s := time.Second
	// 3 arrivals in [0, 10 s), none in [10, 20 s), 5 in [20, 30 s) (one exactly at 20 s).
	offsets := []time.Duration{0, 2 * s, 9 * s, 20 * s, 21 * s, 22 * s, 25 * s, 29 * s}
	f, err := plan.FromArrivals(offsets, 10*s)
	if err != nil {
		t.Fatal(err)
	}
	want := []plan.Point{{T: 0, Rate: 0.3}, {T: 10 * s, Rate: 0}, {T: 20 * s, Rate: 0.5}}
	if f.Period != 30*s || len(f.Points) != len(want) {
		t.Fatalf("forecast %+v", f)
	}
	for i, p := range f.Points {
		if p.T != want[i].T || p.Rate != want[i].Rate {
			t.Errorf("step %d: %+v, want %+v", i, p, want[i])
		}
	}
	if errs := f.Validate(); len(errs) > 0 {
		t.Errorf("the forecast is not valid: %v", errs)
	}
	for _, bad := range []struct {
		offsets []time.Duration
		bucket  time.Duration
	}{
		{offsets, 0},
		{nil, s},
		{[]time.Duration{2 * s, s}, s},
		{[]time.Duration{0, 1000 * time.Hour}, time.Millisecond},
	} {
		if _, err := plan.FromArrivals(bad.offsets, bad.bucket); err == nil {
			t.Errorf("%v in buckets of %v: no error", bad.offsets, bad.bucket)
		}
	}
}
