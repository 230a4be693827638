package sim_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/loadcurve/loadcurve/loadgen/sim"
	sm "github.com/loadcurve/loadcurve/measure/servermetrics"
)

// startCluster serves a cluster on loopback for the duration of the test.
func startCluster(t testing.TB, cfg sim.Config, replicas int, policy string) *sim.RunningCluster {
	t.Helper()
	r, err := sim.StartCluster(cfg, replicas, policy, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("StartCluster: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// received returns every replica's count of completion requests.
func received(c *sim.Cluster) []int64 {
	out := make([]int64, c.Replicas())
	for i, st := range c.ReplicaStats() {
		out[i] = st.RequestsReceived
	}
	return out
}

func TestClusterValidate(t *testing.T) {
	cfg := testConfig()
	for _, tt := range []struct {
		name     string
		cfg      sim.Config
		replicas int
		policy   string
		want     []string // substrings of the error
	}{
		{"no replicas", cfg, 0, "", []string{"replicas: 0, must be between 1 and 256"}},
		{"too many", cfg, sim.MaxReplicas + 1, sim.BalanceRandom, []string{"replicas: 257"}},
		{"unknown policy", cfg, 2, "least-loaded", []string{`balance policy "least-loaded": unknown (known: round-robin, random)`}},
		{"everything", sim.Config{}, -1, "RR", []string{"sim config: model-name", "replicas: -1", `policy "RR"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := sim.NewCluster(tt.cfg, tt.replicas, tt.policy)
			if err == nil {
				c.Close()
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := sim.StartCluster(cfg, 0, "", "127.0.0.1:0"); err == nil {
		t.Error("StartCluster with 0 replicas: no error")
	}

	c, err := sim.NewCluster(cfg, 3, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Policy() != sim.BalanceRoundRobin || c.Replicas() != 3 || c.Config() != cfg {
		t.Errorf("policy %q, %d replicas, config %+v", c.Policy(), c.Replicas(), c.Config())
	}
	if !slices.Equal(sim.BalancePolicies(), []string{sim.BalanceRoundRobin, sim.BalanceRandom}) {
		t.Errorf("BalancePolicies() = %q", sim.BalancePolicies())
	}
	// Replica 0 keeps the seed; the others get their own, derived from it.
	seeds := map[int64]bool{}
	for i := range c.Replicas() {
		rc := c.Replica(i).Config()
		seeds[rc.Seed] = true
		rc.Seed = cfg.Seed
		if rc != cfg {
			t.Errorf("replica %d config differs from the cluster's beyond its seed", i)
		}
	}
	if c.Replica(0).Config().Seed != cfg.Seed || len(seeds) != 3 {
		t.Errorf("replica seeds %v, want 3 distinct, replica 0's %d", seeds, cfg.Seed)
	}

	one := cfg.TheoreticalPeakOutput(64, 32)
	if got := c.TheoreticalPeakOutput(64, 32); one <= 0 || math.Abs(got-3*one) > 1e-9*one {
		t.Errorf("cluster peak %v, want 3 × %v", got, one)
	}
	if got := cfg.TheoreticalClusterPeakOutput(0, 64, 32); got != 0 {
		t.Errorf("peak of 0 replicas = %v, want 0", got)
	}

	// After Close the cluster is unhealthy and refuses requests.
	c.Close()
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodGet, "/health", nil),
		httptest.NewRequest(http.MethodPost, "/v1/completions", strings.NewReader(`{"prompt":"a","max_tokens":1}`)),
	} {
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%s %s after Close: %d, want 503", req.Method, req.URL.Path, rec.Code)
		}
	}
}

// TestClusterRoundRobin: 30 requests, sent at once, land 10 on each of 3
// replicas, whatever order they arrive in; response ids stay unique
// although every replica counts its own requests from 0.
func TestClusterRoundRobin(t *testing.T) {
	r := startCluster(t, testConfig(), 3, sim.BalanceRoundRobin)
	const n = 30
	ids := postAllIDs(t, r.URL(), n, func(i int) (string, string) {
		if i%2 == 1 {
			return "/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":3}`
		}
		return "/completions", fmt.Sprintf(`{"prompt":%q,"max_tokens":3}`, words(5, "rr"))
	})
	c := r.Cluster()
	for i, st := range c.ReplicaStats() {
		if st.RequestsReceived != n/3 || st.RequestsSucceeded != n/3 || st.GeneratedTokens != 3*n/3 {
			t.Errorf("replica %d: received %d, succeeded %d, generated %d; want %d, %d, %d",
				i, st.RequestsReceived, st.RequestsSucceeded, st.GeneratedTokens, n/3, n/3, 3*n/3)
		}
	}
	slices.Sort(ids)
	if len(slices.Compact(ids)) != n {
		t.Errorf("response ids not unique: %q", ids)
	}
}

// TestClusterRandomIsSeeded: the random policy reaches every replica, and
// the same seed gives the same assignment of the same arrivals.
func TestClusterRandomIsSeeded(t *testing.T) {
	const replicas, n = 3, 30
	assign := func(seed int64) []int {
		cfg := testConfig()
		cfg.Seed = seed
		c, err := sim.NewCluster(cfg, replicas, sim.BalanceRandom)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var seq []int
		prev := received(c)
		for k := range n {
			rec := httptest.NewRecorder()
			c.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/completions", strings.NewReader(`{"prompt":"a b","max_tokens":1}`)))
			if rec.Code != http.StatusOK {
				t.Fatalf("seed %d request %d: status %d %s", seed, k, rec.Code, rec.Body)
			}
			now := received(c)
			for i := range now {
				if now[i] != prev[i] {
					seq = append(seq, i)
				}
			}
			prev = now
		}
		if len(seq) != n {
			t.Fatalf("seed %d: %d requests counted by the replicas, want %d", seed, len(seq), n)
		}
		return seq
	}
	a, b, other := assign(7), assign(7), assign(8)
	t.Logf("seed 7: %v; seed 8: %v", a, other)
	if !slices.Equal(a, b) {
		t.Errorf("seed 7 assigned %v, then %v", a, b)
	}
	if slices.Equal(a, other) {
		t.Errorf("seeds 7 and 8 assigned the same replicas %v", a)
	}
	rr := true
	for k, i := range a {
		rr = rr && i == k%replicas
	}
	counts := make([]int, replicas)
	for _, i := range a {
		counts[i]++
	}
	if rr || slices.Contains(counts, 0) {
		t.Errorf("assignment %v (per replica %v): want every replica, not in round-robin order", a, counts)
	}
}

// TestClusterMetrics: the cluster's /metrics, read by servermetrics, sums
// the replicas' own expositions (KV-cache usage averaged). The state is
// held still: one sequence a replica, reserving its KV up front, decodes a
// long output while the others wait.
func TestClusterMetrics(t *testing.T) {
	cfg := testConfig()
	cfg.MaxNumSeqs = 1
	cfg.Preempt = false
	r := startCluster(t, cfg, 3, sim.BalanceRoundRobin)
	c := r.Cluster()
	client := newClient()
	label := `model_name="` + cfg.ModelName + `"`

	// Three short requests, one a replica, run to the end.
	for i := range 3 {
		if res := post(context.Background(), client, r.URL()+"/completions", completionBody(words(10+i, "m"), 4)); res.status != http.StatusOK {
			t.Fatalf("short request %d: status %d", i, res.status)
		}
	}
	// Seven long ones: requests 3..9 go to replicas 0,1,2,0,1,2,0, so
	// replica 0 runs one and queues two, the others run one and queue one.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for i := range 7 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			post(ctx, client, r.URL()+"/completions", completionBody(words(20+i, "L"), 2000))
		}()
	}
	sum := func() (s sim.Stats) {
		for _, st := range c.ReplicaStats() {
			s.Running += st.Running
			s.Waiting += st.Waiting
			s.KVUsedTokens += st.KVUsedTokens
			s.KVCapacityTokens += st.KVCapacityTokens
			s.PromptTokens += st.PromptTokens
			s.GeneratedTokens += st.GeneratedTokens
			s.RequestsReceived += st.RequestsReceived
			s.RequestsSucceeded += st.RequestsSucceeded
		}
		return s
	}
	// Still once every replica's long sequence has been prefilled (it has
	// tokens beyond the short request's 4).
	waitFor(t, 10*time.Second, "one long sequence running per replica, 2, 1 and 1 waiting", func() bool {
		for i, st := range c.ReplicaStats() {
			wantWaiting := 1
			if i == 0 {
				wantWaiting = 2
			}
			if st.Running != 1 || st.Waiting != wantWaiting || st.GeneratedTokens < 4+2 {
				return false
			}
		}
		return true
	})

	get := func(h http.Handler) ([]byte, sm.Snapshot) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("/metrics: %d", rec.Code)
		}
		snap, err := sm.Parse(bytes.NewReader(rec.Body.Bytes()), cfg.ModelName)
		if err != nil {
			t.Fatalf("servermetrics.Parse: %v\n%s", err, rec.Body.Bytes())
		}
		return rec.Body.Bytes(), snap
	}
	before := sum()
	resp, err := client.Get("http://" + r.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %q %v", resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	var own []sm.Snapshot // each replica's own exposition
	for i := range c.Replicas() {
		_, s := get(c.Replica(i))
		own = append(own, s)
	}
	after := sum()
	stable := before
	stable.GeneratedTokens = after.GeneratedTokens
	if stable != after {
		t.Fatalf("the replicas' state moved while scraped: %+v, then %+v", before, after)
	}
	snap, err := sm.Parse(bytes.NewReader(body), cfg.ModelName)
	if err != nil {
		t.Fatalf("servermetrics.Parse: %v\n%s", err, body)
	}
	if snap.Source != sm.SourceSim || len(snap.Warnings) > 0 {
		t.Errorf("source %q, warnings %q", snap.Source, snap.Warnings)
	}
	want := map[string]float64{
		sm.NameRunning:          3,
		sm.NameWaiting:          4,
		sm.NameKVUsage:          float64(before.KVUsedTokens) / float64(before.KVCapacityTokens),
		sm.NamePromptTokens:     float64(before.PromptTokens),
		sm.NameRequestsReceived: 10,
		sm.NameRequestsFinished: 3,
		sm.NamePreemptions:      0,
		sm.NamePrefixQueries:    0, // testConfig has no prefix cache
		sm.NamePrefixHits:       0,
	}
	for name, w := range want {
		// The replicas' own expositions agree: summed, or averaged for
		// the KV-cache usage fraction.
		var own0 float64
		for _, s := range own {
			own0 += s.Values[name]
		}
		if name == sm.NameKVUsage {
			own0 /= float64(len(own))
		}
		if got, ok := snap.Values[name]; !ok || math.Abs(got-w) > 1e-12 || math.Abs(own0-w) > 1e-12 {
			t.Errorf("%s: cluster %v (present %v), replicas' own %v, want %v", name, got, ok, own0, w)
		}
	}
	if g := snap.Values[sm.NameGenerationTokens]; g < float64(before.GeneratedTokens) || g > float64(after.GeneratedTokens) {
		t.Errorf("generation tokens %v, want between %d and %d", g, before.GeneratedTokens, after.GeneratedTokens)
	}
	if n := len(snap.StepLateness); n == 0 || snap.StepLateness[n-1].Count < 1 {
		t.Errorf("step-lateness histogram %v", snap.StepLateness)
	}
	// Histograms are summed: six requests have their first token.
	if v := metricValue(t, string(body), "sim_first_token_seconds_count{"+label+"}"); v != 6 {
		t.Errorf("sim_first_token_seconds_count = %v, want 6", v)
	}
	if v := metricValue(t, string(body), "sim_replicas{"+label+"}"); v != 3 {
		t.Errorf("sim_replicas = %v, want 3", v)
	}
	for i, w := range []struct{ recv, running, waiting float64 }{{4, 1, 2}, {3, 1, 1}, {3, 1, 1}} {
		l := fmt.Sprintf(`{%s,replica="%d"}`, label, i)
		got := [3]float64{
			metricValue(t, string(body), "sim_replica_requests_received_total"+l),
			metricValue(t, string(body), "sim_replica_num_requests_running"+l),
			metricValue(t, string(body), "sim_replica_num_requests_waiting"+l),
		}
		if got != [3]float64{w.recv, w.running, w.waiting} {
			t.Errorf("replica %d: received, running, waiting = %v, want %v", i, got, w)
		}
	}
}

