package loadgen_test

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
)

// maxRecordError is the bound on Record.Error (maxErrorLen in target.go).
const maxRecordError = 512

// faultTimeout is the --timeout of the fault suite: every stalled or endless answer ends there.
// It is also all the time the good request after each fault has, so it is kept well above the
// scheduling stalls of a loaded 2-core machine running -race (a few hundred ms were seen).
const faultTimeout = 500 * time.Millisecond

// faultCase is one fault: the server's bad answer and what the record must say about it.
type faultCase struct {
	name     string
	fault    func(t *testing.T) faultFunc
	outcome  records.Outcome
	status   int
	errHas   string // a substring of Record.Error
	chunks   int    // output chunks received before the fault (-1: at least one, any number)
	timedOut bool   // ended by --timeout: End-Sent within slack of the timeout
	maxBytes int64  // Target.MaxResponseBytes (0: the default)
}

func faultCases() []faultCase {
	chunk := "data: " + fakesse.ChatChunk("w ", "") + "\n\n" // one output chunk
	status := func(code int, body string) func(*testing.T) faultFunc {
		return func(*testing.T) faultFunc {
			return func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
				if body != "" {
					w.Header().Set("Content-Type", "application/json")
				}
				w.WriteHeader(code)
				_, _ = w.Write([]byte(body))
			}
		}
	}
	// afterChunks sends the headers and n content chunks, then does end.
	afterChunks := func(n int, end func(t *testing.T, w http.ResponseWriter, r *http.Request, quit <-chan struct{})) func(*testing.T) faultFunc {
		return func(t *testing.T) faultFunc {
			return func(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
				sseHeaders(w)
				for range n {
					writeFlush(w, chunk)
				}
				end(t, w, r, quit)
			}
		}
	}
	longMsg := "the engine " + repeat('x', 50_000)
	return []faultCase{
		{name: "429 with an OpenAI error body", fault: status(429, fakesse.ErrorJSON("rate limited, slow down")),
			outcome: records.HTTPError, status: 429, errHas: "HTTP 429 Too Many Requests: rate limited, slow down"},
		{name: "429 without a body", fault: status(429, ""),
			outcome: records.HTTPError, status: 429, errHas: "HTTP 429 Too Many Requests"},
		{name: "500 with an OpenAI error body", fault: status(500, fakesse.ErrorJSON("CUDA out of memory")),
			outcome: records.HTTPError, status: 500, errHas: "HTTP 500 Internal Server Error: CUDA out of memory"},
		{name: "500 without a body", fault: status(500, ""),
			outcome: records.HTTPError, status: 500, errHas: "HTTP 500 Internal Server Error"},
		{name: "503 with an OpenAI error body", fault: status(503, fakesse.ErrorJSON("server is loading the model")),
			outcome: records.HTTPError, status: 503, errHas: "HTTP 503 Service Unavailable: server is loading the model"},
		{name: "503 without a body", fault: status(503, ""),
			outcome: records.HTTPError, status: 503, errHas: "HTTP 503 Service Unavailable"},
		{name: "503 with a 1 MiB plain-text body: error bounded", fault: status(503, repeat('e', 1<<20)),
			outcome: records.HTTPError, status: 503, errHas: "HTTP 503 Service Unavailable: eeee"},
		{name: "connection refused", outcome: records.StreamError, errHas: "no response: connection refused"},
		{name: "reset before the headers (RST)", fault: func(t *testing.T) faultFunc {
			return func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) { hijackClose(t, w, true) }
		}, outcome: records.StreamError, errHas: "no response: connection reset by the server"},
		{name: "closed before the headers (FIN)", fault: func(t *testing.T) faultFunc {
			return func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) { hijackClose(t, w, false) }
		}, outcome: records.StreamError, errHas: "no response: connection closed by the server before it answered"},
		{name: "reset mid-stream keeps the tokens", fault: afterChunks(2, func(t *testing.T, w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			hijackClose(t, w, true)
		}), outcome: records.StreamError, status: 200, errHas: "stream broken: connection reset by the server", chunks: 2},
		{name: "stream stalls forever: the deadline ends it", fault: afterChunks(2, func(_ *testing.T, _ http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
			waitGone(r, quit)
		}), outcome: records.Timeout, status: 200, errHas: "within the 500ms request timeout", chunks: 2, timedOut: true},
		{name: "stream stalls before any output", fault: afterChunks(0, func(_ *testing.T, _ http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
			waitGone(r, quit)
		}), outcome: records.Timeout, status: 200, errHas: "request timeout", timedOut: true},
		{name: "stream ends without [DONE]", fault: afterChunks(2, func(*testing.T, http.ResponseWriter, *http.Request, <-chan struct{}) {}),
			outcome: records.StreamError, status: 200, errHas: "stream ended without data: [DONE] after 2 output chunks", chunks: 2},
		{name: "headers, then an empty body", fault: afterChunks(0, func(*testing.T, http.ResponseWriter, *http.Request, <-chan struct{}) {}),
			outcome: records.StreamError, status: 200, errHas: "stream ended without data: [DONE] after 0 output chunks"},
		{name: "malformed JSON in a chunk (100 kB): error bounded", fault: afterChunks(1, func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			writeFlush(w, `data: {"choices":[{"delta":{"content":"`+repeat('z', 100_000)+"\n\ndata: [DONE]\n\n")
		}), outcome: records.StreamError, status: 200, errHas: "malformed event data", chunks: 1},
		{name: "error object inside the stream (50 kB message): error bounded", fault: afterChunks(2, func(_ *testing.T, w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
			writeFlush(w, `data: {"error":{"message":"`+longMsg+`","type":"InternalServerError","code":500}}`+"\n\n")
			waitGone(r, quit) // nothing follows: the client must not wait for another line
		}), outcome: records.StreamError, status: 200, errHas: "error in stream: the engine xxx", chunks: 2},
		{name: "a response that never ends: chunks until the deadline", fault: afterChunks(0, func(_ *testing.T, w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-quit:
					return
				case <-tick.C:
					if !writeFlush(w, chunk) {
						return
					}
				}
			}
		}), outcome: records.Timeout, status: 200, errHas: "request timeout", chunks: -1, timedOut: true},
		{name: "a fast response that never ends: cut by the chunk cap", fault: afterChunks(0, func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			for i := 0; i < 5000 && writeFlush(w, chunk); i++ {
			}
		}), outcome: records.StreamError, status: 200, errHas: "response cut after 4097 output chunks (16 max_tokens): the server does not stop", chunks: 4097},
		{name: "a response bigger than the byte cap", maxBytes: 64 << 10, fault: afterChunks(0, func(_ *testing.T, w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
			pad := ": " + repeat('k', 1000) + "\n" // comments: bytes without output chunks
			for i := 0; i < 1000 && writeFlush(w, pad); i++ {
			}
		}), outcome: records.StreamError, status: 200, errHas: "response cut at 65536 bytes (--max-response-mib) after 0 output chunks"},
		{name: "keep-alive comments forever", fault: afterChunks(0, func(_ *testing.T, w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
			for i := 0; i < 10_000 && writeFlush(w, ": keep-alive\n\n"); i++ {
				select {
				case <-r.Context().Done():
					return
				case <-quit:
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}), outcome: records.Timeout, status: 200, errHas: "request timeout", timedOut: true},
		{name: "slow headers past the deadline", fault: func(*testing.T) faultFunc {
			return func(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
				select {
				case <-time.After(5 * time.Second):
				case <-r.Context().Done():
					return
				case <-quit:
					return
				}
				sseHeaders(w)
			}
		}, outcome: records.Timeout, errHas: "request timeout", timedOut: true},
		{name: "a line cut by the deadline is the deadline's, not malformed", fault: afterChunks(2, func(_ *testing.T, w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
			writeFlush(w, `data: {"choices":[{"index":0,"delta":{"content":"half a li`)
			waitGone(r, quit)
		}), outcome: records.Timeout, status: 200, errHas: "request timeout", chunks: 2, timedOut: true},
		{name: "a line cut by a reset is a broken stream, not malformed", fault: afterChunks(1, func(t *testing.T, w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			writeFlush(w, `data: {"choices":[{"index":0,"delta":{"content":"half a li`)
			hijackClose(t, w, true)
		}), outcome: records.StreamError, status: 200, errHas: "stream broken: connection reset by the server", chunks: 1},
		{name: "a redirect is refused, not followed", fault: func(*testing.T) faultFunc {
			return func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
				w.Header().Set("Location", "http://127.0.0.1:1/elsewhere?token=abc")
				w.WriteHeader(http.StatusFound)
			}
		}, outcome: records.HTTPError, status: 302, errHas: "HTTP 302 Found: redirect to http://127.0.0.1:1/elsewhere refused"},
		{name: "lines ended by a bare CR", fault: afterChunks(0, func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			c := "data: " + fakesse.ChatChunk("w ", "") + "\r\r"
			writeFlush(w, c)
			writeFlush(w, c+"data: [DONE]\r\r")
		}), outcome: records.OK, status: 200, chunks: 2},
		{name: "CRLF line endings, split between writes", fault: afterChunks(0, func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			c := "data: " + fakesse.ChatChunk("w ", "")
			writeFlush(w, c+"\r")
			time.Sleep(5 * time.Millisecond)
			writeFlush(w, "\n\r\n"+c+"\r\n\r")
			time.Sleep(5 * time.Millisecond)
			writeFlush(w, "\ndata: [DONE]\r\n\r\n")
		}), outcome: records.OK, status: 200, chunks: 2},
		{name: "response headers beyond 32 KiB are refused, not held", fault: func(*testing.T) faultFunc {
			return func(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
				w.Header().Set("X-Padding", repeat('h', 40<<10))
				sseHeaders(w)
				waitGone(r, quit)
			}
		}, outcome: records.StreamError, errHas: "no response: the response's headers passed 32768 bytes"},
		{name: "slow headers within the deadline", fault: func(*testing.T) faultFunc {
			return func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
				time.Sleep(100 * time.Millisecond)
				sseHeaders(w)
				writeFlush(w, chunk+"data: [DONE]\n\n")
			}
		}, outcome: records.OK, status: 200, chunks: 1},
	}
}

