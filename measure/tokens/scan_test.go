package tokens

import (
	"bufio"
	"io"

	"encoding/json"
	"github.com/ulikunitz/xz"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"

	"github.com/loadcurve/loadcurve/internal/racedetector"
)

var scannedPatterns = []string{gpt2Pattern, llama3Pattern, qwenPattern, o200kPattern, tekkenPattern,
	deepseekDigits, deepseekCJK, deepseekMain}

// alphabet holds characters of every class the patterns tell apart, and the strings around
// which they back off: apostrophes and the letters of contractions (ſ and K fold to s and
// k), newlines among other whitespace, marks, letters of every case category, numbers of
// every kind, the slash of o200k's punctuation, DeepSeek's CJK ranges and their edges.
var alphabet = []string{"a", "b", "s", "t", "e", "l", "v", "r", "m", "d", "x", "S", "T", "E", "L", "R", "M", "D", "Q",
	"'", "'", "'", " ", " ", " ", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\u0085", "\u00a0", "\u3000", "\u2028",
	"\u180e", "\u200b", "\u200d", "\ufeff", "0", "1", "7", "٣", "Ⅻ", "½", "²", ".", ",", "!", "?", "-", "/", "(", ")", "$",
	"+", "<", "|", "~", "_", "@", "#", "—", "“", "€", "©", "😀", "🏽", "é", "É", "ß", "ſ", "K", "ǅ", "ʰ", "ー", "日", "龥",
	"龦", "㐀", "\u3040", "\u309f", "\u30a0", "\u30ff", "あ", "ア", "한", "ا", "\u0301", "\u0903", "\u20dd", "\x00", "\x1b", "\ue000"}

func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

func regexpMatches(t testing.TB, re *regexp2.Regexp, s string) []span {
	t.Helper()
	var out []span
	m, err := re.FindStringMatch(s)
	for m != nil && err == nil {
		start, length := m.ByteRange()
		out = append(out, span{start, start + length})
		m, err = re.FindNextMatch(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func corpusLines(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var s string
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, s)
	}
	return lines
}

// TestScannersAgreeWithRegexp2 holds every scanner to regexp2 (itself held to Hugging Face's
// Oniguruma through the model families' files) on the corpus and on 20,000 random strings.
func TestScannersAgreeWithRegexp2(t *testing.T) {
	texts := corpusLines(t)
	r := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if racedetector.Enabled {
		n = 1000 // the detector checks the code paths; the native pass runs all
	}
	for range n {
		texts = append(texts, randomText(r, 1+r.IntN(24)))
	}
	for _, p := range scannedPatterns {
		sc := knownPattern(p)
		if sc == nil {
			t.Fatalf("no scanner for %q", p)
		}
		re := regexp2.MustCompile(p, regexp2.None)
		bad := 0
		for _, s := range texts {
			got, want := sc.matches(s, nil), regexpMatches(t, re, s)
			if !slices.Equal(got, want) {
				if bad++; bad <= 3 {
					t.Errorf("pattern %.40q… on %q:\n got %v\nwant %v", p, s, got, want)
				}
			}
		}
		if bad > 0 {
			t.Errorf("pattern %.40q…: %d of %d texts differ", p, bad, len(texts))
		}
	}
}

// FuzzScanners holds the scanners to regexp2 on any valid UTF-8 text.
func FuzzScanners(f *testing.F) {
	for _, s := range []string{"Hello world's  \n\n 123456 日本語", "a\u0301'S  x", "  \t\r\n/x", "ǅemal'LL"} {
		f.Add(s)
	}
	res := make([]*regexp2.Regexp, len(scannedPatterns))
	for i, p := range scannedPatterns {
		res[i] = regexp2.MustCompile(p, regexp2.None)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for i, p := range scannedPatterns {
			if got, want := knownPattern(p).matches(s, nil), regexpMatches(t, res[i], s); !slices.Equal(got, want) {
				t.Fatalf("pattern %.40q… on %q:\n got %v\nwant %v", p, s, got, want)
			}
		}
	})
}

// TestFamiliesUseTheScanners checks that the model families' split patterns are the ones the
// scanners were written for, so their tokenizers take the fast path.
func TestFamiliesUseTheScanners(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("reads the model families' files: natively only")
	}
	names := []string{"llama3", "qwen3", "deepseek_v3", "gptoss", "mistral_nemo", "gpt2"}
	preload(t, names...)
	for _, name := range names {
		p := fixture(t, name).p
		n := 0
		for _, step := range p.pre {
			var m matcher
			switch s := step.(type) {
			case *splitter:
				m = s.m
			case *byteLevel:
				if s.split == nil {
					continue
				}
				m = s.split.m
			default:
				continue
			}
			n++
			if _, ok := m.(scanner); !ok {
				t.Errorf("%s: a split pattern has no scanner (%T)", name, m)
			}
		}
		if n == 0 {
			t.Errorf("%s: no split pattern", name)
		}
	}
}

var fixtures sync.Map // name → *Tokenizer

// preload reads the fixtures of names in parallel (a test that needs several starts with it).
func preload(t testing.TB, names ...string) {
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() { fixture(t, n) })
	}
	wg.Wait()
}

// fixture is a model family's tokenizer, from testdata/models/NAME.json.xz, read once per test
// binary.
func fixture(t testing.TB, name string) *Tokenizer {
	t.Helper()
	if tk, ok := fixtures.Load(name); ok {
		return tk.(*Tokenizer)
	}
	f, err := os.Open(filepath.Join("testdata", "models", name+".json.xz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := xz.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := Parse(name+".json", data)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := fixtures.LoadOrStore(name, tk)
	return v.(*Tokenizer)
}
