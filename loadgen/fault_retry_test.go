package loadgen_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
)

// statusAnswer answers with an HTTP status and an optional JSON body after delay.
func statusAnswer(code int, body string, delay time.Duration) faultFunc {
	return func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
		time.Sleep(delay)
		if body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

// streamThen sends the SSE headers and the raw events, then closes (FIN) or resets (RST) the
// connection, or just ends the response (neither).
func streamThen(t *testing.T, events string, fin, rst bool) faultFunc {
	return func(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
		sseHeaders(w)
		writeFlush(w, events)
		if fin || rst {
			hijackClose(t, w, rst)
		}
	}
}

// TestRetryRules: which failures Tier.Retries re-sends, and what the record keeps. Each case is
// one request through Run against a server that answers attempt k with answers[k-1] (later
// attempts get a good stream).
func TestRetryRules(t *testing.T) {
	role := "data: " + fakesse.RoleChunk() + "\n\n"
	content := "data: " + fakesse.ChatChunk("a ", "") + "\n\n"
	tests := []struct {
		name     string
		retries  int
		answers  func(t *testing.T) []faultFunc
		refused  bool // the target port is closed
		outcome  records.Outcome
		attempts int    // Record.Attempts
		calls    int64  // completion requests the server got
		errHas   string // in Record.Error
	}{
		{name: "no retries by default: a 503 is final", retries: 0,
			answers: func(*testing.T) []faultFunc { return []faultFunc{statusAnswer(503, "", 0)} },
			outcome: records.HTTPError, attempts: 0, calls: 1, errHas: "HTTP 503"},
		{name: "503 then 429 then success", retries: 3,
			answers: func(*testing.T) []faultFunc {
				return []faultFunc{statusAnswer(503, fakesse.ErrorJSON("warming up"), 0), statusAnswer(429, fakesse.ErrorJSON("slow down"), 0)}
			},
			outcome: records.OK, attempts: 3, calls: 3,
			errHas: "earlier attempts: #1 HTTP 503 Service Unavailable: warming up; #2 HTTP 429 Too Many Requests: slow down"},
		{name: "500 every time: retries run out", retries: 2,
			answers: func(*testing.T) []faultFunc {
				return []faultFunc{statusAnswer(500, "", 0), statusAnswer(500, "", 0), statusAnswer(500, fakesse.ErrorJSON("still broken"), 0)}
			},
			outcome: records.HTTPError, attempts: 3, calls: 3,
			errHas: "HTTP 500 Internal Server Error: still broken (earlier attempts: #1 HTTP 500 Internal Server Error; #2 HTTP 500 Internal Server Error)"},
		{name: "400 is never retried", retries: 3,
			answers: func(*testing.T) []faultFunc {
				return []faultFunc{statusAnswer(400, fakesse.ErrorJSON("bad prompt"), 0)}
			},
			outcome: records.HTTPError, attempts: 1, calls: 1, errHas: "HTTP 400 Bad Request: bad prompt"},
		{name: "401 is never retried", retries: 3,
			answers: func(*testing.T) []faultFunc { return []faultFunc{statusAnswer(401, "", 0)} },
			outcome: records.HTTPError, attempts: 1, calls: 1, errHas: "HTTP 401"},
		{name: "404 is never retried", retries: 3,
			answers: func(*testing.T) []faultFunc { return []faultFunc{statusAnswer(404, "", 0)} },
			outcome: records.HTTPError, attempts: 1, calls: 1, errHas: "HTTP 404"},
		{name: "reset before the headers, then success", retries: 1,
			answers: func(t *testing.T) []faultFunc {
				return []faultFunc{func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) { hijackClose(t, w, true) }}
			},
			outcome: records.OK, attempts: 2, calls: 2, errHas: "earlier attempts: #1 no response: connection reset by the server"},
		{name: "closed after a role-only event (no output yet), then success", retries: 1,
			answers: func(t *testing.T) []faultFunc { return []faultFunc{streamThen(t, role, true, false)} },
			outcome: records.OK, attempts: 2, calls: 2, errHas: "earlier attempts: #1 stream broken: connection closed by the server in the middle of the response"},
		{name: "clean end without [DONE] and without output, then success", retries: 1,
			answers: func(t *testing.T) []faultFunc { return []faultFunc{streamThen(t, role, false, false)} },
			outcome: records.OK, attempts: 2, calls: 2, errHas: "earlier attempts: #1 stream ended without data: [DONE] after 0 output chunks"},
		{name: "reset after output is never retried", retries: 3,
			answers: func(t *testing.T) []faultFunc { return []faultFunc{streamThen(t, content, false, true)} },
			outcome: records.StreamError, attempts: 1, calls: 1, errHas: "stream broken: connection reset"},
		{name: "end without [DONE] after output is never retried", retries: 3,
			answers: func(t *testing.T) []faultFunc { return []faultFunc{streamThen(t, content, false, false)} },
			outcome: records.StreamError, attempts: 1, calls: 1, errHas: "after 1 output chunks"},
		{name: "an error event is never retried", retries: 3,
			answers: func(t *testing.T) []faultFunc {
				return []faultFunc{streamThen(t, `data: {"error":{"message":"KV cache full"}}`+"\n\n", false, false)}
			},
			outcome: records.StreamError, attempts: 1, calls: 1, errHas: "error in stream: KV cache full"},
		{name: "a malformed event is never retried", retries: 3,
			answers: func(t *testing.T) []faultFunc { return []faultFunc{streamThen(t, "data: {nope\n\n", false, false)} },
			outcome: records.StreamError, attempts: 1, calls: 1, errHas: "malformed event data"},
		{name: "a timeout is never retried", retries: 3,
			answers: func(t *testing.T) []faultFunc {
				return []faultFunc{func(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) { sseHeaders(w); waitGone(r, quit) }}
			},
			outcome: records.Timeout, attempts: 1, calls: 1, errHas: "request timeout"},
		{name: "connection refused every time", retries: 2, refused: true,
			outcome: records.StreamError, attempts: 3,
			errHas: "no response: connection refused (earlier attempts: #1 no response: connection refused; #2 no response: connection refused)"},
		{name: "many retries: the error stays bounded", retries: 8,
			answers: func(*testing.T) []faultFunc {
				big := statusAnswer(503, fakesse.ErrorJSON(repeat('m', 100_000)), 0)
				return []faultFunc{big, big, big, big, big, big, big, big, big}
			},
			outcome: records.HTTPError, attempts: 9, calls: 9, errHas: "; and 5 more)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var srv *faultServer
			base := ""
			if tc.refused {
				base = closedPortURL(t)
			} else {
				srv = newFaultServer(t, nil, tc.answers(t)...)
				base = srv.URL
			}
			// A short deadline only where one must pass: elsewhere a stall of a loaded machine
			// must not turn an answer into a timeout.
			timeout := time.Minute
			if tc.outcome == records.Timeout {
				timeout = 300 * time.Millisecond
			}
			c := newClient(t, loadgen.Target{BaseURL: base, Timeout: timeout}, 1)
			r := runOneRequest(t, context.Background(), c, tc.retries)
			if r.Outcome != tc.outcome || r.Attempts != tc.attempts {
				t.Errorf("outcome %v after %d attempts, want %v after %d (error %q)", r.Outcome, r.Attempts, tc.outcome, tc.attempts, r.Error)
			}
			if !strings.Contains(r.Error, tc.errHas) {
				t.Errorf("error %q, want it to contain %q", r.Error, tc.errHas)
			}
			if len(r.Error) > maxRecordError {
				t.Errorf("error of %d bytes, bound %d", len(r.Error), maxRecordError)
			}
			if srv != nil && srv.calls.Load() != tc.calls {
				t.Errorf("the server got %d requests, want %d", srv.calls.Load(), tc.calls)
			}
			if tc.outcome == records.OK && (r.Chunks != goodChunks || r.OutputTokens != goodChunks || r.HTTPStatus != 200) {
				t.Errorf("the successful attempt: %d chunks, %d tokens, status %d", r.Chunks, r.OutputTokens, r.HTTPStatus)
			}
		})
	}
}

