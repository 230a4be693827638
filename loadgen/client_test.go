package loadgen_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		in      string
		want    loadgen.Endpoint
		wantErr bool
	}{
		{"chat", loadgen.Chat, false},
		{"completions", loadgen.Completions, false},
		{" Chat ", loadgen.Chat, false},
		{"responses", loadgen.Responses, false},
		{"Embeddings", loadgen.Embeddings, false},
		{"embedding", "", true},
		{"/v1/chat/completions", "", true},
		{"", "", true},
	}
	for _, tc := range tests {
		got, err := loadgen.ParseEndpoint(tc.in)
		if (err != nil) != tc.wantErr || (err == nil && got != tc.want) {
			t.Errorf("ParseEndpoint(%q) = %v, %v", tc.in, got, err)
		}
		if err == nil && got.String() != strings.ToLower(strings.TrimSpace(tc.in)) {
			t.Errorf("String() = %q", got.String())
		}
	}
}

func TestTargetValidate(t *testing.T) {
	ok := loadgen.Target{BaseURL: "http://127.0.0.1:8000/v1"}
	tests := []struct {
		name  string
		mod   func(*loadgen.Target)
		flags []string // each error must name one of these, in order
	}{
		{"valid", func(*loadgen.Target) {}, nil},
		{"valid extra body", func(t *loadgen.Target) {
			t.ExtraBody = json.RawMessage(`{"ignore_eos":true,"stream":true,"stream_options":{"continuous_usage_stats":true}}`)
		}, nil},
		{"empty URL", func(t *loadgen.Target) { t.BaseURL = "" }, []string{loadgen.FieldBaseURL}},
		{"no scheme", func(t *loadgen.Target) { t.BaseURL = "localhost:8000/v1" }, []string{loadgen.FieldBaseURL}},
		{"ftp", func(t *loadgen.Target) { t.BaseURL = "ftp://h/v1" }, []string{loadgen.FieldBaseURL}},
		{"extra body not an object", func(t *loadgen.Target) { t.ExtraBody = json.RawMessage(`[1]`) }, []string{loadgen.FieldExtraBody}},
		{"extra body not JSON", func(t *loadgen.Target) { t.ExtraBody = json.RawMessage(`{ignore_eos:true}`) }, []string{loadgen.FieldExtraBody}},
		{"extra body trailing data", func(t *loadgen.Target) { t.ExtraBody = json.RawMessage(`{"a":1} {}`) }, []string{loadgen.FieldExtraBody}},
		{"extra body turns streaming off", func(t *loadgen.Target) { t.ExtraBody = json.RawMessage(`{"stream":false}`) }, []string{loadgen.FieldExtraBody}},
		{"negative timeout", func(t *loadgen.Target) { t.Timeout = -time.Second }, []string{loadgen.FieldTimeout}},
		{"everything at once", func(t *loadgen.Target) {
			t.BaseURL, t.ExtraBody, t.Timeout = "nope", json.RawMessage(`1`), -1
		}, []string{loadgen.FieldBaseURL, loadgen.FieldExtraBody, loadgen.FieldTimeout}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := ok
			tc.mod(&tg)
			errs := tg.Validate()
			if len(errs) != len(tc.flags) {
				t.Fatalf("got %d errors %v, want %d", len(errs), errs, len(tc.flags))
			}
			for i, f := range tc.flags {
				if fe := field.Of(errs[i]); fe == nil || fe.Name != f {
					t.Errorf("error %q is not a field error naming %s", errs[i], f)
				}
			}
		})
	}
}

func TestSanitizeURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"},
		{"https://user:pw@host/v1?api-key=s3cret#frag", "https://host/v1"},
		{"http://host/v1?", "http://host/v1"},
		{"://bad", "(invalid URL)"},
	}
	for _, tc := range tests {
		if got := loadgen.SanitizeURL(tc.in); got != tc.want {
			t.Errorf("SanitizeURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRequestOnTheWire checks what the server receives: path, headers, and the body with
// --extra-body merged (its keys override ours; stream_options is merged one level deep).
func TestRequestOnTheWire(t *testing.T) {
	tests := []struct {
		name     string
		target   loadgen.Target
		req      workloads.Request
		wantPath string
		want     map[string]any
	}{
		{
			name:     "chat with extra body",
			target:   loadgen.Target{ExtraBody: json.RawMessage(`{"ignore_eos":true,"max_tokens":7,"stream_options":{"continuous_usage_stats":true},"temperature":0}`)},
			req:      workloads.Request{Prompt: "say \"hi\" <now>\n", MaxTokens: 16},
			wantPath: "/v1/chat/completions",
			want: map[string]any{
				"model": "m", "messages": []any{map[string]any{"role": "user", "content": "say \"hi\" <now>\n"}},
				"max_tokens": 7.0, "stream": true, "ignore_eos": true, "temperature": 0.0,
				"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true},
			},
		},
		{
			name:     "chat messages as given",
			req:      workloads.Request{Messages: []workloads.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}, MaxTokens: 3},
			wantPath: "/v1/chat/completions",
			want: map[string]any{
				"model": "m", "messages": []any{map[string]any{"role": "system", "content": "be brief"}, map[string]any{"role": "user", "content": "hi"}},
				"max_tokens": 3.0, "stream": true, "stream_options": map[string]any{"include_usage": true},
			},
		},
		{
			name:     "completions, model overridden",
			target:   loadgen.Target{Endpoint: loadgen.Completions, ExtraBody: json.RawMessage(`{"model":"other"}`)},
			req:      workloads.Request{Prompt: "once upon", MaxTokens: 5},
			wantPath: "/v1/completions",
			want: map[string]any{
				"model": "other", "prompt": "once upon", "max_tokens": 5.0, "stream": true,
				"stream_options": map[string]any{"include_usage": true},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := tc.target
			tg.APIKey = "sk-test-key"
			tg.Headers = http.Header{"X-Trace": {"trace-1"}}
			_, srv := doOnce(t, tg, tc.req, fakesse.Stream{Chunks: 1}.Script())
			got := srv.Received()
			if len(got) != 1 {
				t.Fatalf("%d requests", len(got))
			}
			r := got[0]
			if r.Path != tc.wantPath || r.Method != http.MethodPost {
				t.Errorf("%s %s, want POST %s", r.Method, r.Path, tc.wantPath)
			}
			if a := r.Header.Get("Authorization"); a != "Bearer sk-test-key" {
				t.Errorf("Authorization %q", a)
			}
			if h := r.Header.Get("X-Trace"); h != "trace-1" {
				t.Errorf("X-Trace %q", h)
			}
			if ae := r.Header.Get("Accept-Encoding"); ae != "" {
				t.Errorf("Accept-Encoding %q: compression must be off", ae)
			}
			if body := r.JSON(); !reflect.DeepEqual(body, tc.want) {
				t.Errorf("body\n got %v\nwant %v", body, tc.want)
			}
		})
	}
}

func TestResolveModel(t *testing.T) {
	srv := fakesse.New(func(fakesse.Received) fakesse.Script { return fakesse.Script{} })
	defer srv.Close()
	srv.Models = []string{"first", "second"}
	c, err := loadgen.NewClient(loadgen.Target{BaseURL: srv.URL}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := c.ResolveModel(context.Background())
	if err != nil || m != "first" || c.Model() != "first" {
		t.Fatalf("ResolveModel = %q, %v", m, err)
	}
	named := newClient(t, loadgen.Target{BaseURL: srv.URL, Model: "mine"}, 0)
	if m, err := named.ResolveModel(context.Background()); err != nil || m != "mine" {
		t.Errorf("named model: %q, %v", m, err)
	}
	if n := len(srv.Received()); n != 1 {
		t.Errorf("%d requests, want 1 (a named model needs no GET /models)", n)
	}
}

func TestResolveModelBaseURLMistakes(t *testing.T) {
	mux := http.NewServeMux() // serves exactly /v1/models, as vLLM does
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"only","object":"model"}]}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resolve := func(base string) (string, error) {
		c, err := loadgen.NewClient(loadgen.Target{BaseURL: base}, 0) // no model: it is resolved
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ResolveModel(context.Background())
	}
	// A trailing slash is not a "//models" 404.
	if m, err := resolve(srv.URL + "/v1/"); err != nil || m != "only" {
		t.Errorf("base URL with a trailing slash: %q, %v", m, err)
	}
	// Without /v1 the 404 says what is probably wrong.
	_, err := resolve(srv.URL)
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "It usually ends in /v1 ("+srv.URL+"/v1)") {
		t.Errorf("base URL without /v1: %v", err)
	}
}

func closedPortURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

