package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// answer is what a client reads from one response, streamed or not: its
// reasoning, content and tool call, how the stream carried them, its finish
// reason and usage.
type answer struct {
	reasoning, content string
	// Streams only: one letter per output-bearing event, in order: R
	// reasoning_content, C content (or text), T a tool-call delta.
	kinds       string
	finishEvent int // index in kinds of the event carrying finish_reason; -1: none
	calls       int // tool calls started (deltas with an id) or returned
	toolID      string
	toolType    string
	toolName    string
	args        string
	finish      string
	usage       map[string]json.RawMessage // nil: no usage
	done        bool
}

type toolCallJSON struct {
	Index    *int    `json:"index"`
	ID       *string `json:"id"`
	Type     *string `json:"type"`
	Function struct {
		Name      *string `json:"name"`
		Arguments string  `json:"arguments"`
	} `json:"function"`
}

// parseAnswerStream reads a stream, failing t on a chunk that does not
// have the shape the simulator promises: one choice, and a delta with one
// kind of output (the role chunk aside).
func parseAnswerStream(t *testing.T, res streamResult) answer {
	t.Helper()
	a := answer{finishEvent: -1}
	for _, e := range res.events {
		if e.data == "[DONE]" {
			a.done = true
			continue
		}
		var c struct {
			Choices []struct {
				Text         *string                    `json:"text"`
				Delta        map[string]json.RawMessage `json:"delta"`
				FinishReason *string                    `json:"finish_reason"`
			} `json:"choices"`
			Usage map[string]json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(e.data), &c); err != nil {
			t.Fatalf("chunk %q: %v", e.data, err)
		}
		if c.Usage != nil {
			a.usage = c.Usage
		}
		if len(c.Choices) > 1 {
			t.Fatalf("chunk with %d choices: %s", len(c.Choices), e.data)
		}
		for _, ch := range c.Choices {
			if ch.FinishReason != nil {
				a.finish = *ch.FinishReason
				a.finishEvent = len(a.kinds)
			}
			if ch.Text != nil {
				a.kinds += "C"
				a.content += *ch.Text
				continue
			}
			if _, ok := ch.Delta["role"]; ok {
				if ch.FinishReason != nil {
					t.Errorf("role chunk with a finish reason: %s", e.data)
				}
				continue
			}
			if len(ch.Delta) != 1 {
				t.Fatalf("delta with %d members, want one kind of output: %s", len(ch.Delta), e.data)
			}
			for k, v := range ch.Delta {
				var s string
				switch k {
				case "reasoning_content":
					a.kinds += "R"
					if err := json.Unmarshal(v, &s); err != nil {
						t.Fatalf("reasoning_content in %s: %v", e.data, err)
					}
					a.reasoning += s
				case "content":
					a.kinds += "C"
					if err := json.Unmarshal(v, &s); err != nil {
						t.Fatalf("content in %s: %v", e.data, err)
					}
					a.content += s
				case "tool_calls":
					a.kinds += "T"
					var calls []toolCallJSON
					if err := json.Unmarshal(v, &calls); err != nil || len(calls) != 1 || calls[0].Index == nil || *calls[0].Index != 0 {
						t.Fatalf("tool_calls in %s: want one call of index 0 (%v)", e.data, err)
					}
					tc := calls[0]
					if tc.ID != nil {
						a.calls++
						a.toolID = *tc.ID
						if tc.Type == nil || tc.Function.Name == nil {
							t.Fatalf("a tool call's first delta lacks its type or name: %s", e.data)
						}
						a.toolType, a.toolName = *tc.Type, *tc.Function.Name
					} else if tc.Type != nil || tc.Function.Name != nil {
						t.Errorf("a later tool-call delta repeats the type or name: %s", e.data)
					}
					a.args += tc.Function.Arguments
				default:
					t.Fatalf("unexpected delta member %q: %s", k, e.data)
				}
			}
		}
	}
	return a
}