// runOneRequest runs a tier of one request, allowed retries re-sends, and returns its record. An
// error of Run fails the test unless ctx was canceled (the interrupt a test may make).
func runOneRequest(t *testing.T, ctx context.Context, c *loadgen.Client, retries int) records.Record {
	t.Helper()
	sink := &memSink{}
	if _, err := loadgen.Run(ctx, c, loadgen.Tier{
		Offsets: make([]time.Duration, 1), Requests: requests(1), Retries: retries,
	}, sink, nil); err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	return sink.byID(t, 1)[0]
}

// TestRetryKeepsLastAttemptTimings: two attempts answered 503 after 100 ms each, then a stream
// whose first token comes at once. The record's timings from Sent on are the last attempt's:
// TTFT is short, and Sent comes after the two failed attempts (≥ 200 ms after the slot). The
// moments before sending (planned, dispatched, slot) are the request's own, not re-taken.
func TestRetryKeepsLastAttemptTimings(t *testing.T) {
	watchStalls(t)
	const d = 100 * time.Millisecond
	srv := newFaultServer(t, nil, statusAnswer(503, "", d), statusAnswer(503, "", d))
	c := newClient(t, loadgen.Target{BaseURL: srv.URL}, 1)
	r := runOneRequest(t, context.Background(), c, 2)
	if r.Outcome != records.OK || r.Attempts != 3 || r.HTTPStatus != 200 {
		t.Fatalf("outcome %v attempts %d status %d error %q", r.Outcome, r.Attempts, r.HTTPStatus, r.Error)
	}
	betweenOrStalled(t, "sent-slot", r.Sent-r.Slot, 2*d, 2*d+2*slack)
	betweenOrStalled(t, "TTFT of the last attempt", ttft(r), 0, slack)
	if r.Planned != 0 || r.Dispatched == records.Unset || r.Slot != r.Dispatched {
		t.Errorf("planned %v dispatched %v slot %v", r.Planned, r.Dispatched, r.Slot)
	}
	if e, _ := r.E2ELIncludingClientQueue(); e < 2*d {
		t.Errorf("e2el including client queue %v: the failed attempts' time must count from planned", e)
	}
	line := string(r.AppendJSON(nil))
	if !strings.Contains(line, `"attempts":3`) {
		t.Errorf("the record line does not say how many attempts: %s", line)
	}
}

