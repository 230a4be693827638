package workloads_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/workloads"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run go test -update after checking):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// renderSet is a set's golden form: its identity, then the requests as Save writes them.
func renderSet(t *testing.T, set *workloads.Set) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "source: %s\nfingerprint: %s\nrequests: %d\nskipped: %d\n", set.Source, set.Fingerprint, len(set.Requests), set.Skipped)
	for _, n := range set.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	path := filepath.Join(t.TempDir(), "set.jsonl")
	if err := workloads.Save(path, set); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b.Write(saved)
	return b.String()
}

// renderTrace is a trace's golden form: one line per request.
func renderTrace(tr *workloads.Trace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "source: %s\n", tr.Source)
	for _, n := range tr.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for i := range tr.Offsets {
		fmt.Fprintf(&b, "%d offset=%s in=%d out=%d", i, tr.Offsets[i], tr.InputLens[i], tr.OutputLens[i])
		if tr.HashIDs != nil {
			fmt.Fprintf(&b, " hash_ids=%v", tr.HashIDs[i])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestLoadersGolden(t *testing.T) {
	tests := []struct {
		file string
		load func(path string) (any, error)
	}{
		{"requests.jsonl", setLoader(workloads.LoadJSONL)},
		{"requests_bad.jsonl", setLoader(workloads.LoadJSONL)},
		{"sharegpt.json", sharegpt(workloads.ShareGPTOptions{})},
		{"sharegpt.json#vllm-filter", sharegpt(workloads.DefaultShareGPTFilter())},
		{"sharegpt.json#max2", sharegpt(workloads.ShareGPTOptions{Max: 2})},
		{"sharegpt_bad.json", sharegpt(workloads.ShareGPTOptions{})},
		{"sharegpt.json#multi", sharegpt(workloads.ShareGPTOptions{MultiTurn: true, Think: time.Second})},
		{"sharegpt_sessions.json#multi", sharegpt(workloads.ShareGPTOptions{MultiTurn: true, Think: 2500 * time.Millisecond})},
		{"sharegpt_sessions.json#multi-vllm-filter", sharegpt(workloads.ShareGPTOptions{MultiTurn: true, MinLen: 4, MaxPromptLen: 1024, MaxTotalLen: 2048})},
		{"sessions.jsonl", setLoader(workloads.LoadJSONL)},
		{"sessions_bad.jsonl", setLoader(workloads.LoadJSONL)},
		{"azure.csv", traceLoader(workloads.TraceAzure, 1)},
		{"azure_2024.csv", traceLoader("", 1)},
		{"azure.csv#scale0.5", traceLoader(workloads.TraceAzure, 0.5)},
		{"azure_bad.csv", traceLoader(workloads.TraceAzure, 1)},
		{"mooncake.jsonl", traceLoader(workloads.TraceMooncake, 1)},
		{"mooncake_bad.jsonl", traceLoader("", 1)},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			file, variant, _ := strings.Cut(tc.file, "#")
			loaded, err := tc.load(filepath.Join("testdata", file))
			var got string
			switch v := loaded.(type) {
			case *workloads.Set:
				got = renderSet(t, v)
			case *workloads.Trace:
				got = renderTrace(v)
			default:
				got = "error:\n" + err.Error() + "\n"
			}
			name := strings.NewReplacer(".", "_", "#", "_").Replace(file)
			if variant != "" {
				name += "_" + variant
			}
			golden(t, name+".golden", got)
			if bad := strings.Contains(file, "_bad"); bad != (err != nil) {
				t.Errorf("error = %v for %s", err, tc.file)
			}
		})
	}
}

func setLoader(load func(string) (*workloads.Set, error)) func(string) (any, error) {
	return func(path string) (any, error) {
		set, err := load(path)
		if err != nil {
			return nil, err
		}
		return set, nil
	}
}

func sharegpt(opts workloads.ShareGPTOptions) func(string) (any, error) {
	return setLoader(func(path string) (*workloads.Set, error) { return workloads.LoadShareGPT(path, opts) })
}

func traceLoader(format string, scale float64) func(string) (any, error) {
	return func(path string) (any, error) {
		tr, err := workloads.LoadTrace(path, format, scale)
		if err != nil {
			return nil, err
		}
		return tr, nil
	}
}

