package servermetrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sm "github.com/loadcurve/loadcurve/measure/servermetrics"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func textResponse(r *http.Request, body string) *http.Response {
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK",
		Header:  http.Header{"Content-Type": {"text/plain; version=0.0.4"}},
		Body:    io.NopCloser(strings.NewReader(body)),
		Request: r,
	}
}

// On a fake clock the cadence and the values are exact: the server's
// counter grows 50 per second and its running gauge is the whole seconds
// elapsed; the third scrape fails.
func TestSamplerCadence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		var calls atomic.Int64
		client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if calls.Add(1) == 3 {
				return nil, errors.New("injected failure")
			}
			s := time.Since(t0).Seconds()
			return textResponse(r, fmt.Sprintf(
				"vllm:generation_tokens_total %g\nvllm:num_requests_running %d\n", 50*s, int(s))), nil
		})}
		smp := sm.StartSampler(context.Background(), sm.NewScraper("http://sim.invalid/metrics", client, ""), t0, time.Second)
		<-smp.Ready()
		time.Sleep(10*time.Second + 500*time.Millisecond)
		got := smp.Stop()

		// Scrapes at 0, 1, ..., 10 s (the one at 2 s failed) and at Stop, 10.5 s.
		var wantAt []time.Duration
		for i := range 11 {
			if i != 2 {
				wantAt = append(wantAt, time.Duration(i)*time.Second)
			}
		}
		wantAt = append(wantAt, 10500*time.Millisecond)
		var at []time.Duration
		for _, s := range smp.Snapshots() {
			at = append(at, s.At)
		}
		if fmt.Sprint(at) != fmt.Sprint(wantAt) {
			t.Errorf("scrapes at %v, want %v", at, wantAt)
		}
		if got.Scrapes != 11 || got.Failures != 1 || !strings.Contains(got.LastError, "injected failure") {
			t.Errorf("scrapes %d failures %d last error %q, want 11, 1, the injected failure", got.Scrapes, got.Failures, got.LastError)
		}
		// 50 tokens/s over 10.5 s; the failed scrape loses nothing of a delta.
		if !eq(got.GenerationTokens, f(525)) {
			t.Errorf("GenerationTokens = %s, want 525", show(got.GenerationTokens))
		}
		// Running is 0,1,3,4,...,10 (2 missed) and 10 at 10.5 s: (55-2+10)/11.
		if !eq(got.MeanRunning, f(63.0/11)) || !eq(got.MaxRunning, f(10)) {
			t.Errorf("MeanRunning %s MaxRunning %s, want %v and 10", show(got.MeanRunning), show(got.MaxRunning), 63.0/11)
		}
		if again := smp.Stop(); fmt.Sprint(again) != fmt.Sprint(got) {
			t.Errorf("second Stop = %+v, want the first result %+v", again, got)
		}
	})
}

// Against a real loopback server whose values change at every scrape (the
// i-th request it receives sees i, and its waiting gauge tells i back):
// whatever scrapes the timing allows (Stop may abandon one the server
// already answered), the deltas are those between the first and the last
// kept scrape, and the means are over the kept ones.
func TestSamplerHTTP(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := float64(n.Add(1))
		_, _ = fmt.Fprintf(w, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=\"m\"} %g\n"+
			"# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total{model_name=\"m\"} %g\n"+
			"# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total{model_name=\"m\"} %g\n"+
			"# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"m\"} %g\n"+
			"vllm:num_requests_waiting{model_name=\"other\"} 1000\n",
			100*i, 40*i, 10*i, 2*i)
	}))
	defer srv.Close()
	smp := sm.StartSampler(context.Background(), sm.NewScraper(srv.URL+"/metrics", nil, "m"), time.Now(), 10*time.Millisecond)
	<-smp.Ready()
	time.Sleep(60 * time.Millisecond)
	got := smp.Stop()

	snaps := smp.Snapshots()
	if got.Scrapes < 2 || got.Failures != 0 || got.Scrapes != len(snaps) {
		t.Fatalf("scrapes %d (%d kept) failures %d, want ≥ 2 and 0 (%s)", got.Scrapes, len(snaps), got.Failures, got.LastError)
	}
	var index []float64 // i of each kept scrape; model "other" left out
	sumWaiting := 0.0
	for _, s := range snaps {
		index = append(index, s.Values[sm.NameWaiting]/2)
		sumWaiting += s.Values[sm.NameWaiting]
	}
	if index[0] != 1 || !slices.IsSorted(index) {
		t.Fatalf("scrape indices %v: want the first request first, in order", index)
	}
	span := index[len(index)-1] - index[0]
	for _, c := range []struct {
		name      string
		got, want *float64
	}{
		{"GenerationTokens", got.GenerationTokens, f(100 * span)},
		{"PrefixCacheQueries", got.PrefixCacheQueries, f(40 * span)},
		{"PrefixCacheHitRate", got.PrefixCacheHitRate, f(0.25)},
		{"MeanWaiting", got.MeanWaiting, f(sumWaiting / float64(len(snaps)))},
		{"MaxWaiting", got.MaxWaiting, f(2 * index[len(index)-1])},
	} {
		if !eq(c.got, c.want) {
			t.Errorf("%s = %s, want %s (scrape indices %v)", c.name, show(c.got), show(c.want), index)
		}
	}
	if got.Source != sm.SourceVLLM {
		t.Errorf("Source = %q", got.Source)
	}
	prev := time.Duration(-1)
	for _, s := range snaps {
		if s.At <= prev {
			t.Errorf("snapshot offsets not increasing: %v after %v", s.At, prev)
		}
		prev = s.At
	}
}

