package loadgen_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"golang.org/x/time/rate"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// memSink keeps records and notices concurrent Write calls.
type memSink struct {
	mu         sync.Mutex
	recs       []records.Record
	active     atomic.Int32
	concurrent atomic.Bool
	failAfter  int // > 0: Write fails from this call on
}

func (s *memSink) Write(r *records.Record) error {
	if s.active.Add(1) > 1 {
		s.concurrent.Store(true)
	}
	defer s.active.Add(-1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failAfter > 0 && len(s.recs) >= s.failAfter {
		return errors.New("disk full")
	}
	s.recs = append(s.recs, *r)
	return nil
}

// byID returns the records indexed by id, failing unless every id in [0,n) has exactly one.
func (s *memSink) byID(t *testing.T, n int) []records.Record {
	t.Helper()
	if s.concurrent.Load() {
		t.Error("the sink was called concurrently")
	}
	out := make([]records.Record, n)
	seen := make([]bool, n)
	for _, r := range s.recs {
		if r.ID < 0 || r.ID >= n || seen[r.ID] {
			t.Fatalf("record id %d unexpected or repeated", r.ID)
		}
		seen[r.ID] = true
		out[r.ID] = r
	}
	if len(s.recs) != n {
		t.Fatalf("%d records for %d planned requests", len(s.recs), n)
	}
	return out
}

func requests(n int) []workloads.Request {
	reqs := make([]workloads.Request, n)
	for i := range reqs {
		reqs[i] = workloads.Request{ID: i, Prompt: "p", InputTokens: 1, MaxTokens: 4}
	}
	return reqs
}

func evenly(n int, gap time.Duration) []time.Duration {
	offs := make([]time.Duration, n)
	for i := range offs {
		offs[i] = time.Duration(i) * gap
	}
	return offs
}

// TestRunClientQueueTime: ten requests at T0 through two slots against a server that takes
// 100 ms each. client_queue_time shows the queue and TTFT does not.
func TestRunClientQueueTime(t *testing.T) {
	watchStalls(t)
	const d = 100 * time.Millisecond
	srv := fakesse.New(func(fakesse.Received) fakesse.Script {
		return fakesse.Stream{TTFT: d, Chunks: 1, Usage: true}.Script()
	})
	defer srv.Close()
	c := newClient(t, loadgen.Target{BaseURL: srv.URL}, 2)
	sink := &memSink{}
	res, err := loadgen.Run(context.Background(), c, loadgen.Tier{
		Offsets: make([]time.Duration, 10), Requests: requests(10), MaxConcurrency: 2,
	}, sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := sink.byID(t, 10)
	if res.Planned != 10 || res.Dispatched != 10 || res.Canceled != 0 {
		t.Errorf("result %+v", res)
	}
	for i, r := range recs {
		if r.Outcome != records.OK {
			t.Fatalf("request %d: %v %s", i, r.Outcome, r.Error)
		}
		q, _ := r.ClientQueueTime()
		// Lower bound, exact: with two slots and FIFO, request i starts no earlier than request
		// i-1 and no earlier than the end of the requests before it on its own slot; one of the
		// two slots has served at least ⌈(i-1)/2⌉ = ⌊i/2⌋ of them, each lasting ≥ 100 ms.
		// Upper bound: greedy FIFO on 2 slots starts request i by (Σ durations before it)/2, each
		// duration ≤ 100 ms + slack, plus slack for the last hand-over.
		lo := time.Duration(i/2) * d
		hi := time.Duration(i)*(d+slack)/2 + slack
		betweenOrStalled(t, "client_queue_time", q, lo, hi)
		betweenOrStalled(t, "TTFT", ttft(r), d, d+slack)
		if i > 0 && r.Slot < recs[i-1].Slot {
			t.Errorf("request %d admitted at %v before request %d at %v: the gate is not FIFO", i, r.Slot, i-1, recs[i-1].Slot)
		}
		if lag, _ := r.ScheduleLag(); lag < 0 {
			t.Errorf("request %d: schedule lag %v", i, lag)
		} else if lag > slack {
			errorfUnlessStalled(t, time.Now().Add(-time.Minute), stallLimit, "request %d: schedule lag %v", i, lag)
		}
	}
	t.Logf("client_queue_time: %v", queueTimes(recs))
}

func queueTimes(recs []records.Record) []time.Duration {
	out := make([]time.Duration, len(recs))
	for i, r := range recs {
		q, _ := r.ClientQueueTime()
		out[i] = q.Round(time.Millisecond)
	}
	return out
}

// TestRunScheduleLag: 200 req/s for 1 s against an instant server. The dispatcher must keep up
// and never release a request before its planned time.
func TestRunScheduleLag(t *testing.T) {
	if testing.Short() {
		t.Skip("2 s of load")
	}
	for _, spin := range []time.Duration{0, time.Millisecond} {
		t.Run(fmt.Sprintf("spin %v", spin), func(t *testing.T) { testScheduleLag(t, spin) })
	}
}

func testScheduleLag(t *testing.T, spin time.Duration) {
	srv := fakesse.New(func(fakesse.Received) fakesse.Script { return fakesse.Stream{Chunks: 1}.Script() })
	defer srv.Close()
	c := newClient(t, loadgen.Target{BaseURL: srv.URL}, 0)
	sink := &memSink{}
	const n = 200
	res, err := loadgen.Run(context.Background(), c, loadgen.Tier{Offsets: evenly(n, 5*time.Millisecond), Requests: requests(n), Spin: spin}, sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := sink.byID(t, n)
	lags := make([]time.Duration, 0, n)
	for _, r := range recs {
		lag, ok := r.ScheduleLag()
		if !ok || lag < 0 {
			t.Fatalf("request %d dispatched %v, planned %v", r.ID, r.Dispatched, r.Planned)
		}
		if r.Slot != r.Dispatched {
			t.Errorf("without a cap slot %v must equal dispatched %v", r.Slot, r.Dispatched)
		}
		lags = append(lags, lag)
	}
	slices.Sort(lags)
	p50, p99 := lags[n/2], lags[n*99/100-1]
	t.Logf("schedule lag p50 %v p99 %v max %v", p50, p99, lags[n-1])
	// Loose, because the machine is shared: alone, p99 is ~1-3 ms here (timer wake-ups are
	// rounded to the millisecond; see Tier.Spin), but with other -race test binaries competing
	// for the 2 cores the process is descheduled for 10-25 ms now and then, which lands in p99.
	// The design errors this guards against are systematic and show in the median: sleeping
	// relative to the previous dispatch drifts (~0.5 ms per request, so a median of tens of ms
	// after 200 requests), and waiting on the gate, the sink or a response makes every request
	// late. The precise figure is BenchmarkDispatcher's. (p99 reached 62 ms at a load average
	// of 8, with the median at 0.9 ms: p99 is bounded only against gross stalls.)
	if p50 > 5*time.Millisecond || p99 > 150*time.Millisecond {
		t.Errorf("schedule lag p50 %v p99 %v", p50, p99)
	}
	if res.RateLimited {
		t.Error("RateLimited without a limiter")
	}
}

// TestRunReusesConnections: finished streams give their connection back to the pool.
func TestRunReusesConnections(t *testing.T) {
	srv := fakesse.New(func(fakesse.Received) fakesse.Script {
		return fakesse.Stream{Chunks: 2, Gap: time.Millisecond, Usage: true}.Script()
	})
	defer srv.Close()
	c := newClient(t, loadgen.Target{BaseURL: srv.URL}, 3)
	sink := &memSink{}
	if _, err := loadgen.Run(context.Background(), c, loadgen.Tier{
		Offsets: evenly(30, time.Millisecond), Requests: requests(30), MaxConcurrency: 3,
	}, sink, nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range sink.byID(t, 30) {
		if r.Outcome != records.OK {
			t.Fatalf("%v %s", r.Outcome, r.Error)
		}
	}
	// Ideally 3. net/http returns a finished response's connection to the pool from its own
	// read-loop goroutine, so a request started right after may, on a busy machine, dial an extra
	// one (which then stays in the pool). Without reuse there would be one per request: 30.
	if n := srv.Conns(); n > 6 {
		t.Errorf("%d connections for 30 requests at concurrency 3: connections are not reused", n)
	}
}

// TestRunCancelMidRun: Ctrl-C in the middle. Every planned request still has exactly one record,
// the outcomes add up, and nothing is left running.
func TestRunCancelMidRun(t *testing.T) {
	watchStalls(t) // before the baseline: its goroutine is not a leak
	baseline := runtime.NumGoroutine()
	srv := fakesse.New(func(fakesse.Received) fakesse.Script {
		return fakesse.Stream{TTFT: 30 * time.Millisecond, Gap: 20 * time.Millisecond, Chunks: 3}.Script()
	})
	c, err := loadgen.NewClient(loadgen.Target{BaseURL: srv.URL, Model: "m"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	sink := &memSink{}
	var progress loadgen.Progress
	res, err := loadgen.Run(ctx, c, loadgen.Tier{
		Offsets: evenly(n, 10*time.Millisecond), Requests: requests(n), MaxConcurrency: 4,
	}, sink, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if since := time.Since(res.T0); since > 150*time.Millisecond+slack {
		errorfUnlessStalled(t, res.T0, stallLimit, "Run returned %v after T0, cancel came at 150ms", since)
	}
	recs := sink.byID(t, n)
	var ok, canceled, inFlight, queued, never int
	for _, r := range recs {
		switch {
		case r.Outcome == records.OK:
			ok++
		case r.Outcome != records.Canceled:
			t.Errorf("request %d: unexpected outcome %v %s", r.ID, r.Outcome, r.Error)
		case r.Dispatched == records.Unset:
			never++
			if r.Slot != records.Unset || r.Sent != records.Unset || r.End != records.Unset {
				t.Errorf("request %d never dispatched but has times: %+v", r.ID, r)
			}
		case r.Slot == records.Unset:
			queued++
		default:
			inFlight++
			if !strings.Contains(r.Error, "run was stopped") {
				t.Errorf("request %d: error %q", r.ID, r.Error)
			}
		}
		if r.Outcome == records.Canceled {
			canceled++
		}
	}
	t.Logf("ok %d, canceled in flight %d, waiting for a slot %d, never dispatched %d", ok, inFlight, queued, never)
	if ok == 0 || inFlight == 0 || never == 0 {
		t.Errorf("the cancel should have caught requests in every state")
	}
	if res.Planned != n || res.Dispatched != n-never || res.Canceled != canceled || ok+canceled != n {
		t.Errorf("result %+v does not add up (ok %d canceled %d never %d)", res, ok, canceled, never)
	}
	if progress.Planned.Load() != n || progress.Dispatched.Load() != int64(res.Dispatched) || progress.InFlight.Load() != 0 ||
		progress.Done.Load() != int64(res.Dispatched) || progress.Errors.Load() != int64(inFlight+queued) {
		t.Errorf("progress planned %d dispatched %d in flight %d done %d errors %d", progress.Planned.Load(),
			progress.Dispatched.Load(), progress.InFlight.Load(), progress.Done.Load(), progress.Errors.Load())
	}
	c.Close()
	srv.Close()
	// Goroutines of closed connections exit asynchronously: wait for them, boundedly.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > baseline {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines left, %d before:\n%s", g, baseline, buf[:runtime.Stack(buf, true)])
	}
}

// TestRunSinkFailureStops: when records cannot be written the tier stops dispatching.
func TestRunSinkFailureStops(t *testing.T) {
	srv := fakesse.New(func(fakesse.Received) fakesse.Script { return fakesse.Stream{Chunks: 1}.Script() })
	defer srv.Close()
	c := newClient(t, loadgen.Target{BaseURL: srv.URL}, 0)
	sink := &memSink{failAfter: 3}
	res, err := loadgen.Run(context.Background(), c, loadgen.Tier{Offsets: evenly(100, 5*time.Millisecond), Requests: requests(100)}, sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.SinkErr == nil || !strings.Contains(res.SinkErr.Error(), "disk full") || res.Dispatched >= 50 {
		t.Errorf("sink error %v, dispatched %d of 100", res.SinkErr, res.Dispatched)
	}
	if !strings.Contains(res.Stopped, "writing records failed") {
		t.Errorf("Stopped %q", res.Stopped)
	}
}

func TestRunRejectsInvalidTiers(t *testing.T) {
	c := newClient(t, loadgen.Target{BaseURL: "http://127.0.0.1:1/v1"}, 0)
	tests := []struct {
		name string
		tier loadgen.Tier
	}{
		{"length mismatch", loadgen.Tier{Offsets: make([]time.Duration, 2), Requests: requests(3)}},
		{"unsorted", loadgen.Tier{Offsets: []time.Duration{2, 1}, Requests: requests(2)}},
		{"negative", loadgen.Tier{Offsets: []time.Duration{-1}, Requests: requests(1)}},
		{"negative concurrency", loadgen.Tier{MaxConcurrency: -1}},
		{"negative grace", loadgen.Tier{Grace: -1}},
		{"limiter that never allows", loadgen.Tier{Limiter: rate.NewLimiter(10, 0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memSink{}
			if _, err := loadgen.Run(context.Background(), c, tc.tier, sink, nil); err == nil {
				t.Error("no error")
			}
			if len(sink.recs) != 0 {
				t.Error("records written for an invalid tier")
			}
		})
	}
}

// pointerSink keeps the pointers it is handed and a copy of each record's gaps, taken in Write.
type pointerSink struct {
	ptrs []*records.Record
	gaps []int
}

func (s *pointerSink) Write(r *records.Record) error {
	s.ptrs = append(s.ptrs, r)
	s.gaps = append(s.gaps, len(r.ITL))
	return nil
}

// TestRunReleasesGapsAfterTheSink: a sink sees every record's ITL gaps, and once it has, Run no
// longer holds them, so a sink that keeps nothing keeps a long run's memory flat.
func TestRunReleasesGapsAfterTheSink(t *testing.T) {
	srv := fakesse.New(func(fakesse.Received) fakesse.Script {
		return fakesse.Stream{Chunks: 4, Usage: true}.Script()
	})
	defer srv.Close()
	c := newClient(t, loadgen.Target{BaseURL: srv.URL}, 2)
	sink := &pointerSink{}
	if _, err := loadgen.Run(context.Background(), c, loadgen.Tier{
		Offsets: evenly(10, time.Millisecond), Requests: requests(10), MaxConcurrency: 2,
	}, sink, nil); err != nil {
		t.Fatal(err)
	}
	if len(sink.ptrs) != 10 {
		t.Fatalf("%d records", len(sink.ptrs))
	}
	for i, r := range sink.ptrs {
		if r.Outcome != records.OK || sink.gaps[i] != 3 {
			t.Errorf("record %d: %v with %d gaps in Write, want ok with 3", r.ID, r.Outcome, sink.gaps[i])
		}
		if r.ITL != nil {
			t.Errorf("record %d: Run still holds %d gaps after the sink had them", r.ID, len(r.ITL))
		}
	}
}

// weakSink keeps only weak pointers to the records it is handed and, at record k, collects
// garbage and counts how many of the first k/2 records are still alive.
type weakSink struct {
	ptrs  []weak.Pointer[records.Record]
	k     int
	alive int
}

func (s *weakSink) Write(r *records.Record) error {
	s.ptrs = append(s.ptrs, weak.Make(r))
	if len(s.ptrs) == s.k {
		runtime.GC()
		runtime.GC()
		for _, p := range s.ptrs[:s.k/2] {
			if p.Value() != nil {
				s.alive++
			}
		}
	}
	return nil
}

// TestRunHoldsOnlyRecordsInFlight: once the sink has a record, Run keeps no reference to it, so
// a long tier's memory follows the requests in flight, not the requests planned.
func TestRunHoldsOnlyRecordsInFlight(t *testing.T) {
	srv := fakesse.New(func(fakesse.Received) fakesse.Script {
		return fakesse.Stream{Chunks: 2, Usage: true}.Script()
	})
	defer srv.Close()
	c := newClient(t, loadgen.Target{BaseURL: srv.URL}, 4)
	sink := &weakSink{k: 120}
	if _, err := loadgen.Run(context.Background(), c, loadgen.Tier{
		Offsets: evenly(160, 500*time.Microsecond), Requests: requests(160), MaxConcurrency: 4,
	}, sink, nil); err != nil {
		t.Fatal(err)
	}
	if len(sink.ptrs) != 160 {
		t.Fatalf("%d records", len(sink.ptrs))
	}
	if sink.alive != 0 {
		t.Errorf("%d of the first %d records were still referenced after the sink had them", sink.alive, sink.k/2)
	}
}
