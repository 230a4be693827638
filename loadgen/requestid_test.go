package loadgen_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

type keepSink struct {
	mu   sync.Mutex
	recs []records.Record
}

func (s *keepSink) Write(r *records.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, *r)
	return nil
}

// TestRequestIDOnTheWire: with a prefix every request carries X-Request-Id: prefix<tier>-<id>,
// the preflight prefix+"preflight", a re-sent request its first id; without one, none is sent.
func TestRequestIDOnTheWire(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := fakesse.New(func(r fakesse.Received) fakesse.Script {
		id := r.Header.Get("X-Request-Id")
		mu.Lock()
		defer mu.Unlock()
		seen[id]++
		if id == "bench-ab-3-17" && seen[id] == 1 {
			return fakesse.Script{Status: http.StatusServiceUnavailable, Body: fakesse.ErrorJSON("warming up")}
		}
		return fakesse.Stream{Chunks: 2}.Script()
	})
	defer srv.Close()

	c := newClient(t, loadgen.Target{BaseURL: srv.URL, RequestIDPrefix: "bench-ab-", Headers: http.Header{"X-Team": {"t1"}}}, 0)
	if err := c.Preflight(context.Background(), loadgen.PreflightRequest()); err != nil {
		t.Fatal(err)
	}
	reqs := []workloads.Request{{ID: 17, Prompt: "a", MaxTokens: 2}, {ID: 18, Prompt: "b", MaxTokens: 2}}
	var sink keepSink
	if _, err := loadgen.Run(context.Background(), c, loadgen.Tier{Index: 3, Offsets: make([]time.Duration, 2), Requests: reqs, Retries: 1}, &sink, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"bench-ab-preflight": 1, "bench-ab-3-17": 2, "bench-ab-3-18": 1}
	mu.Lock()
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("ids received %v, want %v", seen, want)
	}
	mu.Unlock()
	for _, r := range sink.recs {
		if r.Outcome != records.OK {
			t.Errorf("request %d: %v %s", r.ID, r.Outcome, r.Error)
		}
	}
	for _, rc := range srv.Received() {
		if rc.Header.Get("X-Team") != "t1" || rc.Header.Get("Content-Type") != "application/json" {
			t.Errorf("the shared headers did not travel with the id: %v", rc.Header)
		}
	}

	rec, plain := doOnce(t, loadgen.Target{}, workloads.Request{ID: 1, Prompt: "a", MaxTokens: 1}, fakesse.Stream{Chunks: 1}.Script())
	if got := plain.Received(); rec.Outcome != records.OK || len(got) != 1 || got[0].Header.Get("X-Request-Id") != "" {
		t.Errorf("without a prefix no id may be sent: %v %v", rec.Outcome, got)
	}
}

func TestRequestID(t *testing.T) {
	for _, tc := range []struct {
		prefix   string
		tier, id int
		want     string
	}{
		{"bench-1a2b3c4d-", 0, 17, "bench-1a2b3c4d-0-17"}, {"p", 12, 0, "p12-0"}, {"x-", 3, -1, "x-preflight"},
	} {
		if got := loadgen.RequestID(tc.prefix, tc.tier, tc.id); got != tc.want {
			t.Errorf("RequestID(%q, %d, %d) = %q, want %q", tc.prefix, tc.tier, tc.id, got, tc.want)
		}
	}
}