// TestClusterStreams: requests through the balancer stream exactly as one
// server streams them (the SSE golden files), whichever replica serves
// them; /v1/models and /health answer once for the cluster.
func TestClusterStreams(t *testing.T) {
	cfg := testConfig()
	cfg.TokensPerChunk = 2 // as in TestSSEFraming
	r := startCluster(t, cfg, 3, sim.BalanceRoundRobin)
	client := newClient()
	tests := []struct {
		golden, path, body string
		usage              bool
	}{
		{"chat_usage.sse", "/chat/completions", `{"messages":[{"role":"user","content":"hello"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`, true},
		{"chat.sse", "/chat/completions", `{"messages":[{"role":"user","content":"hello"}],"max_tokens":5,"stream":true}`, false},
		{"completions_usage.sse", "/completions", `{"prompt":"hello","max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`, true},
		{"completions.sse", "/completions", `{"prompt":"hello","max_tokens":5,"stream":true}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			for range 3 { // on three different replicas
				checkGolden(t, post(context.Background(), client, r.URL()+tt.path, tt.body), tt.golden, tt.usage)
			}
		})
	}
	if got := received(r.Cluster()); !slices.Equal(got, []int64{4, 4, 4}) {
		t.Errorf("requests per replica %v, want 4 each", got)
	}

	// A real client, streaming chat through the balancer.
	oc := openai.DefaultConfig("unused")
	oc.BaseURL = r.URL()
	oc.HTTPClient = client
	api := openai.NewClientWithConfig(oc)
	models, err := api.ListModels(context.Background())
	if err != nil || len(models.Models) != 1 || models.Models[0].ID != cfg.ModelName {
		t.Errorf("ListModels: %+v, %v", models, err)
	}
	stream, err := api.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model:               cfg.ModelName,
		MaxCompletionTokens: 9,
		Messages:            []openai.ChatCompletionMessage{{Role: "user", Content: "count to nine"}},
		StreamOptions:       &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		t.Fatalf("CreateChatCompletionStream: %v", err)
	}
	defer stream.Close()
	var text, finish string
	var usage *openai.Usage
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if resp.Usage != nil {
			usage = resp.Usage
		}
		for _, ch := range resp.Choices {
			text += ch.Delta.Content
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
	}
	if text != sim.GeneratedText(0, 9) || finish != "length" || usage == nil || usage.CompletionTokens != 9 {
		t.Errorf("text %q, finish %q, usage %+v", text, finish, usage)
	}

	for _, tt := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/health", http.StatusOK},
		{http.MethodPost, "/health", http.StatusMethodNotAllowed},
		{http.MethodGet, "/v1/completions", http.StatusMethodNotAllowed},
		{http.MethodGet, "/nowhere", http.StatusNotFound},
	} {
		req, _ := http.NewRequest(tt.method, "http://"+r.Addr()+tt.path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, resp.StatusCode, tt.status)
		}
	}
	if got := received(r.Cluster()); !slices.Equal(got, []int64{5, 4, 4}) {
		t.Errorf("requests per replica %v, want 5, 4, 4 (only POSTs are balanced)", got)
	}
}

// TestClusterThroughput: a saturating burst of equal requests takes half
// as long on two replicas as on one.
//
// Each replica runs MaxNumSeqs sequences at once, every step lasting
// StepBase (no per-sequence, KV or noticeable prefill cost), and a request
// holds its slot for one prefill step plus out-1 decode steps. A replica
// given m requests thus needs at least m/MaxNumSeqs·out steps (exact, as
// timers never fire early), and at most that plus the arrival spread, a
// step of admission, its largest step lateness and the delivery of the
// last token: the engine sleeps to absolute deadlines, so lateness delays
// tokens without adding up. The ratio of the two makespans must lie
// within the bounds these give.
func TestClusterThroughput(t *testing.T) {
	cfg := testConfig()
	cfg.MaxNumSeqs = 4
	cfg.StepBase = 4 * time.Millisecond
	cfg.StepPerSeq, cfg.StepPerKVToken = 0, 0
	const n, out = 16, 32
	chk := newTimingChecks(t, deliverySlack)
	body := completionBody(words(4, "b"), out)

	type burst struct{ model, took, slack time.Duration }
	run := func(replicas int) burst {
		r := startCluster(t, cfg, replicas, sim.BalanceRoundRobin)
		client := newClient()
		res := make([]streamResult, n)
		var wg sync.WaitGroup
		t0 := time.Now()
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i] = post(context.Background(), client, r.URL()+"/completions", body)
			}()
		}
		wg.Wait()
		var last, spread time.Duration
		for i, x := range res {
			o := parseStream(t, x)
			if x.status != http.StatusOK || len(o.times) != out || !o.done {
				t.Fatalf("%d replicas, request %d: status %d, %d tokens, done %v, %v", replicas, i, x.status, len(o.times), o.done, x.err)
			}
			last = max(last, o.times[out-1].Sub(t0))
			spread = max(spread, x.sent.Sub(t0))
		}
		var late time.Duration
		c := r.Cluster()
		for i := range c.Replicas() {
			late = max(late, lateBound(t, c.Replica(i)))
		}
		waves := n / (replicas * cfg.MaxNumSeqs)
		b := burst{
			model: time.Duration(waves*out) * cfg.StepBase,
			took:  last,
			slack: spread + cfg.StepBase + late + 2*deliverySlack,
		}
		t.Logf("%d replicas: %v for %d requests (model %v, slack %v: send spread %v, max step lateness %v)",
			replicas, b.took, n, b.model, b.slack, spread, late)
		if b.took < b.model {
			t.Errorf("%d replicas took %v, less than the model's %v", replicas, b.took, b.model)
		}
		return b
	}
	one, two := run(1), run(2)
	ratio := float64(one.took) / float64(two.took)
	lo := float64(one.model) / float64(two.model+two.slack)
	hi := float64(one.model+one.slack) / float64(two.model)
	t.Logf("speed-up %.2f, bounds [%.2f, %.2f], stall probe %v", ratio, lo, hi, chk.probe.maxLate())
	if ratio < lo || ratio > hi {
		chk.errorf("two replicas were %.2f times as fast as one, want %.2f to %.2f", ratio, lo, hi)
	}
	chk.report()
}
