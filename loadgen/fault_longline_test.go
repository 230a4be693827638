package loadgen_test

import (
	"context"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/measure/records"
)

// The client's cap on one SSE line (maxLineLen in stream.go), and an upper bound of its read
// buffer (readerSize, 2 KiB at the time of writing), which is what one read appends at most.
const (
	lineCap   = 8 << 20
	readerBuf = 16 << 10
)

// TestFaultLongLine: a server that sends one line without a newline, 10 MiB long or endless.
// The client must give up at its line cap as a stream_error, keep the output received before,
// and allocate a bounded amount of memory however long the line would have been.
//
// The bound. The client assembles a long line in one buffer whose capacity doubles (from 4 KiB)
// as pieces of at most readerBuf bytes come, and which stops growing at lineCap plus one read:
// the capacities it passes through form a geometric series of ratio 2, whose sum is at most
// twice the last one, 2·(lineCap+readerBuf). Everything else a request allocates is a few kB,
// so 2.5·(lineCap+readerBuf) bounds the request; an unbounded reader would allocate at least
// the 10 MiB or the 256 MiB the server offers. (Measured: about 16 MiB allocated in both cases,
// peak heap +14 MiB including garbage not yet collected; before the buffer doubled, Go's append
// growth of 1.25 made it 40 MiB. The peak is logged, not asserted: with garbage it depends on
// when the GC runs.)
func TestFaultLongLine(t *testing.T) {
	const (
		mib         = 1 << 20
		allocBound  = 5 * (lineCap + readerBuf) / 2
		endlessSize = 256 * mib
	)
	tests := []struct {
		name    string
		size    int // bytes of the line the server offers
		timeout time.Duration
	}{
		{"10 MiB without a newline, then the end", 10 * mib, 0},
		{"an endless line (256 MiB offered)", endlessSize, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			var written atomic.Int64
			srv := newFaultServer(t, nil, func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
				sseHeaders(w)
				writeFlush(w, chunkLine("a ")+chunkLine("b "))
				block := []byte("data: " + strings.Repeat("a", 64<<10-6))
				for n := 0; n < tc.size; n += len(block) {
					if _, err := w.Write(block); err != nil {
						return // the client hung up
					}
					written.Add(int64(len(block)))
				}
			})
			c, err := loadgen.NewClient(loadgen.Target{BaseURL: srv.URL, Model: "m", Timeout: 20 * time.Second}, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()

			req := prompt()
			rec := records.NewRecord(0, req.ID, 0)
			peak := startHeapSampler()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			c.Do(context.Background(), time.Now(), &req, &rec)
			runtime.ReadMemStats(&after)
			peakLive := int64(peak()) - int64(before.HeapAlloc)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("line offered %d MiB, server wrote %.1f MiB before the client hung up; %.1f MiB allocated during the request (whole process), peak heap +%.1f MiB (sampled every ms)",
				tc.size/mib, float64(written.Load())/mib, float64(alloc)/mib, float64(peakLive)/mib)

			if rec.Outcome != records.StreamError || !strings.Contains(rec.Error, "an event line longer than 8388608 bytes") {
				t.Errorf("outcome %v error %q, want stream_error for the over-long line", rec.Outcome, rec.Error)
			}
			if rec.Chunks != 2 || rec.OutputTokens != 2 {
				t.Errorf("%d chunks, %d tokens kept, want 2", rec.Chunks, rec.OutputTokens)
			}
			if alloc > allocBound {
				t.Errorf("%d bytes allocated for one request, bound %d", alloc, allocBound)
			}
			// The server's socket buffers (a few MiB on loopback) hold what the client did not read.
			if tc.size == endlessSize && written.Load() > endlessSize/4 {
				t.Errorf("the server wrote %d bytes of the endless line: the client kept reading", written.Load())
			}
			noLeaks(t, srv, c.Close, baseline)
		})
	}
}

// chunkLine is one content event.
func chunkLine(s string) string {
	return `data: {"choices":[{"index":0,"delta":{"content":"` + s + `"}}]}` + "\n\n"
}

// startHeapSampler samples the bytes of live and not yet swept heap objects every millisecond
// until the returned function is called; that returns the largest sample.
func startHeapSampler() (stop func() uint64) {
	const name = "/memory/classes/heap/objects:bytes"
	sample := []metrics.Sample{{Name: name}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	var mu sync.Mutex
	peak := read()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				v := read()
				mu.Lock()
				peak = max(peak, v)
				mu.Unlock()
			}
		}
	}()
	var once sync.Once
	return func() uint64 {
		once.Do(func() { close(done); <-finished })
		mu.Lock()
		defer mu.Unlock()
		return max(peak, read())
	}
}
