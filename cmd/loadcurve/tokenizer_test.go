package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/measure/tokens"
)

// testTokenizer is a SentencePiece-style BPE with byte fallback written for the tokens
// package's tests: most words are one token after a space.
var testTokenizer = filepath.Join("..", "..", "measure", "tokens", "testdata", "components", "model-byte-fallback.json")

// captureServer answers every request with a short stream and keeps the prompts it was sent
// (the preflight's too).
type captureServer struct {
	*httptest.Server
	mu      sync.Mutex
	prompts []string
}

func newCaptureServer(t *testing.T) *captureServer {
	cs := &captureServer{}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Prompt   string `json:"prompt"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &body)
		text := body.Prompt
		for _, m := range body.Messages {
			text += m.Content
		}
		if r.Method == http.MethodPost {
			cs.mu.Lock()
			cs.prompts = append(cs.prompts, text)
			cs.mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for range 2 {
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":" ok"},"text":" ok","finish_reason":null}]}`+"\n\n")
		}
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"text":"","finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(cs.Close)
	return cs
}

// sent returns the prompts the run sent, the preflight's left out.
func (cs *captureServer) sent() []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var out []string
	for _, p := range cs.prompts {
		if p != "Reply with the word ready." {
			out = append(out, p)
		}
	}
	return out
}

func headerOf(t *testing.T, dir string) records.Header {
	t.Helper()
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return f.Header
}

// TestRunSendsPromptsOfTheTokensAsked: run --tokenizer F --random-input-len N sends prompts of
// exactly N tokens of F in the default cache mode (the cold nonce counted), on both endpoints;
// the records header names the tokenizer by its file and hash.
func TestRunSendsPromptsOfTheTokensAsked(t *testing.T) {
	tk, err := tokens.Load(testTokenizer)
	if err != nil {
		t.Fatal(err)
	}
	for _, endpoint := range []string{"chat", "completions"} {
		t.Run(endpoint, func(t *testing.T) {
			cs := newCaptureServer(t)
			dir := filepath.Join(t.TempDir(), "out")
			code, _, stderr := runCLI(t, "run", "--base-url", cs.URL+"/v1", "--model", "m", "--endpoint", endpoint, "--tokenizer", testTokenizer,
				"--random-input-len", "48", "--random-range-ratio", "0.5", "--num-requests", "16", "--request-rate", "200", "--quiet", "--out", dir)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			sent := cs.sent()
			if len(sent) != 16 {
				t.Fatalf("%d prompts sent, want 16", len(sent))
			}
			f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			recs := f.Records
			lengths := map[int]bool{}
			for _, p := range sent {
				if !strings.HasPrefix(p, "[run:") {
					t.Errorf("no cold-cache nonce in front of %.40q", p)
				}
				n, err := tk.Count(p)
				if err != nil {
					t.Fatal(err)
				}
				if n < 24 || n > 72 {
					t.Errorf("a prompt counts %d tokens, outside 48 ± 50 %%", n)
				}
				lengths[n] = true
			}
			// Every length sent is one a record says was asked (the server's usage, which says
			// 1 here, is kept beside it), so the records' counts are what the tokenizer counts.
			asked := map[int]int{}
			for _, r := range recs {
				n := r.RequestedInputTokens
				if n == 0 {
					n = r.InputTokens
				}
				asked[n]++
			}
			for _, p := range sent {
				n, _ := tk.Count(p)
				if asked[n] == 0 {
					t.Errorf("a prompt of %d tokens was sent, no record asked for it (records asked %v)", n, asked)
				}
				asked[n]--
			}
			if len(lengths) < 4 {
				t.Errorf("%d distinct lengths in 16 prompts: the range ratio drew nothing", len(lengths))
			}
			h := headerOf(t, dir)
			if want := tk.Name() + " (" + tk.ID() + ")"; h.Tokenizer != want {
				t.Errorf("header tokenizer %q, want %q", h.Tokenizer, want)
			}
		})
	}
}