// A server that never answers costs the caller nothing: StartSampler
// returns while the first scrape hangs, every scrape fails at its own
// deadline, and Stop returns within two deadlines.
func TestSamplerHangingServer(t *testing.T) {
	srv, entered := hangingServer(t)
	scraper := sm.NewScraper(srv.URL+"/metrics", nil, "").WithTimeout(100 * time.Millisecond)
	smp := sm.StartSampler(context.Background(), scraper, time.Now(), 20*time.Millisecond)
	<-entered // the first scrape is in the server while we go on
	<-smp.Ready()
	// Scrapes never overlap: when the third enters the server, the second,
	// a periodic one, has ended, at its deadline, and counts as a failure.
	// (A fixed pause would not do: on a stalled machine the periodic scrape
	// may still be in flight when Stop abandons it.)
	for range 2 {
		select {
		case <-entered:
		case <-time.After(30 * time.Second):
			t.Fatal("no periodic scrape reached the server")
		}
	}
	got := smp.Stop()
	if got.Scrapes != 0 || got.Failures < 3 || !strings.Contains(got.LastError, "no complete answer within 100ms") {
		t.Errorf("scrapes %d failures %d last error %q; want 0, ≥ 3 (start, one periodic, stop), the deadline", got.Scrapes, got.Failures, got.LastError)
	}
	if got.Source != sm.SourceUnknown || got.GenerationTokens != nil || got.MeanRunning != nil {
		t.Errorf("metrics from no scrape: %+v", got)
	}
}

func TestSamplerServerDown(t *testing.T) {
	smp := sm.StartSampler(context.Background(), sm.NewScraper("http://"+closedAddr(t)+"/metrics", nil, ""), time.Now(), 0)
	got := smp.Stop()
	if got.Scrapes != 0 || got.Failures != 2 || !strings.Contains(got.LastError, "connection refused") {
		t.Errorf("scrapes %d failures %d last error %q; want 0, 2 (start and stop), connection refused", got.Scrapes, got.Failures, got.LastError)
	}
}

// Cancelling the context ends the periodic scrapes without counting them
// as failures; Stop still makes its final scrape.
func TestSamplerContextCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			return textResponse(r, "vllm:num_preemptions_total 1\n"), nil
		})}
		ctx, cancel := context.WithCancel(context.Background())
		smp := sm.StartSampler(ctx, sm.NewScraper("http://x.invalid/metrics", client, ""), time.Now(), time.Second)
		time.Sleep(2500 * time.Millisecond) // scrapes at 0, 1, 2 s
		cancel()
		time.Sleep(5 * time.Second) // none now
		got := smp.Stop()           // one more
		if got.Scrapes != 4 || got.Failures != 0 || calls.Load() != 4 {
			t.Errorf("scrapes %d failures %d calls %d, want 4, 0, 4", got.Scrapes, got.Failures, calls.Load())
		}
		if !eq(got.Preemptions, f(0)) {
			t.Errorf("Preemptions = %s, want 0", show(got.Preemptions))
		}
	})
}

// TestSamplerMemoryIsFlat: over a long tier (on a fake clock: 1,000 scrapes) the sampler keeps
// only the latest KeptSnapshots scrapes, and the tier's metrics still count every one.
func TestSamplerMemoryIsFlat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n := calls.Add(1) - 1 // the counter grows 3 per scrape; the running gauge is n mod 10
			return textResponse(r, fmt.Sprintf("# TYPE vllm:generation_tokens_total counter\n"+
				"vllm:generation_tokens_total{model_name=\"m\"} %d\n# TYPE vllm:num_requests_running gauge\n"+
				"vllm:num_requests_running{model_name=\"m\"} %d\n", 3*n, n%10)), nil
		})}
		smp := sm.StartSampler(context.Background(), sm.NewScraper("http://server.invalid/metrics", client, "m"), time.Now(), time.Second)
		time.Sleep(998*time.Second + 500*time.Millisecond)
		got := smp.Stop() // scrapes at 0, 1, ..., 998 s and at Stop: 1,000
		if got.Scrapes != 1000 || got.GenerationTokens == nil || *got.GenerationTokens != 3*999 {
			t.Errorf("scrapes %d, generated %v; want 1000 and %d", got.Scrapes, got.GenerationTokens, 3*999)
		}
		if got.MeanRunning == nil || *got.MeanRunning != 4.5 || *got.MaxRunning != 9 {
			t.Errorf("running mean %v max %v, want 4.5 and 9 over all the scrapes", got.MeanRunning, got.MaxRunning)
		}
		snaps := smp.Snapshots()
		if len(snaps) != sm.KeptSnapshots || snaps[len(snaps)-1].Values[sm.NameGenerationTokens] != 3*999 {
			t.Errorf("kept %d snapshots (want the latest %d)", len(snaps), sm.KeptSnapshots)
		}
	})
}
