package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// An echo is what a hostile server sends back of a secret it received: a piece of it (its
// middle, its tail), another case, or an encoding.
type echoForm struct {
	name string
	f    func(string) string
}

// echoForms are the ways a server echoes a secret. A checker looks for every piece of eight
// bytes of each of them that depends on the secret.
var echoForms = []echoForm{
	{"whole", func(s string) string { return s }},
	{"middle", func(s string) string { return s[2 : len(s)-2] }},
	{"tail", func(s string) string { return s[len(s)/3:] }},
	{"upper case", strings.ToUpper},
	{"lower case", strings.ToLower},
	{"hex", func(s string) string { return hex.EncodeToString([]byte(s)) }},
	{"base64", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
	{"base64 after one byte", func(s string) string { return base64.StdEncoding.EncodeToString([]byte("{" + s)) }},
	{"base64 after two bytes", func(s string) string { return base64.StdEncoding.EncodeToString([]byte("{ " + s)) }},
	{"base64url", func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }},
	{"URL-encoded", url.QueryEscape},
	{"HTML-escaped", html.EscapeString},
}

// receivedSecrets are the values of a request that carry a secret: the Authorization header
// (and the credential an HTTP Basic one decodes to), the custom header, the query's values.
func receivedSecrets(r *http.Request) []string {
	var out []string
	if a := r.Header.Get("Authorization"); a != "" {
		out = append(out, a)
		if b, ok := strings.CutPrefix(a, "Basic "); ok {
			if d, err := base64.StdEncoding.DecodeString(b); err == nil {
				out = append(out, string(d))
			}
		}
	}
	if h := r.Header.Get("X-Custom"); h != "" {
		out = append(out, h)
	}
	for _, vs := range r.URL.Query() {
		out = append(out, vs...)
	}
	sort.Strings(out)
	return out
}

// encodedEcho is the n-th request's encoded echo: one of echoForms, of every secret received.
func encodedEcho(r *http.Request, n int) string {
	form := echoForms[n%len(echoForms)]
	var parts []string
	for _, s := range receivedSecrets(r) {
		if len(s) >= 6 {
			parts = append(parts, form.f(s))
		}
	}
	return form.name + ": " + strings.Join(parts, " ")
}

// leakChecker finds, ignoring ASCII case, any piece of eight bytes of a secret in any echo
// form, in the texts it is given. Pieces of a form that do not depend on the secret (the
// base64 of the bytes around it) are not looked for: they are found by comparing the form of
// the secret with the form of a secret that differs in every byte.
type leakChecker struct {
	pieces map[string]string // lower-cased piece -> what it is a piece of
}

func newLeakChecker(secrets ...string) *leakChecker {
	lc := &leakChecker{pieces: map[string]string{}}
	flip := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r < 0x80 {
				return r ^ 0x01
			}
			return r
		}, s)
	}
	forms := append([]echoForm{{"Bearer, base64", func(s string) string { return base64.StdEncoding.EncodeToString([]byte("Bearer " + s)) }}}, echoForms...)
	for _, s := range secrets {
		for _, form := range forms {
			if form.name == "middle" || form.name == "tail" {
				continue // the pieces of "whole" hold these
			}
			got, other := strings.ToLower(form.f(s)), strings.ToLower(form.f(flip(s)))
			for i := 0; i+8 <= len(got); i++ {
				if len(other) == len(got) && other[i:i+8] == got[i:i+8] {
					continue
				}
				if allDigits(got[i : i+8]) {
					// A piece of decimal digits only (the hex of "2468" is "32343638") can
					// be any number in the output: a mean of 2.5743234375 ms holds
					// "57432343". Finding it proves nothing; the form's other pieces,
					// which hold letters, still catch the echo.
					continue
				}
				if _, ok := lc.pieces[got[i:i+8]]; !ok {
					lc.pieces[got[i:i+8]] = fmt.Sprintf("%s of %q", form.name, s)
				}
			}
		}
	}
	return lc
}

// allDigits reports whether s holds decimal digits only.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// find returns, for each text (name -> text) that holds a piece of a secret, a sentence that
// says which piece and where.
func (lc *leakChecker) find(texts map[string]string) []string {
	var found []string
	for name, text := range texts {
		low := strings.ToLower(text)
		for i := 0; i+8 <= len(low); i++ {
			if what, ok := lc.pieces[low[i:i+8]]; ok {
				found = append(found, fmt.Sprintf("%s holds %q, a piece of the %s: …%s…", name, text[i:i+8], what, text[max(0, i-60):min(len(text), i+40)]))
				break
			}
		}
	}
	sort.Strings(found)
	return found
}

