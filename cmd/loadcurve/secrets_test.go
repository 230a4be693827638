package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// The secrets of TestSecretsSurviveHostileServers, one per source.
const (
	canaryUser  = "alice"
	canaryPass  = "PwSecret123"
	canaryQuery = "QuerySecret456"
	canaryKey   = "sk-ApiKeySecret789"
	canaryHdr   = "HdrSecret000"
)

// echoServer is a deployment that echoes everything a client sent (the Authorization header,
// the custom header, the URL with its query) back through every path a client reads: an error
// body, an error event in the stream, a malformed chunk, a redirect's Location and body, and the
// metrics endpoint; each echo is followed by an encoded one (encodedEcho: a piece, another case,
// hex, base64 at an alignment, URL- or HTML-escaped, in turn). Requests after the preflight cycle through those paths and a normal stream;
// with failAll every request, the preflight too, gets the error body.
func echoServer(t *testing.T, failAll bool) *httptest.Server {
	var n atomic.Int64
	echo := func(r *http.Request) string {
		return fmt.Sprintf("you sent Authorization=%q X-Custom=%q url=%q ", r.Header.Get("Authorization"), r.Header.Get("X-Custom"), r.URL.String()) +
			encodedEcho(r, int(n.Load()/5))
	}
	errorBody := func(w http.ResponseWriter, r *http.Request, status int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = jsonEncode(w, map[string]any{"error": map[string]any{"message": echo(r), "type": "invalid_request_error"}})
	}
	chunk := func(w io.Writer, s string) { fmt.Fprintf(w, "data: %s\n\n", s) }
	okChunk := `{"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hi there"}}]}`
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, echo(r), http.StatusUnauthorized)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mode := 4 // a normal stream for the preflight
		if failAll {
			mode = 0
		} else if !strings.Contains(string(body), "Reply with the word ready.") {
			mode = int(n.Add(1) % 5)
		}
		if mode == 0 {
			errorBody(w, r, http.StatusInternalServerError)
			return
		}
		if mode == 3 {
			w.Header().Set("Location", "http://127.0.0.1:1/steal?k="+url.QueryEscape(echo(r)))
			w.WriteHeader(http.StatusFound)
			_, _ = io.WriteString(w, echo(r))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk(w, okChunk)
		switch mode {
		case 1: // an error event mid-stream
			chunk(w, `{"error":{"message":`+quoteJSON(echo(r))+`}}`)
			return
		case 2: // a malformed chunk, the key placed where a cut of the text at 117 bytes splits it
			chunk(w, `{"choices":[`+strings.Repeat(" ", 65)+echo(r))
			return
		}
		chunk(w, `{"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`)
		chunk(w, "[DONE]")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestSecretsSurviveHostileServers is the matrix of secret sources × echo paths × outputs: a
// server echoes every secret it received through every path, as it was sent and in another form
// (encodedEcho), and no output of run or report (records, summary, curve, report.html, plots,
// CSV, stdout, stderr, error texts) holds any piece of eight bytes of any of them, in any of those
// forms (leakChecker). TestSecretsEchoedEverywhere extends it to every other command's output.
func TestSecretsSurviveHostileServers(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte(canaryUser + ":" + canaryPass))
	canaries := []string{canaryPass, canaryQuery, canaryKey, canaryHdr, basic}
	tests := []struct {
		name    string
		env     bool // the API key from OPENAI_API_KEY instead of --api-key
		args    []string
		failAll bool
	}{
		{name: "flags, header, user info and query", args: []string{"--api-key", canaryKey, "--header", "X-Custom: " + canaryHdr}},
		{name: "key from the environment", env: true},
		{name: "user info only (HTTP Basic)"},
		{name: "preflight error", args: []string{"--api-key", canaryKey, "--header", "X-Custom: Bearer " + canaryHdr}, failAll: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env {
				t.Setenv("OPENAI_API_KEY", canaryKey)
			} else {
				t.Setenv("OPENAI_API_KEY", "")
			}
			srv := echoServer(t, tt.failAll)
			u, _ := url.Parse(srv.URL)
			base := fmt.Sprintf("http://%s:%s@%s/v1?api-version=%s", canaryUser, canaryPass, u.Host, canaryQuery)
			dir := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runCLI(t, append([]string{"run", "--base-url", base, "--model", "m", "--num-requests", "20",
				"--request-rate", "200", "--goodput", "ttft:500", "--out", dir}, tt.args...)...)
			texts := map[string]string{"stdout": stdout, "stderr": stderr}
			if tt.failAll {
				if code != exitFailure || !strings.Contains(stderr, "preflight") {
					t.Fatalf("exit %d, want %d with the preflight's error:\n%s", code, exitFailure, stderr)
				}
			} else {
				if _, err := os.Stat(filepath.Join(dir, "records.jsonl")); err != nil {
					t.Fatalf("exit %d, no records: %v\n%s", code, err, stderr)
				}
				rcode, rout, rerr := runCLI(t, "report", dir)
				if rcode != exitOK {
					t.Fatalf("report: exit %d: %s", rcode, rerr)
				}
				texts["report stdout"], texts["report stderr"] = rout, rerr
				for name, text := range snapshot(t, dir) {
					texts[name] = text
				}
				// Every echo path was taken: the records hold each kind of failure.
				records := texts["records.jsonl"]
				for _, want := range []string{"HTTP 500", "error in stream", "malformed event data", "redirect to http://127.0.0.1:1/steal refused"} {
					if !strings.Contains(records, want) {
						t.Errorf("no record says %q: the echo path was not exercised", want)
					}
				}
				if !strings.Contains(records, "[REDACTED]") {
					t.Error("nothing was redacted: the server's echo did not reach the records")
				}
			}
			newLeakChecker(canaries...).check(t, texts)
		})
	}
}

func jsonEncode(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