// TestFaultSuite sends one faulty request and then a good one on the same client, for every fault
// of faultCases. The faulty request must get the right outcome, status and a bounded error, keep
// the output received before the fault, and end within its deadline; the good one must be
// unaffected; afterwards no connection and no goroutine may be left over. Subtests run one at a
// time because goroutines are counted process-wide.
func TestFaultSuite(t *testing.T) {
	watchStalls(t)
	for _, tc := range faultCases() {
		t.Run(tc.name, func(t *testing.T) { runFaultCase(t, tc) })
	}
}

func runFaultCase(t *testing.T, tc faultCase) {
	baseline := runtime.NumGoroutine()
	var srv *faultServer
	var base string
	if tc.fault == nil { // connection refused: a port nobody listens on (served afterwards)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base = "http://" + l.Addr().String() + "/v1"
		l.Close()
	} else {
		srv = newFaultServer(t, nil, tc.fault(t))
		base = srv.URL
	}
	c, err := loadgen.NewClient(loadgen.Target{BaseURL: base, Model: "m", Timeout: faultTimeout, MaxResponseBytes: tc.maxBytes}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	req := prompt()
	rec := records.NewRecord(0, req.ID, 0)
	start := time.Now()
	c.Do(context.Background(), start, &req, &rec)

	if s := worstStall(start); rec.Outcome == records.Timeout && tc.outcome != records.Timeout && s > faultTimeout/2 {
		// Every fault that is not a stall ends the request well within the deadline: only a
		// client that waits past the fault, or a machine that stalls this long, lets it pass.
		t.Skipf("the faulty request timed out while this process stalled for %v: the fault was not observed", s)
	}
	if rec.Outcome != tc.outcome || rec.HTTPStatus != tc.status {
		t.Errorf("outcome %v status %d, want %v %d (error %q)", rec.Outcome, rec.HTTPStatus, tc.outcome, tc.status, rec.Error)
	}
	if !strings.Contains(rec.Error, tc.errHas) || (tc.outcome == records.OK) != (rec.Error == "") {
		t.Errorf("error %q, want it to contain %q", rec.Error, tc.errHas)
	}
	if len(rec.Error) > maxRecordError {
		t.Errorf("error is %d bytes long, the bound is %d", len(rec.Error), maxRecordError)
	}
	switch {
	case tc.chunks < 0 && rec.Chunks < 1, tc.chunks >= 0 && rec.Chunks != tc.chunks:
		t.Errorf("%d output chunks kept, want %d (-1: some)", rec.Chunks, tc.chunks)
	case rec.OutputTokens != rec.Chunks:
		t.Errorf("output tokens %d, want the %d chunks received counted", rec.OutputTokens, rec.Chunks)
	case rec.HTTPStatus == http.StatusOK && rec.OutputTokensSource != records.SourceChunks:
		t.Errorf("output tokens from %q: a stream without usage counts its chunks", rec.OutputTokensSource)
	}
	if rec.Chunks > 0 && (rec.First == records.Unset || len(rec.ITL) != rec.Chunks-1) {
		t.Errorf("first %v and %d gaps for %d chunks", rec.First, len(rec.ITL), rec.Chunks)
	}
	if rec.Sent == records.Unset || rec.End < rec.Sent {
		t.Fatalf("sent %v end %v", rec.Sent, rec.End)
	}
	if tc.timedOut {
		// The client arms the deadline from a clock reading taken just before sent (while it
		// builds the request), so under load the end may come slightly less than the timeout
		// after sent: slack covers that scheduling delay on both sides, the stall watch a
		// longer one.
		if d := rec.End - rec.Sent; d < faultTimeout-slack || d > faultTimeout+slack {
			errorfUnlessStalled(t, start, stallLimit, "end-sent of a timed-out request = %v, want within %v of %v", d, slack, faultTimeout)
		}
	} else if d := rec.End - rec.Sent; d >= faultTimeout {
		errorfUnlessStalled(t, start, faultTimeout/2, "end-sent %v: the fault should end the request well before the %v deadline", d, faultTimeout)
	}

	if srv == nil { // now serve the refused port, so that the next request can succeed
		l, err := net.Listen("tcp", strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/v1"))
		if err != nil {
			t.Skipf("cannot listen on the refused port again (%v); the fault itself was checked", err)
		}
		srv = newFaultServer(t, l)
	}

	next := prompt()
	rec2 := records.NewRecord(0, next.ID, 0)
	start2 := time.Now()
	c.Do(context.Background(), start2, &next, &rec2)
	if s := worstStall(start2); rec2.Outcome == records.Timeout && s > faultTimeout/2 {
		// The good answer leaves the server at once: a client that kept a broken connection
		// would time out, but so would any client on a machine that stalls this long.
		t.Skipf("the next request on the same client timed out while this process stalled for %v; the fault itself was checked", s)
	}
	if rec2.Outcome != records.OK || rec2.Chunks != goodChunks || rec2.OutputTokensSource != records.SourceUsage || rec2.Error != "" {
		t.Errorf("the next request on the same client: %v, %d chunks, tokens from %q, error %q", rec2.Outcome, rec2.Chunks, rec2.OutputTokensSource, rec2.Error)
	}
	want := int64(2)
	if tc.fault == nil {
		want = 1
	}
	if got := srv.calls.Load(); got != want {
		t.Errorf("the server got %d completion requests, want %d: a request was re-sent behind the client's back", got, want)
	}
	noLeaks(t, srv, c.Close, baseline)
}
