package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

// vllmKeys reads testdata/vllm_result_keys.txt: the keys of vLLM's result file whose metrics
// loadcurve defines (required) and those it does not (optional).
func vllmKeys(t *testing.T) (required, optional []string) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "vllm_result_keys.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "-"):
			k, why, _ := strings.Cut(line[1:], " ")
			if strings.TrimSpace(why) == "" {
				t.Fatalf("vllm_result_keys.txt: %q is left out without a reason", k)
			}
			optional = append(optional, k)
		default:
			required = append(required, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return required, optional
}

func readJSONMap(t *testing.T, path string) (map[string]any, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m, b
}

// TestVLLMDropIn runs with vLLM's flags (--label, --metadata in vLLM's space-separated form,
// --save-result) and checks that summary.json holds every key vLLM writes for a metric loadcurve
// defines, that the vLLM-layout file holds vLLM's keys only and agrees with summary.json, and that
// report reproduces it all from the records.
func TestVLLMDropIn(t *testing.T) {
	t.Parallel() // mostly waiting on real time (TestMain)
	dir, vdir := t.TempDir(), t.TempDir()
	code, _, stderr := runCLI(t, append([]string{"run", "--num-requests", "24", "--request-rate", "30", "--max-concurrency", "4",
		"--label", "nightly", "--metadata", "tp=2", "gpu=a100, 80GB", "--request-id-prefix", "bench-1a2b-",
		"--save-result", "--result-dir", vdir, "--out", dir}, small...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sum, sumBytes := readJSONMap(t, filepath.Join(dir, "summary.json"))
	required, optional := vllmKeys(t)
	for _, k := range required {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary.json lacks vLLM's key %q", k)
		}
	}
	want := map[string]any{"label": "nightly", "tp": "2", "gpu": "a100, 80GB", "backend": "openai-chat", "endpoint_type": "openai-chat",
		"model_id": "loadcurve-sim", "tokenizer_id": nil, "num_prompts": 24.0, "max_concurrency": 4.0}
	for k, v := range want {
		if sum[k] != v {
			t.Errorf("summary.json %q = %#v, want %#v", k, sum[k], v)
		}
	}
	if d, _ := sum["date"].(string); !regexp.MustCompile(`^\d{8}-\d{6}$`).MatchString(d) {
		t.Errorf("date %q, want vLLM's %%Y%%m%%d-%%H%%M%%S", d)
	}
	tok, _ := sum["max_output_tokens_per_s"].(float64)
	conc, _ := sum["max_concurrent_requests"].(float64)
	if tok < 1 || conc < 1 || conc > 4 {
		t.Errorf("max_output_tokens_per_s %v, max_concurrent_requests %v (the cap is 4)", sum["max_output_tokens_per_s"], sum["max_concurrent_requests"])
	}

	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	h := f.Header
	if h.Label != "nightly" || h.RequestIDPrefix != "bench-1a2b-" || !slices.Equal(h.Metadata, records.Metadata{{Key: "tp", Value: "2"}, {Key: "gpu", Value: "a100, 80GB"}}) {
		t.Errorf("records header: label %q, prefix %q, metadata %v", h.Label, h.RequestIDPrefix, h.Metadata)
	}

	// The vLLM-layout file: vLLM's name, vLLM's keys only, the same figures as summary.json.
	entries, _ := os.ReadDir(vdir)
	if len(entries) != 1 || !regexp.MustCompile(`^nightly-30\.0qps-concurrency4-loadcurve-sim-\d{8}-\d{6}\.json$`).MatchString(entries[0].Name()) {
		t.Fatalf("--result-dir holds %v", entries)
	}
	if !strings.Contains(entries[0].Name(), sum["date"].(string)) {
		t.Errorf("the file name %s does not carry the date %v", entries[0].Name(), sum["date"])
	}
	vf, _ := readJSONMap(t, filepath.Join(vdir, entries[0].Name()))
	known := slices.Concat(required, optional, []string{"tp", "gpu"})
	var keys []string
	for k, v := range vf {
		keys = append(keys, k)
		if !slices.Contains(known, k) {
			t.Errorf("the vLLM file holds %q, not one of vLLM's keys", k)
		}
		if k == "latencies" || k == "queue_times" || k == "rtfx" {
			continue // per request, or of audio: not summary.json's (TestVLLMResultHasVLLMsKeysAndTypes)
		}
		if fmt.Sprint(v) != fmt.Sprint(sum[k]) {
			t.Errorf("%q: vLLM file %v, summary.json %v", k, v, sum[k])
		}
	}
	for _, k := range []string{"mean_ttft_ms", "p99_ttft_ms", "p99_itl_ms", "std_tpot_ms", "request_goodput", "failed"} {
		if _, ok := vf[k]; !ok {
			t.Errorf("the vLLM file lacks %q (vLLM's default statistics are ttft, tpot, itl at p99)", k)
		}
	}
	for _, k := range []string{"p50_ttft_ms", "mean_e2el_ms", "p99_client_queue_time_ms", "run", "complete"} {
		if _, ok := vf[k]; ok {
			t.Errorf("the vLLM file holds %q: not in vLLM's default selection", k)
		}
	}
	sort.Strings(keys)
	t.Logf("vLLM file keys: %v", keys)

	// report reproduces summary.json from the records, exactly, and in bounded memory the peaks too.
	if after, _ := os.ReadFile(filepath.Join(reportTo(t, dir), "summary.json")); !bytes.Equal(sumBytes, after) {
		t.Errorf("report did not reproduce summary.json:\n%s\n---\n%s", sumBytes, after)
	}
	bounded, _ := readJSONMap(t, filepath.Join(reportTo(t, dir, "--bounded-memory"), "summary.json"))
	for _, k := range []string{"max_output_tokens_per_s", "max_concurrent_requests", "label", "tp", "date"} {
		if bounded[k] != sum[k] {
			t.Errorf("report --bounded-memory: %q = %v, want %v", k, bounded[k], sum[k])
		}
	}
}

// TestVLLMPeaksOfABoundedRun: a bounded run keeps no records, and reads its file back for them.
func TestVLLMPeaksOfABoundedRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, _, stderr := runCLI(t, append([]string{"run", "--num-requests", "20", "--request-rate", "inf", "--bounded-memory", "--out", dir}, small...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sum, _ := readJSONMap(t, filepath.Join(dir, "summary.json"))
	exact, _ := readJSONMap(t, filepath.Join(reportTo(t, dir), "summary.json"))
	for _, k := range []string{"max_output_tokens_per_s", "max_concurrent_requests"} {
		if sum[k] == nil || sum[k] != exact[k] {
			t.Errorf("%q: bounded run %v, exact report %v", k, sum[k], exact[k])
		}
	}
}

// idServer is a deployment that records the X-Request-Id and X-Team headers of every request
// and streams two chunks; it answers 503 until readyAt.
type idServer struct {
	*httptest.Server
	mu    sync.Mutex
	ids   []string
	teams []string
	calls atomic.Int64
}

// newIDServer answers 503 "loading the model" for notReadyFor after the first chat request it
// sees (counted from then, not from its start, so that a client slow to start on a busy machine
// still meets a server that is not ready), then streams a short reply.
func newIDServer(t *testing.T, notReadyFor time.Duration) *idServer {
	s := &idServer{}
	var first sync.Once
	var readyAt time.Time
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		first.Do(func() { readyAt = time.Now().Add(notReadyFor) })
		if time.Now().Before(readyAt) {
			http.Error(w, `{"error":{"message":"loading the model"}}`, http.StatusServiceUnavailable)
			return
		}
		s.mu.Lock()
		s.ids = append(s.ids, r.Header.Get("X-Request-Id"))
		s.teams = append(s.teams, r.Header.Get("X-Team"))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{
			`{"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}`,
			`{"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}`,
			`{"id":"x","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
			"[DONE]",
		} {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// TestRequestIDsJoinTheRecords: with --request-id-prefix the server sees prefix<tier>-<id> for
// every record (and prefix+"preflight"), so its logs join records.jsonl; --header takes vLLM's
// KEY=VALUE form.
func TestRequestIDsJoinTheRecords(t *testing.T) {
	t.Parallel()
	srv := newIDServer(t, 0)
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "run", "--base-url", srv.URL+"/v1", "--model", "m", "--server-metrics", "off", "--num-requests", "12",
		"--request-rate", "inf", "--request-id-prefix", "bench-9f-", "--header", "X-Team=t1", "--out", dir, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bench-9f-preflight"}
	for _, r := range f.Records {
		want = append(want, fmt.Sprintf("%s%d-%d", f.Header.RequestIDPrefix, r.Tier, r.ID))
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	got := slices.Clone(srv.ids)
	slices.Sort(got)
	slices.Sort(want)
	if len(f.Records) != 12 || !slices.Equal(got, want) {
		t.Errorf("ids the server saw %v, want the records' %v", got, want)
	}
	for _, team := range srv.teams {
		if team != "t1" {
			t.Errorf("X-Team %q, want t1 on every request", team)
		}
	}
}

// TestReadyCheck: --ready-check-timeout-sec waits for a server that answers 503 for a second,
// and fails with a clear error naming the flag when it never answers.
func TestReadyCheck(t *testing.T) {
	srv := newIDServer(t, time.Second)
	code, _, stderr := runCLI(t, "run", "--base-url", srv.URL+"/v1", "--server-metrics", "off", "--num-requests", "3",
		"--request-rate", "inf", "--ready-check-timeout-sec", "20", "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"waiting up to 20s for", "not ready after", "HTTP 503", "answered after"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr)
		}
	}

	never := newIDServer(t, time.Hour)
	start := time.Now()
	code, _, stderr = runCLI(t, "run", "--base-url", never.URL+"/v1", "--model", "m", "--server-metrics", "off", "--num-requests", "3",
		"--ready-check-timeout-sec", "1", "-q")
	last := stderr[strings.LastIndex(strings.TrimSpace(stderr), "\n")+1:]
	if code != exitFailure || countFlag(last, "ready-check-timeout-sec") != 1 || !strings.Contains(last, "did not become ready within 1s") {
		t.Errorf("exit %d, last line %q", code, last)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v to give up after 1 s", took)
	}

	// Without the flag nothing waits: the preflight fails at once, as before.
	code, _, stderr = runCLI(t, "run", "--base-url", never.URL+"/v1", "--model", "m", "--server-metrics", "off", "--num-requests", "3", "-q")
	if code != exitFailure || strings.Contains(stderr, "not ready") {
		t.Errorf("exit %d without --ready-check-timeout-sec: %s", code, stderr)
	}
}

// TestDropInFlagErrors: each bad input of the drop-in flags is one error line, exit 2, naming
// its flag once, before anything is sent.
func TestDropInFlagErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flag string
		args []string
	}{
		{"header", []string{"run", "--header", "X-A: 1", "--header", "x-a=2"}},
		{"header", []string{"run", "--header", "c2stc2VjcmV0=="}},
		{"metadata", []string{"run", "--metadata", "duration=5"}},
		{"metadata", []string{"run", "--metadata", "p99_ttft_ms=1"}},
		{"metadata", []string{"run", "--metadata", "novalue"}},
		{"metadata", []string{"run", "--metadata", "a=1", "a=2"}},
		{"metadata", []string{"sweep", "--metadata", "=1"}},
		{"label", []string{"run", "--label", "a\x01b"}},
		{"request-id-prefix", []string{"run", "--request-id-prefix", "my run"}},
		{"request-id-prefix", []string{"run", "--request-id-prefix", "p-", "--header", "X-Request-Id=mine"}},
		{"ready-check-timeout-sec", []string{"run", "--ready-check-timeout-sec", "-1"}},
		{"save-result", []string{"run", "--save-result", "--percentile-metrics", "schedule_lag"}},
		{"result-filename", []string{"run", "--result-filename", "out/"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d: %s", code, exitUsage, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "loadcurve: ") {
				t.Fatalf("want one error line, got %q", lines)
			}
			if n := countFlag(lines[0], tc.flag); n != 1 {
				t.Errorf("the error names --%s %d times, want once: %s", tc.flag, n, lines[0])
			}
			if strings.Contains(lines[0], "c2stc2VjcmV0") {
				t.Errorf("the error quotes what may be a credential: %s", lines[0])
			}
		})
	}
}
