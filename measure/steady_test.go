package measure_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/internal/racedetector"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// steadyGrid is the hand-built tier of these tests: request k is planned at 50 ms + k·100 ms
// (10 req/s, off the whole seconds so that no moment falls on a window edge), spends exactly
// 1 s in the system, and outputs 11 tokens: the first 500 ms after its arrival, the other 10
// evenly spread over the next 500 ms (First = planned + 0.5 s, Last = End = planned + 1 s).
// Every request is ok and compliant unless tweak says otherwise.
//
// In steady state such a tier completes 10 req/s and outputs 10 × 11 = 110 tok/s. Over a window
// [s, e] whose ends are whole seconds, the requests whose tokens cross an edge contribute:
//
//   - at s: the five requests with First in (s − 0.5 s, s) — First = s − 0.45, s − 0.35, …,
//     s − 0.05 — keep (Last − s)/0.5 s = 0.1, 0.3, 0.5, 0.7, 0.9 of their 10 later tokens
//     (2.5 × 10 = 25 tokens) and not their first;
//   - at e: the five requests with First in (e − 0.5 s, e) keep their first token and
//     (e − First)/0.5 s = 0.9, 0.7, 0.5, 0.3, 0.1 of the others (5 + 25 = 30 tokens);
//
// and every request whose tokens lie wholly inside contributes 11. Over [10 s, 100 s] that is
// 25 + 895 × 11 + 30 = 9,900 tokens = 110 tok/s × 90 s exactly.
func steadyGrid(n int, tweak func(k int, o *measure.Obs)) []measure.Obs {
	obs := make([]measure.Obs, n)
	for k := range obs {
		p := 50*time.Millisecond + time.Duration(k)*100*time.Millisecond
		obs[k] = measure.Obs{Planned: p, First: p + 500*time.Millisecond, Last: p + time.Second, End: p + time.Second,
			Tokens: 11, Flags: measure.ObsOK | measure.ObsCompliant}
		if tweak != nil {
			tweak(k, &obs[k])
		}
	}
	return obs
}

// steadyClose reports whether got is want to within 1e-12 relative: the window's figures are
// sums of a few thousand exact terms and fractions of whole nanoseconds, so only rounding
// separates them from the hand computation.
func steadyClose(got, want float64) bool {
	return got == want || math.Abs(got-want) <= 1e-12*math.Max(math.Abs(got), math.Abs(want))
}

