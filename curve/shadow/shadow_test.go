package shadow_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/shadow"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/internal/racedetector"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// tierObs runs q on arrivals and returns each request's observation for measure.SteadyState,
// compliant when its TTFT is within obj.
func tierObs(t *testing.T, q sim.QueueConfig, offs []time.Duration, obj time.Duration) []measure.Obs {
	t.Helper()
	obs := make([]measure.Obs, 0, len(offs))
	err := sim.SimulateQueue(q, offs, func(r sim.QueueResult) bool {
		o := measure.Obs{Planned: r.Arrival, Dispatched: r.Arrival, First: r.First, Last: r.Last, End: r.End, Tokens: int32(r.Tokens),
			Flags: measure.ObsOK | measure.ObsSlack}
		o.Slack = float32(float64(r.First-r.Arrival) / float64(obj))
		if r.First-r.Arrival <= obj {
			o.Flags |= measure.ObsCompliant
		}
		obs = append(obs, o)
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// TestControlledIntervalsCover holds the controlled share to the exact steady state of M/D/c
// queues: over 200 independent tiers of 3,000 requests at 0.9, 1.0 and 1.1 times the capacity,
// the 95 % interval of the controlled share (Wilson's, on the effective sample the control
// credits) must contain the exact share in at least 92 % of tiers (200 tiers at a true 95 %: the
// coverage's standard error is 1.5 points), and the control must add no bias (its mean within
// three standard errors of the truth, beyond the plain share's own transient bias). Two shadows: the queue's own model, calibrated as
// a sweep calibrates it (from a burst and the saturation rate), and a mismatched one (half the
// slots, half the service time: the same saturation rate, other dynamics), which must keep its
// coverage while removing less noise.
func TestControlledIntervalsCover(t *testing.T) {
	if testing.Short() || racedetector.Enabled {
		t.Skip("a statistical check: 1,200 virtual tiers")
	}
	real := sim.QueueConfig{ModelName: "m", Servers: 8, Service: time.Second, FirstToken: 50 * time.Millisecond, OutputTokens: 16}
	obj := 500 * time.Millisecond
	capacity, err := queueing.MDCCapacity(real.Service, real.Servers, obj-real.FirstToken, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	// As a sweep calibrates it: a burst of 128 at once, and the saturation rate c/D.
	burst := make([]time.Duration, 128)
	var ttft, e2el []time.Duration
	if err := sim.SimulateQueue(real, burst, func(r sim.QueueResult) bool {
		ttft, e2el = append(ttft, r.First-r.Arrival), append(e2el, r.Last-r.Arrival)
		return false
	}); err != nil {
		t.Fatal(err)
	}
	own, err := shadow.Calibrate(ttft, e2el, float64(real.Servers)/real.Service.Seconds(), obj, 0)
	if err != nil {
		t.Fatal(err)
	}
	mismatched := records.ShadowQueue{Servers: own.Servers / 2, ServiceS: own.ServiceS / 2, BudgetS: own.BudgetS}
	for _, tc := range []struct {
		name    string
		q       records.ShadowQueue
		minGain float64 // the median gain the shadow must at least bring
	}{
		{"the queue's own model", own, 1.5},
		{"a mismatched model", mismatched, 1.0},
	} {
		for _, m := range []float64{0.8, 0.9, 1.0, 1.1} {
			rate := m * capacity
			truth, err := queueing.MDCWaitCDF(rate, real.Service, real.Servers, obj-real.FirstToken)
			if err != nil {
				t.Fatal(err)
			}
			ctl, err := shadow.New(tc.q, rate, 1)
			if err != nil {
				t.Fatal(err)
			}
			const tiers = 200
			covered, controlled := 0, 0
			var sum, sumSq, plain float64
			var gains []float64
			for seed := int64(1); seed <= tiers; seed++ {
				offs, err := arrival.Spec{Rate: rate, Burstiness: 1}.Arrivals(3000, 0, seed, 0)
				if err != nil {
					t.Fatal(err)
				}
				st := measure.SteadyState(tierObs(t, real, offs, obj), 0, measure.SteadyWindow{Shadow: ctl})
				share, eff := st.Judged()
				if lo, hi := curve.WilsonN(share, eff, 0.95); lo <= truth && truth <= hi {
					covered++
				}
				sum, sumSq, plain = sum+share, sumSq+share*share, plain+st.CompliantShare
				if st.Controlled != nil {
					controlled++
					gains = append(gains, st.Controlled.Gain)
				} else {
					gains = append(gains, 1)
				}
			}
			mean := sum / tiers
			se := math.Sqrt(math.Max(sumSq/tiers-mean*mean, 0) / tiers)
			gain := median(gains)
			t.Logf("%s at %.1f × capacity: covered %d of %d, controlled %d, median gain %.2f, mean share %.5f (truth %.5f ± %.5f)",
				tc.name, m, covered, tiers, controlled, gain, mean, truth, se)
			if float64(covered) < 0.92*tiers {
				t.Errorf("%s at %.1f × capacity: the 95 %% interval covered the exact share in %d of %d tiers", tc.name, m, covered, tiers)
			}
			// The plain share of a tier that starts from an empty queue is a little optimistic
			// above the capacity (its warm-up does not remove the whole transient); the control
			// must add no bias of its own.
			if bias := math.Abs(plain/tiers - truth); math.Abs(mean-truth) > bias+3*se+1e-5 {
				t.Errorf("%s at %.1f × capacity: mean share %.5f, the truth %.5f (standard error %.5f; the plain share's mean %.5f)", tc.name, m, mean, truth, se, plain/tiers)
			}
			if gain < tc.minGain {
				t.Errorf("%s at %.1f × capacity: median gain %.2f, want at least %.2f", tc.name, m, gain, tc.minGain)
			}
		}
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// TestCalibrate: from a burst on an M/D/c queue, the shadow is that queue: the first token
// from the shortest time to first token, the service time from it and the median decode time,
// the slots from the rate at which the burst completed, the budget from the objectives.
func TestCalibrate(t *testing.T) {
	q := sim.QueueConfig{ModelName: "m", Servers: 8, Service: time.Second, FirstToken: 50 * time.Millisecond, OutputTokens: 16}
	var ttft, e2el []time.Duration
	var last time.Duration
	if err := sim.SimulateQueue(q, make([]time.Duration, 128), func(r sim.QueueResult) bool {
		ttft, e2el = append(ttft, r.First-r.Arrival), append(e2el, r.Last-r.Arrival)
		last = max(last, r.End)
		return false
	}); err != nil {
		t.Fatal(err)
	}
	rate := 128 / last.Seconds() // what the burst probe reports: 8 req/s
	tests := []struct {
		name       string
		ttft, e2el time.Duration
		want       records.ShadowQueue
		err        string
	}{
		{"a ttft objective", 500 * time.Millisecond, 0, records.ShadowQueue{Servers: 8, ServiceS: 1, BudgetS: 0.45}, ""},
		{"an e2el objective", 0, 1300 * time.Millisecond, records.ShadowQueue{Servers: 8, ServiceS: 1, BudgetS: 0.3}, ""},
		{"both: the shorter budget", 500 * time.Millisecond, 1300 * time.Millisecond, records.ShadowQueue{Servers: 8, ServiceS: 1, BudgetS: 0.3}, ""},
		{"no objective a wait delays", 0, 0, records.ShadowQueue{}, "no objective"},
		{"no time to wait", 40 * time.Millisecond, 0, records.ShadowQueue{}, "no time to wait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := shadow.Calibrate(ttft, e2el, rate, tt.ttft, tt.e2el)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Calibrate = %+v, %v; want an error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got.Servers != tt.want.Servers || math.Abs(got.ServiceS-tt.want.ServiceS) > 1e-9 || math.Abs(got.BudgetS-tt.want.BudgetS) > 1e-9 {
				t.Errorf("Calibrate = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if _, err := shadow.Calibrate(nil, nil, rate, time.Second, 0); err == nil {
		t.Error("a burst with no completed request calibrated a shadow")
	}
}

// TestExpectedShare: the expected share of Poisson arrivals is M/D/c's exact one; without a
// closed form (constant spacing, Gamma gaps) it is a long simulation of the shadow, which for
// Poisson arrivals agrees with the exact value within its sampling error.
func TestExpectedShare(t *testing.T) {
	q := records.ShadowQueue{Servers: 4, ServiceS: 0.4, BudgetS: 0.48}
	exact, err := shadow.New(q, 6, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := queueing.MDCWaitCDF(6, 400*time.Millisecond, 4, 480*time.Millisecond)
	if exact.Expected != want {
		t.Errorf("Poisson: expected share %v, want M/D/c's %v", exact.Expected, want)
	}
	simulated, err := shadow.New(q, 6, 1.000001) // no closed form: simulated
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(simulated.Expected-want) > 0.002 {
		t.Errorf("simulated expected share %v, the exact one %v", simulated.Expected, want)
	}
	smooth, err := shadow.New(q, 6, math.Inf(1))
	if err != nil {
		t.Fatal(err)
	}
	if !(smooth.Expected > want) {
		t.Errorf("constant spacing: expected share %v, not above Poisson's %v", smooth.Expected, want)
	}
	if _, err := shadow.New(records.ShadowQueue{}, 6, 1); err == nil {
		t.Error("a shadow of no slots was accepted")
	}
}

// TestEstimateCreditsOnlyWhatItCanShow: without enough batches there is no controlled share;
// with too few misses the share is controlled but credited no reduction; with misses that move
// together the reduction is credited, at most MaxGain; a shadow that does not vary controls
// nothing.
func TestEstimateCreditsOnlyWhatItCanShow(t *testing.T) {
	series := func(n int, miss func(i int) bool) []bool {
		out := make([]bool, n)
		for i := range out {
			out[i] = !miss(i)
		}
		return out
	}
	bursts := func(i int) bool { return i%100 < 3 } // 3 % misses, in bursts
	if _, err := shadow.Estimate(series(20, bursts), series(20, bursts), 0.97); !errors.Is(err, shadow.ErrNoControl) {
		t.Errorf("20 requests: %v, want ErrNoControl", err)
	}
	if _, err := shadow.Estimate(series(3000, bursts), series(3000, func(int) bool { return false }), 1); !errors.Is(err, shadow.ErrNoControl) {
		t.Errorf("a shadow that never misses: %v, want ErrNoControl", err)
	}
	few, err := shadow.Estimate(series(3000, func(i int) bool { return i == 1500 }), series(3000, bursts), 0.97)
	if err != nil || few.Gain != 1 {
		t.Errorf("one miss: %+v, %v; want a controlled share with no reduction credited", few, err)
	}
	same, err := shadow.Estimate(series(3000, bursts), series(3000, bursts), 0.98)
	if err != nil || same.Gain != shadow.MaxGain || math.Abs(same.Share-0.98) > 1e-9 {
		t.Errorf("a shadow that misses exactly with the deployment: %+v, %v; want its expected share, credited MaxGain", same, err)
	}
}
