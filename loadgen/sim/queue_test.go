package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// queueSlack is the upper-bound allowance of the queue's wall-clock tests
// (delivery, scheduling on a shared 2-core machine under -race); lower
// bounds are exact.
const queueSlack = 150 * time.Millisecond

func startQueue(t *testing.T, cfg sim.QueueConfig) *sim.RunningQueue {
	t.Helper()
	r, err := sim.StartQueue(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("StartQueue: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

func queueConfig(c int, d, first time.Duration, tokens int) sim.QueueConfig {
	cfg := sim.DefaultQueueConfig()
	cfg.Servers, cfg.Service, cfg.FirstToken, cfg.OutputTokens = c, d, first, tokens
	return cfg
}

// queueBody is a completions request; max_tokens is set to show that it is
// ignored.
func queueBody(model string, stream, usage bool) string {
	so := ""
	if usage {
		so = `,"stream_options":{"include_usage":true}`
	}
	return fmt.Sprintf(`{"model":%q,"prompt":"one two three","max_tokens":3,"stream":%v%s}`, model, stream, so)
}

// doneAt is when the client read [DONE].
func doneAt(t *testing.T, res streamResult) time.Time {
	t.Helper()
	for _, e := range res.events {
		if e.data == "[DONE]" {
			return e.at
		}
	}
	t.Fatalf("no [DONE] in %q", res.raw)
	return time.Time{}
}

// TestQueueFIFOTiming: c=2, D=200ms, four requests at once. Two are served
// at once and end at about D, the other two start when those end and end at
// about 2D; first tokens come FirstToken into each service and the others
// are evenly spaced up to its end.
func TestQueueFIFOTiming(t *testing.T) {
	const d, first, n = 200 * time.Millisecond, 20 * time.Millisecond, 8
	cfg := queueConfig(2, d, first, n)
	run := startQueue(t, cfg)
	client := newClient()
	checks := newTimingChecks(t, queueSlack/2)

	results := make([]streamResult, 4)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = post(context.Background(), client, run.URL()+"/completions", queueBody(cfg.ModelName, true, i%2 == 0))
		}()
	}
	wg.Wait()

	type timing struct{ first, last, done time.Duration }
	var ts []timing
	for i, res := range results {
		if res.err != nil || res.status != http.StatusOK {
			t.Fatalf("request %d: status %d, %v", i, res.status, res.err)
		}
		o := parseStream(t, res)
		if len(o.times) != n || o.finish != "length" || !o.done {
			t.Fatalf("request %d: %d tokens, finish %q, done %v; want %d, length, [DONE]", i, len(o.times), o.finish, o.done, n)
		}
		if i%2 == 0 && (o.usage == nil || *o.usage != [3]int{3, n, 3 + n}) {
			t.Errorf("request %d: usage %v, want [3 %d %d]", i, o.usage, n, 3+n)
		}
		if i%2 == 1 && o.usage != nil {
			t.Errorf("request %d: usage chunk without include_usage", i)
		}
		ts = append(ts, timing{o.times[0].Sub(t0), o.times[n-1].Sub(t0), doneAt(t, res).Sub(t0)})
	}
	slices.SortFunc(ts, func(a, b timing) int { return int(a.done - b.done) })
	for i, tm := range ts {
		wave := time.Duration(i/2) * d // the service of requests 2 and 3 starts after D
		t.Logf("request ending %d: first token %v, last %v, [DONE] %v", i, tm.first, tm.last, tm.done)
		// Lower bounds are exact: every arrival is after t0, and the second
		// pair starts when the first pair ends.
		if tm.first < wave+first || tm.last < wave+d || tm.done < wave+d {
			t.Errorf("request ending %d: first token %v, end %v; must be at least %v and %v", i, tm.first, tm.done, wave+first, wave+d)
		}
		if tm.first > wave+first+queueSlack || tm.done > wave+d+queueSlack {
			checks.errorf("request ending %d: first token %v, end %v; want at most %v and %v", i, tm.first, tm.done, wave+first+queueSlack, wave+d+queueSlack)
		}
		// Tokens spread over D - FirstToken.
		if span := tm.last - tm.first; span < d-first-queueSlack/3 || span > d-first+queueSlack/3 {
			checks.errorf("request ending %d: first to last token %v, want about %v", i, span, d-first)
		}
	}
	st := run.Queue().Stats()
	t.Logf("server-side max lateness of a token write: %v", st.MaxLateness)
	// Typically about 0.1 ms (nanosleep) on an idle Linux machine; a loaded
	// one adds its scheduling delays.
	if st.MaxLateness > 20*time.Millisecond {
		checks.errorf("a token was written %v after it was due", st.MaxLateness)
	}
	checks.report()
}

// TestQueueMatchesSimulateQueue sends staggered requests and checks every
// first token against SimulateQueue run on the send times: arrivals are no
// earlier than the sends, and starts only move later with later arrivals,
// so the model's times are exact lower bounds.
func TestQueueMatchesSimulateQueue(t *testing.T) {
	cfg := queueConfig(2, 150*time.Millisecond, 10*time.Millisecond, 4)
	run := startQueue(t, cfg)
	client := newClient()
	checks := newTimingChecks(t, queueSlack/2)
	offsets := []time.Duration{0, 10, 20, 30, 40, 250, 260, 500, 510, 520}
	for i := range offsets {
		offsets[i] *= time.Millisecond
	}
	sent := make([]time.Duration, len(offsets))
	results := make([]streamResult, len(offsets))
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, off := range offsets {
		time.Sleep(time.Until(t0.Add(off)))
		sent[i] = time.Since(t0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = post(context.Background(), client, run.URL()+"/completions", queueBody(cfg.ModelName, true, false))
		}()
	}
	wg.Wait()
	predicted := make([]sim.QueueResult, len(offsets))
	if err := sim.SimulateQueue(cfg, sent, func(r sim.QueueResult) bool { predicted[r.Index] = r; return false }); err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		o := parseStream(t, res)
		if len(o.times) != cfg.OutputTokens {
			t.Fatalf("request %d: %d tokens", i, len(o.times))
		}
		got, want := o.times[0].Sub(t0), predicted[i].First
		t.Logf("request %d sent at %v: first token %v, model %v", i, sent[i], got, want)
		if got < want {
			t.Errorf("request %d: first token at %v, before the model's %v", i, got, want)
		}
		if got > want+queueSlack {
			checks.errorf("request %d: first token at %v, model %v", i, got, want)
		}
	}
	checks.report()
}