func TestJSONLRoundTripThroughSave(t *testing.T) {
	loaded, err := workloads.LoadJSONL(filepath.Join("testdata", "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	synth, _ := workloads.Synthetic{InputLen: 20, OutputLen: 5, RangeRatio: 0.5, Seed: 3}.Generate(7)
	shared, _ := workloads.SharedPrefix{Groups: 3, PrefixLen: 6, SuffixLen: 4, OutputLen: 2, Seed: 1}.Generate(9)
	cold, _ := workloads.ApplyCold(shared, "[run:abc]")
	for _, set := range []*workloads.Set{loaded, synth, shared, cold} {
		t.Run(set.Source, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "requests.jsonl")
			if err := workloads.Save(path, set); err != nil {
				t.Fatal(err)
			}
			back, err := workloads.LoadJSONL(path)
			if err != nil {
				t.Fatal(err)
			}
			// Generated prompts come back as text: compare what the requests say, their JSON.
			if b, s := mustMarshal(t, back.Requests), mustMarshal(t, set.Requests); b != s {
				t.Errorf("requests differ after the round trip:\n%s\n%s", b, s)
			}
			if want := workloads.Fingerprint(set.Requests); back.Fingerprint != want {
				t.Errorf("fingerprint %s after the round trip, want %s", back.Fingerprint, want)
			}
			again := filepath.Join(t.TempDir(), "again.jsonl")
			if err := workloads.Save(again, back); err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(path)
			b, _ := os.ReadFile(again)
			if !bytes.Equal(a, b) {
				t.Error("saving the loaded set gives a different file")
			}
		})
	}
	if loaded.Fingerprint != workloads.Fingerprint(loaded.Requests) {
		t.Error("a loaded set's fingerprint is not that of its requests")
	}
}

func TestJSONLLineErrors(t *testing.T) {
	six := strings.Repeat(`{"prompt": "ok"}`+"\n", 6)
	tests := []struct {
		name, input, want string
	}{
		{"the issue's example", six + `{"prompt": "x", "max_tokens": -3}`, `requests.jsonl:7: "max_tokens" must be a positive integer, got -3`},
		{"blank lines count", "\n\n" + `{"prompt": "x", "max_tokens": 0}`, `requests.jsonl:3: "max_tokens" must be a positive integer, got 0`},
		{"fractional", `{"prompt": "x", "max_tokens": 2.5}`, `requests.jsonl:1: "max_tokens" must be a positive integer, got 2.5`},
		{"bad regex names the line", six + `{"prompt": "x", "expected": {"regex": "a("}}`, `requests.jsonl:7: "expected.regex" does not compile: error parsing regexp`},
		{"unknown key", `{"prompt": "x", "expect": "y"}`, `requests.jsonl:1: unknown field "expect"`},
		{"mooncake hint", `{"timestamp": 0, "input_length": 3}`, `use mooncake:FILE`},
		{"not JSON", `{"prompt": }`, `requests.jsonl:1: not valid JSON`},
		{"trailing garbage", `{"prompt": "x"} {}`, `requests.jsonl:1: not valid JSON`},
		{"not an object", `"just a string"`, `requests.jsonl:1: expected a JSON object, got the string "just a string"`},
		{"no text", `{"max_tokens": 3}`, `requests.jsonl:1: a request needs "prompt" or "messages"`},
		{"empty messages", `{"messages": []}`, `"messages" is empty`},
		{"message without role", `{"messages": [{"content": "hi"}]}`, `messages[0] has no "role"`},
		{"extra message key", `{"messages": [{"role": "user", "content": "hi", "name": "x"}]}`, `messages[0]: unknown field "name"`},
		{"id and label disagree", `{"id": "a", "label": "b", "prompt": "x"}`, `both "id" and "label" name the request`},
		{"expected of wrong type", `{"prompt": "x", "expected": 3}`, `"expected" must be a string (the exact answer) or an object`},
		{"empty file", "", `requests.jsonl: no requests: the file is empty`},
		{"only blank lines", "\n  \n\t\n", `requests.jsonl: no requests: the file is empty`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, err := workloads.ReadJSONL(strings.NewReader(tc.input), "requests.jsonl")
			if err == nil {
				t.Fatalf("no error; got %d requests", len(set.Requests))
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			var le *workloads.LineError
			if !errors.As(err, &le) || le.Path != "requests.jsonl" {
				t.Errorf("error %v is not a *LineError naming the file", err)
			}
		})
	}
}

func TestJSONLReportsEveryProblemAtOnce(t *testing.T) {
	var in strings.Builder
	for i := range 14 {
		fmt.Fprintf(&in, `{"prompt": "p%d", "max_tokens": -1}`+"\n", i)
	}
	_, err := workloads.ReadJSONL(strings.NewReader(in.String()), "f.jsonl")
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"f.jsonl:1:", "f.jsonl:10:", "4 more problems not shown"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "f.jsonl:11:") {
		t.Errorf("more than ten problems listed:\n%s", msg)
	}
}

