package sim_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

func TestBadInput(t *testing.T) {
	cfg := testConfig()
	cfg.MaxModelLen = 64
	cfg.KVCacheTokens = 1024
	r := start(t, cfg)
	client := newClient()
	const chat, comp = "/v1/chat/completions", "/v1/completions"
	tests := []struct {
		name, method, path, body string
		status                   int
		msg                      string // substring of error.message
		param                    string // error.param; "" for null
	}{
		{"malformed JSON", "POST", comp, `{"prompt":`, 400, "not valid JSON", ""},
		{"not an object", "POST", comp, `[1,2]`, 400, "must be a JSON object", ""},
		{"max_tokens wrong type", "POST", comp, `{"prompt":"a","max_tokens":"ten"}`, 400, "max_tokens", "max_tokens"},
		{"max_tokens fractional", "POST", comp, `{"prompt":"a","max_tokens":1.5}`, 400, "max_tokens", "max_tokens"},
		{"stream wrong type", "POST", comp, `{"prompt":"a","stream":"yes"}`, 400, "stream", "stream"},
		{"include_usage wrong type", "POST", comp, `{"prompt":"a","stream":true,"stream_options":{"include_usage":1}}`, 400, "include_usage", "stream_options.include_usage"},
		{"model wrong type", "POST", comp, `{"model":7,"prompt":"a"}`, 400, "model", "model"},
		{"max_tokens zero", "POST", comp, `{"prompt":"a","max_tokens":0}`, 400, "at least 1", "max_tokens"},
		{"max_tokens negative", "POST", chat, `{"messages":[{"role":"user","content":"a"}],"max_tokens":-3}`, 400, "at least 1", "max_tokens"},
		{"max_completion_tokens zero", "POST", chat, `{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":0}`, 400, "max_completion_tokens must be at least 1", "max_completion_tokens"},
		{"prompt missing", "POST", comp, `{"max_tokens":3}`, 400, "prompt: required", "prompt"},
		{"prompt empty", "POST", comp, `{"prompt":""}`, 400, "at least one token", "prompt"},
		{"prompt blank", "POST", comp, `{"prompt":"  \n\t "}`, 400, "at least one token", "prompt"},
		{"prompt empty list", "POST", comp, `{"prompt":[]}`, 400, "must not be empty", "prompt"},
		{"prompt wrong type", "POST", comp, `{"prompt":{"text":"a"}}`, 400, "must be a string", "prompt"},
		{"prompt batched", "POST", comp, `{"prompt":["a","b"]}`, 400, "batched", "prompt"},
		{"prompt mixed ids", "POST", comp, `{"prompt":[1,"b"]}`, 400, "token ids", "prompt"},
		{"messages missing", "POST", chat, `{"max_tokens":3}`, 400, "messages: required", "messages"},
		{"messages empty", "POST", chat, `{"messages":[]}`, 400, "must not be empty", "messages"},
		{"messages not a list", "POST", chat, `{"messages":"hi"}`, 400, "array of messages", "messages"},
		{"message without role", "POST", chat, `{"messages":[{"content":"hi"}]}`, 400, "messages[0].role", "messages"},
		{"content wrong type", "POST", chat, `{"messages":[{"role":"user","content":5}]}`, 400, "messages[0].content", "messages"},
		{"image part", "POST", chat, `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "only text parts", "messages"},
		{"tools not an array", "POST", chat, `{"messages":[{"role":"user","content":"a"}],"tools":{"type":"function"}}`, 400, "tools: must be an array", "tools"},
		{"tools a string", "POST", chat, `{"messages":[{"role":"user","content":"a"}],"tools":"f"}`, 400, "tools: must be an array", "tools"},
		{"tools a number", "POST", chat, `{"messages":[{"role":"user","content":"a"}],"tools":5}`, 400, "tools: must be an array", "tools"},
		{"unknown model", "POST", comp, `{"model":"gpt-9","prompt":"a"}`, 404, "The model `gpt-9` does not exist.", "model"},
		{"prompt too long", "POST", comp, `{"prompt":"` + words(64, "w") + `"}`, 400, "maximum context length is 64 tokens", "prompt"},
		{"chat too long", "POST", chat, `{"messages":[{"role":"user","content":"` + words(60, "w") + `"}]}`, 400, "maximum context length is 64 tokens", "messages"},
		{"GET on completions", "GET", comp, ``, 405, "not allowed", ""},
		{"PUT on chat", "PUT", chat, `{}`, 405, "not allowed", ""},
		{"POST on models", "POST", "/v1/models", `{}`, 405, "not allowed", ""},
		{"unknown path", "GET", "/v1/engines", ``, 404, "no route", ""},
	}
	before := r.Server().Stats().RequestsReceived
	posts := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.method == "POST" && (tt.path == chat || tt.path == comp) {
				posts++
			}
			req, err := http.NewRequest(tt.method, "http://"+r.Addr()+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tt.status, body)
			}
			var e struct {
				Error *struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Param   *string `json:"param"`
					Code    int     `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error == nil {
				t.Fatalf("body %q is not an OpenAI error (%v)", body, err)
			}
			if !strings.Contains(e.Error.Message, tt.msg) {
				t.Errorf("message %q, want it to contain %q", e.Error.Message, tt.msg)
			}
			if e.Error.Code != tt.status || e.Error.Type == "" {
				t.Errorf("code %d type %q, want code %d and a type", e.Error.Code, e.Error.Type, tt.status)
			}
			param := ""
			if e.Error.Param != nil {
				param = *e.Error.Param
			}
			if param != tt.param {
				t.Errorf("param %q, want %q", param, tt.param)
			}
		})
	}
	// The server keeps serving: a good request still works.
	res := post(context.Background(), client, r.URL()+"/completions", completionBody("still alive", 4))
	out := parseStream(t, res)
	if res.status != http.StatusOK || len(strings.Fields(out.text)) != 4 || !out.done {
		t.Errorf("good request after bad ones: status %d, %q, done %v", res.status, out.text, out.done)
	}
	if got := r.Server().Stats().RequestsReceived - before; got != int64(posts+1) {
		t.Errorf("RequestsReceived grew by %d, want %d (every completion POST, valid or not)", got, posts+1)
	}
}