// parseAnswerBody reads a non-streaming response.
func parseAnswerBody(t *testing.T, res streamResult) answer {
	t.Helper()
	var r struct {
		Choices []struct {
			Text    *string `json:"text"`
			Message *struct {
				Role             string         `json:"role"`
				ReasoningContent *string        `json:"reasoning_content"`
				Content          *string        `json:"content"`
				ToolCalls        []toolCallJSON `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage map[string]json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(res.raw, &r); err != nil || len(r.Choices) != 1 {
		t.Fatalf("response %q: %v", res.raw, err)
	}
	a := answer{finishEvent: -1, finish: r.Choices[0].FinishReason, usage: r.Usage, done: true}
	switch m := r.Choices[0].Message; {
	case m == nil && r.Choices[0].Text != nil:
		a.content = *r.Choices[0].Text
	case m != nil:
		if m.ReasoningContent != nil {
			a.reasoning = *m.ReasoningContent
			if a.reasoning == "" {
				t.Errorf(`reasoning_content is "", want null when there is no reasoning`)
			}
		}
		if m.Content != nil {
			a.content = *m.Content
		}
		for _, tc := range m.ToolCalls {
			a.calls++
			if tc.ID != nil {
				a.toolID = *tc.ID
			}
			if tc.Type != nil {
				a.toolType = *tc.Type
			}
			if tc.Function.Name != nil {
				a.toolName = *tc.Function.Name
			}
			a.args += tc.Function.Arguments
		}
		if len(m.ToolCalls) > 0 && m.Content != nil {
			t.Errorf("content %q beside a tool call, want null", *m.Content)
		}
	default:
		t.Fatalf("choice without text or message: %s", res.raw)
	}
	return a
}

// usageInt reads usage.key, or usage.key.sub when sub is not empty; ok is
// false when the member is absent.
func usageInt(t *testing.T, u map[string]json.RawMessage, key, sub string) (n int, ok bool) {
	t.Helper()
	raw, ok := u[key]
	if !ok {
		return 0, false
	}
	if sub != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			t.Fatalf("usage.%s = %s, want an object", key, raw)
		}
		if raw, ok = m[sub]; !ok {
			t.Fatalf("usage.%s = %s, lacks %s", key, u[key], sub)
		}
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		t.Fatalf("usage.%s.%s = %s: %v", key, sub, raw, err)
	}
	return n, true
}

var toolIDRE = regexp.MustCompile(`^call_[0-9a-f]{16}$`)

// TestReasoningAndToolCalls checks, streamed and not, how ReasoningShare
// splits a chat response into reasoning and answer, and how ToolCalls turns
// the answer into a call of the request's first tool.
func TestReasoningAndToolCalls(t *testing.T) {
	const (
		chatPath = "/chat/completions"
		compPath = "/completions"
		msgs     = `"messages":[{"role":"user","content":"hi"}]`
		weather  = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}},{"type":"function","function":{"name":"other"}}]`
	)
	tests := []struct {
		name  string
		share float64 // Config.ReasoningShare
		k     int     // Config.TokensPerChunk
		tools bool    // Config.ToolCalls
		eos   bool    // EOSProbability 1: every response stops after its first token
		path  string
		body  string // without the stream members
		n     int    // completion tokens
		r     int    // reasoning tokens; -1: usage reports none
		tool  string // name of the tool called; "": no call
		// finish reason, and the streamed output events (see answer.kinds)
		finish, kinds string
	}{
		{"reasoning off", 0, 2, false, false, chatPath, `{` + msgs + `,"max_tokens":5}`, 5, -1, "", "length", "CCC"},
		// Chunks [0,1) [1,3) [3,5) [5,7) [7,9); r = 4: the third is cut in two events.
		{"boundary inside a chunk", 0.5, 2, false, false, chatPath, `{` + msgs + `,"max_tokens":9}`, 9, 4, "", "length", "RRRCCC"},
		// r = 3 ends the second chunk.
		{"boundary on a chunk edge", 0.3, 2, false, false, chatPath, `{` + msgs + `,"max_tokens":10}`, 10, 3, "", "length", "RRCCCC"},
		// 0.29·100 is 28.999… in floating point; r is 29, inside chunk [25,33).
		{"share times max tokens rounds as decimals do", 0.29, 8, false, false, chatPath, `{` + msgs + `,"max_completion_tokens":100}`, 100, 29, "", "length", "RRRRR" + strings.Repeat("C", 10)},
		{"too short to reason", 0.1, 2, false, false, chatPath, `{` + msgs + `,"max_tokens":5}`, 5, 0, "", "length", "CCC"},
		{"stops while reasoning", 0.5, 2, false, true, chatPath, `{` + msgs + `,"max_tokens":10}`, 1, 1, "", "stop", "R"},
		{"completions never reason", 0.5, 2, false, false, compPath, `{"prompt":"hi","max_tokens":5}`, 5, -1, "", "length", "CCC"},
		{"tool call", 0, 2, true, false, chatPath, `{` + msgs + `,` + weather + `,"max_tokens":5}`, 5, -1, "get_weather", "tool_calls", "TTT"},
		// r = 4 inside chunk [3,5): reasoning, then the call's first delta at the same moment.
		{"reasoning then a tool call", 0.5, 2, true, false, chatPath, `{` + msgs + `,` + weather + `,"max_tokens":8}`, 8, 4, "get_weather", "tool_calls", "RRRTTT"},
		{"tool without a name", 0, 2, true, false, chatPath, `{` + msgs + `,"tools":[{"type":"function"}],"max_tokens":3}`, 3, -1, "tool", "tool_calls", "TT"},
		{"one-token tool call", 0, 2, true, true, chatPath, `{` + msgs + `,` + weather + `,"max_tokens":10}`, 1, -1, "get_weather", "tool_calls", "T"},
		{"stops while reasoning: no call", 0.5, 2, true, true, chatPath, `{` + msgs + `,` + weather + `,"max_tokens":10}`, 1, 1, "", "stop", "R"},
		{"empty tools", 0, 2, true, false, chatPath, `{` + msgs + `,"tools":[],"max_tokens":3}`, 3, -1, "", "length", "CC"},
		{"null tools", 0, 2, true, false, chatPath, `{` + msgs + `,"tools":null,"max_tokens":3}`, 3, -1, "", "length", "CC"},
		{"tool calls off", 0, 2, false, false, chatPath, `{` + msgs + `,` + weather + `,"max_tokens":3}`, 3, -1, "", "length", "CC"},
		{"completions ignore tools", 0.5, 2, true, false, compPath, `{"prompt":"hi",` + weather + `,"max_tokens":3}`, 3, -1, "", "length", "CC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.ReasoningShare = tt.share
			cfg.TokensPerChunk = tt.k
			cfg.ToolCalls = tt.tools
			if tt.eos {
				cfg.EOSProbability = 1
			}
			r := start(t, cfg)
			client := newClient()
			rr := max(tt.r, 0)
			wantReasoning := sim.GeneratedText(0, rr)
			wantAnswer := sim.GeneratedText(rr, tt.n)
			wantContent, wantArgs := wantAnswer, ""
			if tt.tool != "" {
				wantContent, wantArgs = "", `{"q":"`+wantAnswer+`"}`
			}
			for _, stream := range []bool{true, false} {
				body := tt.body
				if stream {
					body = strings.TrimSuffix(body, "}") + `,"stream":true,"stream_options":{"include_usage":true}}`
				}
				res := post(context.Background(), client, r.URL()+tt.path, body)
				if res.err != nil || res.status != http.StatusOK {
					t.Fatalf("stream %v: status %d, err %v: %s", stream, res.status, res.err, res.raw)
				}
				var a answer
				if stream {
					a = parseAnswerStream(t, res)
					if a.kinds != tt.kinds {
						t.Errorf("stream: output events %q, want %q", a.kinds, tt.kinds)
					}
					if a.finishEvent != len(a.kinds)-1 {
						t.Errorf("stream: finish_reason on event %d of %q, want the last", a.finishEvent, a.kinds)
					}
					if !a.done {
						t.Errorf("stream: no [DONE]")
					}
				} else {
					a = parseAnswerBody(t, res)
				}
				if a.reasoning != wantReasoning || a.content != wantContent {
					t.Errorf("stream %v: reasoning %q, content %q; want %q, %q", stream, a.reasoning, a.content, wantReasoning, wantContent)
				}
				// Words count tokens, in each field and across them.
				if nr, na := len(strings.Fields(a.reasoning)), len(strings.Fields(a.content)); nr != rr || (tt.tool == "" && nr+na != tt.n) {
					t.Errorf("stream %v: %d reasoning and %d content words, want %d of %d tokens reasoning", stream, nr, na, rr, tt.n)
				}
				if a.finish != tt.finish {
					t.Errorf("stream %v: finish_reason %q, want %q", stream, a.finish, tt.finish)
				}
				if tt.tool == "" {
					if a.calls != 0 || a.args != "" {
						t.Errorf("stream %v: %d tool calls (arguments %q), want none", stream, a.calls, a.args)
					}
				} else {
					if a.calls != 1 || a.toolName != tt.tool || a.toolType != "function" || !toolIDRE.MatchString(a.toolID) {
						t.Errorf("stream %v: %d calls, last of %q type %q id %q; want one call of %s, type function, id call_ and 16 hex digits",
							stream, a.calls, a.toolName, a.toolType, a.toolID, tt.tool)
					}
					if a.args != wantArgs || !json.Valid([]byte(a.args)) {
						t.Errorf("stream %v: arguments %q, want the JSON object %q", stream, a.args, wantArgs)
					}
				}
				if a.usage == nil {
					t.Fatalf("stream %v: no usage", stream)
				}
				if n, _ := usageInt(t, a.usage, "completion_tokens", ""); n != tt.n {
					t.Errorf("stream %v: completion_tokens %d, want %d", stream, n, tt.n)
				}
				got, ok := usageInt(t, a.usage, "completion_tokens_details", "reasoning_tokens")
				switch {
				case tt.r < 0 && ok:
					t.Errorf("stream %v: usage reports %d reasoning tokens, want no completion_tokens_details", stream, got)
				case tt.r >= 0 && (!ok || got != tt.r):
					t.Errorf("stream %v: reasoning_tokens %d (present %v), want %d", stream, got, ok, tt.r)
				}
				// The prefix cache is off in testConfig: no cached count.
				raw, ok := a.usage["prompt_tokens_details"]
				if want := !stream; ok != want || (ok && string(raw) != "null") {
					t.Errorf("stream %v: prompt_tokens_details %s (present %v), want it null in responses only", stream, raw, ok)
				}
			}
		})
	}
}

// TestCachedTokens checks usage.prompt_tokens_details.cached_tokens: the
// prompt tokens a request found in the prefix cache, whole blocks of a
// prompt prefilled before, at most the prompt minus one token.
func TestCachedTokens(t *testing.T) {
	cfg := testConfig()
	cfg.PrefixCacheBlocks = 256
	cfg.BlockSize = 16
	r := start(t, cfg)
	client := newClient()
	chatBody := func(words string) string {
		return `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"` + words + `"}],"max_tokens":3}`
	}
	compBody := func(words string) string { return `{"prompt":"` + words + `","max_tokens":3}` }
	tests := []struct {
		name, path   string
		body         func(string) string
		words        int // user words; a chat prompt adds 2 + 2·MessageOverheadTokens tokens
		prompt       int // prompt tokens
		first, again int // cached tokens of the first request and of the same request again
	}{
		// 50 tokens: 3 whole blocks.
		{"chat", "/chat/completions", chatBody, 40, 50, 0, 48},
		// 48 tokens, exactly 3 blocks: the last token is always computed, so 2 blocks hit.
		{"chat, prompt of whole blocks", "/chat/completions", chatBody, 38, 48, 0, 32},
		{"completion", "/completions", compBody, 40, 40, 0, 32},
		// Under one block: nothing to cache.
		{"short prompt", "/completions", compBody, 10, 10, 0, 0},
	}
	for _, tt := range tests {
		for _, stream := range []bool{true, false} {
			name := tt.name + ", streamed"
			if !stream {
				name = tt.name + ", not streamed"
			}
			t.Run(name, func(t *testing.T) {
				body := tt.body(words(tt.words, strings.ReplaceAll(name, " ", "_")))
				if stream {
					body = strings.TrimSuffix(body, "}") + `,"stream":true,"stream_options":{"include_usage":true}}`
				}
				for i, want := range []int{tt.first, tt.again} {
					before := r.Server().Stats().PrefixCacheHits
					res := post(context.Background(), client, r.URL()+tt.path, body)
					if res.err != nil || res.status != http.StatusOK {
						t.Fatalf("request %d: status %d, err %v", i, res.status, res.err)
					}
					var a answer
					if stream {
						a = parseAnswerStream(t, res)
					} else {
						a = parseAnswerBody(t, res)
					}
					if a.usage == nil {
						t.Fatalf("request %d: no usage", i)
					}
					if p, _ := usageInt(t, a.usage, "prompt_tokens", ""); p != tt.prompt {
						t.Errorf("request %d: prompt_tokens %d, want %d", i, p, tt.prompt)
					}
					got, ok := usageInt(t, a.usage, "prompt_tokens_details", "cached_tokens")
					if !ok || got != want {
						t.Errorf("request %d: cached_tokens %d (present %v), want %d", i, got, ok, want)
					}
					if hits := r.Server().Stats().PrefixCacheHits - before; hits != int64(got) {
						t.Errorf("request %d: reports %d cached tokens, the engine counted %d prefix-cache hits", i, got, hits)
					}
				}
			})
		}
	}
}

// TestAnswerModesWithGoOpenAI reads reasoning, a tool call and the usage
// details with a real OpenAI client library.
func TestAnswerModesWithGoOpenAI(t *testing.T) {
	cfg := testConfig()
	cfg.ReasoningShare = 0.25
	cfg.ToolCalls = true
	cfg.TokensPerChunk = 3
	cfg.PrefixCacheBlocks = 256
	cfg.BlockSize = 16
	r := start(t, cfg)
	c := openaiClient(r)
	req := openai.ChatCompletionRequest{
		Model:               sim.DefaultModelName,
		MaxCompletionTokens: 20, // 5 reasoning tokens, 15 of arguments
		Messages:            []openai.ChatCompletionMessage{{Role: "user", Content: words(30, "q")}},
		Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: "search", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}}},
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	wantReasoning := sim.GeneratedText(0, 5)
	wantArgs := `{"q":"` + sim.GeneratedText(5, 20) + `"}`
	checkUsage := func(u *openai.Usage, cached int) {
		t.Helper()
		switch {
		case u == nil:
			t.Errorf("no usage")
		case u.PromptTokens != 30+sim.MessageOverheadTokens || u.CompletionTokens != 20:
			t.Errorf("usage %+v, want %d prompt and 20 completion tokens", u, 30+sim.MessageOverheadTokens)
		case u.CompletionTokensDetails == nil || u.CompletionTokensDetails.ReasoningTokens != 5:
			t.Errorf("completion_tokens_details %+v, want 5 reasoning tokens", u.CompletionTokensDetails)
		case u.PromptTokensDetails == nil || u.PromptTokensDetails.CachedTokens != cached:
			t.Errorf("prompt_tokens_details %+v, want %d cached tokens", u.PromptTokensDetails, cached)
		}
	}

	stream, err := c.CreateChatCompletionStream(context.Background(), func() openai.ChatCompletionRequest { s := req; s.Stream = true; return s }())
	if err != nil {
		t.Fatalf("CreateChatCompletionStream: %v", err)
	}
	defer stream.Close()
	var reasoning, content, name, args, finish string
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
			reasoning += ch.Delta.ReasoningContent
			content += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Function.Name != "" {
					name = tc.Function.Name
				}
				args += tc.Function.Arguments
			}
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
	}
	if reasoning != wantReasoning || content != "" || name != "search" || args != wantArgs || finish != "tool_calls" {
		t.Errorf("stream: reasoning %q, content %q, call of %q with %q, finish %q; want %q, none, search with %q, tool_calls",
			reasoning, content, name, args, finish, wantReasoning, wantArgs)
	}
	checkUsage(usage, 0)

	// The same prompt again, not streamed: its two whole blocks are cached.
	resp, err := c.CreateChatCompletion(context.Background(), req)
	if err != nil {
		t.Fatalf("CreateChatCompletion: %v", err)
	}
	m := resp.Choices[0]
	if m.Message.ReasoningContent != wantReasoning || m.Message.Content != "" || len(m.Message.ToolCalls) != 1 ||
		m.Message.ToolCalls[0].Function.Name != "search" || m.Message.ToolCalls[0].Function.Arguments != wantArgs ||
		m.FinishReason != openai.FinishReasonToolCalls {
		t.Errorf("response choice %+v", m)
	}
	checkUsage(&resp.Usage, 32)
}

