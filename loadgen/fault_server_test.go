package loadgen_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
)

// faultFunc answers one completion request badly. quit closes when the server shuts down, so a
// handler that waits for the client gives up then at the latest.
type faultFunc func(w http.ResponseWriter, r *http.Request, quit <-chan struct{})

// faultServer is a loopback server for the fault suite: completion request k (from 1) gets
// faults[k-1] when there is one and it is not nil, every other request a short well-formed
// stream (goodChunks content chunks, usage, [DONE]).
// It counts the server side of every TCP connection that is still open, so a connection the
// client forgot (an unclosed body) shows as a connection that never closes.
type faultServer struct {
	URL    string
	srv    *httptest.Server
	faults []faultFunc
	quit   chan struct{}
	open   atomic.Int64 // connections accepted and not yet closed or hijacked
	calls  atomic.Int64 // completion requests received
}

const goodChunks = 3

// newFaultServer serves on l (nil: a new loopback port).
func newFaultServer(t *testing.T, l net.Listener, faults ...faultFunc) *faultServer {
	t.Helper()
	s := &faultServer{faults: faults, quit: make(chan struct{})}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if l != nil {
		s.srv.Listener.Close()
		s.srv.Listener = l
	}
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.open.Add(1)
		case http.StateClosed, http.StateHijacked: // hijacking handlers close the conn themselves
			s.open.Add(-1)
		}
	}
	s.srv.Start()
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// Close stops waiting handlers and the server; it is safe to call twice.
func (s *faultServer) Close() {
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	s.srv.Close()
}

func (s *faultServer) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if k := s.calls.Add(1); k <= int64(len(s.faults)) && s.faults[k-1] != nil {
		s.faults[k-1](w, r, s.quit)
		return
	}
	sseHeaders(w)
	for k := range goodChunks {
		writeFlush(w, "data: "+fakesse.ChatChunk(fmt.Sprintf("t%d ", k), finishIf(k == goodChunks-1))+"\n\n")
	}
	writeFlush(w, "data: "+fakesse.UsageChunk(2, goodChunks)+"\n\ndata: [DONE]\n\n")
}

func finishIf(last bool) string {
	if last {
		return "length"
	}
	return ""
}

func sseHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// writeFlush writes s and flushes; false once the client has gone.
func writeFlush(w http.ResponseWriter, s string) bool {
	if _, err := io.WriteString(w, s); err != nil {
		return false
	}
	w.(http.Flusher).Flush()
	return true
}

// waitGone blocks until the client goes away or the server shuts down.
func waitGone(r *http.Request, quit <-chan struct{}) {
	select {
	case <-r.Context().Done():
	case <-quit:
	}
}

// hijackClose takes the connection over and closes it; with reset, SO_LINGER 0 makes the close
// send a TCP RST instead of a FIN. Whatever the response writer buffered is flushed first.
func hijackClose(t *testing.T, w http.ResponseWriter, reset bool) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	if reset {
		if err := conn.(*net.TCPConn).SetLinger(0); err != nil {
			t.Errorf("SetLinger: %v", err)
		}
	}
	_ = conn.Close()
}

// settle waits, boundedly, until cond holds; it reports whether it did.
func settle(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// noLeaks fails t when, after the client closed its idle connections, a server-side connection
// stays open (a response body was not closed), or when, after the server closed too, more
// goroutines run than before the test made either (baseline). Connections and their goroutines
// end asynchronously, hence the bounded waits.
func noLeaks(t *testing.T, s *faultServer, closeClient func(), baseline int) {
	t.Helper()
	closeClient()
	if !settle(3*time.Second, func() bool { return s.open.Load() == 0 }) {
		t.Errorf("%d server-side connection(s) still open after the client closed its idle ones: a response body was not closed", s.open.Load())
	}
	s.Close()
	if !settle(3*time.Second, func() bool { return runtime.NumGoroutine() <= baseline }) {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines, %d before the test:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
	}
}

// repeat returns n copies of c.
func repeat(c byte, n int) string { return strings.Repeat(string(c), n) }
