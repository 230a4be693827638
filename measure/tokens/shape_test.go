package tokens

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"

	"github.com/loadcurve/loadcurve/internal/racedetector"
)

// TestShapeRefusesBeforeParsing: the files checkShape refuses (an unknown model type, wherever
// and however its key is written; lists of more entries than a tokenizer holds), with the
// message the parser would give or one naming the list and the bound; and the files it leaves
// to the parser (a known or inferred type, a type that is not a string, a model that is not an
// object, text that is not JSON), which the parser then reads or refuses as before.
func TestShapeRefusesBeforeParsing(t *testing.T) {
	entries := func(n int, item string) string { return strings.TrimSuffix(strings.Repeat(item+",", n), ",") }
	tests := []struct {
		name string
		file string
		want string // a substring of checkShape's error; "" for none
	}{
		{"an unknown type", `{"model":{"type":"Hostile","vocab":{"a":0}}}`, `model: unknown model type "Hostile"`},
		{"an unknown type after the vocabulary", `{"model":{"vocab":{"a\"}":0,"b":[1,{"c":"]"}]},"merges":[],"type":"Hostile"}}`, `unknown model type "Hostile"`},
		{"the key in capitals (encoding/json matches it)", `{"MODEL":{"Type":"Hostile"}}`, `unknown model type "Hostile"`},
		{"the key escaped", `{"model":{"typ\u0065":"Hostile"}}`, `unknown model type "Hostile"`},
		{"the type escaped", `{"model":{"type":"Host\u0069le"}}`, `unknown model type "Hostile"`},
		{"a long unknown type is quoted short", `{"model":{"type":"` + strings.Repeat("X", 100_000) + `"}}`, `unknown model type "XXXX`},
		{"a null after the type leaves it", `{"model":{"type":"Hostile","type":null}}`, `unknown model type "Hostile"`},
		{"too many vocabulary entries", `{"model":{"type":"BPE","vocab":{` + entries(MaxVocab+1, `"a":0`) + `}}}`, "model: vocab: 2097153 entries, more than a tokenizer holds (at most 2097152"},
		{"too many Unigram entries", `{"model":{"type":"Unigram","vocab":[` + entries(MaxVocab+1, `["a",0]`) + `]}}`, "model: vocab: 2097153 entries"},
		{"too many merges", `{"model":{"type":"BPE","vocab":{},"merges":[` + entries(MaxMerges+1, `0`) + `]}}`, "model: merges: 4194305 entries"},
		{"too many added tokens", `{"added_tokens":[` + entries(MaxAdded+1, `0`) + `],"model":{"type":"BPE"}}`, "added_tokens: 2097153 entries"},

		{"a known type", `{"model":{"type":"WordLevel","vocab":{"a":0}}}`, ""},
		{"the last type wins", `{"model":{"type":"Hostile","type":"BPE"}}`, ""},
		{"the last model wins", `{"model":{"type":"Hostile"},"model":{"type":"Unigram"}}`, ""},
		{"no type: the parser infers it", `{"model":{"vocab":{"a":0},"merges":[]}}`, ""},
		{"a type that is not a string: the parser says so", `{"model":{"type":7}}`, ""},
		{"a model that is not an object", `{"model":[{"type":"Hostile"}]}`, ""},
		{"a model replaced by null", `{"model":{"type":"Hostile"},"model":null}`, ""},
		{"lists at their bounds", `{"model":{"type":"BPE","vocab":{` + entries(MaxVocab, `"a":0`) + `},"merges":[` + entries(MaxMerges, "0") + `]}}`, ""},
		{"not JSON", `{"model":{"type":"Hostile"`, ""},
		{"a million nested arrays (no recursion)", `{"x":` + strings.Repeat("[", 1_000_000) + `,"model":{"type":"Hostile"}}`, ""},
		{"a top level that is not an object", `[{"model":{"type":"Hostile"}}]`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if racedetector.Enabled && len(tc.file) > 1<<20 {
				t.Skip("millions of entries: natively only (the test command's second pass)")
			}
			err := checkShape([]byte(tc.file))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			case err != nil && len(err.Error()) > 400:
				t.Errorf("an error of %d bytes", len(err.Error()))
			}
			if tc.want != "" {
				if _, perr := parse([]byte(tc.file)); perr == nil || perr.Error() != err.Error() {
					t.Errorf("parse: %v, want the shape's refusal", perr)
				}
			}
		})
	}
}