func TestQueueProtocol(t *testing.T) {
	cfg := queueConfig(4, 60*time.Millisecond, 10*time.Millisecond, 6)
	run := startQueue(t, cfg)
	client := newClient()
	ctx := context.Background()
	want := "the model is a simulated deployment"

	// Chat: a role chunk with the first token, no usage key.
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi there"}],"max_completion_tokens":1,"stream":true,"stream_options":{"include_usage":true}}`, cfg.ModelName)
	res := post(ctx, client, run.URL()+"/chat/completions", body)
	o := parseStream(t, res)
	if res.status != http.StatusOK || o.text != want || o.finish != "length" || !o.done {
		t.Fatalf("chat: status %d, text %q, finish %q, done %v", res.status, o.text, o.finish, o.done)
	}
	if !strings.Contains(res.events[0].data, `"delta":{"role":"assistant","content":""}`) || !strings.Contains(res.events[0].data, `"object":"chat.completion.chunk"`) {
		t.Errorf("chat: first event %s, want the role chunk", res.events[0].data)
	}
	if o.usage == nil || *o.usage != [3]int{2 + sim.MessageOverheadTokens, 6, 2 + sim.MessageOverheadTokens + 6} {
		t.Errorf("chat usage %v", o.usage)
	}

	// Completions: one token per chunk, usage:null on each.
	res = post(ctx, client, run.URL()+"/completions", queueBody(cfg.ModelName, true, false))
	o = parseStream(t, res)
	if o.text != want || len(res.events) != 7 || !strings.Contains(res.events[0].data, `"usage":null`) {
		t.Errorf("completions stream: text %q, %d events", o.text, len(res.events))
	}

	// Not streaming: one JSON body at the end of service.
	start := time.Now()
	resp, err := client.Post(run.URL()+"/completions", "application/json", strings.NewReader(queueBody(cfg.ModelName, false, false)))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if el := time.Since(start); el < cfg.Service {
		t.Errorf("non-streaming response after %v, before the end of service", el)
	}
	var full struct {
		Choices []struct {
			Text         string `json:"text"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &full); err != nil || len(full.Choices) != 1 || full.Choices[0].Text != want ||
		full.Choices[0].FinishReason != "length" || full.Usage.CompletionTokens != 6 || full.Usage.PromptTokens != 3 {
		t.Errorf("non-streaming: %v: %s", err, raw)
	}

	// Errors, models, health.
	for _, tc := range []struct {
		method, path, body string
		status             int
		contains           string
	}{
		{"POST", "/completions", `{"model":"other","prompt":"x"}`, 404, "does not exist"},
		{"POST", "/completions", `{`, 400, "BadRequestError"},
		{"POST", "/completions", fmt.Sprintf(`{"model":%q,"prompt":"x","max_tokens":0}`, cfg.ModelName), 400, "max_tokens"},
		{"POST", "/chat/completions", fmt.Sprintf(`{"model":%q}`, cfg.ModelName), 400, "messages"},
		{"GET", "/completions", "", 405, "not allowed"},
		{"GET", "/nowhere", "", 404, "no route"},
		{"GET", "/models", "", 200, `"id":"` + cfg.ModelName + `"`},
	} {
		req, _ := http.NewRequest(tc.method, run.URL()+tc.path, strings.NewReader(tc.body))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.contains) {
			t.Errorf("%s %s: %d %s; want %d containing %q", tc.method, tc.path, resp.StatusCode, b, tc.status, tc.contains)
		}
	}
	resp, err = client.Get("http://" + run.Addr() + "/health")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("health: %v %v", resp, err)
	}
	if resp != nil {
		resp.Body.Close()
	}
}

// queueMetrics returns the /metrics text.
func queueMetrics(t *testing.T, client *http.Client, run *sim.RunningQueue) string {
	t.Helper()
	resp, err := client.Get("http://" + run.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestQueueLimitAndMetrics: one slot, one waiting place: a third request is
// answered 429 at once; /metrics shows one running and one waiting.
func TestQueueLimitAndMetrics(t *testing.T) {
	cfg := queueConfig(1, 400*time.Millisecond, 20*time.Millisecond, 4)
	cfg.QueueLimit = 1
	run := startQueue(t, cfg)
	q := run.Queue()
	client := newClient()
	ctx := context.Background()
	var wg sync.WaitGroup
	results := make([]streamResult, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = post(ctx, client, run.URL()+"/completions", queueBody(cfg.ModelName, true, false))
		}()
		waitFor(t, 5*time.Second, "the request to be admitted", func() bool { return q.Stats().Received == int64(i+1) && q.Stats().Running+q.Stats().Waiting == i+1 })
	}
	start := time.Now()
	resp, err := client.Post(run.URL()+"/completions", "application/json", strings.NewReader(queueBody(cfg.ModelName, true, false)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	el := time.Since(start)
	var e struct {
		Error struct {
			Type string `json:"type"`
			Code int    `json:"code"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" ||
		json.Unmarshal(b, &e) != nil || e.Error.Code != 429 || e.Error.Type != "RateLimitError" {
		t.Errorf("third request: %d, Retry-After %q, body %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	if el > queueSlack {
		t.Logf("the 429 took %v (machine slow?)", el)
	}
	m := queueMetrics(t, client, run)
	l := `{model_name="` + cfg.ModelName + `"}`
	for _, line := range []string{
		"vllm:num_requests_running" + l + " 1",
		"vllm:num_requests_waiting" + l + " 1",
		"sim_requests_received_total" + l + " 3",
		"sim_requests_rejected_total" + l + " 1",
		`vllm:request_success_total{finished_reason="length",model_name="` + cfg.ModelName + `"} 0`,
	} {
		if !strings.Contains(m, line+"\n") {
			t.Errorf("/metrics lacks %q:\n%s", line, m)
		}
	}
	wg.Wait()
	for i, res := range results {
		if o := parseStream(t, res); res.status != http.StatusOK || !o.done {
			t.Errorf("request %d: %d, done %v", i, res.status, o.done)
		}
	}
	waitFor(t, 5*time.Second, "both services to end", func() bool { return q.Stats().Completed == 2 })
	if st := q.Stats(); st.Running != 0 || st.Waiting != 0 || st.Rejected != 1 || st.Received != 3 {
		t.Errorf("stats at the end: %+v", st)
	}
}

// TestQueueClientsLeaving: a client that leaves while waiting frees its
// place; one that leaves during its service keeps its slot to the end.
func TestQueueClientsLeaving(t *testing.T) {
	const d, first = 300 * time.Millisecond, 20 * time.Millisecond
	cfg := queueConfig(1, d, first, 4)
	run := startQueue(t, cfg)
	q := run.Queue()
	client := newClient()
	checks := newTimingChecks(t, queueSlack/2)

	// A is served; B waits, then leaves; C, sent after B left, starts when
	// A ends.
	tA := time.Now()
	doneA := make(chan streamResult, 1)
	go func() {
		doneA <- post(context.Background(), client, run.URL()+"/completions", queueBody(cfg.ModelName, true, false))
	}()
	waitFor(t, 5*time.Second, "A in service", func() bool { return q.Stats().Running == 1 })
	ctxB, cancelB := context.WithCancel(context.Background())
	doneB := make(chan streamResult, 1)
	go func() { doneB <- post(ctxB, client, run.URL()+"/completions", queueBody(cfg.ModelName, true, false)) }()
	waitFor(t, 5*time.Second, "B waiting", func() bool { return q.Stats().Waiting == 1 })
	cancelB()
	<-doneB
	waitFor(t, 5*time.Second, "B to leave", func() bool { return q.Stats().Abandoned == 1 && q.Stats().Waiting == 0 })
	resC := post(context.Background(), client, run.URL()+"/completions", queueBody(cfg.ModelName, true, false))
	oC := parseStream(t, resC)
	if len(oC.times) != 4 {
		t.Fatalf("C: %d tokens", len(oC.times))
	}
	if got := oC.times[0].Sub(tA); got < d+first {
		t.Errorf("C's first token %v after A was sent, before A's end + first token (%v)", got, d+first)
	} else if got > d+first+queueSlack {
		checks.errorf("C's first token %v after A was sent; want about %v (B's place is free)", got, d+first)
	}
	<-doneA

	// D leaves during its service; E, sent right after, waits for D's slot.
	tD := time.Now()
	ctxD, cancelD := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctxD, http.MethodPost, run.URL()+"/completions", strings.NewReader(queueBody(cfg.ModelName, true, false)))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil { // D's first byte: its service has started
		t.Fatal(err)
	}
	cancelD()
	resp.Body.Close()
	resE := post(context.Background(), client, run.URL()+"/completions", queueBody(cfg.ModelName, true, false))
	oE := parseStream(t, resE)
	if len(oE.times) != 4 {
		t.Fatalf("E: %d tokens", len(oE.times))
	}
	if got := oE.times[0].Sub(tD); got < d+first {
		t.Errorf("E's first token %v after D was sent: D's slot was released early (want ≥ %v)", got, d+first)
	} else if got > d+first+queueSlack {
		checks.errorf("E's first token %v after D was sent; want about %v", got, d+first)
	}
	waitFor(t, 5*time.Second, "all services to end", func() bool { return q.Stats().Completed == 4 })
	checks.report()
}

// TestQueueClose: Close fails the running and the waiting stream promptly.
func TestQueueClose(t *testing.T) {
	cfg := queueConfig(1, 10*time.Second, 10*time.Millisecond, 4)
	run, err := sim.StartQueue(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	q := run.Queue()
	client := newClient()
	results := make(chan streamResult, 3)
	for i := range 3 {
		stream := i < 2
		go func() {
			results <- post(context.Background(), client, run.URL()+"/completions", queueBody(cfg.ModelName, stream, false))
		}()
		waitFor(t, 5*time.Second, "the request to be admitted", func() bool { return q.Stats().Running+q.Stats().Waiting == i+1 })
	}
	start := time.Now()
	if err := run.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for range 3 {
		res := <-results
		switch {
		case res.status == http.StatusOK && strings.Contains(string(res.raw), "shut down") && strings.HasSuffix(string(res.raw), "data: [DONE]\n\n"):
		case res.status == http.StatusServiceUnavailable && strings.Contains(string(res.raw), "shut down"):
		default:
			t.Errorf("after Close: status %d, %q, %v", res.status, res.raw, res.err)
		}
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("streams ended %v after Close", el)
	}
	if err := run.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestQueueConfig(t *testing.T) {
	def := sim.DefaultQueueConfig()
	if err := def.Validate(); err != nil {
		t.Fatalf("default: %v", err)
	}
	if got, want := def.String(), "mdc(c=4, D=400ms, first token 20ms, 16 tokens)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	bad := sim.QueueConfig{Servers: 0, Service: -time.Second, FirstToken: -1, OutputTokens: 0, QueueLimit: -1}
	err := bad.Validate()
	if err == nil {
		t.Fatal("bad config validates")
	}
	for _, name := range []string{"model-name", "queue-servers", "queue-service", "queue-first-token", "queue-output-tokens", "queue-queue-limit"} {
		if !strings.Contains(err.Error(), "\n"+name+":") && !strings.HasPrefix(err.Error(), name+":") {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
	if _, err := sim.NewQueue(bad); err == nil {
		t.Error("NewQueue accepts a bad config")
	}
	if _, err := sim.StartQueue(bad, "127.0.0.1:0"); err == nil {
		t.Error("StartQueue accepts a bad config")
	}
	one := queueConfig(1, time.Second, 10*time.Millisecond, 1)
	if err := one.Validate(); err == nil || !strings.Contains(err.Error(), "first-token") {
		t.Errorf("one token before the end of service: %v", err)
	}
	one.FirstToken = time.Second
	if err := one.Validate(); err != nil {
		t.Errorf("one token at the end of service: %v", err)
	}

	// The declared parameters: their defaults are DefaultQueueConfig, each named as its input.
	c := sim.QueueConfig{}
	ps := c.Params()
	for i := range ps {
		if err := ps[i].Set(ps[i].DefaultText); err != nil {
			t.Fatalf("%s = %s: %v", ps[i].Field, ps[i].DefaultText, err)
		}
	}
	if c != def {
		t.Errorf("the parameters' defaults give %+v, want %+v", c, def)
	}
	given := map[string]string{"queue-servers": "8", "queue-service": "1s", "queue-first-token": "50ms", "queue-queue-limit": "10"}
	if errs := param.Apply(ps, func(f string) ([]string, bool) {
		if v, ok := given[f]; ok {
			return []string{v}, true
		}
		return nil, false
	}); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got, want := c.String(), "mdc(c=8, D=1s, first token 50ms, 16 tokens, queue limit 10)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for _, bad := range []struct{ name, value, want string }{
		{"queue-servers", "four", `queue-servers: "four": want an integer`},
		{"queue-service", "1", `queue-service: "1": want a duration such as 400ms or 1s`},
	} {
		for i := range ps {
			if ps[i].Field != bad.name {
				continue
			}
			if err := ps[i].Set(bad.value); err == nil || field.Of(err) == nil || !strings.HasPrefix(err.Error(), bad.want) {
				t.Errorf("%s = %q: %v, want %q…", bad.name, bad.value, err, bad.want)
			}
		}
	}
	c.Servers = 0
	if errs := c.Check(); len(errs) != 1 || field.Of(errs[0]).Name != "queue-servers" {
		t.Errorf("no server: %v", errs)
	}
}

// Serve an M/D/c queue on a free loopback port and ask for a completion:
// every answer has OutputTokens tokens, whatever max_tokens says, and comes
// at the end of its service.
func ExampleStartQueue() {
	cfg := sim.DefaultQueueConfig()
	cfg.Service, cfg.OutputTokens = 50*time.Millisecond, 5
	run, err := sim.StartQueue(cfg, "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer run.Close()
	fmt.Println(cfg)

	body := `{"model":"loadcurve-mdc","prompt":"Write two words","max_tokens":2}`
	resp, err := http.Post(run.URL()+"/completions", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		panic(err)
	}
	fmt.Printf("%q, %d tokens\n", out.Choices[0].Text, out.Usage.CompletionTokens)
	// Output:
	// mdc(c=4, D=50ms, first token 20ms, 5 tokens)
	// "the model is a simulated", 5 tokens
}
