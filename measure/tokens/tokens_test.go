package tokens_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/measure/tokens"
	"github.com/loadcurve/loadcurve/workloads"
)

// testdata/tokenizer.json is a BPE tokenizer made by hand for these tests: the 26 letters and
// ten merges (th, the, an, and, in, of, er, on, re, at) after a lowercase normalizer and a
// whitespace pre-tokenizer, so that most words are several tokens ("university" is 9).

func load(t *testing.T) *tokens.Tokenizer {
	t.Helper()
	tk, err := tokens.Load(filepath.Join("testdata", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestCount(t *testing.T) {
	tk := load(t)
	for _, tc := range []struct {
		text string
		want int
	}{
		{"the", 1},
		{"The and of", 3},
		{"then", 2},       // the + n
		{"university", 9}, // u n i v er s i t y
		{"", 0},
		{"  the   the ", 2},
	} {
		got, err := tk.Count(tc.text)
		if err != nil || got != tc.want {
			t.Errorf("Count(%q) = %d, %v; want %d", tc.text, got, err, tc.want)
		}
	}
}

func TestLoadFromADirectoryAndRefusals(t *testing.T) {
	if _, err := tokens.Load("testdata"); err != nil {
		t.Errorf("a directory holding tokenizer.json: %v", err)
	}
	empty := t.TempDir()
	if _, err := tokens.Load(empty); err == nil || !strings.Contains(err.Error(), "without a tokenizer.json") {
		t.Errorf("a directory without one: %v", err)
	}
	bad := filepath.Join(empty, "tokenizer.json")
	if err := os.WriteFile(bad, []byte(`{"model": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Load(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a malformed file is refused naming it: %v", err)
	}
	if _, err := tokens.Load(filepath.Join(empty, "nope.json")); err == nil {
		t.Error("a missing file is refused")
	}
}

// TestSyntheticPromptsAreSizedInTokens: with a tokenizer, every synthetic prompt counts exactly
// the tokens drawn for it (here the words counted would be far fewer: most words are several
// tokens), with a range ratio and with vLLM's shared random prefix.
func TestSyntheticPromptsAreSizedInTokens(t *testing.T) {
	tk := load(t)
	for _, tc := range []struct {
		name string
		s    workloads.Synthetic
	}{
		{"fixed", workloads.Synthetic{InputLen: 64, OutputLen: 8}},
		{"range", workloads.Synthetic{InputLen: 200, OutputLen: 8, RangeRatio: 0.5, Seed: 3}},
		{"one token", workloads.Synthetic{InputLen: 1, OutputLen: 8}},
		{"prefix", workloads.Synthetic{InputLen: 50, OutputLen: 8, PrefixLen: 30, RangeRatio: 0.2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			words := tc.s
			tc.s.Tokenizer = tk
			set, err := tc.s.Generate(40)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := words.Generate(40)
			if err != nil {
				t.Fatal(err)
			}
			differ := 0
			var prefix string
			for i, r := range set.Requests {
				got, err := tk.Count(r.Text())
				if err != nil {
					t.Fatal(err)
				}
				if got != r.InputTokens {
					t.Errorf("request %d: %d tokens, asked %d", i, got, r.InputTokens)
				}
				if r.InputTokens != plain.Requests[i].InputTokens {
					t.Errorf("request %d: asked %d tokens, the word-sized set %d: the tokenizer must not change the lengths drawn", i, r.InputTokens, plain.Requests[i].InputTokens)
				}
				if n, _ := tk.Count(plain.Requests[i].Text()); n != plain.Requests[i].InputTokens {
					differ++
				}
				if tc.s.PrefixLen > 0 {
					if n, _ := tk.Count(firstTokens(t, tk, r.Text(), tc.s.PrefixLen)); n != tc.s.PrefixLen {
						t.Errorf("request %d: prefix of %d tokens", i, n)
					}
					head := firstTokens(t, tk, r.Text(), tc.s.PrefixLen)
					if prefix == "" {
						prefix = head
					} else if head != prefix {
						t.Errorf("request %d: its prefix differs from request 0's", i)
					}
				}
			}
			if tc.s.InputLen > 1 && differ == 0 {
				t.Error("the word-sized prompts count as many tokens as asked: the test tokenizer does not tell words from tokens")
			}
		})
	}
}

// firstTokens is the shortest run of leading words of text that counts n tokens.
func firstTokens(t *testing.T, tk *tokens.Tokenizer, text string, n int) string {
	t.Helper()
	words := strings.Fields(text)
	for k := 1; k <= len(words); k++ {
		head := strings.Join(words[:k], " ")
		if c, _ := tk.Count(head); c >= n {
			return head
		}
	}
	return text
}
