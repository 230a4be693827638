package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// testdata/vllm_result_golden.json is a result file as vLLM's writer (vllm/benchmarks/serve.py
// at commit 009e6d4a, main_async: json.dump of result_json) writes it for a generative run with
// --save-result --save-detailed, --label, --goodput and --max-concurrency, vLLM's default
// statistics (ttft, tpot, itl at p99) and a tokenizer: the values are made up, the keys, their
// order and their JSON types are vLLM's.

// jsonTypes returns the keys of a JSON object in order and the type of each value as Python
// wrote it: int, float, str, null, bool, list[T] (T of the first element), list[list[T]].
func jsonTypes(t *testing.T, b []byte) ([]string, map[string]string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %v", err)
	}
	var keys []string
	types := map[string]string{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		types[k.(string)] = typeOf(v)
	}
	return keys, types
}

func typeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case string:
		return "str"
	case json.Number:
		if strings.ContainsAny(v.String(), ".eE") {
			return "float"
		}
		return "int"
	case []any:
		if len(v) == 0 {
			return "list"
		}
		return "list[" + typeOf(v[0]) + "]"
	}
	return fmt.Sprintf("%T", v)
}

// TestVLLMResultHasVLLMsKeysAndTypes: the --save-result file of a run has the key set, the order
// and the value types of vLLM's writer (the golden): floats written as floats (request_rate,
// burstiness, max_output_tokens_per_s were written 20, 1, 16), latencies and queue_times always,
// the seven per-request arrays only with --save-detailed, "inf" for an infinite rate.
func TestVLLMResultHasVLLMsKeysAndTypes(t *testing.T) {
	t.Parallel()
	golden, err := os.ReadFile(filepath.Join("testdata", "vllm_result_golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	wantKeys, wantTypes := jsonTypes(t, golden)
	detailedOnly := []string{"input_lens", "output_lens", "ttfts", "itls", "start_times", "generated_texts", "errors"}
	tok := filepath.Join("..", "..", "measure", "tokens", "testdata", "tokenizer.json")
	for _, tc := range []struct {
		name     string
		detailed bool
		args     []string
	}{
		{"detailed", true, []string{"--save-detailed"}},
		{"plain", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vdir := t.TempDir()
			args := append([]string{"run", "--backend", "openai-chat", "--endpoint", "/v1/chat/completions", "--num-prompts", "6", "--request-rate", "20",
				"--max-concurrency", "2", "--label", "nightly", "--goodput", "ttft:60000", "--tokenizer", tok, "--save-result",
				"--result-dir", vdir, "--result-filename", "r.json"}, small...)
			code, _, stderr := runCLI(t, append(args, tc.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			b, err := os.ReadFile(filepath.Join(vdir, "r.json"))
			if err != nil {
				t.Fatal(err)
			}
			keys, types := jsonTypes(t, b)
			want := wantKeys
			if !tc.detailed {
				want = slices.DeleteFunc(slices.Clone(wantKeys), func(k string) bool { return slices.Contains(detailedOnly, k) })
			}
			if !slices.Equal(keys, want) {
				t.Fatalf("keys\n got %v\nwant %v", keys, want)
			}
			for _, k := range keys {
				got, w := types[k], wantTypes[k]
				if got != w && !(got == "list" && strings.HasPrefix(w, "list")) && !(strings.HasPrefix(got, "list[list") && w == "list[list[float]]") {
					t.Errorf("%s: %s, vLLM writes %s", k, got, w)
				}
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if n := len(m["latencies"].([]any)); n != 6 {
				t.Errorf("latencies has %d entries for 6 requests", n)
			}
		})
	}
	t.Run("inf", func(t *testing.T) {
		vdir := t.TempDir()
		code, _, stderr := runCLI(t, append([]string{"run", "--num-prompts", "3", "--request-rate", "inf", "--save-result", "--result-dir", vdir,
			"--result-filename", "r.json"}, small...)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, _ := os.ReadFile(filepath.Join(vdir, "r.json"))
		if !bytes.Contains(b, []byte(`"request_rate":"inf"`)) {
			t.Errorf("an infinite rate is not \"inf\": %.200s", b)
		}
	})
}

// TestAppendResultWritesJSONLines: --append-result appends one JSON object a line (a newline
// before each but the first, none after the last), as vLLM, and needs no --save-result.
func TestAppendResultWritesJSONLines(t *testing.T) {
	t.Parallel()
	vdir := t.TempDir()
	for i := range 2 {
		code, _, stderr := runCLI(t, append([]string{"run", "--num-prompts", "3", "--request-rate", "50", "--append-result",
			"--result-dir", vdir, "--result-filename", "all.json", "--label", fmt.Sprint("run", i)}, small...)...)
		if code != exitOK {
			t.Fatalf("run %d: exit %d: %s", i, code, stderr)
		}
	}
	b, err := os.ReadFile(filepath.Join(vdir, "all.json"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) != 2 || bytes.HasSuffix(b, []byte("\n")) {
		t.Fatalf("want two lines without a final newline, got %q", b)
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["label"] != fmt.Sprint("run", i) {
			t.Errorf("line %d: %v, label %v", i+1, err, m["label"])
		}
	}
}

// capture is an OpenAI-compatible front of the simulated deployment that keeps every request's
// path and body.
type capture struct {
	mu     sync.Mutex
	paths  []string
	bodies []map[string]any
}

func simFront(t *testing.T, model string) (*httptest.Server, *capture) {
	t.Helper()
	cfg, err := sim.Profile("default")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ModelName = model
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cp := &capture{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			cp.mu.Lock()
			cp.paths = append(cp.paths, r.URL.Path)
			cp.bodies = append(cp.bodies, m)
			cp.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, cp
}

// TestVLLMCommandLinesRunVerbatim runs example command lines of vLLM's benchmarking
// documentation with `vllm bench serve` replaced by `loadcurve run`, against the simulated
// deployment serving the model they name (reached by vLLM's --host/--port or --base-url), and
// checks where the requests went, what they carried, and the result file.
func TestVLLMCommandLinesRunVerbatim(t *testing.T) {
	t.Parallel() // mostly waiting on real time (TestMain)
	dir := t.TempDir()
	sharegpt := filepath.Join(dir, "ShareGPT_V3_unfiltered_cleaned_split.json")
	var convs []map[string]any
	for i := range 12 {
		convs = append(convs, map[string]any{"id": fmt.Sprint("c", i), "conversations": []map[string]string{
			{"from": "human", "value": strings.Repeat("tell me about the city and the world ", 1+i%3)},
			{"from": "gpt", "value": strings.Repeat("the city is old and the world is new ", 1+i%2)}}})
	}
	b, _ := json.Marshal(convs)
	if err := os.WriteFile(sharegpt, b, 0o644); err != nil {
		t.Fatal(err)
	}
	const model = "meta-llama/Llama-3.1-8B-Instruct"
	ts, cp := simFront(t, model)
	u, _ := url.Parse(ts.URL)
	host, port := u.Hostname(), u.Port()
	for _, tc := range []struct {
		name, cmd string
		path      string
		check     func(t *testing.T, body map[string]any)
		result    string
	}{
		{"random", "--backend vllm --model " + model + " --dataset-name random --random-input-len 32 --random-output-len 8 --num-prompts 12 --request-rate 20",
			"/v1/completions", func(t *testing.T, body map[string]any) {
				if body["ignore_eos"] != true || body["prompt"] == nil {
					t.Errorf("random: a completions body with ignore_eos, as vLLM: %v", body)
				}
			}, ""},
		{"sharegpt", "--backend vllm --model " + model + " --endpoint /v1/completions --dataset-name sharegpt --dataset-path " + sharegpt + " --num-prompts 10 --sharegpt-output-len 6",
			"/v1/completions", func(t *testing.T, body map[string]any) {
				if body["max_tokens"] != 6.0 {
					t.Errorf("sharegpt: max_tokens %v, want --sharegpt-output-len 6", body["max_tokens"])
				}
			}, ""},
		{"prefix repetition", "--backend openai --model " + model + " --dataset-name prefix_repetition --num-prompts 10 --prefix-repetition-prefix-len 32 --prefix-repetition-suffix-len 8 --prefix-repetition-num-prefixes 5 --prefix-repetition-output-len 8",
			"/v1/completions", func(t *testing.T, body map[string]any) {
				if body["max_tokens"] != 8.0 || body["ignore_eos"] != nil {
					t.Errorf("prefix_repetition: %v", body)
				}
			}, ""},
		{"goodput", "--backend vllm --model " + model + " --dataset-name random --random-input-len 32 --random-output-len 8 --request-rate 20 --num-prompts 12 --goodput ttft:60000 tpot:60000 --save-result --result-dir " + dir + " --result-filename goodput.json",
			"/v1/completions", nil, "goodput.json"},
		{"chat", "--backend openai-chat --model " + model + " --endpoint /v1/chat/completions --dataset-name random --random-input-len 32 --random-output-len 8 --num-prompts 8 --temperature 0 --top-p 0.9 --top-k 20 --disable-tqdm",
			"/v1/chat/completions", func(t *testing.T, body map[string]any) {
				if body["temperature"] != 0.0 || body["top_p"] != 0.9 || body["top_k"] != 20.0 || body["messages"] == nil {
					t.Errorf("chat: the sampling flags in a chat body: %v", body)
				}
			}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp.mu.Lock()
			cp.paths, cp.bodies = nil, nil
			cp.mu.Unlock()
			args := append([]string{"run"}, strings.Fields(tc.cmd)...)
			args = append(args, "--host", host, "--port", port)
			code, stdout, stderr := runCLI(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "Successful requests") {
				t.Errorf("no summary printed: %s", stdout)
			}
			cp.mu.Lock()
			defer cp.mu.Unlock()
			if len(cp.paths) == 0 {
				t.Fatal("no request reached the server")
			}
			for i, p := range cp.paths {
				if p != tc.path {
					t.Fatalf("request %d went to %s, want %s", i, p, tc.path)
				}
				if cp.bodies[i]["model"] != model {
					t.Fatalf("request %d: model %v", i, cp.bodies[i]["model"])
				}
			}
			if tc.check != nil {
				tc.check(t, cp.bodies[len(cp.bodies)-1])
			}
			if tc.result != "" {
				m, _ := readJSONMap(t, filepath.Join(dir, tc.result))
				if m["request_goodput"] == nil || m["backend"] != "vllm" || m["completed"] != 12.0 {
					t.Errorf("result file: goodput %v, backend %v, completed %v", m["request_goodput"], m["backend"], m["completed"])
				}
			}
		})
	}
	t.Run("base-url", func(t *testing.T) {
		cp.mu.Lock()
		cp.paths = nil
		cp.mu.Unlock()
		code, _, stderr := runCLI(t, append([]string{"run", "--base-url", ts.URL, "--endpoint", "/v1/chat/completions", "--model", model,
			"--served-model-name", model, "--num-prompts", "3", "--request-rate", "50", "--num-warmups", "2"}, small...)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		cp.mu.Lock()
		defer cp.mu.Unlock()
		// The preflight, 2 warm-ups, 3 requests.
		if n := len(cp.paths); n != 6 || cp.paths[0] != "/v1/chat/completions" {
			t.Errorf("%d requests to %v, want 6 (preflight, 2 warm-ups, 3) to /v1/chat/completions", n, cp.paths)
		}
		if !strings.Contains(stderr, "warm-up: sent 2 copies") {
			t.Errorf("the warm-ups are not stated: %s", stderr)
		}
	})
}

// TestVLLMFlagsAreAllAccepted: every flag of vLLM's client is a flag of run and of sweep, and a
// row of the README's table; the refused ones are refused with one line and the ones without
// effect stated once.
func TestVLLMFlagsAreAllAccepted(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "| `--") {
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `--"), "`")
			rows[name] = true
		}
	}
	for _, cmd := range []string{"run", "sweep"} {
		flags := commandFlags(t, cmd)
		for _, v := range vllm.Flags {
			if clihelp.FindFlag(flags, v.Name) == nil {
				t.Errorf("loadcurve %s has no --%s", cmd, v.Name)
			}
		}
	}
	for _, v := range vllm.Flags {
		if !rows[v.Name] {
			t.Errorf("--%s is not in the README's table of vLLM's flags", v.Name)
		}
	}
	code, _, stderr := runCLI(t, "run", "--profile", "--num-prompts", "1")
	if code != exitUsage || !strings.Contains(stderr, "--profile: not supported") {
		t.Errorf("--profile: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, append([]string{"run", "--num-prompts", "2", "--request-rate", "inf", "--trust-remote-code", "--tokenizer-mode", "slow",
		"--random-batch-size", "1"}, small...)...)
	if code != exitOK || strings.Count(stderr, "--trust-remote-code: accepted, no effect here") != 1 || strings.Count(stderr, "--tokenizer-mode: accepted, no effect") != 1 {
		t.Errorf("no-effect flags: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "run", "--dataset-name", "sharegtp", "--dataset-path", "x.json")
	if code != exitUsage || !strings.Contains(stderr, "did you mean sharegpt?") {
		t.Errorf("a mistyped dataset: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "run", "--num-warmpus", "2")
	if code != exitUsage || !strings.Contains(stderr, "did you mean --num-warmups?") {
		t.Errorf("a mistyped vLLM flag: exit %d: %s", code, stderr)
	}
}

// TestVLLMTargetFlagsAreRefusedClearly: command lines vLLM itself refuses (or would send to the
// wrong API) are refused before anything is sent (exit 2), with one line naming the flags: one
// command line for each rule of package vllm that run calls (its unit tests, TestRefused*,
// hold every case).
func TestVLLMTargetFlagsAreRefusedClearly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "openai-chat"}, "needs --endpoint /v1/chat/completions"},       // vllm.Target
		{[]string{"--dataset-name", "sharegpt"}, "needs --dataset-path"},                      // vllm.Dataset
		{[]string{"--tokenizer", "meta-llama/Llama-3.1-8B"}, "not in the Hugging Face cache"}, // vllm.Tokenizer
		{[]string{"--probe-request-rate", "2"}, "no probe requests"},                          // vllm.Refusals
		{[]string{"--num-warmups", "-1"}, "--num-warmups must be in [0, 100000], got -1"},     // applyVLLMCompat
	} {
		code, _, stderr := runCLI(t, append([]string{"run", "--num-prompts", "1"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q: %s", tc.args, code, tc.want, stderr)
		}
	}
}
