package tokens_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ulikunitz/xz"

	"github.com/loadcurve/loadcurve/internal/racedetector"
	"github.com/loadcurve/loadcurve/measure/tokens"
)

// The reference: testdata/reference/NAME.jsonl.xz holds, for every line of testdata/corpus.jsonl,
// the token ids Hugging Face's tokenizers (the Rust library) gives it with the tokenizer
// testdata/models/NAME.json.xz (a model family's file) or testdata/components/NAME.json (a file
// written by hand for one part of the format). scripts/tokenizer-reference wrote them; see
// testdata/README.md.

func readXZ(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := xz.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data
}

var corpusOnce = sync.OnceValues(func() ([]string, error) {
	data, err := os.ReadFile(filepath.Join("testdata", "corpus.jsonl"))
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var s string
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			return nil, err
		}
		lines = append(lines, s)
	}
	return lines, nil
})

func corpus(t testing.TB) []string {
	t.Helper()
	lines, err := corpusOnce()
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func referenceIDs(t testing.TB, name string) [][]int {
	t.Helper()
	data := readXZ(t, filepath.Join("testdata", "reference", name+".jsonl.xz"))
	var out [][]int
	for _, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var ids []int
		if err := json.Unmarshal(l, &ids); err != nil {
			t.Fatal(err)
		}
		out = append(out, ids)
	}
	return out
}

// families are the model families' tokenizer files in testdata/models.
var families = []string{"llama3", "qwen3", "deepseek_v3", "gptoss", "gemma3", "llama2", "mistral_nemo", "gpt2"}

func agree(t *testing.T, name string, tk *tokens.Tokenizer) {
	lines := corpus(t)
	want := referenceIDs(t, name)
	if len(want) != len(lines) {
		t.Fatalf("%s: %d reference lines for %d corpus lines", name, len(want), len(lines))
	}
	bad := 0
	for i, s := range lines {
		got, err := tk.Encode(s)
		if err != nil {
			t.Errorf("%s: line %d %q: %v", name, i+1, s, err)
			continue
		}
		if !slices.Equal(got, want[i]) {
			bad++
			if bad <= 5 {
				t.Errorf("%s: line %d %q:\n got %v\nwant %v", name, i+1, cut(s), cutIDs(got), cutIDs(want[i]))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d corpus lines differ from the reference", name, bad, len(lines))
	}
}

func cut(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func cutIDs(ids []int) []int {
	if len(ids) > 40 {
		return ids[:40]
	}
	return ids
}

// TestFamiliesAgreeWithTheReference holds every model family's tokenizer to Hugging Face's on
// the whole corpus, id for id.
func TestFamiliesAgreeWithTheReference(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("the model families' files are decompressed and read natively only (the test command's second pass)")
	}
	tokens.Preload(t, families...)
	for _, name := range families {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			agree(t, name, tokens.Fixture(t, name))
		})
	}
}

// TestComponentsAgreeWithTheReference holds the small files written for each part of the
// format to Hugging Face's tokenizers on the whole corpus.
func TestComponentsAgreeWithTheReference(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("the whole corpus through 65 files: natively only (TestConcurrentEncoding runs under -race)")
	}
	files, err := filepath.Glob(filepath.Join("testdata", "components", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no component files: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tk, err := tokens.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			agree(t, name, tk)
		})
	}
}

// TestConcurrentEncoding encodes the corpus from several goroutines at once with one tokenizer
// (its word cache and buffers are shared), each getting the reference's ids.
func TestConcurrentEncoding(t *testing.T) {
	const name = "model-byte-fallback"
	tk, err := tokens.Load(filepath.Join("testdata", "components", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	lines, want := corpus(t), referenceIDs(t, name)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(lines); i += 2 {
				got, err := tk.Encode(lines[i])
				if err != nil || !slices.Equal(got, want[i]) {
					t.Errorf("goroutine %d, line %d: %v, %v; want %v", g, i+1, got, err, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}