func TestSteadyWindowOnConstantArrivals(t *testing.T) {
	s := time.Second
	tests := []struct {
		name        string
		n           int
		arrivalsEnd time.Duration
		w           measure.SteadyWindow
		start, end  float64 // s
		warmup      string
		requests    int
		completions int     // ok requests that ended in [start, end]
		tokens      float64 // output tokens inside [start, end]
	}{
		// Warm-up 10 × the median 1 s in system = 10 s, below 25 % of 100 s. Planned in
		// [10, 100]: k = 100…999. Ended in it (End = 1.05 + 0.1k): k = 90…989. Tokens: see
		// steadyGrid.
		{"a 100 s phase: warm-up 10 median times in system", 1000, 100 * s, measure.SteadyWindow{},
			10, 100, measure.WarmupTimeInSystem, 900, 900, 9900},
		// 10 s is above 25 % of 20 s: warm-up 5 s. Planned in [5, 20]: k = 50…199; ended in
		// it: k = 40…189; tokens 25 + 145 × 11 + 30 = 1,650 = 110 × 15.
		{"a 20 s phase: warm-up capped at a quarter of it", 200, 20 * s, measure.SteadyWindow{},
			5, 20, measure.WarmupTimeInSystem, 150, 150, 1650},
		// No end given: the last planned arrival, 99.95 s; warm-up min(10, 24.99) = 10 s.
		// Planned in [10, 99.95]: k = 100…999; ended in it: k = 90…989. Tokens at the end edge:
		// k = 990…994 (First = 99.55…99.95) keep their first token and 0.8, 0.6, 0.4, 0.2, 0 of
		// the others: 5 + 20; k = 95…989 lie inside: 25 + 895 × 11 + 25 = 9,895.
		{"no end of the arrival phase: the last planned arrival", 1000, 0, measure.SteadyWindow{},
			10, 99.95, measure.WarmupTimeInSystem, 900, 900, 9895},
		// A given window replaces the rule. Planned in [20, 60]: k = 200…599; ended: k =
		// 190…589; tokens 25 + 395 × 11 + 30 = 4,400 = 110 × 40.
		{"a given window", 1000, 100 * s, measure.SteadyWindow{Given: true, Start: 20 * s, End: 60 * s},
			20, 60, measure.WarmupGiven, 400, 400, 4400},
		// A given end past the arrival phase stops at the phase's end; a given zero end means
		// the phase's end. Planned in [30, 100]: k = 300…999; ended: k = 290…989; tokens 110 × 70.
		{"a given window past the arrival phase", 1000, 100 * s, measure.SteadyWindow{Given: true, Start: 30 * s, End: 150 * s},
			30, 100, measure.WarmupGiven, 700, 700, 7700},
		{"a given window without an end", 1000, 100 * s, measure.SteadyWindow{Given: true, Start: 30 * s},
			30, 100, measure.WarmupGiven, 700, 700, 7700},
		// A given window from T0 keeps the ramp-up, where the deployment has not yet reached
		// its steady output: planned in [0, 100]: all 1,000; ended by 100 s: k = 0…989; tokens:
		// k = 0…989 wholly inside, and the end edge: 990 × 11 + 30 = 10,920 (109.2 tok/s).
		{"a given window from T0", 1000, 100 * s, measure.SteadyWindow{Given: true},
			0, 100, measure.WarmupGiven, 1000, 990, 10920},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := measure.SteadyState(steadyGrid(tt.n, nil), tt.arrivalsEnd, tt.w)
			if st == nil {
				t.Fatal("no steady state")
			}
			if st.Start != tt.start || st.End != tt.end || st.Warmup != tt.warmup {
				t.Errorf("window [%v, %v] (%s), want [%v, %v] (%s)", st.Start, st.End, st.Warmup, tt.start, tt.end, tt.warmup)
			}
			length := tt.end - tt.start
			if st.Requests != tt.requests || st.Compliant != tt.requests || st.Ok != tt.requests {
				t.Errorf("requests %d, compliant %d, ok %d; want %d of each", st.Requests, st.Compliant, st.Ok, tt.requests)
			}
			if want := float64(tt.requests) / length; !steadyClose(st.RealisedRate, want) {
				t.Errorf("realised rate %v, want %v", st.RealisedRate, want)
			}
			if want := float64(tt.completions) / length; !steadyClose(st.RequestThroughput, want) {
				t.Errorf("request throughput %v, want %v", st.RequestThroughput, want)
			}
			if want := tt.tokens / length; !steadyClose(st.RawOutputThroughput, want) || !steadyClose(st.CompliantOutputThroughput, want) {
				t.Errorf("output throughput raw %v, compliant %v; want %v", st.RawOutputThroughput, st.CompliantOutputThroughput, want)
			}
			// Every time in system is 1 s: no variance, so no inflation, and nothing grows.
			if st.CompliantShare != 1 || st.VarianceFactor != 1 || st.EffectiveRequests != float64(tt.requests) {
				t.Errorf("share %v, variance factor %v, effective requests %v; want 1, 1, %d", st.CompliantShare, st.VarianceFactor, st.EffectiveRequests, tt.requests)
			}
			if !st.Stationary || st.Note != "" {
				t.Errorf("not stationary: %q", st.Note)
			}
		})
	}
	// A 10 req/s tier, exactly.
	if st := measure.SteadyState(steadyGrid(1000, nil), 100*s, measure.SteadyWindow{}); st.RealisedRate != 10 || st.RequestThroughput != 10 {
		t.Errorf("realised rate %v and request throughput %v, want exactly 10", st.RealisedRate, st.RequestThroughput)
	}
}

