package sim_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

func poissonArrivals(seed uint64, lambda float64, n int) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, 0x617272))
	out := make([]time.Duration, n)
	t := 0.0
	for i := range out {
		t += rng.ExpFloat64() / lambda
		out[i] = time.Duration(math.Round(t * 1e9))
	}
	return out
}

// simulate runs SimulateQueue to the end, collecting every result.
func simulate(t *testing.T, cfg sim.QueueConfig, arrivals []time.Duration) []sim.QueueResult {
	t.Helper()
	out := make([]sim.QueueResult, 0, len(arrivals))
	if err := sim.SimulateQueue(cfg, arrivals, func(r sim.QueueResult) bool {
		out = append(out, r)
		return false
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSimulateQueueRecursion checks every start against the FIFO c-server
// recursion start_i = max(arrival_i, start_{i-c} + D), exactly, and the
// emission order.
func TestSimulateQueueRecursion(t *testing.T) {
	cfg := sim.QueueConfig{ModelName: "m", Servers: 3, Service: 100 * time.Millisecond, FirstToken: 7 * time.Millisecond, OutputTokens: 5}
	arrivals := poissonArrivals(1, 0.95*3/0.1, 200_000)
	// Ties: several requests at once, and arrivals exactly at ends of service.
	arrivals[10], arrivals[11], arrivals[12] = arrivals[9], arrivals[9], arrivals[9]
	res := simulate(t, cfg, arrivals)
	if len(res) != len(arrivals) {
		t.Fatalf("%d results for %d arrivals", len(res), len(arrivals))
	}
	starts := make([]time.Duration, len(arrivals))
	seen := make([]bool, len(arrivals))
	for k, r := range res {
		if seen[r.Index] {
			t.Fatalf("request %d emitted twice", r.Index)
		}
		seen[r.Index] = true
		starts[r.Index] = r.Start
		if k > 0 && r.End < res[k-1].End {
			t.Fatalf("result %d (end %v) emitted after one that ended at %v", k, r.End, res[k-1].End)
		}
		if r.Rejected || r.Arrival != arrivals[r.Index] || r.First != r.Start+cfg.FirstToken ||
			r.Last != r.Start+cfg.Service || r.End != r.Last || r.Tokens != 5 {
			t.Fatalf("bad result %+v", r)
		}
	}
	for i, a := range arrivals {
		want := a
		if i >= cfg.Servers {
			want = max(a, starts[i-cfg.Servers]+cfg.Service)
		}
		if starts[i] != want {
			t.Fatalf("request %d: start %v, want %v", i, starts[i], want)
		}
	}
}

func TestSimulateQueueSpeed(t *testing.T) {
	cfg := sim.DefaultQueueConfig()
	cfg.QueueLimit = 50
	arrivals := poissonArrivals(3, 11, 1_000_000) // overloaded: rejections too
	n := 0
	start := time.Now()
	if err := sim.SimulateQueue(cfg, arrivals, func(sim.QueueResult) bool { n++; return false }); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	t.Logf("10^6 arrivals in %v", el)
	if n != len(arrivals) {
		t.Fatalf("%d results", n)
	}
	if el > 5*time.Second { // well under a second without the race detector
		t.Errorf("10^6 arrivals took %v", el)
	}
}

func TestSimulateQueueStop(t *testing.T) {
	cfg := sim.QueueConfig{ModelName: "m", Servers: 2, Service: 50 * time.Millisecond, FirstToken: 5 * time.Millisecond, OutputTokens: 4, QueueLimit: 3}
	arrivals := poissonArrivals(4, 45, 5000) // ρ ≈ 1.1: waits and rejections
	for _, stopAfter := range []int{1, 2, 17, 100, 2500} {
		var got []sim.QueueResult
		var stopTime time.Duration
		if err := sim.SimulateQueue(cfg, arrivals, func(r sim.QueueResult) bool {
			got = append(got, r)
			if len(got) == stopAfter {
				stopTime = r.End
				return true
			}
			return false
		}); err != nil {
			t.Fatal(err)
		}
		emitted := make(map[int]bool)
		for _, r := range got {
			if r.Arrival > stopTime {
				t.Fatalf("stop after %d results at %v: request %d arrived later, at %v, and was emitted", stopAfter, stopTime, r.Index, r.Arrival)
			}
			emitted[r.Index] = true
		}
		for i, a := range arrivals {
			if a <= stopTime && !emitted[i] {
				t.Fatalf("stop after %d results at %v: request %d arrived at %v but was not emitted", stopAfter, stopTime, i, a)
			}
		}
		// The run up to the stop is the full run's.
		full := simulate(t, cfg, arrivals)
		for k := 0; k < stopAfter; k++ {
			if got[k] != full[k] {
				t.Fatalf("stop after %d: result %d is %+v, full run %+v", stopAfter, k, got[k], full[k])
			}
		}
		t.Logf("stop after %d results at %v: %d emitted in all", stopAfter, stopTime, len(got))
	}

	// A stop on an end of service admits arrivals at that very time.
	cfg = sim.QueueConfig{ModelName: "m", Servers: 1, Service: 10, FirstToken: 10, OutputTokens: 1}
	var got []int
	if err := sim.SimulateQueue(cfg, []time.Duration{0, 10, 10, 11}, func(r sim.QueueResult) bool {
		got = append(got, r.Index)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Errorf("stopped at 10: emitted %v, want [0 1 2]", got)
	}
}

func TestSimulateQueueLimit(t *testing.T) {
	// One slot, D = 10, at most 2 waiting.
	cfg := sim.QueueConfig{ModelName: "m", Servers: 1, Service: 10, FirstToken: 2, OutputTokens: 3, QueueLimit: 2}
	arrivals := []time.Duration{
		0,  // starts at 0, ends 10
		1,  // waits: starts 10
		2,  // waits: starts 20
		3,  // 2 waiting: rejected
		4,  // rejected
		10, // at 10 request 0 ends and request 1 starts first: 1 waiting, so it waits: starts 30
		10, // 2 waiting: rejected
		25, // 2 in service since 20, 5 waiting: waits, starts 40
		26, // rejected
		50, // request 7 ends at 50 first: the slot is free, starts 50
	}
	type want struct {
		start, end time.Duration
		rejected   bool
	}
	wants := []want{{0, 10, false}, {10, 20, false}, {20, 30, false}, {0, 3, true}, {0, 4, true}, {30, 40, false}, {0, 10, true}, {40, 50, false}, {0, 26, true}, {50, 60, false}}
	res := simulate(t, cfg, arrivals)
	if len(res) != len(arrivals) {
		t.Fatalf("%d results", len(res))
	}
	rejected := 0
	var order []int
	for _, r := range res {
		w := wants[r.Index]
		order = append(order, r.Index)
		if r.Rejected != w.rejected || r.End != w.end || (!w.rejected && r.Start != w.start) {
			t.Errorf("request %d: %+v, want start %v end %v rejected %v", r.Index, r, w.start, w.end, w.rejected)
		}
		if r.Rejected {
			rejected++
			if r.Start != 0 || r.First != 0 || r.Last != 0 || r.Tokens != 0 || r.Arrival != arrivals[r.Index] {
				t.Errorf("rejected %+v: only Arrival, End and Rejected may be set", r)
			}
		}
	}
	if rejected != 4 {
		t.Errorf("%d rejected, want 4", rejected)
	}
	wantOrder := []int{3, 4, 0, 6, 1, 8, 2, 5, 7, 9}
	for k := range wantOrder {
		if order[k] != wantOrder[k] {
			t.Errorf("emission order %v, want %v", order, wantOrder)
			break
		}
	}
}

func TestSimulateQueueErrors(t *testing.T) {
	called := false
	emit := func(sim.QueueResult) bool { called = true; return false }
	if err := sim.SimulateQueue(sim.DefaultQueueConfig(), []time.Duration{0, 2, 1}, emit); err == nil || !strings.Contains(err.Error(), "decrease") {
		t.Errorf("decreasing arrivals: %v", err)
	}
	if err := sim.SimulateQueue(sim.QueueConfig{}, []time.Duration{0}, emit); err == nil || !strings.Contains(err.Error(), "servers") {
		t.Errorf("zero config: %v", err)
	}
	if called {
		t.Error("emit called despite an error")
	}
	if err := sim.SimulateQueue(sim.DefaultQueueConfig(), nil, emit); err != nil || called {
		t.Errorf("no arrivals: %v, called %v", err, called)
	}
}

// One slot, 10 ms of service, one waiting place: the third request finds
// the place taken and is rejected at once; results come as outcomes are
// known.
func ExampleSimulateQueue() {
	cfg := sim.QueueConfig{ModelName: "m", Servers: 1, Service: 10 * time.Millisecond, FirstToken: 2 * time.Millisecond, OutputTokens: 4, QueueLimit: 1}
	arrivals := []time.Duration{0, time.Millisecond, 2 * time.Millisecond, 12 * time.Millisecond}
	_ = sim.SimulateQueue(cfg, arrivals, func(r sim.QueueResult) bool {
		if r.Rejected {
			fmt.Printf("request %d rejected at %v\n", r.Index, r.End)
		} else {
			fmt.Printf("request %d: arrived %v, waited %v, first token %v, end %v\n", r.Index, r.Arrival, r.Wait(), r.First, r.End)
		}
		return false
	})
	// Output:
	// request 2 rejected at 2ms
	// request 0: arrived 0s, waited 0s, first token 2ms, end 10ms
	// request 1: arrived 1ms, waited 9ms, first token 12ms, end 20ms
	// request 3: arrived 12ms, waited 8ms, first token 22ms, end 30ms
}