// TestRetryHonoursRetryAfter: a 429 with Retry-After: 1 is re-sent a second later, not at once
// (the previous client re-sent four times within a millisecond); one asking for an hour waits
// MaxRetryWait at most, and an interrupt ends the wait.
func TestRetryHonoursRetryAfter(t *testing.T) {
	watchStalls(t)
	retryAfter := func(v string) faultFunc {
		return func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			w.Header().Set("Retry-After", v)
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}
	srv := newFaultServer(t, nil, retryAfter("1"))
	c := newClient(t, loadgen.Target{BaseURL: srv.URL}, 1)
	r := runOneRequest(t, context.Background(), c, 3)
	if r.Outcome != records.OK || r.Attempts != 2 || srv.calls.Load() != 2 {
		t.Fatalf("outcome %v after %d attempts (%d calls), error %q", r.Outcome, r.Attempts, srv.calls.Load(), r.Error)
	}
	betweenOrStalled(t, "sent-slot after Retry-After: 1", r.Sent-r.Slot, time.Second, time.Second+2*slack)

	// An hour is not waited for; the interrupt at 300 ms ends the wait, and the record is the
	// last attempt's 429.
	srv = newFaultServer(t, nil, retryAfter("3600"))
	c = newClient(t, loadgen.Target{BaseURL: srv.URL}, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	r = runOneRequest(t, ctx, c, 3)
	if took := time.Since(start); took > loadgen.MaxRetryWait {
		t.Errorf("Run took %v: the interrupt did not end the Retry-After wait", took)
	}
	if r.HTTPStatus != 429 || srv.calls.Load() != 1 {
		t.Errorf("status %d after %d calls, want the first 429 to stand", r.HTTPStatus, srv.calls.Load())
	}
}

// TestRetryStopsWhenTheRunStops: a server that always answers 503 after 40 ms and a request
// allowed 1000 retries; the run is canceled at 150 ms. Run must return at once (not after the
// 40 s the retries would take), with one record that lists the earlier attempts, and no further
// attempt may start.
func TestRetryStopsWhenTheRunStops(t *testing.T) {
	answers := make([]faultFunc, 1000)
	for i := range answers {
		answers[i] = statusAnswer(503, "", 40*time.Millisecond)
	}
	srv := newFaultServer(t, nil, answers...)
	c := newClient(t, loadgen.Target{BaseURL: srv.URL}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	sink := &memSink{}
	start := time.Now() // before the timer: the stop comes 150 ms after it at the earliest
	time.AfterFunc(150*time.Millisecond, cancel)
	if _, err := loadgen.Run(ctx, c, loadgen.Tier{
		Offsets: make([]time.Duration, 1), Requests: requests(1), Retries: 1000,
	}, sink, nil); err != nil {
		t.Fatal(err)
	}
	// At once, not after the 40 s that 1000 retries would take: the upper bound is far below
	// that and far above the scheduling stalls of a loaded machine. That no attempt starts after
	// the stop is checked below, by the server's count.
	between(t, "Run's duration", time.Since(start), 150*time.Millisecond, 5*time.Second)
	r := sink.byID(t, 1)[0]
	if r.Attempts < 2 || !strings.Contains(r.Error, "earlier attempts: #1 HTTP 503") {
		t.Errorf("outcome %v, %d attempts, error %q", r.Outcome, r.Attempts, r.Error)
	}
	// Every request the server gets is an attempt the record counts; one started after Run
	// returned would not be. The last attempt, canceled on the client's side, may reach the
	// server after Run returned, so the count is read after a pause in which retries that
	// outlived Run would have sent more (one every 40 ms).
	time.Sleep(200 * time.Millisecond)
	if calls := srv.calls.Load(); calls > int64(r.Attempts) {
		t.Errorf("the server got %d requests, the record counts %d attempts: %d started after Run returned", calls, r.Attempts, calls-int64(r.Attempts))
	}
}

func TestRetriesMustNotBeNegative(t *testing.T) {
	errs := loadgen.Tier{Retries: -1}.Validate()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "retries: must be >= 0") {
		t.Errorf("Validate: %v", errs)
	}
}

// TestPreflightRetries: a server still loading its model answers 503 twice. The preflight fails
// without retries, and succeeds with --retries 2, about a second after each 503 (no
// Retry-After: the preflight waits at least a second).
func TestPreflightRetries(t *testing.T) {
	for _, tt := range []struct {
		retries int
		ok      bool
		calls   int64
	}{{0, false, 1}, {2, true, 3}} {
		srv := newFaultServer(t, nil, statusAnswer(503, fakesse.ErrorJSON("loading the model"), 0), statusAnswer(503, "", 0))
		c := newClient(t, loadgen.Target{BaseURL: srv.URL}, 1)
		start := time.Now()
		err := c.PreflightRetrying(context.Background(), loadgen.PreflightRequest(), tt.retries)
		if (err == nil) != tt.ok || srv.calls.Load() != tt.calls {
			t.Errorf("retries %d: error %v after %d calls, want ok %v after %d", tt.retries, err, srv.calls.Load(), tt.ok, tt.calls)
		}
		if tt.ok {
			betweenOrStalled(t, "two waits", time.Since(start), 2*time.Second, 2*time.Second+2*slack)
		} else if err == nil || !strings.Contains(err.Error(), "HTTP 503 Service Unavailable: loading the model") {
			t.Errorf("the preflight's error does not say what the server said: %v", err)
		}
	}
}
