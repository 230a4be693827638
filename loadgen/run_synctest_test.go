package loadgen

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"

	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// These tests run the dispatcher, the gate and the client on testing/synctest's fake clock, with
// the scripts served in memory: time only moves when every goroutine waits, so every timestamp
// is exact and asserted with ==. synctest.Test also fails if any goroutine outlives Run.

const ms = time.Millisecond

type sliceSink struct {
	mu   sync.Mutex
	recs []records.Record
}

func (s *sliceSink) Write(r *records.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, *r)
	return nil
}

func (s *sliceSink) byID(t *testing.T, n int) []records.Record {
	t.Helper()
	if len(s.recs) != n {
		t.Fatalf("%d records, want %d", len(s.recs), n)
	}
	out := make([]records.Record, n)
	seen := make([]bool, n)
	for _, r := range s.recs {
		if seen[r.ID] {
			t.Fatalf("id %d twice", r.ID)
		}
		seen[r.ID] = true
		out[r.ID] = r
	}
	return out
}

func memClient(t *testing.T, tg Target, conc int, h func(fakesse.Received) fakesse.Script) *Client {
	t.Helper()
	tg.BaseURL, tg.Model = "http://sim.invalid/v1", "m"
	c, err := NewClient(tg, conc)
	if err != nil {
		t.Fatal(err)
	}
	c.hc.Transport = &fakesse.Transport{Handler: h}
	return c
}

func reqs(n int) []workloads.Request {
	out := make([]workloads.Request, n)
	for i := range out {
		out[i] = workloads.Request{ID: i, Prompt: "p", InputTokens: 1, MaxTokens: 8}
	}
	return out
}

func offsets(gap time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(i) * gap
	}
	return out
}

func stall(fakesse.Received) fakesse.Script {
	return fakesse.Script{Steps: []fakesse.Step{fakesse.Data(10*ms, fakesse.ChatChunk("a ", ""))}, Hang: true}
}

func TestGateQueueExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := memClient(t, Target{}, 2, func(fakesse.Received) fakesse.Script {
			return fakesse.Stream{TTFT: 100 * ms, Gap: 10 * ms, Chunks: 3, Usage: true}.Script()
		})
		sink := &sliceSink{}
		res, err := Run(context.Background(), c, Tier{Offsets: make([]time.Duration, 10), Requests: reqs(10), MaxConcurrency: 2}, sink, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range sink.byID(t, 10) {
			// Each request holds its slot for exactly 120 ms (100 ms TTFT, two 10 ms gaps).
			slot := time.Duration(i/2) * 120 * ms
			want := records.Record{Planned: 0, Dispatched: 0, Slot: slot, Sent: slot, FirstEvent: slot + 100*ms,
				First: slot + 100*ms, Last: slot + 120*ms, End: slot + 120*ms}
			if r.Outcome != records.OK || r.Dispatched != want.Dispatched || r.Slot != want.Slot || r.Sent != want.Sent ||
				r.First != want.First || r.Last != want.Last || r.End != want.End || r.FirstEvent != want.FirstEvent {
				t.Errorf("request %d: %v dispatched %v slot %v sent %v first %v last %v end %v; want slot %v",
					i, r.Outcome, r.Dispatched, r.Slot, r.Sent, r.First, r.Last, r.End, slot)
			}
			if len(r.ITL) != 2 || r.ITL[0] != 10*ms || r.ITL[1] != 10*ms {
				t.Errorf("request %d: ITL %v", i, r.ITL)
			}
		}
		if d := time.Since(res.T0); d != 5*120*ms {
			t.Errorf("Run took %v, want 600ms", d)
		}
	})
}

func TestStopAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := memClient(t, Target{}, 0, func(fakesse.Received) fakesse.Script {
			return fakesse.Stream{TTFT: 30 * ms, Chunks: 1}.Script()
		})
		sink := &sliceSink{}
		res, err := Run(context.Background(), c, Tier{Offsets: offsets(100*ms, 10), Requests: reqs(10), StopAfter: 450 * ms}, sink, nil)
		if err != nil {
			t.Fatal(err)
		}
		recs := sink.byID(t, 10)
		for i, r := range recs {
			planned := time.Duration(i) * 100 * ms
			if i < 5 {
				if r.Outcome != records.OK || r.Dispatched != planned || r.End != planned+30*ms {
					t.Errorf("request %d: %v dispatched %v end %v", i, r.Outcome, r.Dispatched, r.End)
				}
				continue
			}
			only := records.NewRecord(0, i, planned)
			if r.Outcome != records.Canceled || r.Dispatched != only.Dispatched || r.Slot != only.Slot || r.Sent != only.Sent ||
				r.End != only.End || r.Planned != planned || !strings.Contains(r.Error, "stop time (450ms)") {
				t.Errorf("request %d should be canceled with only planned set: %+v", i, r)
			}
		}
		if res.Dispatched != 5 || res.Canceled != 5 || !strings.Contains(res.Stopped, "stop time") {
			t.Errorf("result %+v", res)
		}
		// Grace 0: wait for the stragglers, however long; the last one ended at 430 ms.
		if d := time.Since(res.T0); d != 430*ms {
			t.Errorf("Run returned at %v, want 430ms", d)
		}
	})
}

// TestStopEndsTheArrivalPhase: closing Tier.Stop ends dispatching; the rest of the schedule is
// not part of the tier (no record), requests in flight finish, and the result says where the
// arrival phase ended.
func TestStopEndsTheArrivalPhase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := memClient(t, Target{}, 0, func(fakesse.Received) fakesse.Script {
			return fakesse.Stream{TTFT: 30 * ms, Gap: 20 * ms, Chunks: 3}.Script()
		})
		stop := make(chan struct{})
		sink := &stopAfterSink{n: 3, stop: stop}
		res, err := Run(context.Background(), c, Tier{Offsets: offsets(100*ms, 10), Requests: reqs(10), Stop: stop}, sink, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Request i ends at i·100 + 70 ms; the third ends at 270 ms, when the sink closes Stop:
		// requests 0..2 were recorded, none after; nothing was dispatched after 270 ms.
		if len(sink.recs) != 3 || res.Planned != 3 || res.Dispatched != 3 || !res.StoppedEarly || res.ArrivalsEnd != 270*ms || res.Canceled != 0 {
			t.Errorf("%d records, result %+v; want 3 records, planned 3, stopped early at 270ms", len(sink.recs), res)
		}
		if d := time.Since(res.T0); d != 270*ms {
			t.Errorf("Run returned at %v, want 270ms", d)
		}
	})
}

// stopAfterSink closes stop once it has n records.
type stopAfterSink struct {
	sliceSink
	n    int
	stop chan struct{}
}

func (s *stopAfterSink) Write(r *records.Record) error {
	s.sliceSink.Write(r)
	if len(s.recs) == s.n {
		close(s.stop)
	}
	return nil
}

