package measure_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestLagIsJudgedByItsEffect: a tier is client-bound by lag only when its p99 passes the floor
// and the lag changed what the deployment was offered (its releases burstier than planned, over
// a quarter of the median time from release to end, by more than LagBurstinessLimit) or what was measured (more than
// LagPlannedFraction of an objective counted from the planned arrival); a lag above the floor
// that did neither is noted and the tier kept. benchRecords are 100 req/s requests of about
// 150 ms end to end.
func TestLagIsJudgedByItsEffect(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name      string
		lag       func(planned []time.Duration) []time.Duration
		obj       measure.Objectives
		bound     bool
		noteHas   string
		reasonHas string
	}{
		{"single requests 13 ms late: as planned, kept and noted", everyFortieth(13 * ms), measure.Objectives{TTFT: 100 * ms}, false, "burstier than planned", ""},
		{"pauses of the dispatcher that bunch the arrivals: client-bound", pauses(5, 150*ms), measure.Objectives{TTFT: 100 * ms}, true, "", "burstier than planned over"},
		{"an objective counted from the plan contains the lag", everyFortieth(13 * ms), measure.Objectives{E2ELIncludingClientQueue: 200 * ms}, true, "", "5 % of the 200 ms objective counted from the planned arrival"},
		{"below the floor: nothing to say", everyFortieth(4 * ms), measure.Objectives{TTFT: 100 * ms}, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := benchRecords(4000)
			planned := make([]time.Duration, len(recs))
			for i := range recs {
				planned[i] = recs[i].Planned
			}
			sent := tt.lag(planned)
			for i := range recs {
				recs[i].Dispatched = sent[i]
				recs[i].Slot, recs[i].Sent = sent[i], sent[i]
			}
			s := measure.Summarize(recs, records.Tier{Planned: len(recs), RequestRate: 100, Burstiness: 1}, measure.Options{Objectives: tt.obj})
			if s.ClientBound != tt.bound {
				t.Fatalf("client-bound %v (%s; note %q), want %v", s.ClientBound, s.ClientBoundReason, s.ScheduleLagNote, tt.bound)
			}
			if !strings.Contains(s.ScheduleLagNote, tt.noteHas) || (tt.noteHas == "" && s.ScheduleLagNote != "") {
				t.Errorf("note %q, want one with %q", s.ScheduleLagNote, tt.noteHas)
			}
			if !strings.Contains(s.ClientBoundReason, tt.reasonHas) {
				t.Errorf("reason %q, want one with %q", s.ClientBoundReason, tt.reasonHas)
			}
		})
	}
}

// everyFortieth delays every fortieth request by lag.
func everyFortieth(lag time.Duration) func([]time.Duration) []time.Duration {
	return func(planned []time.Duration) []time.Duration {
		out := slices.Clone(planned)
		for i := range out {
			if i%40 == 0 {
				out[i] += lag
			}
		}
		return out
	}
}

// pauses delays the arrivals planned inside pauses of the dispatcher (pr a second, each
// U(0, maxPause)) to the pauses' ends.
func pauses(pr float64, maxPause time.Duration) func([]time.Duration) []time.Duration {
	return func(planned []time.Duration) []time.Duration { return paused(planned, pr, maxPause, 1) }
}

