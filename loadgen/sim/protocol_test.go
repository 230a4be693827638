package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func openaiClient(r *sim.Running) *openai.Client {
	cfg := openai.DefaultConfig("unused")
	cfg.BaseURL = r.URL()
	cfg.HTTPClient = newClient()
	return openai.NewClientWithConfig(cfg)
}

func TestChatStreamWithGoOpenAI(t *testing.T) {
	r := start(t, testConfig())
	c := openaiClient(r)
	tests := []struct {
		name      string
		usage     bool
		maxTokens int
	}{
		{"with usage", true, 7},
		{"without usage", false, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := openai.ChatCompletionRequest{
				Model: sim.DefaultModelName,
				// max_tokens is what vLLM's benchmark client sends; the sim honours both
				// it and max_completion_tokens (input_test.go).
				MaxTokens: tt.maxTokens, //lint:ignore SA1019 the deprecated field is the one under test
				Messages: []openai.ChatCompletionMessage{
					{Role: "system", Content: "be brief"},
					{Role: "user", Content: "say something nice"},
				},
			}
			if tt.usage {
				req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
			}
			stream, err := c.CreateChatCompletionStream(context.Background(), req)
			if err != nil {
				t.Fatalf("CreateChatCompletionStream: %v", err)
			}
			defer stream.Close()
			var text, finish, role string
			var usage *openai.Usage
			chunks := 0
			for {
				resp, err := stream.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("Recv: %v", err)
				}
				if resp.Object != "chat.completion.chunk" || resp.Model != sim.DefaultModelName || !strings.HasPrefix(resp.ID, "chatcmpl-") {
					t.Errorf("chunk header: object %q model %q id %q", resp.Object, resp.Model, resp.ID)
				}
				if resp.Usage != nil {
					usage = resp.Usage
					if len(resp.Choices) != 0 {
						t.Errorf("usage chunk has %d choices, want none", len(resp.Choices))
					}
				}
				for _, ch := range resp.Choices {
					if ch.Delta.Role != "" {
						role = ch.Delta.Role
					}
					if ch.Delta.Content != "" {
						chunks++
						text += ch.Delta.Content
					}
					if ch.FinishReason != "" {
						finish = string(ch.FinishReason)
					}
				}
			}
			if role != "assistant" {
				t.Errorf("role = %q, want assistant", role)
			}
			if n := len(strings.Fields(text)); n != tt.maxTokens || chunks != tt.maxTokens {
				t.Errorf("got %d words in %d chunks (%q), want %d of each", n, chunks, text, tt.maxTokens)
			}
			if finish != "length" {
				t.Errorf("finish_reason = %q, want length", finish)
			}
			// 2 messages of 2 and 3 words, plus 4 tokens of overhead each.
			wantPrompt := 2 + 3 + 2*sim.MessageOverheadTokens
			switch {
			case tt.usage && usage == nil:
				t.Errorf("no usage chunk although include_usage was set")
			case !tt.usage && usage != nil:
				t.Errorf("usage chunk %+v although include_usage was not set", usage)
			case tt.usage && (usage.PromptTokens != wantPrompt || usage.CompletionTokens != tt.maxTokens || usage.TotalTokens != wantPrompt+tt.maxTokens):
				t.Errorf("usage = %+v, want prompt %d, completion %d", usage, wantPrompt, tt.maxTokens)
			}
		})
	}
}