func TestPreflight(t *testing.T) {
	notFound := func(fakesse.Received) fakesse.Script {
		return fakesse.Script{Status: 404, Body: fakesse.ErrorJSON("The model `x` does not exist.")}
	}
	tests := []struct {
		name    string
		handler func(fakesse.Received) fakesse.Script
		models  []string
		noList  bool // GET /models is answered by handler too
		model   string
		refused bool
		is      error
		want    string // the message, with URL for the base URL
	}{
		{name: "ok", handler: func(fakesse.Received) fakesse.Script { return fakesse.Stream{Chunks: 1}.Script() }, model: "m"},
		{name: "connection refused", refused: true, model: "m", is: loadgen.ErrUnreachable,
			want: "target unreachable: cannot reach URL: connection refused — is the server running?"},
		{name: "401", model: "m", is: loadgen.ErrUnauthorized,
			handler: func(fakesse.Received) fakesse.Script {
				return fakesse.Script{Status: 401, Body: fakesse.ErrorJSON("invalid key")}
			},
			want: "unauthorised (HTTP 401 from URL): check --api-key or OPENAI_API_KEY (server said: invalid key)"},
		{name: "403", model: "m", is: loadgen.ErrUnauthorized,
			handler: func(fakesse.Received) fakesse.Script { return fakesse.Script{Status: 403} },
			want:    "unauthorised (HTTP 403 from URL): check --api-key or OPENAI_API_KEY"},
		{name: "unknown model", model: "x", models: []string{"a", "b"}, handler: notFound, is: loadgen.ErrModelNotServed,
			want: `model not served: model "x" not served; GET URL/models lists: a, b`},
		{name: "404 for a served model: wrong endpoint", model: "a", models: []string{"a"}, handler: notFound,
			want: "HTTP 404 from URL/chat/completions although model \"a\" is served: does the server support --endpoint chat? (server said: The model `x` does not exist.)"},
		{name: "404 everywhere: wrong base URL", model: "m", noList: true,
			handler: func(fakesse.Received) fakesse.Script { return fakesse.Script{Status: 404, Body: "404 page not found"} },
			want:    "HTTP 404 from URL/chat/completions and from URL/models: is --base-url right? It usually ends in /v1"},
		{name: "other status", model: "m",
			handler: func(fakesse.Received) fakesse.Script {
				return fakesse.Script{Status: 503, Body: fakesse.ErrorJSON("warming up")}
			},
			want: "preflight request to URL/chat/completions failed: HTTP 503 Service Unavailable: warming up"},
		{name: "broken stream", model: "m",
			handler: func(fakesse.Received) fakesse.Script { return fakesse.Stream{Chunks: 1, NoDone: true}.Script() },
			want:    "preflight request to URL/chat/completions failed (stream_error): stream ended without data: [DONE] after 1 output chunks"},
		{name: "a web page: the cause, not only the missing [DONE]", model: "m",
			handler: func(fakesse.Received) fakesse.Script {
				return fakesse.Script{ContentType: "text/html; charset=utf-8", Body: "<html><body>Welcome</body></html>"}
			},
			want: `preflight request to URL/chat/completions failed (stream_error): stream ended without data: [DONE] after 0 output chunks: the answer's Content-Type is "text/html; charset=utf-8", not text/event-stream: is --base-url the API (it usually ends in /v1), not a web page or a proxy's?`},
		{name: "[DONE] and nothing else", model: "m", is: loadgen.ErrNoOutput,
			handler: func(fakesse.Received) fakesse.Script { return fakesse.Script{Body: "data: [DONE]\n\n"} },
			want:    "no output: the preflight request to URL/chat/completions ended with [DONE] but streamed no output (no content, text or reasoning in any choice): every measured request may too, with 0 tokens counted as ok"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := closedPortURL(t)
			var srv *fakesse.Server
			if !tc.refused {
				srv = fakesse.New(tc.handler)
				defer srv.Close()
				if tc.models != nil {
					srv.Models = tc.models
				}
				if tc.noList {
					srv.Models = nil
				}
				base = srv.URL
			}
			c := newClient(t, loadgen.Target{BaseURL: base, Model: tc.model}, 1)
			err := c.Preflight(context.Background(), loadgen.PreflightRequest())
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Preflight: %v", err)
				}
				body := srv.Received()[0].JSON()
				if body["max_tokens"] != 4.0 {
					t.Errorf("preflight max_tokens %v, want 4", body["max_tokens"])
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			if want := strings.ReplaceAll(tc.want, "URL", base); flagged(err) != want {
				t.Errorf("error\n got %q\nwant %q", flagged(err), want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error is not %v", tc.is)
			}
		})
	}
}

