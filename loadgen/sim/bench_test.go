package sim_test

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// BenchmarkStreams holds ~5,000 concurrent streams over loopback and reports
// the SSE chunks per second the clients received, the tokens per second the
// engine produced, and the engine's step lateness. One iteration is one
// whole scenario (connect, steady window, tear down); run with
// -benchtime=1x. The client is in the same process and shares the CPU.
func BenchmarkStreams(b *testing.B) {
	for _, step := range []time.Duration{50 * time.Millisecond, 25 * time.Millisecond} {
		b.Run("step="+step.String(), func(b *testing.B) {
			for b.Loop() {
				benchStreams(b, 5000, step, 3*time.Second)
			}
		})
	}
}

func benchStreams(b *testing.B, streams int, step, window time.Duration) {
	cfg, err := sim.Profile(sim.ProfileMedium)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxNumSeqs = streams
	cfg.MaxBatchedTokens = 16 * streams
	cfg.MaxModelLen = 100000
	cfg.KVCacheTokens = streams * cfg.MaxModelLen
	cfg.StepBase = step
	cfg.StepPerSeq = 0
	cfg.StepPerKVToken = 0
	cfg.PrefillRate = 1e9
	cfg.PrefixCacheBlocks = 0
	run, err := sim.Start(cfg, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := run.Close(); err != nil {
			b.Error(err)
		}
	}()
	tr := &http.Transport{
		MaxIdleConnsPerHost: streams,
		DisableCompression:  true,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var chunks, started atomic.Int64
	var wg sync.WaitGroup
	body := `{"prompt":"a short prompt","max_tokens":` + strconv.Itoa(cfg.MaxModelLen-10) + `,"stream":true}`
	url := run.URL() + "/completions"
	for i := 0; i < streams; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
			if err != nil {
				return
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReaderSize(resp.Body, 4096)
			first := true
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if bytes.HasPrefix(line, []byte("data: {")) {
					if first {
						started.Add(1)
						first = false
					}
					chunks.Add(1)
				}
			}
		}()
		if i%500 == 499 {
			time.Sleep(20 * time.Millisecond) // let the accept queue drain
		}
	}
	srv := run.Server()
	deadline := time.Now().Add(60 * time.Second)
	for started.Load() < int64(streams) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := started.Load(); n < int64(streams) {
		b.Fatalf("only %d of %d streams started", n, streams)
	}
	h0 := latenessBuckets(b, client, run)
	c0, s0, t0 := chunks.Load(), srv.Stats(), time.Now()
	time.Sleep(window)
	c1, s1, el := chunks.Load(), srv.Stats(), time.Since(t0)
	h1 := latenessBuckets(b, client, run)
	cancel()
	wg.Wait()
	b.ReportMetric(float64(c1-c0)/el.Seconds(), "chunks/s")
	b.ReportMetric(float64(s1.GeneratedTokens-s0.GeneratedTokens)/el.Seconds(), "tokens/s")
	b.ReportMetric(float64(streams)/step.Seconds(), "nominal-tokens/s")
	b.ReportMetric(float64(s1.PeakRunning), "streams")
	b.ReportMetric(float64(s1.ScheduleResets-s0.ScheduleResets), "schedule-resets")
	// Step lateness inside the window, from the histogram: the upper
	// bound of the bucket holding the 99th percentile and the maximum.
	p99, mx := bucketQuantiles(h0, h1)
	b.ReportMetric(p99*1e3, "p99-late-ms<=")
	b.ReportMetric(mx*1e3, "max-late-ms<=")
	b.ReportMetric(float64(s1.StepLatenessMax)/1e6, "max-late-ms-incl-ramp")
}

type bucket struct{ le, n float64 }

// latenessBuckets reads the cumulative sim_step_lateness_seconds buckets.
func latenessBuckets(b *testing.B, client *http.Client, run *sim.Running) []bucket {
	resp, err := client.Get("http://" + run.Addr() + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var out []bucket
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "sim_step_lateness_seconds_bucket{") {
			continue
		}
		i := strings.Index(line, `le="`)
		j := strings.Index(line, `"} `)
		le := math.Inf(1)
		if s := line[i+4 : j]; s != "+Inf" {
			le, _ = strconv.ParseFloat(s, 64)
		}
		n, _ := strconv.ParseFloat(line[j+3:], 64)
		out = append(out, bucket{le, n})
	}
	return out
}

// bucketQuantiles returns the bucket bounds of the p99 and of the maximum
// of the observations between two cumulative snapshots (+Inf when beyond
// the last bound).
func bucketQuantiles(h0, h1 []bucket) (p99, maxv float64) {
	total := h1[len(h1)-1].n - h0[len(h0)-1].n
	p99, maxv = math.NaN(), math.NaN()
	for i := range h1 {
		cum := h1[i].n - h0[i].n
		if math.IsNaN(p99) && cum >= 0.99*total {
			p99 = h1[i].le
		}
		if math.IsNaN(maxv) && cum >= total {
			maxv = h1[i].le
		}
	}
	return p99, maxv
}
