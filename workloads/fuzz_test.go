package workloads_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/workloads"
)

// The fuzz targets feed arbitrary bytes through the parsers. Whatever the input, a parser must
// not panic, and must return either an error or a valid result. Run one with, e.g.,
// go test -run '^$' -fuzz '^FuzzLoadJSONL$' -fuzztime 20s ./workloads

// addFiles seeds a fuzz target with testdata files.
func addFiles(f *testing.F, names ...string) {
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// checkSet asserts the invariants of every loaded set.
func checkSet(t *testing.T, set *workloads.Set) {
	t.Helper()
	if len(set.Requests) == 0 {
		t.Fatal("a set without requests and without an error")
	}
	for i, r := range set.Requests {
		text := workloads.CountWords(r.Text())
		if text != len(strings.Fields(r.Text())) {
			t.Fatalf("request %d: CountWords %d, strings.Fields %d", i, text, len(strings.Fields(r.Text())))
		}
		for _, m := range r.Messages {
			text += workloads.CountWords(m.Content)
			if m.Role == "" {
				t.Fatalf("request %d: a message without a role", i)
			}
		}
		if r.ID != i || r.InputTokens < 1 || r.MaxTokens < 0 || text == 0 || r.PrefixGroup < 0 {
			t.Fatalf("request %d invalid: %+v", i, r)
		}
		if err := r.Expect.Validate(); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if set.Fingerprint != workloads.Fingerprint(set.Requests) {
		t.Fatal("the fingerprint is not that of the requests")
	}
	if err := workloads.ValidateSessions(set.Requests); err != nil {
		t.Fatalf("session structure: %v", err)
	}
}

// checkError asserts a parser's error says where: a *LineError.
func checkError(t *testing.T, err error) {
	t.Helper()
	var le *workloads.LineError
	if !errors.As(err, &le) || err.Error() == "" {
		t.Fatalf("error %q (%T) is not a located *LineError", err, err)
	}
}

func FuzzLoadJSONL(f *testing.F) {
	addFiles(f, "requests.jsonl", "requests_bad.jsonl", "mooncake.jsonl", "sessions.jsonl", "sessions_bad.jsonl")
	for _, s := range []string{
		`{"prompt": "x", "id": 0, "label": "a"}`,
		`{"messages": [{"role": "user", "content": "hi"}], "expected": {"regex": "^a+$", "min_tokens": 2}}`,
		"\ufeff{\"prompt\": \"bom\"}\r\n\r\n",
		`{"prompt": "\ud800 invalid surrogate", "expected": "\u00e9"}`,
		`{"prompt": "x", "max_tokens": 9223372036854775808}`,
		`{"session": 2, "turn": 2, "prompt": "b", "think_ms": 1e-320}` + "\n" + `{"session": "2", "turn": 1, "prompt": "a", "tools": [{"x": "<&>\u2028"}]}`,
		`{"session": -0, "prompt": "a", "think_ms": -0}` + "\n" + `{"session": 1, "prompt": "b", "think_ms": 86400000}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := workloads.ReadJSONL(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			checkError(t, err)
			return
		}
		checkSet(t, set)
		// Whatever loads, saves and loads back identically. Save's encoding (one json.Encoder
		// line per request) is reproduced in memory: file I/O would slow the fuzzer tenfold.
		var saved bytes.Buffer
		enc := json.NewEncoder(&saved)
		for i := range set.Requests {
			if err := enc.Encode(&set.Requests[i]); err != nil {
				t.Fatal(err)
			}
		}
		back, err := workloads.ReadJSONL(&saved, "saved.jsonl")
		if err != nil {
			t.Fatalf("a saved set does not load back: %v", err)
		}
		if !reflect.DeepEqual(back.Requests, withoutSessionIDs(set.Requests)) || back.Fingerprint != set.Fingerprint {
			t.Fatalf("round trip changed the set:\n%+v\n%+v", set.Requests, back.Requests)
		}
	})
}

func FuzzShareGPT(f *testing.F) {
	for _, name := range []string{"sharegpt.json", "sharegpt_bad.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0), uint8(0), uint16(0), false)
		f.Add(b, uint8(2), uint8(4), uint16(12), false)
		f.Add(b, uint8(2), uint8(4), uint16(12), true)
	}
	f.Add([]byte(`[{"id": 1.5e3, "conversations": [{"from": "HUMAN", "value": "a b"}, {"from": "GPT", "value": "c"}]}]`), uint8(0), uint8(0), uint16(0), false)
	f.Add([]byte("[\n{},\n null, [], 3]"), uint8(0), uint8(0), uint16(0), true)
	f.Add([]byte(`[{"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b c"}, {"from": "human", "value": "d e f"}, {"from": "gpt", "value": "g"}]}]`), uint8(0), uint8(1), uint16(4), true)
	f.Fuzz(func(t *testing.T, data []byte, maxN, minLen uint8, maxPrompt uint16, multi bool) {
		opts := workloads.ShareGPTOptions{Max: int(maxN), MinLen: int(minLen), MaxPromptLen: int(maxPrompt), MultiTurn: multi}
		set, err := workloads.ReadShareGPT(bytes.NewReader(data), "fuzz.json", opts)
		if err != nil {
			checkError(t, err)
			return
		}
		checkSet(t, set)
		count := len(set.Requests)
		if multi {
			count = set.SessionCount()
		}
		if opts.Max > 0 && count > opts.Max || set.Skipped < 0 || multi != (set.SessionCount() > 0) {
			t.Fatalf("%d requests (%d sessions) with max %d, %d skipped", len(set.Requests), set.SessionCount(), opts.Max, set.Skipped)
		}
		history := 0 // of the session, in words: the prompt limit counts it
		for i, r := range set.Requests {
			if r.Turn <= 1 {
				history = 0
			}
			in := workloads.CountWords(r.Text())
			for _, m := range r.Messages {
				in += workloads.CountWords(m.Content)
			}
			if r.InputTokens != in || r.MaxTokens < 1 || in < opts.MinLen || r.MaxTokens < opts.MinLen ||
				opts.MaxPromptLen > 0 && history+in > opts.MaxPromptLen {
				t.Fatalf("request %d escapes the filters %+v: %+v", i, opts, r)
			}
			history += in + r.MaxTokens
		}
	})
}

// checkTrace asserts the invariants of every loaded trace, and that its requests can be built.
func checkTrace(t *testing.T, tr *workloads.Trace) {
	t.Helper()
	n := tr.Len()
	if n == 0 || len(tr.InputLens) != n || len(tr.OutputLens) != n || tr.HashIDs != nil && len(tr.HashIDs) != n {
		t.Fatalf("inconsistent trace: %d offsets, %d/%d lengths, %d hash lists", n, len(tr.InputLens), len(tr.OutputLens), len(tr.HashIDs))
	}
	if tr.Offsets[0] != 0 {
		t.Fatalf("first offset %v", tr.Offsets[0])
	}
	total := 0
	for i := range n {
		if i > 0 && tr.Offsets[i] < tr.Offsets[i-1] {
			t.Fatalf("offset %d (%v) before offset %d (%v)", i, tr.Offsets[i], i-1, tr.Offsets[i-1])
		}
		if tr.InputLens[i] < 0 || tr.OutputLens[i] < 0 {
			t.Fatalf("request %d: negative lengths %d/%d", i, tr.InputLens[i], tr.OutputLens[i])
		}
		total += min(tr.InputLens[i], 1<<20)
	}
	if total > 200_000 {
		return // building megabytes of prompts per input would slow the fuzzer to a crawl
	}
	set, err := workloads.TraceRequests(tr, 1)
	if err != nil {
		t.Fatalf("requests of a valid trace: %v", err)
	}
	checkSet(t, set)
	for i, r := range set.Requests {
		if r.InputTokens != max(tr.InputLens[i], 1) || workloads.CountWords(r.Text()) != r.InputTokens || r.MaxTokens != tr.OutputLens[i] {
			t.Fatalf("request %d does not follow the trace: %+v", i, r)
		}
	}
}

// fuzzTrace reads a fuzzed trace; an invalid time scale must be refused, a valid trace be sound.
func fuzzTrace(t *testing.T, data []byte, format string, scale float64) {
	tr, err := workloads.ReadTrace(bytes.NewReader(data), "fuzz", format, scale)
	if !(scale > 0) || math.IsInf(scale, 0) {
		if err == nil {
			t.Fatalf("time scale %v accepted", scale)
		}
		return
	}
	if err != nil {
		if !strings.Contains(err.Error(), "fuzz") {
			t.Fatalf("error %q does not name the file", err)
		}
		return
	}
	checkTrace(t, tr)
}

func FuzzTraceCSV(f *testing.F) {
	for _, name := range []string{"azure.csv", "azure_2024.csv", "azure_bad.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 1.0)
		f.Add(b, 0.37)
	}
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n-9e9,1,1\n9e9,1,1\n"), 1.0)
	f.Add([]byte("GeneratedTokens,x,TIMESTAMP,ContextTokens\n5,,1.5,3\n6,\"a,b\",2,4\n"), 1e300)
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n1700-01-01 00:00:00,1,1\n2199-12-31 23:59:59Z,1,1\n"), 1.0)
	f.Fuzz(func(t *testing.T, data []byte, scale float64) {
		fuzzTrace(t, data, workloads.TraceAzure, scale)
	})
}

func FuzzTraceMooncake(f *testing.F) {
	for _, name := range []string{"mooncake.jsonl", "mooncake_bad.jsonl", "requests.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 1.0)
		f.Add(b, 2.5)
	}
	f.Add([]byte(`{"timestamp": 9223372036854, "input_length": 1}`+"\n"+`{"timestamp": 1e300, "input_length": 1}`), 1.0)
	f.Add([]byte(`{"timestamp": 0.0000001, "input_length": 3, "hash_ids": [9223372036854775807, 0, 0]}`), 1e-300)
	f.Fuzz(func(t *testing.T, data []byte, scale float64) {
		fuzzTrace(t, data, workloads.TraceMooncake, scale)
	})
}