func TestCompletionStreamWithGoOpenAI(t *testing.T) {
	r := start(t, testConfig())
	c := openaiClient(r)
	stream, err := c.CreateCompletionStream(context.Background(), openai.CompletionRequest{
		Model:         sim.DefaultModelName,
		Prompt:        "one two three four",
		MaxTokens:     9,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		t.Fatalf("CreateCompletionStream: %v", err)
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
		if resp.Object != "text_completion" {
			t.Errorf("object = %q", resp.Object)
		}
		if len(resp.Choices) == 0 {
			usage = resp.Usage
		}
		for _, ch := range resp.Choices {
			text += ch.Text
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if n := len(strings.Fields(text)); n != 9 || finish != "length" {
		t.Errorf("text %q (%d words), finish %q; want 9 words, length", text, n, finish)
	}
	if usage == nil || usage.PromptTokens != 4 || usage.CompletionTokens != 9 || usage.TotalTokens != 13 {
		t.Errorf("usage = %+v, want 4 + 9 = 13", usage)
	}
}

func TestNonStreamingWithGoOpenAI(t *testing.T) {
	r := start(t, testConfig())
	c := openaiClient(r)
	ctx := context.Background()
	chat, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:               sim.DefaultModelName,
		MaxCompletionTokens: 6,
		Messages:            []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
	})
	if err != nil {
		t.Fatalf("CreateChatCompletion: %v", err)
	}
	if chat.Object != "chat.completion" || len(chat.Choices) != 1 {
		t.Fatalf("response %+v", chat)
	}
	m := chat.Choices[0]
	if m.Message.Role != "assistant" || len(strings.Fields(m.Message.Content)) != 6 || m.FinishReason != "length" {
		t.Errorf("choice %+v, want 6 words from the assistant, finish length", m)
	}
	if u := chat.Usage; u.PromptTokens != 1+sim.MessageOverheadTokens || u.CompletionTokens != 6 {
		t.Errorf("usage %+v", u)
	}
	comp, err := c.CreateCompletion(ctx, openai.CompletionRequest{Model: sim.DefaultModelName, Prompt: "a b c", MaxTokens: 4})
	if err != nil {
		t.Fatalf("CreateCompletion: %v", err)
	}
	if comp.Object != "text_completion" || len(comp.Choices) != 1 || comp.Choices[0].Text != "the model is a" || comp.Usage.TotalTokens != 7 {
		t.Errorf("completion %+v", comp)
	}
	models, err := c.ListModels(ctx)
	if err != nil {
		t.Fatalf("ListModels: %v", err)
	}
	if len(models.Models) != 1 || models.Models[0].ID != sim.DefaultModelName {
		t.Errorf("models = %+v", models.Models)
	}
}

// TestSSEFraming compares whole streams byte for byte with golden files
// (ids and timestamps normalised), and checks the framing rules on them.
func TestSSEFraming(t *testing.T) {
	cfg := testConfig()
	cfg.TokensPerChunk = 2 // chunks of 1, 2, 2 tokens for max_tokens 5
	r := start(t, cfg)
	client := newClient()
	tests := []struct {
		golden, path, body string
		usage              bool
	}{
		{"chat_usage.sse", "/chat/completions", `{"messages":[{"role":"user","content":"hello"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`, true},
		{"chat.sse", "/chat/completions", `{"messages":[{"role":"user","content":"hello"}],"max_tokens":5,"stream":true}`, false},
		{"chat_usage_false.sse", "/chat/completions", `{"messages":[{"role":"user","content":"hello"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":false}}`, false},
		{"completions_usage.sse", "/completions", `{"prompt":"hello","max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`, true},
		{"completions.sse", "/completions", `{"prompt":"hello","max_tokens":5,"stream":true}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			res := post(context.Background(), client, r.URL()+tt.path, tt.body)
			checkGolden(t, res, tt.golden, tt.usage)
		})
	}
}

// TestSSEFramingAnswerModes pins the wire format of reasoning, tool calls
// and cached tokens the same way. The cases run in order on one server: the
// second sends the first's prompt again, so its usage reports the prompt's
// first block (16 of its 17 tokens) as cached.
func TestSSEFramingAnswerModes(t *testing.T) {
	cfg := testConfig()
	cfg.TokensPerChunk = 2 // chunks of 1, 2, 2, 2, 1 tokens for max_tokens 8
	cfg.ReasoningShare = 0.5
	cfg.ToolCalls = true
	cfg.PrefixCacheBlocks = 64
	cfg.BlockSize = 16
	r := start(t, cfg)
	client := newClient()
	msgs := `"messages":[{"role":"user","content":"` + words(13, "w") + `"}]` // 17 tokens
	tools := `"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object"}}}]`
	tests := []struct {
		golden, body string
		usage        bool
	}{
		// Reasoning tokens 0-3, answer 4-7: the chunk of tokens 3 and 4 straddles the boundary.
		{"chat_reasoning_usage.sse", `{` + msgs + `,"max_tokens":8,"stream":true,"stream_options":{"include_usage":true}}`, true},
		{"chat_reasoning_tools_usage.sse", `{` + msgs + `,` + tools + `,"max_tokens":8,"stream":true,"stream_options":{"include_usage":true}}`, true},
		{"chat_reasoning_tools.json", `{` + msgs + `,` + tools + `,"max_tokens":8}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			res := post(context.Background(), client, r.URL()+"/chat/completions", tt.body)
			checkGolden(t, res, tt.golden, tt.usage)
		})
	}
}