func TestPromptForms(t *testing.T) {
	// Accepted prompt forms and how many tokens each counts.
	cfg := testConfig()
	r := start(t, cfg)
	client := newClient()
	tests := []struct {
		name, path, body string
		promptTokens     int
	}{
		{"string", "/completions", `{"prompt":"a  b\tc\nd é"}`, 5},
		{"one-element list", "/completions", `{"prompt":["a b"]}`, 2},
		{"token ids", "/completions", `{"prompt":[1,2,3,4,5,6]}`, 6},
		{"one list of token ids", "/completions", `{"prompt":[[7,8,9]]}`, 3},
		{"chat parts", "/chat/completions", `{"messages":[{"role":"user","content":[{"type":"text","text":"a b"},{"type":"text","text":"c"}]}]}`, 3 + sim.MessageOverheadTokens},
		{"chat null content", "/chat/completions", `{"messages":[{"role":"assistant","content":null},{"role":"user","content":"x"}]}`, 1 + 2*sim.MessageOverheadTokens},
		{"unknown fields ignored", "/completions", `{"prompt":"a","temperature":0.3,"top_p":1,"seed":4,"n":1}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := strings.TrimSuffix(tt.body, "}") + `,"max_tokens":2,"stream":true,"stream_options":{"include_usage":true}}`
			res := post(context.Background(), client, r.URL()+tt.path, body)
			if res.status != http.StatusOK {
				t.Fatalf("status %d: %s", res.status, res.raw)
			}
			out := parseStream(t, res)
			if out.usage == nil || out.usage[0] != tt.promptTokens || out.usage[1] != 2 {
				t.Errorf("usage %v, want prompt %d, completion 2", out.usage, tt.promptTokens)
			}
		})
	}
}

func TestOutputLengthRules(t *testing.T) {
	cfg := testConfig()
	cfg.MaxModelLen = 50
	cfg.KVCacheTokens = 1000
	cfg.DefaultMaxTokens = 7
	r := start(t, cfg)
	client := newClient()
	tests := []struct {
		name, path, body string
		want             int
	}{
		{"default max tokens", "/completions", `{"prompt":"a b"}`, 7},
		{"max_tokens", "/completions", `{"prompt":"a b","max_tokens":3}`, 3},
		{"capped by the context", "/completions", `{"prompt":"` + words(40, "w") + `","max_tokens":30}`, 10},
		{"chat max_completion_tokens wins", "/chat/completions", `{"messages":[{"role":"user","content":"a"}],"max_tokens":9,"max_completion_tokens":2}`, 2},
		{"chat max_tokens", "/chat/completions", `{"messages":[{"role":"user","content":"a"}],"max_tokens":4}`, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := strings.TrimSuffix(tt.body, "}") + `,"stream":true}`
			res := post(context.Background(), client, r.URL()+tt.path, body)
			out := parseStream(t, res)
			if n := len(strings.Fields(out.text)); n != tt.want || out.finish != "length" {
				t.Errorf("%d tokens, finish %q; want %d, length", n, out.finish, tt.want)
			}
		})
	}
}
