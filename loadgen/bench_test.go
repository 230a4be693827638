package loadgen

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

const benchChunks = 1000

// benchChunkPath streams one 1,000-chunk response per iteration through c and reports the cost
// per chunk of the whole client path (line reading, timestamping, decoding, bookkeeping).
func benchChunkPath(b *testing.B, c *Client) {
	req := workloads.Request{Prompt: "p", InputTokens: 1, MaxTokens: benchChunks}
	ctx := context.Background()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		rec := records.NewRecord(0, 0, 0)
		c.Do(ctx, start, &req, &rec)
		if rec.Outcome != records.OK || rec.Chunks != benchChunks {
			b.Fatalf("%v %s, %d chunks", rec.Outcome, rec.Error, rec.Chunks)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	chunks := float64(b.N) * benchChunks
	b.ReportMetric(float64(elapsed.Nanoseconds())/chunks, "ns/chunk")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/chunks, "allocs/chunk")
}

// BenchmarkClientChunks measures the client alone: the response is served from memory.
func BenchmarkClientChunks(b *testing.B) {
	sc := fakesse.Stream{Chunks: benchChunks, Usage: true}.Script()
	c, err := NewClient(Target{BaseURL: "http://bench.invalid/v1", Model: "m"}, 1)
	if err != nil {
		b.Fatal(err)
	}
	c.hc.Transport = &fakesse.Transport{Handler: func(fakesse.Received) fakesse.Script { return sc }}
	b.ReportAllocs()
	benchChunkPath(b, c)
}

// BenchmarkClientChunksLoopback adds real HTTP over loopback (the server runs in this process
// and its cost is included).
func BenchmarkClientChunksLoopback(b *testing.B) {
	sc := fakesse.Stream{Chunks: benchChunks, Usage: true}.Script()
	srv := fakesse.New(func(fakesse.Received) fakesse.Script { return sc })
	defer srv.Close()
	c, err := NewClient(Target{BaseURL: srv.URL, Model: "m"}, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchChunkPath(b, c)
}

// BenchmarkDispatcher runs a tier of b.N requests against an instant in-memory server at a fixed
// rate and reports the schedule lag the dispatcher achieved, with and without Spin.
func BenchmarkDispatcher(b *testing.B) {
	for _, rate := range []int{2000, 20000} {
		for _, spin := range []time.Duration{0, time.Millisecond} {
			b.Run(fmt.Sprintf("rate=%d/spin=%v", rate, spin), func(b *testing.B) {
				benchDispatcher(b, time.Second/time.Duration(rate), spin)
			})
		}
	}
}

func benchDispatcher(b *testing.B, gap, spin time.Duration) {
	sc := fakesse.Stream{Chunks: 1}.Script()
	c, err := NewClient(Target{BaseURL: "http://bench.invalid/v1", Model: "m"}, 0)
	if err != nil {
		b.Fatal(err)
	}
	c.hc.Transport = &fakesse.Transport{Handler: func(fakesse.Received) fakesse.Script { return sc }}
	n := b.N
	tier := Tier{Offsets: make([]time.Duration, n), Requests: make([]workloads.Request, n), Spin: spin}
	for i := range tier.Offsets {
		tier.Offsets[i] = time.Duration(i) * gap
		tier.Requests[i] = workloads.Request{ID: i, Prompt: "p", MaxTokens: 1}
	}
	sink := &lagSink{lags: make([]time.Duration, 0, n)}
	b.ResetTimer()
	if _, err := Run(context.Background(), c, tier, sink, nil); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	slices.Sort(sink.lags)
	q := func(p float64) float64 {
		return float64(sink.lags[int(p*float64(len(sink.lags)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(q(0.5), "lag-p50-µs")
	b.ReportMetric(q(0.99), "lag-p99-µs")
	b.ReportMetric(q(1), "lag-max-µs")
}

type lagSink struct{ lags []time.Duration }

func (s *lagSink) Write(r *records.Record) error {
	if lag, ok := r.ScheduleLag(); ok {
		s.lags = append(s.lags, lag)
	}
	return nil
}