// TestSecretsNeverEchoed: the server echoes the API key, a header value and a URL query secret
// in every place an error text is built from; none may reach a record or an error.
func TestSecretsNeverEchoed(t *testing.T) {
	const key, hdr, query = "sk-CANARY-key-0123456789", "hdr-CANARY-value", "q-CANARY-secret"
	echo := func(r fakesse.Received) string {
		return fmt.Sprintf("got %s and %s with %s", r.Header.Get("Authorization"), r.Header.Get("X-Api-Secret"), query)
	}
	scripts := map[string]func(r fakesse.Received) fakesse.Script{
		"401 JSON": func(r fakesse.Received) fakesse.Script {
			return fakesse.Script{Status: 401, Body: fakesse.ErrorJSON(echo(r))}
		},
		"500 text": func(r fakesse.Received) fakesse.Script {
			return fakesse.Script{Status: 500, ContentType: "text/plain", Body: echo(r)}
		},
		"error in stream": func(r fakesse.Received) fakesse.Script {
			return steps(fakesse.Data(0, `{"error":{"message":`+jsonQuote(echo(r))+`}}`))
		},
		"malformed line": func(r fakesse.Received) fakesse.Script {
			return steps(fakesse.Data(0, `{"oops `+echo(r)))
		},
		"JSON instead of a stream": func(r fakesse.Received) fakesse.Script {
			return fakesse.Script{ContentType: "application/json", Body: fakesse.ErrorJSON(echo(r))}
		},
	}
	for name, h := range scripts {
		t.Run(name, func(t *testing.T) {
			srv := fakesse.New(h)
			defer srv.Close()
			srv.Models = []string{"other"}
			tg := loadgen.Target{BaseURL: srv.URL + "?sig=" + query, APIKey: key, Model: "m",
				Headers: http.Header{"X-Api-Secret": {hdr}}}
			c := newClient(t, tg, 1)
			rec := records.NewRecord(0, 0, 0)
			req := prompt()
			c.Do(context.Background(), time.Now(), &req, &rec)
			if rec.Outcome == records.OK || rec.Error == "" {
				t.Fatalf("outcome %v error %q", rec.Outcome, rec.Error)
			}
			line := string(rec.AppendJSON(nil))
			if strings.Contains(line, "CANARY") || !strings.Contains(rec.Error, "[REDACTED]") {
				t.Errorf("record leaks or was not redacted: %s", line)
			}
			if err := c.Preflight(context.Background(), loadgen.PreflightRequest()); err == nil || strings.Contains(err.Error(), "CANARY") {
				t.Errorf("preflight error: %v", err)
			}
			if got := srv.Received(); got[0].Header.Get("X-Api-Secret") != hdr || !strings.Contains(got[0].Path, "/v1/chat/completions") {
				t.Errorf("the request itself must still carry the secrets: %+v", got[0])
			}
		})
	}
	// A transport error quotes the URL in net/http's text: the query must not leak either.
	c, err := loadgen.NewClient(loadgen.Target{BaseURL: closedPortURL(t) + "?sig=" + query, APIKey: key}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec := records.NewRecord(0, 0, 0)
	req := prompt()
	c.Do(context.Background(), time.Now(), &req, &rec)
	if strings.Contains(rec.Error, "CANARY") {
		t.Errorf("transport error leaks: %q", rec.Error)
	}
	if _, err := c.ResolveModel(context.Background()); err == nil || strings.Contains(err.Error(), "CANARY") {
		t.Errorf("ResolveModel error leaks: %v", err)
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestPreflightTLS(t *testing.T) {
	ok := func(fakesse.Received) fakesse.Script { return fakesse.Stream{Chunks: 1}.Script() }
	tlsSrv := fakesse.NewTLS(ok)
	defer tlsSrv.Close()
	plain := fakesse.New(ok)
	defer plain.Close()
	tests := []struct {
		name     string
		base     string
		insecure bool
		want     string
	}{
		{"self-signed certificate", tlsSrv.URL, false, "TLS certificate not trusted"},
		{"self-signed certificate, insecure", tlsSrv.URL, true, ""},
		{"https to a plain server", strings.Replace(plain.URL, "http://", "https://", 1), false, "does not speak TLS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, loadgen.Target{BaseURL: tc.base, Insecure: tc.insecure}, 1)
			err := c.Preflight(context.Background(), loadgen.PreflightRequest())
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Preflight: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, loadgen.ErrUnreachable)):
				t.Errorf("Preflight: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestResolveModelErrors(t *testing.T) {
	srv := fakesse.New(func(fakesse.Received) fakesse.Script { return fakesse.Script{} })
	defer srv.Close()
	srv.Models = nil // GET /models goes to the handler below instead
	unauthorized := fakesse.New(func(fakesse.Received) fakesse.Script {
		return fakesse.Script{Status: 401, Body: fakesse.ErrorJSON("no key")}
	})
	defer unauthorized.Close()
	unauthorized.Models = nil
	empty := fakesse.New(func(fakesse.Received) fakesse.Script { return fakesse.Script{} })
	defer empty.Close()
	empty.Models = []string{}
	refused := closedPortURL(t)
	tests := []struct {
		name, base string
		is         error
		want       string
	}{
		{"refused", refused, loadgen.ErrUnreachable, "choose a model: target unreachable: cannot reach " + refused + ": connection refused — is the server running?"},
		{"401", unauthorized.URL, loadgen.ErrUnauthorized, "choose a model: unauthorised (HTTP 401 from GET " + unauthorized.URL + "/models): check --api-key or OPENAI_API_KEY (server said: no key)"},
		{"no models", empty.URL, nil, "choose a model: GET " + empty.URL + "/models lists no models; give --model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadgen.NewClient(loadgen.Target{BaseURL: tc.base}, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.ResolveModel(context.Background())
			if err == nil || flagged(err) != tc.want || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Errorf("error\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}