// TestSteadyTokensAtTheWindowEdges marks requests on either edge of [10 s, 100 s] non-compliant
// (or failed): the compliant throughput loses exactly the share of their tokens inside the
// window, and requests planned inside but still running at its end count in the share.
func TestSteadyTokensAtTheWindowEdges(t *testing.T) {
	obs := steadyGrid(1000, func(k int, o *measure.Obs) {
		switch k {
		case 92: // planned 9.25 s (before the window); First 9.75 s, Last 10.25 s: half its 10 later tokens are inside
			o.Flags = measure.ObsOK
		case 950: // planned 95.05 s, ended 96.05 s: wholly inside, failed
			o.Flags = 0
		case 993: // planned 99.35 s; First 99.85 s, Last 100.35 s: its first and 0.3 of the others are inside
			o.Flags = measure.ObsOK
		case 999: // planned 99.95 s, still running at 100 s: every token after the window
			o.Flags = measure.ObsOK
		}
	})
	st := measure.SteadyState(obs, 100*time.Second, measure.SteadyWindow{})
	// Planned in the window: k = 100…999; 950, 993 and 999 are not compliant, 950 not ok.
	if st.Requests != 900 || st.Compliant != 897 || st.Ok != 899 || st.CompliantShare != 897.0/900 {
		t.Errorf("requests %d, compliant %d, ok %d, share %v; want 900, 897, 899, %v", st.Requests, st.Compliant, st.Ok, st.CompliantShare, 897.0/900)
	}
	// Completions: k = 90…989 ended inside, less the failed 950.
	if want := 899.0 / 90; !steadyClose(st.RequestThroughput, want) {
		t.Errorf("request throughput %v, want %v", st.RequestThroughput, want)
	}
	// Raw output counts every request's tokens, failed or not: 110 tok/s. Compliant output
	// loses 5 (k = 92), 11 (950), 1 + 3 (993) and 0 (999) of the 9,900.
	if !steadyClose(st.RawOutputThroughput, 110) {
		t.Errorf("raw output throughput %v, want 110", st.RawOutputThroughput)
	}
	if want := (9900.0 - 5 - 11 - 4) / 90; !steadyClose(st.CompliantOutputThroughput, want) {
		t.Errorf("compliant output throughput %v, want %v", st.CompliantOutputThroughput, want)
	}
	// Three misses are too few to say anything of their clustering; time in system is constant.
	if st.VarianceFactor != 1 || st.EffectiveRequests != 900 {
		t.Errorf("variance factor %v (effective %v), want 1 (900)", st.VarianceFactor, st.EffectiveRequests)
	}
}

