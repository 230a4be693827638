package fifo_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/scripts/fifoserver/fifo"
)

// start serves cfg on a loopback port; stop closes the server and returns its log read back.
func start(t *testing.T, cfg fifo.Config) (url string, stop func() *fifo.Log) {
	t.Helper()
	var log bytes.Buffer
	s, err := fifo.New(cfg, &log)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(s)
	hs.Listener = s.Listener(hs.Listener)
	hs.Config.ConnContext = s.ConnContext
	hs.Start()
	return hs.URL, func() *fifo.Log {
		hs.Close()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		l, err := fifo.ReadLog(&log, "log")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
}

// stream is what a client read of one streamed response.
type stream struct {
	content, usage int // content chunks; completion_tokens of the usage chunk
	finish         string
	done           bool
}

func post(ctx context.Context, url, id, body string) (stream, error) {
	var st stream
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return st, err
	}
	req.Header.Set("X-Request-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return st, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			st.done = true
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return st, fmt.Errorf("chunk %q: %w", data, err)
		}
		for _, c := range chunk.Choices {
			if c.Delta.Content != "" {
				st.content++
			}
			if c.FinishReason != nil {
				st.finish = *c.FinishReason
			}
		}
		if chunk.Usage != nil {
			st.usage = chunk.Usage.CompletionTokens
		}
	}
	return st, sc.Err()
}

const chatBody = `{"model":"fifo","messages":[{"role":"user","content":"one two three"}],"max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`

// fifoStarts recomputes the starts of a FIFO queue with c slots from the log's arrivals and
// logical services: each request takes the slot that frees first, at that moment or at its
// arrival.
func fifoStarts(reqs []fifo.LogLine, c int) []float64 {
	free := make([]float64, c)
	starts := make([]float64, len(reqs))
	for i, r := range reqs {
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		starts[i] = math.Max(free[k], r.Arrival)
		free[k] = starts[i] + r.Service
	}
	return starts
}

// A burst larger than the slots is served in arrival order, each request starting when a slot
// frees at its logical end, and streams its tokens with the usage and [DONE]; the log says so.
func TestQueueIsFIFO(t *testing.T) {
	cfg := fifo.Config{Model: "fifo", Slots: 2, Service: 60 * time.Millisecond, FirstToken: 10 * time.Millisecond, Tokens: 4}
	url, stop := start(t, cfg)
	const n = 7
	var wg sync.WaitGroup
	got := make([]stream, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = post(context.Background(), url, fmt.Sprintf("t0-%d", i), fmt.Sprintf(chatBody, 100))
		}()
	}
	wg.Wait()
	l := stop()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("request %d: %v", i, errs[i])
		}
		if g := got[i]; g.content != 4 || g.usage != 4 || !g.done || g.finish != "length" {
			t.Errorf("request %d streamed %+v, want 4 content chunks, usage 4, finish length and [DONE]", i, g)
		}
	}
	if len(l.Requests) != n {
		t.Fatalf("%d requests logged, want %d", len(l.Requests), n)
	}
	starts := fifoStarts(l.Requests, cfg.Slots)
	for i, r := range l.Requests {
		if !r.OK() || r.Start == nil || r.FirstDue == nil || r.End == nil || l.ByID[r.ID] != &l.Requests[i] {
			t.Fatalf("request %d logged %+v, want ok with every moment and its id", i, r)
		}
		if math.Abs(*r.Start-starts[i]) > 1e-9 {
			t.Errorf("request %d (seq %d) started at %.6f s, the FIFO rule says %.6f", i, r.Seq, *r.Start, starts[i])
		}
		if r.RX == nil || *r.RX > r.Arrival || r.Received > r.Arrival || *r.FirstWrite < *r.FirstDue || *r.First < *r.FirstWrite || *r.End < *r.Start+r.Service {
			t.Errorf("request %d: rx %v, received %.6f, arrival %.6f, first due %.6f, written %.6f, flushed %.6f, end %.6f: a moment missing or out of order",
				i, r.RX, r.Received, r.Arrival, *r.FirstDue, *r.FirstWrite, *r.First, *r.End)
		}
		if r.Service != 0.06 || r.Tokens != 4 {
			t.Errorf("request %d: service %v s, %d tokens, want 0.06 and 4", i, r.Service, r.Tokens)
		}
	}
	// Seven requests on two slots of 60 ms: the last starts three services after the first.
	if d := *l.Requests[n-1].Start - *l.Requests[0].Start; d < 0.18-1e-3 {
		t.Errorf("the last of the burst started %.3f s after the first, want ≥ 0.18 (three services)", d)
	}
}