// TestLagBurstinessBoundsItsEffect is the ground for LagBurstinessLimit: on an M/D/c queue with
// 64 slots at its exact capacity for a 100 ms TTFT objective (290 req/s, the queue of those
// measured whose miss rate a bunching of arrivals moves most), dispatcher pauses (5 a second,
// each U(0, max)) that keep the releases within the limit's burstiness change the share of
// requests meeting the objective, measured from the send, by less than a tenth of the 1 % miss
// budget, and pauses twice as long exceed the limit and move it several times more. Every tier
// runs with and without the pauses on the same arrivals, so differences are paired; 40 tiers of
// 20,000 requests each.
func TestLagBurstinessBoundsItsEffect(t *testing.T) {
	if testing.Short() {
		t.Skip("a statistical check of the limit: 80 virtual tiers")
	}
	q := sim.QueueConfig{ModelName: "m", Servers: 64, Service: 200 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: 16}
	obj := 100 * time.Millisecond
	rate, err := queueing.MDCCapacity(q.Service, q.Servers, obj-q.FirstToken, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	window := q.Service / 4 // a quarter of the median time from release to end: every request is served for D
	miss := func(sent []time.Duration) float64 {
		n, m := 0, 0
		err := sim.SimulateQueue(q, sent, func(r sim.QueueResult) bool {
			if r.Arrival >= sent[len(sent)-1]/4 { // past the warm-up
				n++
				if r.First-r.Arrival > obj {
					m++
				}
			}
			return false
		})
		if err != nil {
			t.Fatal(err)
		}
		return float64(m) / float64(n)
	}
	type result struct{ excess, diff, se float64 }
	measureAt := func(maxPause time.Duration) result {
		var diffs, excess []float64
		for seed := int64(1); seed <= 40; seed++ {
			planned, err := arrival.Spec{Rate: rate, Burstiness: 1}.Arrivals(20000, 0, seed, 0)
			if err != nil {
				t.Fatal(err)
			}
			sent := paused(planned, 5, maxPause, uint64(seed))
			obs := make([]measure.Obs, len(planned))
			for i := range planned {
				obs[i] = measure.Obs{Planned: planned[i], Dispatched: sent[i]}
			}
			// paused sorts the releases; pair them with the arrivals in order, as a dispatcher
			// releases them.
			excess = append(excess, measure.LagBurstiness(obs, window))
			diffs = append(diffs, miss(sent)-miss(planned))
		}
		d, sd := mean(diffs), 0.0
		for _, x := range diffs {
			sd += (x - d) * (x - d)
		}
		return result{mean(excess), d, math.Sqrt(sd/float64(len(diffs)-1)) / math.Sqrt(float64(len(diffs)))}
	}
	within, beyond := measureAt(25*time.Millisecond), measureAt(60*time.Millisecond)
	t.Logf("pauses up to 25 ms: %.1f %% burstier, miss rate %+.4f points (± %.4f); up to 60 ms: %.1f %% burstier, %+.4f points (± %.4f)",
		100*within.excess, 100*within.diff, 100*within.se, 100*beyond.excess, 100*beyond.diff, 100*beyond.se)
	if within.excess > measure.LagBurstinessLimit {
		t.Fatalf("pauses up to 25 ms make the releases %.1f %% burstier: over the limit, so the check below says nothing", 100*within.excess)
	}
	if within.diff+2*within.se > 0.001 {
		t.Errorf("a lag within the limit moved the miss rate by %+.4f points (± %.4f), not below a tenth of the 1 %% budget", 100*within.diff, 200*within.se)
	}
	if beyond.excess <= measure.LagBurstinessLimit || beyond.diff < 3*within.diff {
		t.Errorf("pauses up to 60 ms: %.1f %% burstier and %+.4f points; want over the limit and a larger effect", 100*beyond.excess, 100*beyond.diff)
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// paused delays planned arrivals by dispatcher pauses: pauses start at pr per second and last
// U(0, maxPause); an arrival planned inside one is released at its end.
func paused(planned []time.Duration, pr float64, maxPause time.Duration, seed uint64) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := slices.Clone(planned)
	at, j := time.Duration(0), 0
	end := planned[len(planned)-1]
	var starts, ends []time.Duration
	for at < end {
		at += time.Duration(rng.ExpFloat64() / pr * 1e9)
		starts, ends = append(starts, at), append(ends, at+time.Duration(rng.Float64()*float64(maxPause)))
	}
	for i, p := range planned {
		for j < len(ends) && ends[j] < p {
			j++
		}
		if j < len(starts) && starts[j] <= p && p < ends[j] {
			out[i] = ends[j]
		}
	}
	slices.Sort(out)
	return out
}