func TestJSONLIDsAndLabels(t *testing.T) {
	in := strings.Join([]string{
		`{"id": 0, "prompt": "index id is Save's numbering"}`,
		`{"id": 7, "prompt": "other number is a label"}`,
		`{"id": "q3", "prompt": "string id is a label"}`,
		`{"label": "L", "id": 3, "prompt": "label wins over the index id"}`,
		`{"messages": [{"role": "system", "content": "two words"}, {"role": "user", "content": "and three more"}]}`,
	}, "\n")
	set, err := workloads.ReadJSONL(strings.NewReader(in), "ids.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := []string{"", "7", "q3", "L", ""}
	for i, r := range set.Requests {
		if r.ID != i || r.Label != wantLabels[i] {
			t.Errorf("request %d: id %d label %q, want label %q", i, r.ID, r.Label, wantLabels[i])
		}
	}
	if got := set.Requests[4].InputTokens; got != 5 {
		t.Errorf("messages counted as %d words, want 5", got)
	}
}

func TestShareGPTErrorsAndSkips(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"empty", "", "no requests: the file is empty"},
		{"not an array", `{"id": "x"}`, "a ShareGPT file is a JSON array of conversations, got an object"},
		{"empty array", `[]`, "none of 0 entries"},
		{"only unusable", `[{"id": 1, "conversations": [{"from": "gpt", "value": "x"}]}]`, "none of 1 entries has a usable human→gpt exchange (1 without one"},
		{"truncated", "[\n{\"id\": 1,\n \"conversations\": [", "s.json:3: not valid JSON"},
		{"syntax error line", "[\n{\"id\": 1},\n{\"id\": 2,, }]", "s.json:3: not valid JSON"},
		{"value type names entry line", "[\n{\"id\": \"a\", \"conversations\": []},\n\n  {\"id\": \"b\", \"conversations\": [{\"from\": \"human\", \"value\": 7}, {\"from\": \"gpt\", \"value\": null}]}]",
			`s.json:4: entry 2 (id "b"): conversations[0].value must be a string, got 7`},
		{"trailing data", `[{"id": "a", "conversations": [{"from": "human", "value": "p"}, {"from": "gpt", "value": "r"}]}] x`, "s.json:1: unexpected data after the ShareGPT array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workloads.ReadShareGPT(strings.NewReader(tc.input), "s.json", workloads.ShareGPTOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestShareGPTLengths(t *testing.T) {
	set, err := workloads.LoadShareGPT(filepath.Join("testdata", "sharegpt.json"), workloads.ShareGPTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Entries 1, 2, 4, 6 and 8 have a human→gpt pair with text; 3 and 7 have none; 5 has an
	// empty reply.
	if len(set.Requests) != 5 || set.Skipped != 3 {
		t.Fatalf("%d requests, %d skipped; want 5 and 3", len(set.Requests), set.Skipped)
	}
	r := set.Requests[0]
	if r.Label != "conv-a" || r.Text() != "Explain what a KV cache is in two sentences." || r.InputTokens != 9 || r.MaxTokens != 26 {
		t.Errorf("first request %+v", r)
	}
	// Two human messages before the reply are one prompt, joined: not the second alone (it was),
	// and not the first alone; vLLM's loader would send the first, with the second's length as
	// max_tokens.
	if r := set.Requests[2]; r.Label != "42" || r.Text() != "First message without an answer.\n\nSecond message, answered this time." || r.InputTokens != 10 {
		t.Errorf("the pair must be the run of human messages joined, then the reply: %+v", r)
	}
}

func TestFingerprintChangesWithEveryField(t *testing.T) {
	base := []workloads.Request{{
		ID: 0, Label: "a", Prompt: "p q", InputTokens: 2, MaxTokens: 3, PrefixGroup: 1,
		Messages: []workloads.Message{{Role: "user", Content: "m"}},
		Expect:   &workloads.Expectation{Exact: "e", Contains: "c", Regex: "r", FinishReason: "stop", MinTokens: 1},
	}}
	clone := func() []workloads.Request {
		r := base[0]
		r.Messages = append([]workloads.Message(nil), r.Messages...)
		e := *r.Expect
		r.Expect = &e
		return []workloads.Request{r}
	}
	mutations := map[string]func(r *workloads.Request){
		"id":            func(r *workloads.Request) { r.ID = 1 },
		"label":         func(r *workloads.Request) { r.Label = "b" },
		"prompt":        func(r *workloads.Request) { r.Prompt = "p  q" },
		"input tokens":  func(r *workloads.Request) { r.InputTokens = 3 },
		"max tokens":    func(r *workloads.Request) { r.MaxTokens = 0 },
		"prefix group":  func(r *workloads.Request) { r.PrefixGroup = 0 },
		"role":          func(r *workloads.Request) { r.Messages[0].Role = "system" },
		"content":       func(r *workloads.Request) { r.Messages[0].Content = "n" },
		"messages":      func(r *workloads.Request) { r.Messages = nil },
		"exact":         func(r *workloads.Request) { r.Expect.Exact = "E" },
		"contains":      func(r *workloads.Request) { r.Expect.Contains = "" },
		"regex":         func(r *workloads.Request) { r.Expect.Regex = "s" },
		"finish reason": func(r *workloads.Request) { r.Expect.FinishReason = "length" },
		"min tokens":    func(r *workloads.Request) { r.Expect.MinTokens = 2 },
		"expectation":   func(r *workloads.Request) { r.Expect = nil },
	}
	want := workloads.Fingerprint(base)
	for name, mutate := range mutations {
		reqs := clone()
		if workloads.Fingerprint(reqs) != want {
			t.Fatal("the clone differs")
		}
		mutate(&reqs[0])
		if workloads.Fingerprint(reqs) == want {
			t.Errorf("%s: fingerprint unchanged", name)
		}
	}
}

func TestSharedPrefixStructure(t *testing.T) {
	tests := []workloads.SharedPrefix{
		{Groups: 4, PrefixLen: 32, SuffixLen: 8, OutputLen: 16, Seed: 1},
		{Groups: 1, PrefixLen: 1, SuffixLen: 1, OutputLen: 1, Seed: 2},   // 1-word suffixes: at most 163 requests
		{Groups: 200, PrefixLen: 3, SuffixLen: 2, OutputLen: 4, Seed: 3}, // more groups than distinct words
	}
	for _, sp := range tests {
		t.Run(sp.String(), func(t *testing.T) {
			n := 400
			if sp.SuffixLen == 1 {
				n = workloads.DistinctWords() - 1
			}
			set, err := sp.Generate(n)
			if err != nil {
				t.Fatal(err)
			}
			prefixes := map[int]string{}
			suffixes := map[string]bool{}
			firstWords := map[string]int{}
			for i, r := range set.Requests {
				g := i%sp.Groups + 1
				words := strings.Fields(r.Text())
				if r.PrefixGroup != g || len(words) != sp.PrefixLen+sp.SuffixLen || r.InputTokens != len(words) || r.MaxTokens != sp.OutputLen {
					t.Fatalf("request %d: group %d (want %d), %d words, %+v", i, r.PrefixGroup, g, len(words), r)
				}
				prefix := strings.Join(words[:sp.PrefixLen], " ")
				suffix := strings.Join(words[sp.PrefixLen:], " ")
				if p, ok := prefixes[g]; ok && p != prefix {
					t.Fatalf("request %d: prefix differs within group %d", i, g)
				}
				if _, ok := prefixes[g]; !ok {
					prefixes[g] = prefix
					firstWords[words[0]]++
				}
				if suffixes[suffix] {
					t.Fatalf("request %d: suffix %q repeats", i, suffix)
				}
				suffixes[suffix] = true
				// Exactly P shared words: the word after the prefix differs from the previous
				// request of the same group.
				if i >= sp.Groups {
					prev := strings.Fields(set.Requests[i-sp.Groups].Text())
					if prev[sp.PrefixLen] == words[sp.PrefixLen] {
						t.Fatalf("requests %d and %d share %d+1 words", i-sp.Groups, i, sp.PrefixLen)
					}
				}
			}
			distinct := map[string]bool{}
			for _, p := range prefixes {
				distinct[p] = true
			}
			if len(distinct) != len(prefixes) {
				t.Errorf("%d groups, %d distinct prefixes", len(prefixes), len(distinct))
			}
			if sp.Groups <= workloads.DistinctWords() && len(firstWords) != len(prefixes) {
				t.Errorf("groups share first words: %d groups, %d first words", len(prefixes), len(firstWords))
			}
			small, _ := sp.Generate(n / 2)
			if small.Fingerprint != workloads.Fingerprint(set.Requests[:n/2]) {
				t.Error("a smaller set is not a prefix of a larger one")
			}
		})
	}
	if _, err := (workloads.SharedPrefix{Groups: 1, PrefixLen: 4, SuffixLen: 1, OutputLen: 1}).Generate(workloads.DistinctWords() + 1); err == nil {
		t.Error("more requests than distinct 1-word suffixes accepted")
	}
	if errs := (workloads.SharedPrefix{Groups: workloads.DistinctWords() + 1, PrefixLen: 1, SuffixLen: 1, OutputLen: 1}).Validate(); len(errs) != 1 {
		t.Errorf("more groups than distinct 1-word prefixes: %v", errs)
	}
	if errs := (workloads.SharedPrefix{}).Validate(); len(errs) != 4 {
		t.Errorf("zero SharedPrefix: %d errors, want 4: %v", len(errs), errs)
	}
}

func TestTraceScalingIsExact(t *testing.T) {
	for _, file := range []struct{ path, format string }{
		{"azure.csv", workloads.TraceAzure}, {"mooncake.jsonl", workloads.TraceMooncake},
	} {
		base, err := workloads.LoadTrace(filepath.Join("testdata", file.path), file.format, 1)
		if err != nil {
			t.Fatal(err)
		}
		// Powers of two (and 3) times a whole number of 100 ns (Azure ticks) or of 0.5 ms
		// (Mooncake) are exact in float64 and in ns, so the scaled gaps equal gap·scale exactly.
		// Any other scale rounds each offset once: the gap can be off by at most 1 ns.
		for _, scale := range []float64{0.5, 2, 0.25, 3, 0.3, 1.7} {
			tr, err := workloads.LoadTrace(filepath.Join("testdata", file.path), file.format, scale)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Offsets[0] != 0 {
				t.Errorf("%s ×%g: first offset %v", file.path, scale, tr.Offsets[0])
			}
			exact := scale == 0.5 || scale == 2 || scale == 0.25 || scale == 3
			for i := 1; i < tr.Len(); i++ {
				gap := tr.Offsets[i] - tr.Offsets[i-1]
				want := float64(base.Offsets[i]-base.Offsets[i-1]) * scale
				if diff := float64(gap) - want; exact && diff != 0 || !exact && (diff > 1 || diff < -1) {
					t.Errorf("%s ×%g: gap %d is %v, want %vns", file.path, scale, i, gap, want)
				}
			}
		}
	}
	for _, scale := range []float64{0, -1} {
		if _, err := workloads.LoadTrace(filepath.Join("testdata", "azure.csv"), "", scale); err == nil {
			t.Errorf("time scale %v accepted", scale)
		}
	}
}

func TestTraceTimestampsMustNotDecrease(t *testing.T) {
	csv := "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.5,1,1\n2023-11-16 18:15:46.4,1,1\n"
	_, err := workloads.ReadTrace(strings.NewReader(csv), "t.csv", workloads.TraceAzure, 1)
	if err == nil || !strings.Contains(err.Error(), "t.csv:3: TIMESTAMP 2023-11-16 18:15:46.4 is earlier") {
		t.Errorf("error %v", err)
	}
	jsonl := `{"timestamp": 5, "input_length": 1}` + "\n" + `{"timestamp": 4, "input_length": 1}`
	_, err = workloads.ReadTrace(strings.NewReader(jsonl), "t.jsonl", workloads.TraceMooncake, 1)
	if err == nil || !strings.Contains(err.Error(), "t.jsonl:2: timestamp 4 is earlier") {
		t.Errorf("error %v", err)
	}
	for _, tc := range []struct{ format, input, want string }{
		{workloads.TraceAzure, "", "t: empty file"},
		{workloads.TraceAzure, "TIMESTAMP,ContextTokens,GeneratedTokens\n", "no rows"},
		{workloads.TraceAzure, "time,in,out\n1,2,3\n", "t:1: the header has no TIMESTAMP column"},
		{workloads.TraceMooncake, "\n\n", "t: no requests"},
		{"other", "x", `unknown format "other"`},
		// Numeric timestamps 570 years apart overflowed the int64 difference before it was checked.
		{workloads.TraceAzure, "TIMESTAMP,ContextTokens,GeneratedTokens\n-9e9,1,1\n9e9,1,1\n", "request 2 arrives more than 292 years after the first"},
		// A row dated decades ahead would make the replay wait that long.
		{workloads.TraceAzure, "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.5,1,1\n2023-11-16 18:15:47,1,1\n2099-01-01 00:00:00,1,1\n",
			"t:4: this request arrives 75.1 years after the first"},
		{workloads.TraceMooncake, `{"timestamp": 0, "input_length": 1}` + "\n" + `{"timestamp": 2678400001, "input_length": 1}`, "t:2: this request arrives 31.0 days after the first"},
	} {
		if _, err := workloads.ReadTrace(strings.NewReader(tc.input), "t", tc.format, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: error %v, want %q", tc.format, tc.input, err, tc.want)
		}
	}
}

func TestTraceRequests(t *testing.T) {
	tr, err := workloads.LoadTrace(filepath.Join("testdata", "mooncake.jsonl"), "", 1)
	if err != nil {
		t.Fatal(err)
	}
	set, err := workloads.TraceRequests(tr, 9)
	if err != nil {
		t.Fatal(err)
	}
	words := make([][]string, len(set.Requests))
	for i, r := range set.Requests {
		words[i] = strings.Fields(r.Text())
		if len(words[i]) != tr.InputLens[i] || r.InputTokens != tr.InputLens[i] || r.MaxTokens != tr.OutputLens[i] {
			t.Errorf("request %d: %d words, %+v; trace %d/%d", i, len(words[i]), r.InputTokens, tr.InputLens[i], tr.OutputLens[i])
		}
	}
	const B = workloads.MooncakeBlockSize
	common := func(a, b int) int {
		n := 0
		for n < len(words[a]) && n < len(words[b]) && words[a][n] == words[b][n] {
			n++
		}
		return n
	}
	// hash_ids: 0:[0 1 2] 1100 words, 1:[0 3] 700, 2:[0 1 4] 1030, 3:[5] 300, 4:[0 1] 1024.
	tests := []struct {
		a, b     int
		lo, hi   int // the shared leading words must be in [lo, hi]
		describe string
	}{
		{0, 1, B, B + 5, "one shared block"},
		{0, 2, 2 * B, 2*B + 5, "two shared blocks"},
		{0, 4, 2 * B, 2 * B, "request 4 is blocks 0 and 1 exactly: a prefix of request 0"},
		{0, 3, 0, 5, "no shared block"},
	}
	for _, tc := range tests {
		// A different block can begin with the same word by chance (1 in 164 per word), hence
		// the few words of slack above the shared blocks.
		if got := common(tc.a, tc.b); got < tc.lo || got > tc.hi {
			t.Errorf("%s: requests %d and %d share %d leading words, want [%d, %d]", tc.describe, tc.a, tc.b, got, tc.lo, tc.hi)
		}
	}
	again, _ := workloads.TraceRequests(tr, 9)
	other, _ := workloads.TraceRequests(tr, 10)
	if again.Fingerprint != set.Fingerprint || other.Fingerprint == set.Fingerprint {
		t.Error("trace requests are not a function of the trace and the seed")
	}

	az, err := workloads.LoadTrace(filepath.Join("testdata", "azure.csv"), "", 1)
	if err != nil {
		t.Fatal(err)
	}
	azSet, err := workloads.TraceRequests(az, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range azSet.Requests {
		if r.InputTokens != workloads.CountWords(r.Text()) || r.InputTokens != max(az.InputLens[i], 1) || r.MaxTokens != az.OutputLens[i] {
			t.Errorf("azure request %d: %+v", i, r)
		}
	}
	if len(az.Notes) != 1 || !strings.Contains(az.Notes[0], "1 of 6 trace requests have no output length") {
		t.Errorf("notes %q", az.Notes)
	}
}

func TestApplyCold(t *testing.T) {
	shared, _ := workloads.SharedPrefix{Groups: 2, PrefixLen: 5, SuffixLen: 3, OutputLen: 2, Seed: 4}.Generate(6)
	chat := workloads.NewSet("chat", []workloads.Request{
		{Messages: []workloads.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "hi"}}, InputTokens: 2},
		{Prompt: "both", Messages: []workloads.Message{{Role: "user", Content: "both"}}, InputTokens: 1},
	})
	for _, set := range []*workloads.Set{shared, chat} {
		before := renderSetNoFile(set)
		nonce := workloads.NewNonce()
		cold, err := workloads.ApplyCold(set, nonce)
		if err != nil {
			t.Fatal(err)
		}
		if renderSetNoFile(set) != before {
			t.Error("ApplyCold modified its input")
		}
		if cold.Fingerprint != set.Fingerprint || cold.Nonce != nonce {
			t.Errorf("cold set: fingerprint %s nonce %q; want %s %q", cold.Fingerprint, cold.Nonce, set.Fingerprint, nonce)
		}
		if workloads.Fingerprint(cold.Requests) == set.Fingerprint {
			t.Error("the requests did not change")
		}
		for i, r := range cold.Requests {
			orig := set.Requests[i]
			if r.InputTokens != orig.InputTokens+1 {
				t.Errorf("request %d: input tokens %d, want %d", i, r.InputTokens, orig.InputTokens+1)
			}
			if orig.Text() != "" && r.Text() != nonce+" "+orig.Text() {
				t.Errorf("request %d: prompt %q", i, r.Text())
			}
			if len(orig.Messages) > 0 && (r.Messages[0].Content != nonce+" "+orig.Messages[0].Content || !reflect.DeepEqual(r.Messages[1:], orig.Messages[1:])) {
				t.Errorf("request %d: messages %+v", i, r.Messages)
			}
		}
		if _, err := workloads.ApplyCold(cold, workloads.NewNonce()); err == nil {
			t.Error("a second nonce accepted")
		}
	}
	// Within the run, a group's requests still share their prefix (now one word longer).
	cold, _ := workloads.ApplyCold(shared, "[run:1]")
	a, b := strings.Fields(cold.Requests[0].Text()), strings.Fields(cold.Requests[2].Text())
	if strings.Join(a[:6], " ") != strings.Join(b[:6], " ") {
		t.Error("the nonce broke the group's shared prefix")
	}
	if n1, n2 := workloads.NewNonce(), workloads.NewNonce(); n1 == n2 || workloads.CountWords(n1) != 1 {
		t.Errorf("nonces %q %q", n1, n2)
	}
	for _, bad := range []string{"", " x", "x\n"} {
		if _, err := workloads.ApplyCold(shared, bad); err == nil {
			t.Errorf("nonce %q accepted", bad)
		}
	}
}

func renderSetNoFile(set *workloads.Set) string { return fmt.Sprintf("%+v", set.Requests) }

func TestCachePolicy(t *testing.T) {
	for _, name := range []string{"cold", "warm", "replay"} {
		p, err := workloads.ParseCachePolicy(name)
		if err != nil || p.String() != name {
			t.Errorf("%s: %v %v", name, p, err)
		}
		text, err := p.MarshalText()
		var back workloads.CachePolicy
		if err != nil || back.UnmarshalText(text) != nil || back != p {
			t.Errorf("%s: text round trip gave %v (%v)", name, back, err)
		}
	}
	if _, err := workloads.ParseCachePolicy("hot"); err == nil || !strings.Contains(err.Error(), "cold, warm or replay") {
		t.Errorf("bad policy: %v", err)
	}
	if workloads.CachePolicy(0) != workloads.CacheReplay {
		t.Error("the zero policy is not replay")
	}
}

func TestLoadDispatch(t *testing.T) {
	opts := workloads.LoadOptions{
		N: 3, Seed: 5,
		Synthetic:    workloads.Synthetic{InputLen: 10, OutputLen: 4, Seed: 999},
		SharedPrefix: workloads.SharedPrefix{Groups: 2, PrefixLen: 4, SuffixLen: 2, OutputLen: 3},
	}
	td := func(f string) string { return filepath.Join("testdata", f) }
	wantSynth, _ := workloads.Synthetic{InputLen: 10, OutputLen: 4, Seed: 5}.Generate(3)
	tests := []struct {
		spec     string
		n        int  // requests expected
		trace    bool // a trace is returned
		prefix   string
		wantFP   string
		wantNote string
	}{
		{spec: "synthetic", n: 3, prefix: "random(", wantFP: wantSynth.Fingerprint},
		{spec: "", n: 3, prefix: "random("},
		{spec: "shared-prefix", n: 3, prefix: "shared-prefix(groups=2, prefix=4, suffix=2, output=3, seed=5)"},
		{spec: td("requests.jsonl"), n: 3, prefix: "jsonl("},
		{spec: "jsonl:" + td("requests.jsonl"), n: 3, prefix: "jsonl("},
		{spec: td("sharegpt.json"), n: 3, prefix: "sharegpt("},
		{spec: "sharegpt:" + td("sharegpt.json"), n: 3, prefix: "sharegpt("},
		{spec: td("azure.csv"), n: 3, trace: true, prefix: "azure("},
		{spec: "mooncake:" + td("mooncake.jsonl"), n: 3, trace: true, prefix: "mooncake("},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			set, tr, err := workloads.Load(tc.spec, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Requests) != tc.n || (tr != nil) != tc.trace || !strings.HasPrefix(set.Source, tc.prefix) {
				t.Errorf("%d requests, trace %v, source %q", len(set.Requests), tr != nil, set.Source)
			}
			if tr != nil && tr.Len() != len(set.Requests) {
				t.Errorf("trace of %d arrivals for %d requests", tr.Len(), len(set.Requests))
			}
			if tc.wantFP != "" && set.Fingerprint != tc.wantFP {
				t.Error("Load's synthetic set differs from Synthetic.Generate with the options' seed")
			}
		})
	}
	all := opts
	all.N = 0
	set, _, err := workloads.Load(td("requests.jsonl"), all)
	if err != nil || len(set.Requests) != 7 {
		t.Errorf("N=0 loads the whole file: %v", err)
	}
	many := opts
	many.N = 50
	set, _, err = workloads.Load(td("requests.jsonl"), many)
	if err != nil || len(set.Notes) == 0 || !strings.Contains(set.Notes[len(set.Notes)-1], "50 requests asked for, the file has 7") {
		t.Errorf("short file not noted: %v %v", set, err)
	}
	scaled := opts
	scaled.TimeScale = 0.5
	_, tr, err := workloads.Load("azure:"+td("azure.csv"), scaled)
	if err != nil || tr.Offsets[1] != time.Duration(3442860000/2) {
		t.Errorf("time scale not applied: %v %v", tr, err)
	}
	for _, bad := range []string{"x.txt", "parquet:x", "synthetic:3"} {
		if _, _, err := workloads.Load(bad, opts); err == nil || !strings.Contains(err.Error(), "unknown kind") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
	if _, _, err := workloads.Load("synthetic", workloads.LoadOptions{Synthetic: opts.Synthetic}); err == nil {
		t.Error("synthetic with N=0 accepted")
	}
	if _, _, err := workloads.Load(td("missing.jsonl"), opts); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestUniformSetsUnchanged pins fingerprints of uniform synthetic sets made before length
// distributions, labels and optional max_tokens existed: runs recorded then stay comparable.
func TestUniformSetsUnchanged(t *testing.T) {
	tests := []struct {
		s    workloads.Synthetic
		want string
	}{
		{workloads.Synthetic{InputLen: 1024, OutputLen: 128}, "sha256:b43a7cb0f09a88a6a2d336daedb6f573ef7b1fb77609386c108e9ad70d95da58"},
		{workloads.Synthetic{InputLen: 100, OutputLen: 10, RangeRatio: 0.5, Seed: 42}, "sha256:412220257744c46fa9030f38912045ffdcdd0a62296c77fae91316edce3d2a74"},
	}
	for _, tc := range tests {
		set, err := tc.s.Generate(50)
		if err != nil || set.Fingerprint != tc.want {
			t.Errorf("%v: %v %v, want %s", tc.s, set.Fingerprint, err, tc.want)
		}
	}
}

// TestGeneratedSetsUnchanged pins the fingerprints of shared-prefix and trace request sets as
// they were when their prompts were held as text: keeping prompts as recipes changed no byte.
func TestGeneratedSetsUnchanged(t *testing.T) {
	shared, err := workloads.SharedPrefix{Groups: 4, PrefixLen: 64, SuffixLen: 16, OutputLen: 8, Seed: 3}.Generate(40)
	if err != nil {
		t.Fatal(err)
	}
	if want := "sha256:30a8c4611b57150a3340445bba82eb659e6a9f5cac8b776d4328ffdcbe5a95ea"; shared.Fingerprint != want {
		t.Errorf("shared prefix: %s, want %s", shared.Fingerprint, want)
	}
	for _, tc := range []struct{ file, format, want string }{
		{"mooncake.jsonl", "mooncake", "sha256:aedc363dd317d3592522ffbf17f3426649e8baa48ec1fb5b82d608598780d468"},
		{"azure.csv", "azure", "sha256:dce7313ce4102fddfc5afa2fa64815f419abfce1d3f9d36cc78c9b30528a767b"},
	} {
		tr, err := workloads.LoadTrace(filepath.Join("testdata", tc.file), tc.format, 1)
		if err != nil {
			t.Fatal(err)
		}
		set, err := workloads.TraceRequests(tr, 7)
		if err != nil {
			t.Fatal(err)
		}
		if set.Fingerprint != tc.want {
			t.Errorf("%s: %s, want %s", tc.file, set.Fingerprint, tc.want)
		}
		for i := range set.Requests {
			r := &set.Requests[i]
			if !r.Generated() || r.TextLen() != len(r.Text()) {
				t.Errorf("%s request %d: generated %v, TextLen %d, text %d bytes", tc.file, i, r.Generated(), r.TextLen(), len(r.Text()))
			}
		}
	}
}

// TestShareGPTLinesInALongFile locates an entry deep in a pretty-printed file, past many trims of
// the line tracker.
func TestShareGPTLinesInALongFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("[\n")
	const bad = 1234
	for k := range 2000 {
		value := `"p q"`
		if k == bad {
			value = "7"
		}
		sep := ",\n"
		if k == 1999 {
			sep = "\n"
		}
		// Three lines an entry: entry k starts on line 2 + 3k.
		fmt.Fprintf(&b, "{\"id\": %d,\n \"conversations\": [{\"from\": \"human\", \"value\": %s},\n {\"from\": \"gpt\", \"value\": \"r s\"}]}%s", k, value, sep)
	}
	b.WriteString("]\n")
	_, err := workloads.ReadShareGPT(strings.NewReader(b.String()), "s.json", workloads.ShareGPTOptions{})
	want := fmt.Sprintf(`s.json:%d: entry %d (id "%d"): conversations[0].value must be a string, got 7`, 2+3*bad, bad+1, bad)
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
}

func TestCountWordsIsFieldsCount(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", " a ", "a  b\tc\nd", "\u00a0x\u2003y\u3000", "\xff\xfe bad utf8", "é à", "\u0085z", "a\u200bb",
	} {
		if got, want := workloads.CountWords(s), len(strings.Fields(s)); got != want {
			t.Errorf("CountWords(%q) = %d, strings.Fields gives %d", s, got, want)
		}
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
