package sim_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// testConfig is a small, fast deployment for tests: steps of a few
// milliseconds, no faults, no early stop.
func testConfig() sim.Config {
	c, err := sim.Profile(sim.ProfileMedium)
	if err != nil {
		panic(err)
	}
	c.MaxNumSeqs = 16
	c.KVCacheTokens = 1 << 16
	c.MaxBatchedTokens = 4096
	c.MaxModelLen = 4096
	c.StepBase = 2 * time.Millisecond
	c.StepPerSeq = 0
	c.StepPerKVToken = 0
	c.PrefillRate = 1e7
	c.PrefixCacheBlocks = 0
	return c
}

// start serves cfg on loopback for the duration of the test.
func start(t testing.TB, cfg sim.Config) *sim.Running {
	t.Helper()
	r, err := sim.Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// words returns a prompt of n distinct whitespace-separated words.
func words(n int, tag string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s%d", tag, i)
	}
	return b.String()
}

// event is one SSE message and the moment its data line was read.
type event struct {
	at   time.Time
	data string
}

// streamResult is a raw SSE exchange as a client saw it.
type streamResult struct {
	sent   time.Time
	status int
	raw    []byte
	events []event
	err    error // read error, if the stream broke
}

// postAllIDs sends n non-streamed requests at once, request i to base+path
// with body as req(i) gives them, and returns the response ids in request
// order; a failed request is an error of t (and an empty id).
func postAllIDs(t *testing.T, base string, n int, req func(i int) (path, body string)) []string {
	t.Helper()
	client := newClient()
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path, body := req(i)
			res := post(context.Background(), client, base+path, body)
			var out struct {
				ID string `json:"id"`
			}
			if res.status != http.StatusOK || json.Unmarshal(res.raw, &out) != nil {
				t.Errorf("request %d: status %d %s", i, res.status, res.raw)
			}
			ids[i] = out.ID
		}()
	}
	wg.Wait()
	return ids
}

// post sends body to base+path and reads the whole response, timing every
// SSE message.
func post(ctx context.Context, client *http.Client, url, body string) streamResult {
	var res streamResult
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		res.err = err
		return res
	}
	req.Header.Set("Content-Type", "application/json")
	res.sent = time.Now()
	resp, err := client.Do(req)
	if err != nil {
		res.err = err
		return res
	}
	defer resp.Body.Close()
	res.status = resp.StatusCode
	readEvents(&res, resp.Body)
	return res
}

// readEvents reads a response body to its end into res, timing every SSE
// message.
func readEvents(res *streamResult, body io.Reader) {
	br := bufio.NewReader(body)
	for {
		line, err := br.ReadBytes('\n')
		res.raw = append(res.raw, line...)
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			res.events = append(res.events, event{at: time.Now(), data: string(bytes.TrimRight(d, "\n"))})
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				res.err = err
			}
			return
		}
	}
}

// chunk is the part of a streamed chat or completion chunk the tests read.
type chunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

// output is what a client derives from a stream: the times of
// output-bearing chunks, the text, the finish reason and usage.
type output struct {
	times  []time.Time
	text   string
	finish string
	usage  *[3]int // prompt, completion, total
	done   bool    // saw [DONE]
}

func parseStream(t testing.TB, res streamResult) output {
	t.Helper()
	var o output
	for _, e := range res.events {
		if e.data == "[DONE]" {
			o.done = true
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(e.data), &c); err != nil {
			t.Fatalf("chunk %q: %v", e.data, err)
		}
		if c.Usage != nil {
			o.usage = &[3]int{c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.TotalTokens}
		}
		for _, ch := range c.Choices {
			s := ch.Text
			if ch.Delta.Content != nil {
				s = *ch.Delta.Content
			}
			if s != "" {
				o.times = append(o.times, e.at)
				o.text += s
			}
			if ch.FinishReason != nil {
				o.finish = *ch.FinishReason
			}
		}
	}
	return o
}

// completionBody is a streaming completions request.
func completionBody(prompt string, maxTokens int) string {
	p, _ := json.Marshal(prompt)
	return fmt.Sprintf(`{"model":%q,"prompt":%s,"max_tokens":%d,"stream":true}`, sim.DefaultModelName, p, maxTokens)
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}}
}

// stallProbe measures how late this test process gets to run its
// goroutines: one goroutine naps 1 ms at a time and keeps its largest
// overshoot. The engine times its own steps (Stats.StepLatenessMax), but
// not the goroutines that carry a request in and its tokens out (the
// handler, the client's reader, the test itself); a probe that woke this
// late says that they may have too.
type stallProbe struct {
	base   time.Time
	worst  atomic.Int64 // nanoseconds
	napped atomic.Int64 // when the nap in progress began, in nanoseconds from base
	stop   chan struct{}
	done   chan struct{}
}

const probeNap = time.Millisecond

// startStallProbe runs a probe until the end of t.
func startStallProbe(t testing.TB) *stallProbe {
	p := &stallProbe{base: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			t0 := time.Since(p.base)
			p.napped.Store(int64(t0))
			time.Sleep(probeNap)
			if late := time.Since(p.base) - t0 - probeNap; int64(late) > p.worst.Load() {
				p.worst.Store(int64(late))
			}
		}
	}()
	t.Cleanup(func() { close(p.stop); <-p.done })
	return p
}

// maxLate is the largest lateness seen so far, the nap in progress included
// (after a stall, the caller may run before the probe does).
func (p *stallProbe) maxLate() time.Duration {
	ongoing := time.Since(p.base) - time.Duration(p.napped.Load()) - probeNap
	return max(time.Duration(p.worst.Load()), ongoing)
}

// timingChecks collects the failures of a test's wall-clock assertions.
// They are errors, unless the probe saw a goroutine run later than limit
// (the part of the test's slack that one scheduling stall may take): then
// the machine could have caused them, and the test skips, saying why. On
// a machine that keeps time, every failure is reported.
type timingChecks struct {
	t     *testing.T
	probe *stallProbe
	limit time.Duration
	fails []string
}

func newTimingChecks(t *testing.T, limit time.Duration) *timingChecks {
	return &timingChecks{t: t, probe: startStallProbe(t), limit: limit}
}

func (c *timingChecks) errorf(format string, args ...any) {
	c.fails = append(c.fails, fmt.Sprintf(format, args...))
}

// report ends the checks.
func (c *timingChecks) report() {
	c.t.Helper()
	if len(c.fails) == 0 {
		return
	}
	if m := c.probe.maxLate(); m > c.limit {
		c.t.Skipf("this machine ran goroutines up to %v late (more than the %v the test's slack allows), so these timing failures may be the machine's: %s",
			m, c.limit, strings.Join(c.fails, "; "))
	}
	for _, f := range c.fails {
		c.t.Error(f)
	}
}