// TestShapeAgreesWithEncodingJSON: on real files (every component's, three model families':
// SentencePiece, byte-level and three splits), the pass reads the type and the lists' lengths
// encoding/json decodes.
func TestShapeAgreesWithEncodingJSON(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "components", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no component files: %v", err)
	}
	files = append(files, filepath.Join("testdata", "tokenizer.json"))
	if !racedetector.Enabled {
		for _, f := range []string{"llama2", "gpt2", "deepseek_v3"} {
			files = append(files, filepath.Join("testdata", "models", f+".json.xz"))
		}
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			data := readFile(t, f)
			var want struct {
				Added []json.RawMessage `json:"added_tokens"`
				Model struct {
					Type   string          `json:"type"`
					Vocab  json.RawMessage `json:"vocab"`
					Merges json.RawMessage `json:"merges"`
				} `json:"model"`
			}
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			sh, ok := scanShape(data)
			if !ok || !sh.isObject || !sh.model || !sh.typeKnown {
				t.Fatalf("%+v, ok %v", sh, ok)
			}
			if sh.modelType != want.Model.Type || sh.vocab != entriesOf(t, want.Model.Vocab) || sh.merges != entriesOf(t, want.Model.Merges) ||
				sh.added != entriesOf(t, mustJSON(t, want.Added)) {
				t.Errorf("type %q, vocab %d, merges %d, added %d; encoding/json: %q, %d, %d, %d", sh.modelType, sh.vocab, sh.merges, sh.added,
					want.Model.Type, entriesOf(t, want.Model.Vocab), entriesOf(t, want.Model.Merges), len(want.Added))
			}
		})
	}
}

// TestUnknownModelRefusedForLittle: a 20 MB file of a million vocabulary entries and an unknown
// model type is refused by Parse having allocated next to nothing beyond the bytes it was given
// (before: every byte again, and more, in decoded values), with a message of a few hundred bytes
// naming the file.
func TestUnknownModelRefusedForLittle(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("the race detector's own allocations: natively only (the test command's second pass)")
	}
	data := hostileFile(1_000_000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Parse("big/tokenizer.json", data)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "big/tokenizer.json: not a tokenizer file loadcurve can read: model: unknown model type") || len(err.Error()) > 300 {
		t.Fatalf("error %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<10 {
		t.Errorf("%d bytes allocated to refuse a file of %d bytes", alloc, len(data))
	}
}

// BenchmarkRefuseUnknownModel: Parse of a 100 MB file of 5 million entries and an unknown
// model type (issue 37's: 39 s and 2.1 GB before its refusal).
func BenchmarkRefuseUnknownModel(b *testing.B) {
	data := hostileFile(5_000_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("tokenizer.json", data); err == nil {
			b.Fatal("accepted")
		}
	}
}

// hostileFile is a tokenizer file of n vocabulary entries whose model type is unknown, given
// after the vocabulary.
func hostileFile(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,"model":{"vocab":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"tok`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(`":`)
		b.WriteString(strings.Repeat("1", 1+i%6))
	}
	b.WriteString(`},"merges":[],"type":"Hostile` + strings.Repeat("X", 200) + `"}}`)
	return []byte(b.String())
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if strings.HasSuffix(path, ".xz") {
		if r, err = xz.NewReader(r); err != nil {
			t.Fatal(err)
		}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// entriesOf is the number of members or elements of raw, -1 when it is neither an object nor an
// array (or absent).
func entriesOf(t *testing.T, raw json.RawMessage) int {
	t.Helper()
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil && list != nil {
		return len(list)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil && obj != nil {
		return len(obj)
	}
	return -1
}

func mustJSON(t *testing.T, v []json.RawMessage) json.RawMessage {
	t.Helper()
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
