package sweep_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
)

// TestConcurrencySearchFindsTheTruth: a sweep of concurrency levels on a deterministic closed
// loop (virtual.ClosedQueueRunner), whose capacity in users is known exactly. N users start
// together on c slots of service time D with no think time: the slots serve them c at a time in
// rounds of D, the order rotating, so a request waits a whole number of rounds, at most
// ⌈N/c⌉ − 1. A TTFT objective T therefore holds for every request while ⌈N/c⌉ − 1 ≤
// ⌊(T − first token)/D⌋, that is up to N = c·(⌊(T − first token)/D⌋ + 1) users, and one user
// more makes some request wait a round too many (one in c or so: a clear miss of a 99 %
// target). The search must bracket it between adjacent levels, state the capacity there in
// users with the request rate they produced, and verify an operating point within the headroom.
func TestConcurrencySearchFindsTheTruth(t *testing.T) {
	for _, tc := range []struct {
		name  string
		q     sim.QueueConfig
		think time.Duration
		truth int
	}{
		// ⌊0.48/0.4⌋ = 1 round of waiting allowed: 4·2 = 8 users.
		{"4 slots, 400 ms", sim.QueueConfig{ModelName: "m", Servers: 4, Service: 400 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: 16}, 0, 8},
		// ⌊0.48/0.2⌋ = 2 rounds allowed: 4·3 = 12 users.
		{"4 slots, 200 ms", sim.QueueConfig{ModelName: "m", Servers: 4, Service: 200 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: 16}, 0, 12},
		// ⌊0.45/1⌋ = 0 rounds: 8 users, as many as slots.
		{"8 slots, 1 s", sim.QueueConfig{ModelName: "m", Servers: 8, Service: time.Second, FirstToken: 50 * time.Millisecond, OutputTokens: 16}, 0, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultSweep(1)
			cfg.Rates = sweep.Rates{}
			cfg.Concurrency = sweep.Concurrency{Auto: true, Think: tc.think}
			if errs := cfg.Validate(); len(errs) > 0 {
				t.Fatal(errs)
			}
			res, err := (&sweep.Executor{Config: cfg, Runner: &virtual.ClosedQueueRunner{Config: tc.q},
				Log: func(f string, a ...any) { t.Logf(f, a...) }}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			a := res.Analysis
			if a.Axis != curve.AxisConcurrency || a.Capacity == nil || a.OperatingPoint == nil {
				t.Fatalf("axis %q, capacity %+v, operating point %+v: %v", a.Axis, a.Capacity, a.OperatingPoint, a.Notes)
			}
			if c := a.Capacity.Rate; c < float64(tc.truth) || c >= float64(tc.truth+1) {
				t.Errorf("capacity %.3f users, want in [%d, %d)", c, tc.truth, tc.truth+1)
			}
			// At capacity the users keep the slots busy or nearly: c/D requests per second at
			// most, N/(D+Z) when fewer than that.
			slots := float64(tc.q.Servers) / tc.q.Service.Seconds()
			if want := min(float64(tc.truth)/(tc.q.Service+tc.think).Seconds(), slots); math.Abs(a.Capacity.RequestRate/want-1) > 0.05 {
				t.Errorf("the capacity's users produce %.3f req/s, want about %.3f", a.Capacity.RequestRate, want)
			}
			op := a.OperatingPoint
			if want := float64(int(float64(tc.truth) * 0.8)); op.Rate != want && op.Rate != want+1 {
				t.Errorf("operating point %v users, want %v (the capacity less 20 %%, whole users)", op.Rate, want)
			}
			if !op.Verified() {
				t.Errorf("operating point not verified: %+v", op.Confirmation)
			}
			// The request rate the operating point's users produced: N users, each cycling in
			// max(D + Z, N·D/c), so N / that: min(N/(D + Z), c/D).
			if cf := op.Confirmation; cf != nil {
				want := min(op.Rate/(tc.q.Service+tc.think).Seconds(), float64(tc.q.Servers)/tc.q.Service.Seconds())
				if got := cf.RequestThroughput; got < 0.95*want || got > 1.05*want {
					t.Errorf("the operating point produced %.3f req/s, want about %.3f", got, want)
				}
			}
		})
	}
}