// TestTokenizerNamedAsVLLMUsersNameIt: a Hugging Face model id is found in the local cache,
// given as --tokenizer or, without one, as --model (vLLM's default), and said so; a --model
// the cache does not have sizes in words, saying where it looked; a --tokenizer it does not
// have is refused in one line naming the places tried.
func TestTokenizerNamedAsVLLMUsersNameIt(t *testing.T) {
	hub := t.TempDir()
	t.Setenv("HF_HUB_CACHE", hub)
	snap := filepath.Join(hub, "models--acme--tiny-lm", "snapshots", "c0ffee")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(testTokenizer)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap, "tokenizer.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	tk, err := tokens.Load(testTokenizer)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		flags []string
		sized bool
		note  string
	}{
		{"tokenizer id", []string{"--model", "m", "--tokenizer", "acme/tiny-lm"}, true, "prompts are sized in the tokens of --tokenizer acme/tiny-lm (" + filepath.Join(snap, "tokenizer.json")},
		{"model id", []string{"--model", "acme/tiny-lm"}, true, "prompts are sized in the tokens of --model acme/tiny-lm"},
		{"model not cached", []string{"--model", "acme/other-lm"}, false, "prompts are sized in words: no tokenizer for --model acme/other-lm (not a local file, and not in the Hugging Face cache (looked in " + hub},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := newCaptureServer(t)
			args := append([]string{"run", "--base-url", cs.URL + "/v1", "--random-input-len", "40", "--num-requests", "4", "--request-rate", "100",
				"--quiet", "--out", filepath.Join(t.TempDir(), "out")}, tc.flags...)
			code, _, stderr := runCLI(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stderr, tc.note) || strings.Count(stderr, tc.note) != 1 {
				t.Errorf("stderr does not say %q once:\n%s", tc.note, stderr)
			}
			for _, p := range cs.sent() {
				n, _ := tk.Count(p)
				if tc.sized != (n == 40) {
					t.Errorf("a prompt counts %d tokens of the cached tokenizer (sized in it: %v)", n, tc.sized)
				}
			}
		})
	}
	code, _, stderr := runCLI(t, "run", "--model", "m", "--tokenizer", "acme/missing-lm", "--num-requests", "2", "--quiet", "--out", filepath.Join(t.TempDir(), "out"))
	if code != exitUsage || !strings.Contains(stderr, "--tokenizer acme/missing-lm: not a local file, and not in the Hugging Face cache (looked in "+filepath.Join(hub, "models--acme--missing-lm")) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestWorkloadSizesInTokens: loadcurve workload --tokenizer sizes a materialised set in the
// tokenizer's tokens and names it; the set written loads back with the same fingerprint.
func TestWorkloadSizesInTokens(t *testing.T) {
	tk, err := tokens.Load(testTokenizer)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "set.jsonl")
	code, stdout, stderr := runCLI(t, "workload", "--tokenizer", testTokenizer, "--random-input-len", "30", "--num-requests", "8", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "tokenizer=sha256:") || !strings.Contains(stderr, "input tokens counted with "+testTokenizer+" ("+tk.ID()+")") {
		t.Errorf("the tokenizer is not named:\n%s%s", stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct {
			Prompt      string `json:"prompt"`
			InputTokens int    `json:"input_tokens"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if n, _ := tk.Count(r.Prompt); n != 30 || r.InputTokens != 30 {
			t.Errorf("request %d: counts %d, says %d; want 30", i, n, r.InputTokens)
		}
	}
	fp := strings.Fields(stdout)[0]
	_, again, _ := runCLI(t, "workload", "--workload", out)
	if !strings.HasPrefix(again, fp) {
		t.Errorf("the written set loads back as %q, not %s", again, fp)
	}
}

// TestVirtualEngineRun: --sim-clock virtual serves the embedded batching engine's model: the
// run's records are the engine's (every request answered, its prompt counted as the server
// counts it, a step's tokens a chunk), its header names the virtual clock, and nothing waits.
func TestVirtualEngineRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "virtual")
	code, stdout, stderr := runCLI(t, "run", "--sim-clock", "virtual", "--num-requests", "300", "--request-rate", "40",
		"--random-input-len", "64", "--random-output-len", "32", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.Target != result.VirtualEngineTarget || len(f.Records) != 300 {
		t.Fatalf("target %q, %d records", f.Header.Target, len(f.Records))
	}
	for _, r := range f.Records {
		// Chat: 64 words, the nonce and the template's 4 tokens; the first token, then 31 in
		// chunks of 8.
		if r.Outcome != records.OK || r.InputTokens != 69 || r.RequestedInputTokens != 65 || r.OutputTokens != 32 || r.Chunks != 5 || r.Sent != r.Planned {
			t.Fatalf("record %+v: want 69 prompt tokens (65 requested), 32 tokens in 5 chunks, sent when planned", r)
		}
	}
	if !strings.Contains(stderr, "serving the embedded batching engine") || !strings.Contains(stdout, "Successful requests:") {
		t.Errorf("output:\n%s\n%s", stdout, stderr)
	}
}