func TestToolCallIDsAreReproducible(t *testing.T) {
	// The call id depends on the seed and the request's arrival index only.
	body := `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"max_tokens":2}`
	ids := func(seed int64) []string {
		cfg := testConfig()
		cfg.ToolCalls = true
		cfg.Seed = seed
		r := start(t, cfg)
		client := newClient()
		var out []string
		for i := 0; i < 3; i++ {
			res := post(context.Background(), client, r.URL()+"/chat/completions", body)
			out = append(out, parseAnswerBody(t, res).toolID)
		}
		return out
	}
	a, b, c := ids(1), ids(1), ids(2)
	if strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("same seed, different call ids: %v and %v", a, b)
	}
	if a[0] == a[1] || a[1] == a[2] || a[0] == c[0] {
		t.Errorf("call ids repeat across requests or seeds: %v, seed 2: %v", a, c)
	}
}

// TestAnswerModesOffAreByteIdentical checks that a server with every new
// answer mode at its zero value writes what one without them would: the
// tools of a request are read but change nothing.
func TestAnswerModesOffAreByteIdentical(t *testing.T) {
	cfg := testConfig()
	cfg.TokensPerChunk = 3
	r := start(t, cfg)
	client := newClient()
	for _, stream := range []string{"true", "false"} {
		plain := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":7,"stream":` + stream + `,"stream_options":{"include_usage":true}}`
		withTools := strings.TrimSuffix(plain, "}") + `,"tools":[{"type":"function","function":{"name":"f"}}]}`
		norm := func(b []byte) []byte {
			return createdRE.ReplaceAll(idRE.ReplaceAll(b, []byte(`"id":"$1-ID"`)), []byte(`"created":0`))
		}
		a := post(context.Background(), client, r.URL()+"/chat/completions", plain)
		b := post(context.Background(), client, r.URL()+"/chat/completions", withTools)
		if !bytes.Equal(norm(a.raw), norm(b.raw)) {
			t.Errorf("stream %s: tools changed the response with ToolCalls off:\n%s\n%s", stream, a.raw, b.raw)
		}
		if bytes.Contains(a.raw, []byte("reasoning_tokens")) || bytes.Contains(a.raw, []byte("cached_tokens")) {
			t.Errorf("stream %s: usage details with the modes off: %s", stream, a.raw)
		}
	}
}