// TestSteadyTokensOfOneRequest checks the spreading rule on single requests in a given window
// [2 s, 10 s] (8 s long).
func TestSteadyTokensOfOneRequest(t *testing.T) {
	s := time.Second
	w := measure.SteadyWindow{Given: true, Start: 2 * s, End: 10 * s}
	tests := []struct {
		name   string
		o      measure.Obs
		tokens float64 // inside [2 s, 10 s]
		in     int     // planned inside
	}{
		// First token at 1 s (outside), 8 more over (1 s, 5 s]: (5 − 2)/4 of them inside.
		{"spanning the start", measure.Obs{Planned: 0, First: 1 * s, Last: 5 * s, End: 5 * s, Tokens: 9}, 6, 0},
		// First at 9.5 s (inside), 9 more over (9.5 s, 14 s]: 0.5/4.5 of them inside.
		{"running past the end", measure.Obs{Planned: 9 * s, First: 9500 * time.Millisecond, Last: 14 * s, End: 14 * s, Tokens: 10}, 2, 1},
		// Every token after the window.
		{"starting after the end", measure.Obs{Planned: 9 * s, First: 11 * s, Last: 12 * s, End: 12 * s, Tokens: 10}, 0, 1},
		// All tokens at one instant inside the window.
		{"one instant", measure.Obs{Planned: 3 * s, First: 4 * s, Last: 4 * s, End: 4 * s, Tokens: 7}, 7, 1},
		// A request that failed before its first token outputs nothing.
		{"no first token", measure.Obs{Planned: 3 * s, First: records.Unset, Last: records.Unset, End: 4 * s}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Flags = measure.ObsOK | measure.ObsCompliant
			st := measure.SteadyState([]measure.Obs{tt.o}, 10*s, w)
			if want := tt.tokens / 8; !steadyClose(st.RawOutputThroughput, want) || !steadyClose(st.CompliantOutputThroughput, want) {
				t.Errorf("output throughput raw %v, compliant %v; want %v (%v tokens in 8 s)", st.RawOutputThroughput, st.CompliantOutputThroughput, want, tt.tokens)
			}
			if st.Requests != tt.in {
				t.Errorf("%d requests in the window, want %d", st.Requests, tt.in)
			}
		})
	}
}

func TestSteadyStateEmptyAndUnended(t *testing.T) {
	if st := measure.SteadyState(nil, time.Second, measure.SteadyWindow{}); st != nil {
		t.Errorf("no observation: %+v, want nil", st)
	}
	// No request ended: no time in system to size a warm-up from: the window starts at T0.
	obs := steadyGrid(100, func(_ int, o *measure.Obs) {
		o.First, o.Last, o.End, o.Tokens, o.Flags = records.Unset, records.Unset, records.Unset, 0, 0
	})
	st := measure.SteadyState(obs, 10*time.Second, measure.SteadyWindow{})
	if st.Warmup != measure.WarmupNone || st.Start != 0 || st.End != 10 || st.Requests != 100 || st.CompliantShare != 0 {
		t.Errorf("window [%v, %v] (%s), %d requests, share %v; want [0, 10] (none), 100, 0", st.Start, st.End, st.Warmup, st.Requests, st.CompliantShare)
	}
	// Fewer requests than a steady state needs.
	st = measure.SteadyState(steadyGrid(20, nil), 2*time.Second, measure.SteadyWindow{})
	if st.Stationary || st.Note == "" {
		t.Errorf("a %d-request window is stationary (%q)", st.Requests, st.Note)
	}
}

// TestSteadyGivenWindowEndingBeforeItsStart: a window given by the user whose warm-up and
// cooldown together exceed the tier (--window-warmup 60s --window-cooldown 50s on a 100 s tier)
// ends before it starts. The whole-tier summary reports it as an empty window; the steady state
// must be empty too (no request, so Throughputs and Share fall back to the whole tier), not
// fail.
func TestSteadyGivenWindowEndingBeforeItsStart(t *testing.T) {
	steady := func(name string, f func() *measure.Steady) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s: panic: %v", name, r)
			}
		}()
		st := f()
		if st == nil || st.Requests != 0 || st.End > st.Start {
			t.Errorf("%s: %+v, want an empty window", name, st)
		}
	}
	steady("SteadyState", func() *measure.Steady {
		return measure.SteadyState(steadyGrid(1000, nil), 100*time.Second, measure.SteadyWindow{Given: true, Start: 60 * time.Second, End: 50 * time.Second})
	})
	steady("Summarize", func() *measure.Steady {
		var recs []records.Record
		for k, o := range steadyGrid(1000, nil) {
			r := records.NewRecord(0, k, o.Planned)
			r.Dispatched, r.Slot, r.Sent = o.Planned, o.Planned, o.Planned
			r.FirstEvent, r.First, r.Last, r.End = o.First, o.First, o.Last, o.End
			r.OutputTokens = int(o.Tokens)
			recs = append(recs, r)
		}
		tier := records.Tier{Planned: len(recs), DurationS: 100}
		return measure.Summarize(recs, tier, measure.Options{Warmup: 60 * time.Second, Cooldown: 50 * time.Second}).Steady
	})
}

