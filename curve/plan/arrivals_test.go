package plan_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/plan"
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

// steady appends arrivals at rate req/s, evenly spaced, from start for length.
func steady(offsets []time.Duration, start, length time.Duration, rate float64) []time.Duration {
	n := int(math.Round(length.Seconds() * rate))
	for i := range n {
		offsets = append(offsets, start+time.Duration(float64(i)/rate*1e9))
	}
	return offsets
}

// TestTraceEndingMidBucket: issue 26's trace, 150 s whose last 30 s run at 100.6 req/s. In
// buckets of a minute the last bucket is cut by the end of the trace after 30 s: its rate is
// its arrivals over those 30 s, so the peak is about 100.6 req/s, as in buckets of 10 s, and a
// deployment carrying 60 req/s a replica needs two replicas either way. (Counted over a whole
// minute the peak was 50.3 and the plan one replica.)
func TestTraceEndingMidBucket(t *testing.T) {
	offsets := steady(nil, 0, 120*time.Second, 10)
	offsets = steady(offsets, 120*time.Second, 30*time.Second, 100.6)
	d := plan.Deployment{Name: "A", OperatingRate: 60, CompliantTokensPerRequest: 100, RawTokensPerRequest: 100, CostPerHour: 1}
	for _, bucket := range []time.Duration{time.Minute, 10 * time.Second} {
		f, err := plan.FromArrivals(offsets, bucket)
		if err != nil {
			t.Fatal(err)
		}
		if p := f.Peak(); math.Abs(p/100.6-1) > 0.01 {
			t.Errorf("buckets of %v: peak %v req/s, want about 100.6", bucket, p)
		}
		if math.Abs(f.Period.Seconds()-150) > 0.1 {
			t.Errorf("buckets of %v: period %v, want the trace's 150 s", bucket, f.Period)
		}
		if want := (120*10 + 3018) / 150.0; math.Abs(f.Mean()/want-1) > 1e-3 {
			t.Errorf("buckets of %v: mean %v req/s, want %v", bucket, f.Mean(), want)
		}
		r, err := plan.Plan(d, f, plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.PeakReplicas != 2 {
			t.Errorf("buckets of %v: %d replicas at the peak, want 2", bucket, r.PeakReplicas)
		}
		if !strings.Contains(r.Forecast, "in buckets of "+map[time.Duration]string{time.Minute: "1m", 10 * time.Second: "10s"}[bucket]) {
			t.Errorf("the plan does not state the bucket: %q", r.Forecast)
		}
		if len(r.Warnings) > 0 {
			t.Errorf("buckets of %v: the peak does not depend on the bucket here, yet: %q", bucket, r.Warnings)
		}
	}
	f, _ := plan.FromArrivals(offsets, time.Minute)
	if !strings.Contains(f.Description, "the last, cut by the end of the trace, covers 30") {
		t.Errorf("description %q", f.Description)
	}
}

// TestPeakThatDependsOnTheBucket: a 20 s spike at 50 req/s inside a minute at 10 req/s is
// 23.3 req/s in buckets of a minute and 36.7 in buckets of 30 s: the plan warns.
func TestPeakThatDependsOnTheBucket(t *testing.T) {
	s := time.Second
	offsets := steady(nil, 0, 70*s, 10)
	offsets = steady(offsets, 70*s, 20*s, 50)
	offsets = steady(offsets, 90*s, 90*s, 10)
	f, err := plan.FromArrivals(offsets, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Peak(); math.Abs(p-(40*10+20*50)/60.0) > 1e-9 {
		t.Errorf("peak %v", p)
	}
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "the forecast's peak depends on its bucket: 23.3333 req/s in buckets of 1m, 36.6667 req/s in buckets of 30s (+57 %)") {
		t.Errorf("warnings %q", f.Warnings)
	}
	r, err := plan.Plan(plan.Deployment{OperatingRate: 60, CompliantTokensPerRequest: 1, RawTokensPerRequest: 1, CostPerHour: 1}, f, plan.Options{})
	if err != nil || len(r.Warnings) != 1 {
		t.Errorf("the plan does not repeat the warning: %v %q", err, r.Warnings)
	}
	if _, err := plan.FromArrivals([]time.Duration{3 * s, 3 * s}, s); err == nil {
		t.Error("arrivals at one instant make a rate")
	}
}