func TestGrace(t *testing.T) {
	tests := []struct {
		name      string
		tier      Tier
		timeout   time.Duration
		handler   func(fakesse.Received) fakesse.Script
		returnsAt time.Duration
		check     func(t *testing.T, recs []records.Record)
	}{
		{
			// Both stall after one chunk at 10 ms. At the deadline (350 ms) request 0 has been
			// silent 340 ms, more than the drain: a stall, the server's (a timeout; it was
			// recorded as canceled, by the run). Request 1 has been silent 240 ms, less than the
			// drain: cut by the drain deadline, canceled.
			name:    "stragglers ended at last dispatch + grace: the silent ones as stalls",
			tier:    Tier{Offsets: []time.Duration{0, 100 * ms}, Grace: 250 * ms},
			handler: stall, returnsAt: 350 * ms,
			check: func(t *testing.T, recs []records.Record) {
				for _, r := range recs {
					if r.End != 350*ms || r.Chunks != 1 || r.OutputTokens != 1 {
						t.Errorf("request %d: end %v chunks %d", r.ID, r.End, r.Chunks)
					}
				}
				if r := recs[0]; r.Outcome != records.Timeout || r.Error != records.StallPrefix+
					"no output after 1 chunks from the server for 340ms, when the tier's drain deadline passed (grace 250ms after dispatching stopped)" {
					t.Errorf("request 0: %v error %q", r.Outcome, r.Error)
				}
				if r := recs[1]; r.Outcome != records.Canceled || !strings.Contains(r.Error, "drain deadline passed (grace 250ms") {
					t.Errorf("request 1: %v error %q", r.Outcome, r.Error)
				}
			},
		},
		{
			name: "a server that never answers is a stall at the drain deadline",
			tier: Tier{Offsets: []time.Duration{0}, Grace: 250 * ms},
			handler: func(fakesse.Received) fakesse.Script {
				return fakesse.Script{HeaderDelay: time.Hour}
			},
			returnsAt: 250 * ms,
			check: func(t *testing.T, recs []records.Record) {
				if r := recs[0]; r.Outcome != records.Timeout || r.HTTPStatus != 0 || !strings.HasPrefix(r.Error, records.StallPrefix+"no output from the server for 250ms") {
					t.Errorf("%v status %d error %q", r.Outcome, r.HTTPStatus, r.Error)
				}
			},
		},
		{
			// A chunk a second: at the 10 s deadline the response is still streaming, so the
			// drain cut it (canceled); a stall needs 5 s of silence when the drain is longer.
			name: "a response still streaming at the drain deadline is canceled, not a stall",
			tier: Tier{Offsets: []time.Duration{0}, Grace: 10 * time.Second},
			handler: func(fakesse.Received) fakesse.Script {
				return fakesse.Stream{TTFT: 500 * ms, Gap: time.Second, Chunks: 100}.Script()
			},
			returnsAt: 10 * time.Second,
			check: func(t *testing.T, recs []records.Record) {
				if r := recs[0]; r.Outcome != records.Canceled || r.Chunks != 10 {
					t.Errorf("%v after %d chunks, error %q", r.Outcome, r.Chunks, r.Error)
				}
			},
		},
		{
			name: "a response silent for 5 s at a longer drain's deadline is a stall",
			tier: Tier{Offsets: []time.Duration{0}, Grace: 10 * time.Second},
			handler: func(fakesse.Received) fakesse.Script {
				s := fakesse.Stream{Gap: time.Second, Chunks: 5}.Script()
				s.Steps = s.Steps[:5] // the content chunks, no [DONE]
				s.Hang = true
				return s
			},
			returnsAt: 10 * time.Second,
			check: func(t *testing.T, recs []records.Record) {
				if r := recs[0]; r.Outcome != records.Timeout || r.Chunks != 5 ||
					!strings.HasPrefix(r.Error, records.StallPrefix+"no output after 5 chunks from the server for 6s") {
					t.Errorf("%v after %d chunks, error %q", r.Outcome, r.Chunks, r.Error)
				}
			},
		},
		{
			name:    "with StopAfter, grace counts from the stop time",
			tier:    Tier{Offsets: offsets(100*ms, 4), StopAfter: 150 * ms, Grace: 100 * ms},
			handler: stall, returnsAt: 250 * ms,
			check: func(t *testing.T, recs []records.Record) {
				for _, r := range recs[:2] { // silent 240 and 140 ms: stalls
					if r.Outcome != records.Timeout || r.End != 250*ms || !strings.HasPrefix(r.Error, records.StallPrefix) {
						t.Errorf("request %d: %v end %v", r.ID, r.Outcome, r.End)
					}
				}
				for _, r := range recs[2:] {
					if r.Dispatched != records.Unset {
						t.Errorf("request %d dispatched after StopAfter", r.ID)
					}
				}
			},
		},
		{
			name:    "requests waiting for a slot are canceled too",
			tier:    Tier{Offsets: make([]time.Duration, 3), MaxConcurrency: 1, Grace: 100 * ms},
			handler: stall, returnsAt: 100 * ms,
			check: func(t *testing.T, recs []records.Record) {
				if recs[0].Outcome != records.Canceled || recs[0].Slot != 0 {
					t.Errorf("request 0: %v slot %v", recs[0].Outcome, recs[0].Slot)
				}
				for _, r := range recs[1:] {
					if r.Outcome != records.Canceled || r.Slot != records.Unset || r.Dispatched != 0 ||
						!strings.Contains(r.Error, "waiting for a concurrency slot: canceled: the tier's drain deadline") {
						t.Errorf("request %d: %v slot %v error %q", r.ID, r.Outcome, r.Slot, r.Error)
					}
				}
			},
		},
		{
			name: "grace not needed: Run returns when the last request ends",
			tier: Tier{Offsets: []time.Duration{0, 100 * ms}, Grace: time.Second},
			handler: func(fakesse.Received) fakesse.Script {
				return fakesse.Stream{TTFT: 50 * ms, Chunks: 1}.Script()
			},
			returnsAt: 150 * ms,
			check: func(t *testing.T, recs []records.Record) {
				for _, r := range recs {
					if r.Outcome != records.OK {
						t.Errorf("request %d: %v", r.ID, r.Outcome)
					}
				}
			},
		},
		{
			name:    "no grace: stragglers run until their own timeout",
			tier:    Tier{Offsets: []time.Duration{0, 100 * ms}},
			timeout: 300 * ms, handler: stall, returnsAt: 400 * ms,
			check: func(t *testing.T, recs []records.Record) {
				for _, r := range recs {
					if r.Outcome != records.Timeout || r.End-r.Sent != 300*ms {
						t.Errorf("request %d: %v after %v", r.ID, r.Outcome, r.End-r.Sent)
					}
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := memClient(t, Target{Timeout: tc.timeout}, tc.tier.MaxConcurrency, tc.handler)
				tier := tc.tier
				tier.Requests = reqs(len(tier.Offsets))
				sink := &sliceSink{}
				res, err := Run(context.Background(), c, tier, sink, nil)
				if err != nil {
					t.Fatal(err)
				}
				if d := time.Since(res.T0); d != tc.returnsAt {
					t.Errorf("Run returned at %v, want %v", d, tc.returnsAt)
				}
				tc.check(t, sink.byID(t, len(tier.Offsets)))
			})
		})
	}
}

func TestLimiterDelaysDispatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := memClient(t, Target{}, 0, func(fakesse.Received) fakesse.Script { return fakesse.Stream{Chunks: 1}.Script() })
		sink := &sliceSink{}
		// 10/s with a burst of 1: the first passes, then one every 100 ms.
		res, err := Run(context.Background(), c, Tier{Offsets: make([]time.Duration, 3), Requests: reqs(3), Limiter: rate.NewLimiter(10, 1)}, sink, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range sink.byID(t, 3) {
			if lag, _ := r.ScheduleLag(); lag != time.Duration(i)*100*ms {
				t.Errorf("request %d: schedule lag %v", i, lag)
			}
		}
		if !res.RateLimited {
			t.Error("RateLimited not set")
		}
	})
}

func TestDispatchExactAndBackToBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := memClient(t, Target{}, 0, func(fakesse.Received) fakesse.Script { return fakesse.Stream{Chunks: 1}.Script() })
		sink := &sliceSink{}
		offs := []time.Duration{0, 0, 0, 7 * ms, 7 * ms, 1500 * ms}
		if _, err := Run(context.Background(), c, Tier{Index: 4, Shard: 2, Offsets: offs, Requests: reqs(len(offs))}, sink, nil); err != nil {
			t.Fatal(err)
		}
		for i, r := range sink.byID(t, len(offs)) {
			if r.Dispatched != offs[i] || r.Slot != offs[i] || r.Sent != offs[i] || r.Tier != 4 || r.Shard != 2 {
				t.Errorf("request %d: planned %v dispatched %v slot %v sent %v tier %d shard %d", i, offs[i], r.Dispatched, r.Slot, r.Sent, r.Tier, r.Shard)
			}
		}
	})
}

func TestCancelExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := memClient(t, Target{}, 0, stall)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(250*ms, cancel)
		sink := &sliceSink{}
		res, err := Run(ctx, c, Tier{Offsets: offsets(100*ms, 5), Requests: reqs(5), Grace: time.Hour}, sink, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(res.T0); d != 250*ms {
			t.Errorf("Run returned at %v, want 250ms", d)
		}
		for i, r := range sink.byID(t, 5) {
			switch {
			case i < 3 && (r.Outcome != records.Canceled || r.End != 250*ms || !strings.Contains(r.Error, "the run was stopped (context canceled)")):
				t.Errorf("request %d in flight: %v end %v error %q", i, r.Outcome, r.End, r.Error)
			case i >= 3 && (r.Outcome != records.Canceled || r.Dispatched != records.Unset || !strings.HasPrefix(r.Error, "not started: ")):
				t.Errorf("request %d not started: %v dispatched %v error %q", i, r.Outcome, r.Dispatched, r.Error)
			}
		}
		if res.Dispatched != 3 || res.Canceled != 5 {
			t.Errorf("result %+v", res)
		}
	})
}

func TestPreflightGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := memClient(t, Target{}, 1, func(fakesse.Received) fakesse.Script { return fakesse.Script{HeaderDelay: time.Hour} })
		start := time.Now()
		err := c.Preflight(context.Background(), PreflightRequest())
		if err == nil || !strings.Contains(err.Error(), "no complete answer within 30s") || time.Since(start) != PreflightTimeout {
			t.Errorf("after %v: %v", time.Since(start), err)
		}
	})
}