// TestSteadyThroughputsFallBackOnABurst: a burst at rate inf plans every request at T0, so its
// steady-state window has no length; Throughputs and Share then give the whole tier's figures.
func TestSteadyThroughputsFallBackOnABurst(t *testing.T) {
	obs := make([]measure.Obs, 50)
	for i := range obs {
		e := time.Duration(i+1) * 100 * time.Millisecond
		obs[i] = measure.Obs{First: e / 2, Last: e, End: e, Tokens: 8, Flags: measure.ObsOK | measure.ObsCompliant}
	}
	st := measure.SteadyState(obs, 0, measure.SteadyWindow{})
	if st.End != st.Start {
		t.Fatalf("a burst's window is [%v, %v], want no length", st.Start, st.End)
	}
	whole := measure.Summary{RawOutputThroughput: 80, CompliantOutputThroughput: 72, CompliantRequestShare: 0.9, Steady: st}
	if raw, compliant, steady := whole.Throughputs(); raw != 80 || compliant != 72 || steady {
		t.Errorf("burst: Throughputs() = %v, %v, %v; want the whole tier's 80, 72, false", raw, compliant, steady)
	}
	if got := whole.Share(); got != 0.9 {
		t.Errorf("burst: Share() = %v, want the whole tier's 0.9", got)
	}
	// No steady state at all (no request issued): the whole tier's too.
	whole.Steady = nil
	if raw, _, steady := whole.Throughputs(); raw != 80 || steady || whole.Share() != 0.9 {
		t.Errorf("no steady state: Throughputs() raw %v (steady %v), Share() %v; want 80, false, 0.9", raw, steady, whole.Share())
	}
	// A window with a length but no request planned in it: throughputs are the window's, the
	// share (0/0) the whole tier's.
	whole.Steady = &measure.Steady{Start: 1, End: 2, RawOutputThroughput: 5, CompliantOutputThroughput: 4, CompliantShare: math.NaN()}
	if raw, compliant, steady := whole.Throughputs(); raw != 5 || compliant != 4 || !steady || whole.Share() != 0.9 {
		t.Errorf("empty window: Throughputs() = %v, %v, %v, Share() %v; want 5, 4, true, 0.9", raw, compliant, steady, whole.Share())
	}
	// A steady tier: the window's.
	whole.Steady = measure.SteadyState(steadyGrid(1000, nil), 100*time.Second, measure.SteadyWindow{})
	if raw, compliant, steady := whole.Throughputs(); !steadyClose(raw, 110) || !steadyClose(compliant, 110) || !steady || whole.Share() != 1 {
		t.Errorf("steady tier: Throughputs() = %v, %v, %v, Share() %v; want 110, 110, true, 1", raw, compliant, steady, whole.Share())
	}
}

// steadyPoisson draws the arrivals of a Poisson process at lambda per second over [0, d).
func steadyPoisson(rng *rand.Rand, lambda float64, d time.Duration) []time.Duration {
	var out []time.Duration
	for t := rng.ExpFloat64() / lambda; t < d.Seconds(); t += rng.ExpFloat64() / lambda {
		out = append(out, time.Duration(math.Round(t*1e9)))
	}
	return out
}