// check reports every piece of a secret found in texts (name -> text).
func (lc *leakChecker) check(t *testing.T, texts map[string]string) {
	t.Helper()
	checked := 0
	for _, text := range texts {
		checked += len(text)
	}
	if checked == 0 {
		t.Fatal("no output was checked")
	}
	for _, f := range lc.find(texts) {
		t.Error(f)
	}
}

// TestLeakCheckerFindsEveryEchoAndNoNumber holds the checker itself: every echo form of a
// secret, inside other text, is found; a number whose digits happen to spell a piece of the
// secret's hex (the hex of "24680" is "3234363830") is not.
func TestLeakCheckerFindsEveryEchoAndNoNumber(t *testing.T) {
	const secret = "PwEncSecret24680"
	lc := newLeakChecker(secret)
	for _, form := range echoForms {
		text := `{"error": "bad key ` + form.f(secret) + `"}`
		if got := lc.find(map[string]string{form.name: text}); len(got) != 1 {
			t.Errorf("the %s echo %q: the checker found %d pieces, want 1", form.name, form.f(secret), len(got))
		}
	}
	numbers := `{"mean_e2el_including_client_queue_ms": 2.5743234375, "p99": 3.2343638301}`
	if got := lc.find(map[string]string{"summary": numbers}); len(got) != 0 {
		t.Errorf("numbers were taken for a secret: %v", got)
	}
}

// The secrets of TestSecretsEchoedEverywhere. The key holds characters that the URL and HTML
// encodings change.
const (
	encKey   = "sk-Enc+Key/Sec&ret<2468>"
	encHdr   = "HdrEncSecret13579"
	encUser  = "bob"
	encPass  = "PwEncSecret24680"
	encQuery = "QueryEncSecret97531"
)

