package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Day is the period of a daily profile, and of [PeakForecast].
const Day = 24 * time.Hour

// Point is one step of a forecast: from T on, the demand is Rate req/s.
type Point struct {
	// T is the time from the start of the profile.
	T time.Duration
	// Rate is the demand in requests per second; finite and ≥ 0.
	Rate float64
}

// Forecast is demand over one period, as a step function that repeats: Points[i].Rate holds
// from Points[i].T until Points[i+1].T, and the last point's rate holds until Period. The
// profile then starts over, so when the first point's T is after 0 the demand before it is the
// last point's rate, carried over from the previous period. Times are strictly increasing
// and lie in [0, Period).
type Forecast struct {
	Points []Point
	// Period is the profile's length (e.g. 24h); the profile repeats to fill a month.
	Period time.Duration
	// Description says where the forecast comes from when that is worth stating (a trace's
	// buckets: [FromArrivals]); a plan states it. Empty: nothing to say.
	Description string
	// Warnings are what a planner must know about the forecast (a peak that depends on the
	// bucket it was counted in); a plan repeats them.
	Warnings []string
}

// PeakForecast is a flat forecast: rate req/s all day, every day.
func PeakForecast(rate float64) Forecast {
	return Forecast{Points: []Point{{T: 0, Rate: rate}}, Period: Day}
}

// Peak is the highest rate of the forecast (0 when it has no points).
func (f Forecast) Peak() float64 {
	peak := 0.0
	for _, p := range f.Points {
		peak = max(peak, p.Rate)
	}
	return peak
}

// Mean is the time-weighted mean rate over one period (0 for an invalid forecast).
func (f Forecast) Mean() float64 {
	if len(f.Validate()) > 0 {
		return 0
	}
	total := 0.0
	for _, s := range f.segments() {
		total += s.rate * (s.end - s.start).Seconds()
	}
	return total / f.Period.Seconds()
}

// Scale returns the forecast with every rate multiplied by k (times unchanged); f is not
// modified.
func (f Forecast) Scale(k float64) Forecast {
	g := Forecast{Points: slices.Clone(f.Points), Period: f.Period, Description: f.Description, Warnings: f.Warnings}
	for i := range g.Points {
		g.Points[i].Rate *= k
	}
	return g
}

// RateAt is the demand at t, which may lie in any period (t is taken modulo Period). It is 0
// for an invalid forecast.
func (f Forecast) RateAt(t time.Duration) float64 {
	if len(f.Validate()) > 0 {
		return 0
	}
	t %= f.Period
	if t < 0 {
		t += f.Period
	}
	for _, s := range f.segments() {
		if t >= s.start && t < s.end {
			return s.rate
		}
	}
	return 0 // unreachable: the segments cover [0, Period)
}

// Validate returns every problem of f at once (nil when it is valid).
func (f Forecast) Validate() []error {
	var errs []error
	if f.Period <= 0 {
		errs = append(errs, fmt.Errorf("forecast: period %v: must be > 0", f.Period))
	}
	if len(f.Points) == 0 {
		errs = append(errs, errors.New("forecast: no points: give at least one (time, rate)"))
	}
	for i, p := range f.Points {
		switch {
		case p.T < 0:
			errs = append(errs, fmt.Errorf("forecast: point %d: time %v is negative", i, p.T))
		case i > 0 && p.T <= f.Points[i-1].T:
			errs = append(errs, fmt.Errorf("forecast: point %d: time %v is not after the previous point's %v", i, p.T, f.Points[i-1].T))
		case f.Period > 0 && p.T >= f.Period:
			errs = append(errs, fmt.Errorf("forecast: point %d: time %v is not before the end of the period %v", i, p.T, f.Period))
		}
		if !finite(p.Rate) || p.Rate < 0 {
			errs = append(errs, fmt.Errorf("forecast: point %d (at %v): rate %s: must be a finite number of req/s ≥ 0", i, p.T, num(p.Rate)))
		}
	}
	return errs
}

// segment is [start, end) at one rate.
type segment struct {
	start, end time.Duration
	rate       float64
}

// segments covers [0, Period) of a valid forecast in order, the wrap-around included.
func (f Forecast) segments() []segment {
	n := len(f.Points)
	segs := make([]segment, 0, n+1)
	if f.Points[0].T > 0 {
		segs = append(segs, segment{0, f.Points[0].T, f.Points[n-1].Rate})
	}
	for i, p := range f.Points {
		end := f.Period
		if i+1 < n {
			end = f.Points[i+1].T
		}
		segs = append(segs, segment{p.T, end, p.Rate})
	}
	return segs
}

// piece is a stretch of one period over which both the demand and the demand the replicas
// must be ready for (the maximum over the scale-up window) are constant.
type piece struct {
	start, end time.Duration
	demand     float64 // req/s at every instant of the piece
	ready      float64 // max demand over [t, t+lag] for every t of the piece
}