// TestSteadyIntervalCoverageOnMDC holds the steady-state share and its interval against the exact
// steady state of M/D/c queues: each replication is one tier of Poisson arrivals started on an
// empty queue (as a sweep's tiers are), served on the virtual clock by sim.SimulateQueue, and
// judged with a 500 ms TTFT objective (compliant: first − planned ≤ 500 ms, i.e. a wait of at
// most 500 ms − FirstToken). The truth is queueing.MDCWaitCDF at that wait.
//
//   - Coverage: the 95 % Wilson interval on the effective sample size (curve.WilsonN) must
//     contain the truth in at least 90 % of the tiers: a lower bar than the nominal 95 %, for the
//     variance factor is itself estimated. With R replications the observed coverage of an
//     interval whose true coverage is 90 % has a standard deviation √(0.9·0.1/R) (2.4 points
//     for R = 150); the test fails below 90 % less 3 of those (so a true 90 % fails by chance
//     with probability about 0.1 %); the same over all the cases pooled.
//   - Bias: the mean window share over the R tiers must be the truth within 3 standard errors,
//     the standard error being the replications' own spread over √R.
//
// Tiers last the time of 1,500 arrivals, at 0.8 and 1.0 times the capacity at a 99 % target
// (queueing.MDCCapacity), on two queues.
func TestSteadyIntervalCoverageOnMDC(t *testing.T) {
	const objective = 500 * time.Millisecond
	const tierRequests = 1500
	reps := 150
	if testing.Short() || racedetector.Enabled {
		reps = 50
	}
	configs := []sim.QueueConfig{
		{ModelName: "m", Servers: 4, Service: 400 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: 16},
		{ModelName: "m", Servers: 8, Service: time.Second, FirstToken: 50 * time.Millisecond, OutputTokens: 16},
	}
	loads := []float64{0.8, 1.0}
	covered := make([]int, len(configs)*len(loads)) // per case, each written by its own subtest
	t.Run("cases", func(t *testing.T) {
		for ci, cfg := range configs {
			for li, load := range loads {
				t.Run(fmt.Sprintf("%v at %.1f× capacity", cfg, load), func(t *testing.T) {
					t.Parallel()
					covered[ci*len(loads)+li] = steadyCoverage(t, cfg, load, objective, reps, tierRequests, uint64(ci+1))
				})
			}
		}
	})
	all := 0
	for _, c := range covered {
		all += c
	}
	tiers := reps * len(covered)
	coverage := float64(all) / float64(tiers)
	t.Logf("coverage over all %d tiers: %.3f", tiers, coverage)
	if floor := 0.90 - 3*math.Sqrt(0.9*0.1/float64(tiers)); coverage < floor {
		t.Errorf("the 95 %% interval covers the exact share in %.3f of %d tiers, below %.3f", coverage, tiers, floor)
	}
}