func TestRequestIDPrefixValidate(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
		header http.Header
		errHas string // "" = valid
	}{
		{name: "vLLM's default form", prefix: "bench-1a2b3c4d-"},
		{name: "none", prefix: ""},
		{name: "a blank", prefix: "my run-", errHas: "request id prefix: byte 3 of 7 is a blank"},
		{name: "a control character", prefix: "a\nb", errHas: "request id prefix: byte 2"},
		{name: "not ASCII", prefix: "é", errHas: "request id prefix: byte 1"},
		{name: "too long", prefix: strings.Repeat("x", 129), errHas: "129 bytes, more than the 128 allowed"},
		{name: "set twice", prefix: "p-", header: http.Header{"x-request-id": {"mine"}}, errHas: "header: X-Request-Id and request id prefix both set the request id"},
		{name: "a header id alone is fine", prefix: "", header: http.Header{"X-Request-Id": {"mine"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := loadgen.Target{BaseURL: "http://127.0.0.1:8000/v1", RequestIDPrefix: tc.prefix, Headers: tc.header}
			errs := tg.Validate()
			if tc.errHas == "" {
				if len(errs) > 0 {
					t.Fatalf("errors %v", errs)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.errHas) {
				t.Fatalf("errors %v, want one containing %q", errs, tc.errHas)
			}
			if e := tg.ValidateRequestID(); len(e) != 1 || e[0].Error() != errs[0].Error() {
				t.Errorf("ValidateRequestID %v, want Validate's %v", e, errs)
			}
		})
	}
}

// readyServer is a deployment that answers "not ready" (status, or an empty model list) until
// readyAt, then streams; it counts the completion requests and model lists it got.
func readyServer(t *testing.T, readyAt time.Time, status int, emptyModels bool) (*httptest.Server, *atomic.Int64) {
	var probes atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		if time.Now().Before(readyAt) {
			if emptyModels {
				_, _ = w.Write([]byte(`{"object":"list","data":[]}`))
				return
			}
			http.Error(w, "loading", status)
			return
		}
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model"}]}`))
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		if time.Now().Before(readyAt) {
			http.Error(w, `{"error":{"message":"loading"}}`, status)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", fakesse.ChatChunk("ready", "stop"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &probes
}

// TestWaitReady: the ready check waits out "not ready yet" answers (a server that starts
// answering after about a second: refused connections, 503s, 404s, an empty model list) and
// stops at once on any other answer; after its time it fails naming --ready-check-timeout-sec.
func TestWaitReady(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		model   string // "" = resolve it from /models
		empty   bool
		after   time.Duration // the server answers after this long
		within  time.Duration
		errHas  string
		minWait time.Duration
		notes   bool
	}{
		{name: "503 for a second", status: 503, model: "m", after: time.Second, within: 10 * time.Second, minWait: 900 * time.Millisecond, notes: true},
		{name: "404 for a second, model from /models", status: 404, after: time.Second, within: 10 * time.Second, minWait: 900 * time.Millisecond, notes: true},
		{name: "no model listed for a second", status: 200, empty: true, after: time.Second, within: 10 * time.Second, minWait: 900 * time.Millisecond, notes: true},
		{name: "ready at once", status: 503, model: "m", within: 10 * time.Second},
		{name: "401 is an answer: the preflight explains it", status: 401, model: "m", after: time.Hour, within: 10 * time.Second},
		{name: "never ready", status: 503, model: "m", after: time.Hour, within: 1500 * time.Millisecond,
			errHas: "ready-check timeout: http://127.0.0.1", minWait: 1400 * time.Millisecond, notes: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, probes := readyServer(t, time.Now().Add(tc.after), tc.status, tc.empty)
			c, err := loadgen.NewClient(loadgen.Target{BaseURL: srv.URL + "/v1", Model: tc.model}, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var notes []string
			start := time.Now()
			err = c.WaitReady(context.Background(), tc.within, func(d time.Duration, why string) { notes = append(notes, why) })
			took := time.Since(start)
			if tc.errHas == "" && err != nil || tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)) {
				t.Fatalf("err %v, want %q", err, tc.errHas)
			}
			if took < tc.minWait || took > tc.within+time.Second {
				t.Errorf("took %v, want at least %v and about no more than %v", took, tc.minWait, tc.within)
			}
			if (len(notes) > 0) != tc.notes {
				t.Errorf("notes %q", notes)
			}
			if tc.notes && !strings.Contains(strings.Join(notes, "\n"), "HTTP") && !tc.empty {
				t.Errorf("the notes do not say why: %q", notes)
			}
			if tc.errHas == "" && c.Model() != "m" {
				t.Errorf("model %q after the wait", c.Model())
			}
			if tc.model == "" && !tc.empty && probes.Load() == 0 {
				t.Error("no preflight request was sent")
			}
		})
	}
}

// TestWaitReadyUntilTheServerListens: the connection is refused until the server starts
// listening, a second later.
func TestWaitReadyUntilTheServerListens(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv, _ := readyServer(t, time.Time{}, 503, false)
	srv.Close() // its handler serves the listener opened below
	started := make(chan *http.Server, 1)
	go func() {
		time.Sleep(time.Second)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			started <- nil
			return
		}
		s := &http.Server{Handler: srv.Config.Handler}
		started <- s
		_ = s.Serve(l)
	}()
	c, err := loadgen.NewClient(loadgen.Target{BaseURL: "http://" + addr + "/v1", Model: "m"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var notes []string
	err = c.WaitReady(context.Background(), 10*time.Second, func(_ time.Duration, why string) { notes = append(notes, why) })
	s := <-started
	if s == nil {
		t.Skip("the port was taken in the meantime")
	}
	defer s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "connection refused") {
		t.Errorf("notes %q, want a refused connection first", notes)
	}
}

func TestWaitReadyStopsWithItsContext(t *testing.T) {
	srv, _ := readyServer(t, time.Now().Add(time.Hour), 503, false)
	c, err := loadgen.NewClient(loadgen.Target{BaseURL: srv.URL + "/v1", Model: "m"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := c.WaitReady(ctx, time.Minute, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want the context's", err)
	}
}