// hostileServer answers every request after the preflight through one of its paths, in turn:
// an error body, an error event, a malformed chunk, a finish_reason, a redirect, or a normal
// stream (most requests, so that a sweep finds a capacity), each carrying an encoded echo of
// the secrets received (encodedEcho, in turn) between terminal escapes and a fake line. GET
// /models lists model, then "m". With the model failAll, every request (the preflight too) gets
// the error body.
func hostileServer(t *testing.T, model string) *httptest.Server {
	var n atomic.Int64
	chunk := func(w io.Writer, s string) { fmt.Fprintf(w, "data: %s\n\n", s) }
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		ids := []string{model, "m"}
		if model == "" || model == failAll {
			ids = []string{"m"}
		}
		data := make([]map[string]string, len(ids))
		for i, id := range ids {
			data[i] = map[string]string{"id": id, "object": "model"}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, encodedEcho(r, int(n.Add(1))), http.StatusUnauthorized)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		i := int(n.Add(1))
		path := 9 // a normal stream for the preflight
		if model == failAll {
			path = 0
		} else if !strings.Contains(string(body), "Reply with the word ready.") {
			path = i % 10
		}
		echo := "\x1b[2J\x1b]0;pwned\x07you sent " + encodedEcho(r, i/10) + "\nloadcurve: a fake line"
		switch path {
		case 0:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"error":{"message":`+quote(echo)+`}}`)
			return
		case 1:
			w.Header().Set("Location", "http://127.0.0.1:1/"+url.PathEscape(echo)+"?k="+url.QueryEscape(echo))
			w.WriteHeader(http.StatusTemporaryRedirect)
			_, _ = io.WriteString(w, echo)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk(w, `{"choices":[{"index":0,"delta":{"content":"hi there"}}]}`)
		finish := "stop"
		switch path {
		case 2:
			chunk(w, `{"error":{"message":`+quote(echo)+`}}`)
			return
		case 3:
			chunk(w, `{"choices":[`+echo)
			return
		case 4:
			finish = "\x1b[31m" + echo + "\n"
		}
		chunk(w, `{"choices":[{"index":0,"delta":{},"finish_reason":`+quote(finish)+`}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`)
		chunk(w, "[DONE]")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// failAll makes hostileServer fail every request.
const failAll = "(fail all)"

// dirTexts reads every file under dirs, and names each file's name as a text too.
func dirTexts(t *testing.T, texts map[string]string, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			texts[p] = string(b)
			texts["the name of "+p] = p
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestSecretsEchoedEverywhere extends the matrix of TestSecretsSurviveHostileServers to every
// output and to pieces and encodings: a server echoes the secrets it received (the API key in
// "Bearer KEY", a header, the URL's query) as a middle or a tail piece, in upper or lower case,
// hex, base64 at each alignment, URL-encoded and HTML-escaped, through its error bodies,
// redirects, error events, malformed chunks, finish_reason and metrics endpoint; the same
// secrets are typed into --label, --metadata, --extra-body and --request-id-prefix. No piece of eight bytes of any
// of them, in any of those forms, reaches any output: run's records, summary, scenario.yaml,
// time series, plots and report.html, the --save-result file and its name, a sharded run's
// merge, report, compare, a sweep's curve.json, plan's plan.json, nor stdout or stderr. A model
// id from GET /models that echoes the key, or holds terminal escapes, is refused.
func TestSecretsEchoedEverywhere(t *testing.T) {
	// Not in parallel: its sweep's half-second tiers at 100 and 200 req/s, and its shards'
	// shared start, are real time (beside neighbours under -race the sweep found no capacity).
	t.Setenv("OPENAI_API_KEY", "")
	srv := hostileServer(t, "")
	u, _ := url.Parse(srv.URL)
	base := fmt.Sprintf("http://%s:%s@%s/v1?api-version=%s", encUser, encPass, u.Host, encQuery)
	secret := []string{"--api-key", encKey, "--header", "X-Custom: " + encHdr,
		"--label", "run " + encKey, "--metadata", "note=" + encHdr, "--extra-body", `{"user":"` + encQuery + `","api_key":"` + encPass + `"}`,
		"--request-id-prefix", "req-" + encKey + "-"}
	common := append([]string{"--base-url", base, "--model", "m", "--seed", "3", "--goodput", "ttft:2000", "--max-schedule-lag", "1s", "--quiet"}, secret...)
	root := t.TempDir()
	dir := func(name string) string { return filepath.Join(root, name) }
	texts := map[string]string{}
	// step runs a command and keeps its stdout and stderr.
	step := func(name string, want int, args ...string) {
		t.Helper()
		code, stdout, stderr := runCLI(t, args...)
		texts[name+" stdout"], texts[name+" stderr"] = stdout, stderr
		if code != want {
			t.Errorf("%s: exit %d, want %d\n%s", name, code, want, stderr)
		}
	}
	runArgs := append([]string{"--num-requests", "60", "--request-rate", "300"}, common...)
	step("run", exitOK, append([]string{"run", "--out", dir("run"), "--save-result", "--result-dir", dir("vllm")}, runArgs...)...)
	// Two shards of the same run, as on two machines, then merged. Their shared start is 4 s
	// ahead: two processes of a -race test binary took over 2.5 s to start at a load average
	// of 14 (a shard refuses a start more than a second past).
	at := time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339Nano)
	var kids []interface{ Wait() error }
	var outs []fmt.Stringer
	for i := range 2 {
		cmd, out := startCLI(t, append([]string{"run", "--shard", fmt.Sprintf("%d/2", i), "--start-at", at, "--out", dir(fmt.Sprintf("shard%d", i))}, runArgs...)...)
		kids, outs = append(kids, cmd), append(outs, out)
	}
	for i, k := range kids {
		err := k.Wait()
		texts[fmt.Sprintf("shard %d output", i)] = outs[i].String()
		if err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, outs[i])
		}
	}
	step("merge", exitOK, "merge", dir("shard0"), dir("shard1"), "--out", dir("merged"))
	step("report", exitOK, "report", dir("merged"), "--out", dir("report"))
	step("compare", exitOK, "compare", dir("run"), dir("merged"), "--force", "--out", dir("compare"))
	step("sweep", exitOK, append([]string{"sweep", "--request-rates", "100,200", "--duration", "0.5s", "--no-confirm", "--target-share", "0.5", "--out", dir("sweep")}, common...)...)
	step("plan", exitOK, "plan", dir("sweep"), "--peak", "50", "--a-cost-per-hour", "1", "--allow-unverified", "--out", dir("plan"))
	// The preflight's error: the server's words without escapes or fake lines.
	fsrv := hostileServer(t, failAll)
	fu, _ := url.Parse(fsrv.URL)
	step("preflight error", exitFailure, append([]string{"run", "--out", dir("preflight"), "--num-requests", "1", "--base-url",
		fmt.Sprintf("http://%s:%s@%s/v1?api-version=%s", encUser, encPass, fu.Host, encQuery)}, common[2:]...)...)
	if !strings.Contains(texts["preflight error stderr"], "preflight") {
		t.Errorf("preflight error: %s", texts["preflight error stderr"])
	}
	// The model's name from GET /models: refused when it echoes the key or holds escapes.
	for name, model := range map[string]string{"a model id echoing the key": "org/" + strings.ToUpper(encKey[3:16]), "a model id with escapes": "m\x1b[2J\nfake line"} {
		msrv := hostileServer(t, model)
		mu, _ := url.Parse(msrv.URL)
		step(name, exitFailure, "run", "--base-url", "http://"+mu.Host+"/v1", "--api-key", encKey, "--num-requests", "1", "--out", dir(name))
		if !strings.Contains(texts[name+" stderr"], "give --model") || strings.ContainsAny(texts[name+" stderr"], "\x1b") {
			t.Errorf("%s: %s", name, texts[name+" stderr"])
		}
	}
	dirTexts(t, texts, root)
	// The paths were taken: records say so, and something was hidden.
	records := texts[filepath.Join(dir("run"), "records.jsonl")]
	for _, want := range []string{"HTTP 500", "redirect to http://127.0.0.1:1/", "error in stream", "malformed event data", "you sent"} {
		if !strings.Contains(records, want) {
			t.Errorf("no record says %q: the echo path was not exercised", want)
		}
	}
	if !strings.Contains(records, "[REDACTED]") {
		t.Error("nothing was redacted: the server's echo did not reach the records")
	}
	for _, want := range []string{"curve.json", "plan.json", "compare.json", "merge.json", "summary.json", "scenario.yaml", "report.html"} {
		found := false
		for name := range texts {
			found = found || strings.HasSuffix(name, string(filepath.Separator)+want)
		}
		if !found {
			t.Errorf("no %s was written", want)
		}
	}
	basic := base64.StdEncoding.EncodeToString([]byte(encUser + ":" + encPass))
	newLeakChecker(encKey, encHdr, encPass, encQuery, encUser+":"+encPass, basic).check(t, texts)
	for name, text := range texts {
		if strings.HasSuffix(name, ".png") {
			continue
		}
		if i := strings.IndexFunc(text, func(r rune) bool { return r == 0x1b || r == 0x07 }); i >= 0 {
			t.Errorf("%s holds an escape sequence: …%q…", name, text[max(0, i-40):min(len(text), i+20)])
		}
		if strings.Contains(text, "\nloadcurve: a fake line") {
			t.Errorf("%s holds a line the server wrote", name)
		}
	}
}

// TestModelNameWithControlCharacters: a model name holding control characters, escape
// sequences and a path separator (given with --model: the server took it) neither stops the
// result from being written nor makes `report` fail, and no output or file name holds them.
func TestModelNameWithControlCharacters(t *testing.T) {
	t.Parallel()
	srv := hostileServer(t, "")
	root := t.TempDir()
	model := "org/m\x01\x1b[31mred\nfake line/../x"
	code, stdout, stderr := runCLI(t, "run", "--base-url", srv.URL+"/v1", "--model", model, "--num-requests", "10", "--request-rate", "200",
		"--max-schedule-lag", "1s", "--quiet", "--server-metrics", "off", "--out", filepath.Join(root, "run"), "--save-result", "--result-dir", filepath.Join(root, "vllm"))
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	texts := map[string]string{"run stdout": stdout, "run stderr": stderr}
	code, stdout, stderr = runCLI(t, "report", filepath.Join(root, "run"), "--out", filepath.Join(root, "report"))
	if code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	texts["report stdout"], texts["report stderr"] = stdout, stderr
	dirTexts(t, texts, root)
	names, _ := filepath.Glob(filepath.Join(root, "vllm", "*.json"))
	if len(names) != 1 || filepath.Dir(names[0]) != filepath.Join(root, "vllm") {
		t.Errorf("--save-result files %q", names)
	}
	for name, text := range texts {
		if strings.HasSuffix(name, ".png") {
			continue
		}
		if i := strings.IndexFunc(text, func(r rune) bool { return r == 0x1b || r == 0x01 }); i >= 0 {
			t.Errorf("%s holds a control character: …%q…", name, text[max(0, i-40):min(len(text), i+20)])
		}
	}
}