// steadyCoverage runs reps tiers of one case and checks them (see
// TestSteadyIntervalCoverageOnMDC); it returns how many intervals covered the truth.
func steadyCoverage(t *testing.T, cfg sim.QueueConfig, load float64, objective time.Duration, reps, tierRequests int, seed uint64) int {
	capacity, err := queueing.MDCCapacity(cfg.Service, cfg.Servers, objective-cfg.FirstToken, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	lambda := load * capacity
	truth, err := queueing.MDCWaitCDF(lambda, cfg.Service, cfg.Servers, objective-cfg.FirstToken)
	if err != nil {
		t.Fatal(err)
	}
	d := time.Duration(float64(tierRequests) / lambda * float64(time.Second))
	rng := rand.New(rand.NewPCG(seed, math.Float64bits(load)))
	var shares, factors, effective []float64
	covered, stationary, nsum := 0, 0, 0
	for range reps {
		arrivals := steadyPoisson(rng, lambda, d)
		obs := make([]measure.Obs, 0, len(arrivals))
		if err := sim.SimulateQueue(cfg, arrivals, func(r sim.QueueResult) bool {
			o := measure.Obs{Planned: r.Arrival, First: r.First, Last: r.Last, End: r.End, Tokens: int32(r.Tokens), Flags: measure.ObsOK}
			if r.First-r.Arrival <= objective {
				o.Flags |= measure.ObsCompliant
			}
			obs = append(obs, o)
			return false
		}); err != nil {
			t.Fatal(err)
		}
		st := measure.SteadyState(obs, d, measure.SteadyWindow{})
		lo, hi := curve.WilsonN(st.CompliantShare, st.EffectiveRequests, 0.95)
		if lo <= truth && truth <= hi {
			covered++
		}
		if st.Stationary {
			stationary++
		}
		shares = append(shares, st.CompliantShare)
		factors = append(factors, st.VarianceFactor)
		effective = append(effective, st.EffectiveRequests)
		nsum += st.Requests
	}
	r := float64(reps)
	mean, sd := steadyMeanSD(shares)
	se := sd / math.Sqrt(r)
	n := float64(nsum) / r
	// The variance inflation the tiers actually show: the shares' spread over the binomial one.
	actual := sd * sd * n / (truth * (1 - truth))
	fm, _ := steadyMeanSD(factors)
	em, _ := steadyMeanSD(effective)
	coverage := float64(covered) / r
	t.Logf("λ = %.3f req/s, ρ = %.3f: truth %.5f; window share mean %.5f (bias %+.5f, SE %.5f); coverage %.3f; "+
		"variance factor mean %.2f (median %.2f), actual inflation %.2f; %.0f requests, %.0f effective; %d of %d stationary",
		lambda, lambda*cfg.Service.Seconds()/float64(cfg.Servers), truth, mean, mean-truth, se,
		coverage, fm, steadyMedian(factors), actual, n, em, stationary, reps)
	if floor := 0.90 - 3*math.Sqrt(0.9*0.1/r); coverage < floor {
		t.Errorf("the 95 %% interval covers the exact share %.5f in %.3f of %d tiers, below %.3f (90 %% less 3 SD)", truth, coverage, reps, floor)
	}
	if math.Abs(mean-truth) > 3*se {
		t.Errorf("the window share is biased: mean %.5f, truth %.5f, more than 3 SE (%.5f) apart", mean, truth, se)
	}
	return covered
}

func steadyMeanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

func steadyMedian(xs []float64) float64 {
	c := slices.Clone(xs)
	slices.Sort(c)
	return c[len(c)/2]
}

// TestPoolSteadyKeepsTheControlOfItsControlledParts: a pool with one controlled part and one
// not is controlled, each part counting with the share and effective sample its verdict used
// (the controlled ones', the plain ones'), so the pool is at least as sure as its surest part;
// a pool of plain parts is plain. The README's first command pooled two controlled tiers of
// 18,000 requests with a 30-second plain one and read "not yet enough requests" where each
// controlled tier alone met the target.
func TestPoolSteadyKeepsTheControlOfItsControlledParts(t *testing.T) {
	plain := &measure.Steady{Start: 0, End: 30, Requests: 2400, Compliant: 2400, CompliantShare: 1, EffectiveRequests: 200}
	ctrl := &measure.Steady{Start: 0, End: 150, Requests: 12000, Compliant: 11957, CompliantShare: 11957.0 / 12000, EffectiveRequests: 400,
		Controlled: &measure.Controlled{Share: 0.998, EffectiveRequests: 1600, Gain: 4}}
	p := measure.PoolSteady(plain, ctrl)
	if p.Controlled == nil {
		t.Fatal("a pool with a controlled part is not controlled")
	}
	if want := (200*1 + 1600*0.998) / 1800; math.Abs(p.Controlled.Share-want) > 1e-12 || p.Controlled.EffectiveRequests != 1800 {
		t.Errorf("pooled control %+v, want share %.6f on 1800 effective requests", p.Controlled, want)
	}
	if p.Controlled.EffectiveRequests < ctrl.Controlled.EffectiveRequests {
		t.Errorf("the pool rests on %.0f effective requests, fewer than its controlled part's %.0f", p.Controlled.EffectiveRequests, ctrl.Controlled.EffectiveRequests)
	}
	if q := measure.PoolSteady(plain, plain); q.Controlled != nil {
		t.Errorf("a pool of plain parts is controlled: %+v", q.Controlled)
	}
}
