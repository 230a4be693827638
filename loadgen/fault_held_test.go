package loadgen_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// TestHeldBytesAreBounded: many streams at once whose servers make the client hold data (a line
// without its newline, an event's data lines that never become a payload, a reply's text for a
// quality check, an embeddings answer, an error body), most then stalling. Together the client
// never holds more than its budget (Target.MaxHeldBytes), whatever each stream was sent; every
// request gets its record, each a timeout (the stream stalled while its data was held) or a
// stream_error saying the client's memory for such data was held by other requests; and once
// they end nothing is held any more. Where the data fits (long lines that end), every request
// is ok.
func TestHeldBytesAreBounded(t *testing.T) {
	const (
		kib     = 1 << 10
		mib     = 1 << 20
		streams = 16
		timeout = 2 * time.Second
	)
	stall := func(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) { waitGone(r, quit) }
	tests := []struct {
		name     string
		budget   int64
		endpoint loadgen.Endpoint
		expect   *workloads.Expectation
		serve    faultFunc
		ok       bool   // every request ok, none refused
		errHas   string // a refused request's error
	}{
		// Each server's data is written at once: the client, not the server, sets the pace.
		{name: "a line of 256 KiB without its newline, then a stall", budget: mib, serve: func(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
			sseHeaders(w)
			writeFlush(w, "data: "+repeat('a', 256*kib))
			stall(w, r, quit)
		}, errHas: "an event line of more than"},
		{name: "256 kB of data lines that never make a payload, then a stall", budget: mib, serve: func(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
			sseHeaders(w)
			writeFlush(w, strings.Repeat("data: "+repeat('b', 1000)+"\n", 256))
			stall(w, r, quit)
		}, errHas: "an event's data of more than"},
		{name: "256 kB of reply text kept for a quality check, then a stall", budget: mib, expect: &workloads.Expectation{Contains: "never"},
			serve: func(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
				sseHeaders(w)
				writeFlush(w, strings.Repeat("data: "+fakesse.ChatChunk(repeat('c', 1000), "")+"\n\n", 256))
				stall(w, r, quit)
			}, errHas: "a reply's text of more than"},
		{name: "an embeddings answer of 256 KiB that stalls", budget: mib, endpoint: loadgen.Embeddings,
			serve: func(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
				w.Header().Set("Content-Type", "application/json")
				writeFlush(w, `{"object":"list","data":[{"embedding":[`+strings.Repeat("0.125,", 256*kib/6))
				stall(w, r, quit)
			}, errHas: "an answer of more than"},
		{name: "error bodies of 60 kB that stall", budget: 256 * kib, serve: func(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
			w.WriteHeader(http.StatusServiceUnavailable)
			writeFlush(w, repeat('e', 60_000))
			stall(w, r, quit)
		}},
		{name: "lines of 20 kB that end, within the budget", budget: mib, ok: true, serve: func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			sseHeaders(w)
			big := "data: " + fakesse.ChatChunk(repeat('d', 20_000), "") + "\n\n"
			writeFlush(w, big+big+"data: [DONE]\n\n")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits for its timeout
			faults := make([]faultFunc, streams)
			for i := range faults {
				faults[i] = tc.serve
			}
			srv := newFaultServer(t, nil, faults...)
			defer srv.Close()
			c, err := loadgen.NewClient(loadgen.Target{BaseURL: srv.URL, Model: "m", Timeout: timeout, Endpoint: tc.endpoint, MaxHeldBytes: tc.budget}, streams)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			recs := make([]records.Record, streams)
			var wg sync.WaitGroup
			for i := range recs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req := workloads.Request{ID: i, Prompt: "hello there", InputTokens: 2, MaxTokens: 16, Expect: tc.expect}
					recs[i] = records.NewRecord(0, i, 0)
					c.Do(context.Background(), time.Now(), &req, &recs[i])
				}()
			}
			wg.Wait()
			now, peak := loadgen.HeldBytes(c)
			t.Logf("held at most %d bytes of a budget of %d", peak, tc.budget)
			if peak > tc.budget {
				t.Errorf("the requests held %d bytes at once, more than the budget of %d", peak, tc.budget)
			}
			if now != 0 {
				t.Errorf("%d bytes still held after every request ended", now)
			}
			counts := map[string]int{}
			for i, r := range recs {
				switch {
				case tc.ok && r.Outcome == records.OK:
					counts["ok"]++
				case tc.ok:
					t.Errorf("request %d: %v %q, want ok", i, r.Outcome, r.Error)
				case r.Outcome == records.Timeout && strings.Contains(r.Error, "request timeout"):
					counts["timeout"]++
				case r.Outcome == records.StreamError && strings.Contains(r.Error, "held by other requests") && strings.Contains(r.Error, tc.errHas):
					counts["refused"]++
				case r.Outcome == records.HTTPError && r.HTTPStatus == http.StatusServiceUnavailable && tc.errHas == "":
					counts["http_error"]++ // an error body: the status is the record, whatever of the body was held
				default:
					t.Errorf("request %d: %v %q", i, r.Outcome, r.Error)
				}
				if len(r.Error) > maxRecordError {
					t.Errorf("request %d: an error of %d bytes", i, len(r.Error))
				}
			}
			t.Logf("outcomes: %v", counts)
			if !tc.ok && tc.errHas != "" && (counts["refused"] == 0 || counts["timeout"] == 0) {
				t.Errorf("outcomes %v: want some streams held until their timeout and the others refused", counts)
			}
		})
	}
}