var (
	idRE      = regexp.MustCompile(`"id":"(chatcmpl|cmpl)-[^"]+"`)
	createdRE = regexp.MustCompile(`"created":\d+`)
)

// checkGolden checks the framing rules on a stream (a .sse golden) or that
// a non-streaming body is one JSON object (.json), then compares it byte for
// byte with the golden file (response ids and timestamps normalised).
func checkGolden(t *testing.T, res streamResult, golden string, usage bool) {
	t.Helper()
	if res.err != nil || res.status != http.StatusOK {
		t.Fatalf("status %d, err %v", res.status, res.err)
	}
	if got := bytes.Contains(res.raw, []byte(`"usage":{`)); got != usage {
		t.Errorf("usage present = %v, want %v", got, usage)
	}
	if strings.HasSuffix(golden, ".json") {
		if !json.Valid(res.raw) {
			t.Errorf("body is not JSON: %q", res.raw)
		}
	} else {
		// Framing: every message is "data: " + payload + "\n\n", the
		// last is [DONE], nothing else is sent.
		msgs := strings.Split(string(res.raw), "\n\n")
		if msgs[len(msgs)-1] != "" {
			t.Fatalf("stream does not end with a blank line: %q", res.raw)
		}
		msgs = msgs[:len(msgs)-1]
		for _, m := range msgs {
			if !strings.HasPrefix(m, "data: ") || strings.Contains(m, "\n") {
				t.Errorf("malformed SSE message %q", m)
			}
		}
		if last := msgs[len(msgs)-1]; last != "data: [DONE]" {
			t.Errorf("last message %q, want data: [DONE]", last)
		}
		for _, m := range msgs[:len(msgs)-1] {
			if !json.Valid([]byte(strings.TrimPrefix(m, "data: "))) {
				t.Errorf("payload is not JSON: %q", m)
			}
		}
	}
	got := createdRE.ReplaceAll(idRE.ReplaceAll(res.raw, []byte(`"id":"$1-ID"`)), []byte(`"created":0`))
	path := filepath.Join("testdata", golden)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file (run with -update to create): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("response differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestModelsHealthMetrics(t *testing.T) {
	cfg := testConfig()
	cfg.ModelName = `org/model "quoted"`
	r := start(t, cfg)
	client := newClient()
	get := func(path string) (int, string, string) {
		t.Helper()
		resp, err := client.Get("http://" + r.Addr() + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	if code, _, _ := get("/health"); code != http.StatusOK {
		t.Errorf("/health = %d", code)
	}
	code, _, body := get("/v1/models")
	var models struct {
		Object string `json:"object"`
		Data   []struct {
			ID, Object string
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &models); err != nil || code != 200 || models.Object != "list" ||
		len(models.Data) != 1 || models.Data[0].ID != cfg.ModelName || models.Data[0].Object != "model" {
		t.Errorf("/v1/models = %d %s (%v)", code, body, err)
	}
	// completionBody names the default model, not this one: 404, but it
	// still counts as a received completion request.
	if res := post(context.Background(), client, r.URL()+"/completions", completionBody("x y", 3)); res.status != http.StatusNotFound {
		t.Errorf("other model: status %d, want 404", res.status)
	}
	p, _ := json.Marshal(cfg.ModelName)
	res := post(context.Background(), client, r.URL()+"/completions", `{"model":`+string(p)+`,"prompt":"x y","max_tokens":3}`)
	if res.status != http.StatusOK {
		t.Fatalf("completion status %d: %s", res.status, res.raw)
	}
	code, ctype, body := get("/metrics")
	if code != http.StatusOK || !strings.HasPrefix(ctype, "text/plain") {
		t.Fatalf("/metrics = %d %q", code, ctype)
	}
	label := `model_name="org/model \"quoted\""`
	for _, want := range []string{
		"# TYPE vllm:num_requests_running gauge",
		"vllm:num_requests_running{" + label + "} 0",
		"vllm:num_requests_waiting{" + label + "} 0",
		"vllm:kv_cache_usage_perc{" + label + "} 0",
		"# TYPE vllm:generation_tokens_total counter",
		"vllm:generation_tokens_total{" + label + "} 3",
		"vllm:prompt_tokens_total{" + label + "} 2",
		"vllm:request_success_total{finished_reason=\"length\"," + label + "} 1",
		"vllm:num_preemptions_total{" + label + "} 0",
		"vllm:prefix_cache_queries_total{" + label + "} 0",
		"vllm:prefix_cache_hits_total{" + label + "} 0",
		"sim_requests_received_total{" + label + "} 2",
		"# TYPE sim_step_lateness_seconds histogram",
		`sim_step_lateness_seconds_bucket{` + label + `,le="+Inf"} `,
		"sim_first_token_seconds_count{" + label + "} 1",
		"# TYPE sim_steps_total counter",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if steps := metricValue(t, body, "sim_steps_total{"+label+"}"); steps < 3 {
		t.Errorf("sim_steps_total = %v, want >= 3 (one prefill step, then two decode steps)", steps)
	}
}

// metricValue returns the value of the sample whose name and labels are
// exactly series.
func metricValue(t testing.TB, body, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			if err := json.Unmarshal([]byte(v), &f); err != nil {
				t.Fatalf("metric %s value %q: %v", series, v, err)
			}
			return f
		}
	}
	t.Fatalf("metric %s not found", series)
	return 0
}

func TestHandlerWithoutListener(t *testing.T) {
	// The Server is a plain http.Handler: it works under httptest too, and
	// Close fails what is in flight and refuses what comes after.
	srv, err := sim.New(testConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rec := &recorder{header: http.Header{}}
	req, _ := http.NewRequest(http.MethodPost, "/v1/completions", strings.NewReader(`{"prompt":"a","max_tokens":2,"stream":true}`))
	srv.ServeHTTP(rec, req)
	if rec.status != http.StatusOK || !strings.HasSuffix(rec.body.String(), "data: [DONE]\n\n") {
		t.Errorf("status %d body %q", rec.status, rec.body.String())
	}
	srv.Close()
	rec = &recorder{header: http.Header{}}
	req, _ = http.NewRequest(http.MethodPost, "/v1/completions", strings.NewReader(`{"prompt":"a","max_tokens":2}`))
	srv.ServeHTTP(rec, req)
	if rec.status != http.StatusServiceUnavailable {
		t.Errorf("after Close: status %d, want 503", rec.status)
	}
}

// recorder is a minimal http.ResponseWriter with Flush.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}
func (r *recorder) Flush() {}

func TestCloseFailsInFlightStreams(t *testing.T) {
	cfg := testConfig()
	cfg.MaxNumSeqs = 1
	r, err := sim.Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	client := newClient()
	results := make(chan streamResult, 2)
	for i := 0; i < 2; i++ { // one running, one waiting
		go func() {
			results <- post(context.Background(), client, r.URL()+"/completions", completionBody("a b", 3000))
		}()
	}
	waitFor(t, 5*time.Second, "one running and one waiting", func() bool {
		s := r.Server().Stats()
		return s.Running == 1 && s.Waiting == 1 && s.GeneratedTokens > 0
	})
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i := 0; i < 2; i++ {
		res := <-results
		if res.status != http.StatusOK {
			t.Errorf("status %d", res.status)
			continue
		}
		if !bytes.Contains(res.raw, []byte(`"error":{`)) || !bytes.Contains(res.raw, []byte("shut down")) {
			t.Errorf("stream not failed by Close: %q", tail(res.raw))
		}
	}
	if s := r.Server().Stats(); s.Running != 0 || s.Waiting != 0 {
		t.Errorf("after Close: %d running, %d waiting", s.Running, s.Waiting)
	}
}

func tail(b []byte) []byte {
	if len(b) > 300 {
		return b[len(b)-300:]
	}
	return b
}