// Spread output lengths are drawn in arrival order from the seed, cut to max_tokens (finish
// reason length; stop otherwise), and the service is the first token plus a token interval per
// further token.
func TestSpreadLengthsFollowTheSeed(t *testing.T) {
	cfg := fifo.Config{Model: "fifo", Slots: 4, FirstToken: time.Millisecond, TokenInterval: time.Millisecond,
		OutputDist: "exponential", OutputMean: 6, MaxOutput: 40, Seed: 3}
	lengths := func(maxTokens int) ([]int, []stream) {
		url, stop := start(t, cfg)
		var got []stream
		for i := range 12 {
			st, err := post(context.Background(), url, fmt.Sprint(i), fmt.Sprintf(chatBody, maxTokens))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, st)
		}
		l := stop()
		var out []int
		for _, r := range l.Requests {
			out = append(out, r.Tokens)
			if want := 0.001 + 0.001*float64(r.Tokens-1); math.Abs(r.Service-want) > 1e-12 {
				t.Errorf("%d tokens served in %v s, want %v", r.Tokens, r.Service, want)
			}
		}
		return out, got
	}
	a, streams := lengths(1000)
	b, _ := lengths(1000)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("the same seed drew %v and %v", a, b)
	}
	distinct := map[int]bool{}
	for i, n := range a {
		distinct[n] = true
		if streams[i].content != n || streams[i].usage != n || streams[i].finish != "stop" {
			t.Errorf("request %d: %d tokens drawn, streamed %+v, want as many chunks and finish stop", i, n, streams[i])
		}
	}
	if len(distinct) < 3 {
		t.Errorf("12 exponential lengths of mean 6 took %d values (%v): not spread", len(distinct), a)
	}
	cut, streams := lengths(2)
	for i, n := range cut {
		want := min(a[i], 2)
		if n != want || (a[i] > 2) != (streams[i].finish == "length") {
			t.Errorf("request %d with max_tokens 2: %d tokens, finish %q; drawn %d", i, n, streams[i].finish, a[i])
		}
	}
}

// A client that leaves while its request waits takes it out of the queue: the next one starts
// when the slot frees, as if it had never come. (The service is long so that the server sees the
// client gone before it ends, on a busy machine too.)
func TestClientLeavesWhileWaiting(t *testing.T) {
	cfg := fifo.Config{Model: "fifo", Slots: 1, Service: time.Second, FirstToken: 10 * time.Millisecond, Tokens: 2}
	url, stop := start(t, cfg)
	body := fmt.Sprintf(chatBody, 10)
	first := make(chan error, 1)
	go func() { _, err := post(context.Background(), url, "a", body); first <- err }()
	time.Sleep(30 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Millisecond)
	defer cancel()
	if _, err := post(ctx, url, "b", body); err == nil {
		t.Fatal("b, canceled while it waited, completed")
	}
	if _, err := post(context.Background(), url, "c", body); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	l := stop()
	a, b, c := l.ByID["a"], l.ByID["b"], l.ByID["c"]
	if a == nil || b == nil || c == nil {
		t.Fatalf("logged %+v, want a, b and c", l.Requests)
	}
	if b.Outcome != fifo.OutcomeLeftWaiting || b.Start != nil {
		t.Errorf("b logged %+v, want it left while waiting, never started", *b)
	}
	if !c.OK() || math.Abs(*c.Start-(*a.Start+a.Service)) > 1e-9 {
		t.Errorf("c started at %v, want at a's end %v", *c.Start, *a.Start+a.Service)
	}
}
