package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/scripts/fifoserver/fifo"
	"github.com/loadcurve/loadcurve/workloads"
)

type sink struct {
	mu   sync.Mutex
	recs []records.Record
}

func (s *sink) Write(r *records.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, *r)
	return nil
}

// A short tier of loadcurve's client against the fifoserver, held to the server's log: every
// request is in the log under its X-Request-Id; the client's TTFT (sent to the first token's
// arrival at its socket) holds the server's (its handler's start to its first write), both on one
// clock here, and it is never later than when the client read the token; and the records the
// tool rewrites with the server's TTFT (-server-timed) carry exactly it.
func TestClientAndServerAgree(t *testing.T) {
	var log bytes.Buffer
	srv, err := fifo.New(fifo.Config{Model: "fifo", Slots: 2, Service: 40 * time.Millisecond, FirstToken: 5 * time.Millisecond, Tokens: 3}, &log)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = srv.Listener(hs.Listener)
	hs.Config.ConnContext = srv.ConnContext
	hs.Start()
	defer hs.Close()
	c, err := loadgen.NewClient(loadgen.Target{BaseURL: hs.URL + "/v1", Model: "fifo", Timeout: 10 * time.Second, RequestIDPrefix: "p"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 100 // at 40 req/s on two slots of 40 ms (ρ = 0.8): 2.5 s
	offsets, err := arrival.Spec{Rate: 40, Burstiness: 1}.Arrivals(n, 0, 7, 0)
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([]workloads.Request, n)
	for i := range reqs {
		reqs[i] = workloads.Request{ID: i, Prompt: "one two three four", InputTokens: 4, MaxTokens: 3}
	}
	var out sink
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := loadgen.Run(ctx, c, loadgen.Tier{Offsets: offsets, Requests: reqs, Grace: 10 * time.Second}, &out, nil); err != nil {
		t.Fatal(err)
	}
	hs.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := fifo.ReadLog(&log, "log")
	if err != nil {
		t.Fatal(err)
	}
	if len(out.recs) != n || len(l.Requests) != n {
		t.Fatalf("%d records, %d requests logged, want %d each", len(out.recs), len(l.Requests), n)
	}
	// The records file the tool reads, and its rewrite.
	dir := t.TempDir()
	var b []byte
	for i := range out.recs {
		b = append(out.recs[i].AppendJSON(b), '\n')
	}
	path := filepath.Join(dir, "records.jsonl")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeServerTimed(io.Discard, path, filepath.Join(dir, "st"), &serverLog{Log: l}, "p"); err != nil {
		t.Fatal(err)
	}
	rewritten := readRecords(t, filepath.Join(dir, "st", "records.jsonl"))
	if err := writeAsRead(io.Discard, path, filepath.Join(dir, "read")); err != nil {
		t.Fatal(err)
	}
	asRead := readRecords(t, filepath.Join(dir, "read", "records.jsonl"))

	const slack = time.Millisecond // the kernel's real-time stamp turned into a monotonic reading
	for i, r := range out.recs {
		sv := l.ByID["p0-"+strconv.Itoa(r.ID)]
		if sv == nil {
			t.Fatalf("request %d is not in the server's log", r.ID)
		}
		if r.Outcome != records.OK || !sv.OK() || r.First == records.Unset || r.Written == records.Unset {
			t.Fatalf("request %d: %v at the client, %q at the server, first %v, written %v: want ok, with both moments", r.ID, r.Outcome, sv.Outcome, r.First, r.Written)
		}
		client, server := (r.First - r.Sent).Seconds(), sv.TTFT()
		if client < server-slack.Seconds() {
			t.Errorf("request %d: client TTFT %.3f ms, shorter than the server's %.3f ms", r.ID, 1000*client, 1000*server)
		}
		if r.Written < r.Sent || (r.FirstRead != records.Unset && r.FirstRead < r.First) {
			t.Errorf("request %d: sent %v, written %v, first %v, read %v: out of order", r.ID, r.Sent, r.Written, r.First, r.FirstRead)
		}
		st := rewritten[i]
		if st.ID != r.ID {
			t.Fatalf("rewritten line %d is request %d, want %d", i, st.ID, r.ID)
		}
		if got := (st.First - st.Sent).Seconds(); math.Abs(got-server) > 1e-6 {
			t.Errorf("request %d rewritten: TTFT %.6f s, want the server's %.6f", r.ID, got, server)
		}
		if st.Written != records.Unset || st.FirstRead != records.Unset {
			t.Errorf("request %d rewritten keeps the client's moments: written %v, read %v", r.ID, st.Written, st.FirstRead)
		}
		// As read: the first token when the client read it, never before it arrived.
		read, want := asRead[i], r.First
		if r.FirstRead != records.Unset {
			want = r.FirstRead
		}
		if d := read.First - want; read.ID != r.ID || d < -time.Microsecond || d > time.Microsecond || read.FirstRead != records.Unset || read.Last < read.First {
			t.Errorf("request %d as read: first %v (read %v, last %v), want %v", r.ID, read.First, read.FirstRead, read.Last, want)
		}
	}
}

func readRecords(t *testing.T, path string) []records.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []records.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var r records.Record
		if err := r.UnmarshalJSON(sc.Bytes()); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}