// pieces splits one period of a valid forecast where the demand or the ready-for demand
// changes. The ready-for demand changes only where the window [t, t+lag] gains a segment (t =
// a segment's start − lag) or loses one (t = a segment's end): both ends of the window move
// forward together, so one pass with a monotone queue gives every maximum.
func (f Forecast) pieces(lag time.Duration) []piece {
	segs := f.segments()
	period := f.Period
	bounds := make([]time.Duration, 0, 2*len(segs))
	for _, s := range segs {
		bounds = append(bounds, s.start)
		if lag > 0 && lag < period {
			b := (s.start - lag) % period
			if b < 0 {
				b += period
			}
			bounds = append(bounds, b)
		}
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)

	// Two periods of segments: a window that starts in the first ends before 2·period.
	unrolled := make([]segment, 0, 2*len(segs))
	for c := range 2 {
		off := time.Duration(c) * period
		for _, s := range segs {
			unrolled = append(unrolled, segment{s.start + off, s.end + off, s.rate})
		}
	}
	peak := f.Peak()
	out := make([]piece, 0, len(bounds))
	var queue []int // indices into unrolled, rates decreasing
	next, cur := 0, 0
	for i, b := range bounds {
		end := period
		if i+1 < len(bounds) {
			end = bounds[i+1]
		}
		for unrolled[cur].end <= b {
			cur++
		}
		p := piece{start: b, end: end, demand: unrolled[cur].rate}
		if lag >= period {
			p.ready = peak
		} else {
			for next < len(unrolled) && unrolled[next].start <= b+lag {
				for len(queue) > 0 && unrolled[queue[len(queue)-1]].rate <= unrolled[next].rate {
					queue = queue[:len(queue)-1]
				}
				queue = append(queue, next)
				next++
			}
			for unrolled[queue[0]].end <= b {
				queue = queue[1:]
			}
			p.ready = unrolled[queue[0]].rate
		}
		out = append(out, p)
	}
	return out
}

// FromArrivals is the forecast a trace's arrivals make: the trace cut into buckets of the given
// length from its start, each bucket's rate its arrivals over the time it covers, and the period
// the time the trace covers (so the profile repeats the trace). A trace of arrival offsets covers
// up to one mean gap between arrivals after its last arrival (the trace's length over its
// arrivals less one), and at most to the end of the last bucket; so the last bucket, cut by the
// end of the trace, counts its rate over what it covers, not over a whole bucket (a trace whose
// last 30 s run at 100 req/s has a peak of 100 req/s in buckets of a minute, not 50). A trace's
// arrivals are offsets from its start, non-decreasing.
//
// The forecast's Description states the bucket, and a warning says when the peak depends on it:
// when the peak in buckets half as long differs from it by more than [BucketSensitivity].
func FromArrivals(offsets []time.Duration, bucket time.Duration) (Forecast, error) {
	f, err := fromArrivals(offsets, bucket)
	if err != nil {
		return Forecast{}, err
	}
	n := len(f.Points)
	lastCovers := f.Period - f.Points[n-1].T
	f.Description = fmt.Sprintf("%d arrivals of a trace over %s, in buckets of %s", len(offsets), num(f.Period.Seconds())+" s", fmtDuration(bucket))
	if lastCovers < bucket {
		f.Description += fmt.Sprintf(" (the last, cut by the end of the trace, covers %s s)", num(lastCovers.Seconds()))
	}
	if half := bucket / 2; half > 0 {
		if g, err := fromArrivals(offsets, half); err == nil {
			p, q := f.Peak(), g.Peak()
			if math.Abs(q-p) > BucketSensitivity*p {
				f.Warnings = append(f.Warnings, fmt.Sprintf("the forecast's peak depends on its bucket: %s req/s in buckets of %s, %s req/s in buckets of %s (%+.0f %%); plan with a bucket as long as the deployment takes to scale up, or shorter",
					num(p), fmtDuration(bucket), num(q), fmtDuration(half), 100*(q/p-1)))
			}
		}
	}
	return f, nil
}

// BucketSensitivity is the relative difference between the peaks of a trace counted in buckets
// of one length and of half of it above which [FromArrivals] warns that the peak depends on the
// bucket.
const BucketSensitivity = 0.10

func fromArrivals(offsets []time.Duration, bucket time.Duration) (Forecast, error) {
	switch {
	case bucket <= 0:
		return Forecast{}, fmt.Errorf("a forecast from arrivals needs a bucket > 0, got %v", bucket)
	case len(offsets) == 0:
		return Forecast{}, fmt.Errorf("a forecast from arrivals needs at least one arrival")
	}
	for i, o := range offsets {
		if o < 0 || (i > 0 && o < offsets[i-1]) {
			return Forecast{}, fmt.Errorf("arrival %d at %v is negative or before the one before it", i, o)
		}
	}
	first, last := offsets[0], offsets[len(offsets)-1]
	if last == first {
		return Forecast{}, fmt.Errorf("all %d arrivals are at one instant (%v): they make no rate", len(offsets), last)
	}
	n := int(last/bucket) + 1
	if n > maxBuckets {
		return Forecast{}, fmt.Errorf("%v of arrivals in buckets of %v make %d steps, more than %d: choose a longer bucket", last, bucket, n, maxBuckets)
	}
	// The trace covers one mean gap after its last arrival, up to the end of the last bucket.
	end := min(last+(last-first)/time.Duration(len(offsets)-1), time.Duration(n)*bucket)
	counts := make([]int, n)
	for _, o := range offsets {
		counts[int(o/bucket)]++
	}
	f := Forecast{Period: end}
	for k, c := range counts {
		start := time.Duration(k) * bucket
		covers := min(bucket, end-start)
		f.Points = append(f.Points, Point{T: start, Rate: float64(c) / covers.Seconds()})
	}
	return f, nil
}

// maxBuckets bounds the steps of a forecast made from arrivals.
const maxBuckets = 1_000_000
