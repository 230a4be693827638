package tokens_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/internal/racedetector"
	"github.com/loadcurve/loadcurve/measure/tokens"
	"github.com/loadcurve/loadcurve/workloads"
)

// The prompts loadcurve sends, sized with the model families' tokenizers (which agree with
// Hugging Face's on the corpus): every generated prompt counts exactly the tokens asked for,
// whatever loadcurve put in front of it (the cold-cache nonce of the default cache mode, a
// shared prefix, a session's nonce), and a file's prompts are counted, nonce included.

func count(t *testing.T, tk *tokens.Tokenizer, text string) int {
	t.Helper()
	n, err := tk.Count(text)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func cold(t *testing.T, set *workloads.Set, session bool) *workloads.Set {
	t.Helper()
	nonce := workloads.NewNonce()
	if session {
		nonce = "[run:0123456789abcdef]"
	}
	c, err := workloads.ApplyCold(set, nonce)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPromptsCountWhatWasAskedInEveryFamily(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("reads the model families' files: natively only")
	}
	tokens.Preload(t, families...)
	for _, name := range families {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tk := tokens.Fixture(t, name)
			t.Run("synthetic cold", func(t *testing.T) {
				set, err := workloads.Synthetic{InputLen: 256, OutputLen: 8, Seed: 1, Tokenizer: tk}.Generate(20)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range []*workloads.Set{set, cold(t, set, false), cold(t, set, false)} {
					for i, r := range s.Requests {
						if got := count(t, tk, r.Text()); got != 256 || r.InputTokens != 256 {
							t.Fatalf("%s: request %d: counts %d, says %d; want 256", s.Source, i, got, r.InputTokens)
						}
					}
				}
			})
			t.Run("range and prefix cold", func(t *testing.T) {
				set, err := workloads.Synthetic{InputLen: 100, OutputLen: 8, RangeRatio: 0.5, PrefixLen: 32, Seed: 2, Tokenizer: tk}.Generate(20)
				if err != nil {
					t.Fatal(err)
				}
				c := cold(t, set, false)
				lengths := map[int]bool{}
				for i, r := range c.Requests {
					lengths[r.InputTokens] = true
					if r.InputTokens < 32+50 || r.InputTokens > 32+150 {
						t.Errorf("request %d: %d tokens asked, outside 32 + [50, 150]", i, r.InputTokens)
					}
					if got := count(t, tk, r.Text()); got != r.InputTokens || r.InputTokens != set.Requests[i].InputTokens {
						t.Errorf("request %d: counts %d, says %d, was drawn %d", i, got, r.InputTokens, set.Requests[i].InputTokens)
					}
					if !strings.HasPrefix(r.Text(), c.Nonce+" "+strings.Fields(set.Requests[0].Text())[0]) {
						t.Errorf("request %d does not start with the nonce and the shared prefix", i)
					}
				}
				if len(lengths) < 5 {
					t.Errorf("the range ratio drew %d distinct lengths in 20 requests", len(lengths))
				}
			})
			t.Run("shared prefix cold", func(t *testing.T) {
				sp := workloads.SharedPrefix{Groups: 3, PrefixLen: 64, SuffixLen: 32, OutputLen: 8, Seed: 3, Tokenizer: tk}
				set, err := sp.Generate(12)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range []*workloads.Set{set, cold(t, set, false)} {
					for i, r := range s.Requests {
						if got := count(t, tk, r.Text()); got != 96 || r.InputTokens != 96 {
							t.Errorf("%s: request %d: counts %d, says %d; want 96", s.Source, i, got, r.InputTokens)
						}
					}
				}
				// A group's prefix counts 64 tokens and is the same text in all its requests.
				for g := range 3 {
					first := set.Requests[g].Text()
					for i := g + 3; i < 12; i += 3 {
						other := set.Requests[i].Text()
						k := 0
						for k < len(first) && k < len(other) && first[k] == other[k] {
							k++
						}
						common := strings.TrimRight(first[:strings.LastIndex(first[:k], " ")+1], " ")
						if n := count(t, tk, common); n < 64 {
							t.Errorf("group %d: requests %d and %d share %d tokens, want at least 64", g+1, g, i, n)
						}
					}
				}
			})
			t.Run("sessions cold", func(t *testing.T) {
				ss := workloads.SyntheticSessions{Synthetic: workloads.Synthetic{InputLen: 40, OutputLen: 8, Seed: 4, Tokenizer: tk},
					Turns: 3, SystemLen: 20}
				set, err := ss.Generate(4)
				if err != nil {
					t.Fatal(err)
				}
				c := cold(t, set, true)
				for i, r := range c.Requests {
					want := 40
					if r.Turn == 1 {
						want = 60
						if n := count(t, tk, r.Messages[0].Content); n != 20 {
							t.Errorf("request %d: the system prompt, nonce in front, counts %d, want 20", i, n)
						}
						if !strings.HasPrefix(r.Messages[0].Content, "[run:0123456789abcdef:s") {
							t.Errorf("request %d: no session nonce in %.40q", i, r.Messages[0].Content)
						}
					}
					n := 0
					for _, m := range r.Messages {
						n += count(t, tk, m.Content)
					}
					if n != want || r.InputTokens != want {
						t.Errorf("request %d (turn %d): its messages count %d, it says %d; want %d", i, r.Turn, n, r.InputTokens, want)
					}
				}
			})
		})
	}
}

// TestShortPromptsAndFilesWithANonce: a prompt asked shorter than the nonce is the nonce
// alone, its length said as it is and noted; a file's prompts are counted with the tokenizer,
// and counted again with the nonce in front.
func TestShortPromptsAndFilesWithANonce(t *testing.T) {
	tk, err := tokens.Load(filepath.Join("testdata", "components", "model-byte-fallback.json"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workloads.Synthetic{InputLen: 2, OutputLen: 8, Tokenizer: tk}.Generate(3)
	if err != nil {
		t.Fatal(err)
	}
	c := cold(t, set, false)
	nonce := count(t, tk, c.Nonce)
	for i, r := range c.Requests {
		if r.Text() != c.Nonce || r.InputTokens != nonce {
			t.Errorf("request %d: %q, %d tokens; want the nonce alone, %d", i, r.Text(), r.InputTokens, nonce)
		}
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "shorter than the cold-cache nonce") {
		t.Errorf("notes %q", c.Notes)
	}

	file := filepath.Join(t.TempDir(), "prompts.jsonl")
	if err := os.WriteFile(file, []byte(`{"prompt": "Hello there, how are you today?", "max_tokens": 5}
{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2+2?"}], "max_tokens": 5}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	src, errs := workloads.NewSource(file, workloads.LoadOptions{TimeScale: 1}, "cold")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if err := src.CountInputTokens(tk); err != nil {
		t.Fatal(err)
	}
	fs, _, err := src.TierSet(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := src.ApplyCache(fs, workloads.NewNonce())
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []*workloads.Set{fs, cs} {
		want := []int{count(t, tk, s.Requests[0].Prompt), count(t, tk, s.Requests[1].Messages[0].Content) + count(t, tk, s.Requests[1].Messages[1].Content)}
		for j, r := range s.Requests {
			if r.InputTokens != want[j] {
				t.Errorf("set %d, request %d: says %d tokens, counts %d", i, j, r.InputTokens, want[j])
			}
		}
	}
	if cs.Requests[0].InputTokens <= fs.Requests[0].InputTokens {
		t.Error("the nonce was not counted")
	}
}

// TestTracePromptsCountTheirLengths: a Mooncake trace replayed with a tokenizer: every prompt
// counts its input_length (the nonce of --cache cold made room for), the blocks of a hash id
// are the same text in every request, and a full block counts 512 tokens.
func TestTracePromptsCountTheirLengths(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("reads the model families' files: natively only")
	}
	file := filepath.Join(t.TempDir(), "trace.jsonl")
	trace := `{"timestamp": 0, "input_length": 1200, "output_length": 10, "hash_ids": [1, 2, 3]}
{"timestamp": 10, "input_length": 1100, "output_length": 10, "hash_ids": [1, 2, 4]}
{"timestamp": 20, "input_length": 700, "output_length": 10, "hash_ids": [1, 5]}
{"timestamp": 30, "input_length": 1500, "output_length": 10, "hash_ids": [1, 2]}
{"timestamp": 40, "input_length": 300, "output_length": 10, "hash_ids": [6]}
`
	if err := os.WriteFile(file, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	lengths := []int{1200, 1100, 700, 1500, 300}
	for _, name := range []string{"llama3", "gemma3", "deepseek_v3"} {
		t.Run(name, func(t *testing.T) {
			tk := tokens.Fixture(t, name)
			set, _, err := workloads.Load("mooncake:"+file, workloads.LoadOptions{Tokenizer: tk, TimeScale: 1})
			if err != nil {
				t.Fatal(err)
			}
			if set.Tokenizer == nil || len(set.Notes) > 0 {
				t.Fatalf("tokenizer %v, notes %q", set.Tokenizer, set.Notes)
			}
			for i, r := range set.Requests {
				if n := count(t, tk, r.Text()); n != lengths[i] || r.InputTokens != lengths[i] {
					t.Errorf("request %d: counts %d, says %d; want %d", i, n, r.InputTokens, lengths[i])
				}
			}
			// Cold: request 3 has words of its own after its blocks, which make room for the
			// nonce; the others are blocks alone (the last one cut), kept as every request
			// sharing them has them, so they are the nonce longer, said so.
			c := cold(t, set, false)
			nonce := count(t, tk, c.Nonce)
			for i, r := range c.Requests {
				want := lengths[i] + nonce
				if i == 3 {
					want = lengths[i]
				}
				if n := count(t, tk, r.Text()); n != want || r.InputTokens != want {
					t.Errorf("cold: request %d: counts %d, says %d; want %d", i, n, r.InputTokens, want)
				}
			}
			if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "4 trace prompts are made of shared blocks alone") {
				t.Errorf("cold notes %q", c.Notes)
			}
			// Requests 0, 1 and 3 share blocks 1 and 2: the same text, 1,024 tokens.
			texts := make([]string, 4)
			for i := range texts {
				texts[i] = set.Requests[i].Text()
			}
			common := texts[0]
			for _, s := range texts[1:] {
				k := 0
				for k < len(common) && k < len(s) && common[k] == s[k] {
					k++
				}
				common = common[:k]
			}
			if n := count(t, tk, strings.TrimRight(common, " ")); n < 512 {
				t.Errorf("the requests sharing block 1 share %d tokens of text, want at least 512", n)
			}
			if n := count(t, tk, strings.TrimRight(texts[0][:commonPrefix(texts[0], texts[3])], " ")); n < 1024 {
				t.Errorf("requests 0 and 3 share blocks 1 and 2 but only %d tokens of text", n)
			}
		})
	}
}

func commonPrefix(a, b string) int {
	k := 0
	for k < len(a) && k < len(b) && a[k] == b[k] {
		k++
	}
	return k
}

// TestShareGPTCountedInTokens: with a tokenizer, a ShareGPT file's prompts and replies are
// counted in its tokens, as vLLM's loader counts them: InputTokens, the max_tokens a reply
// gives, and the length filters.
func TestShareGPTCountedInTokens(t *testing.T) {
	tk, err := tokens.Load(filepath.Join("testdata", "components", "model-byte-fallback.json"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "sg.json")
	// The first reply is 4 words and 16 tokens; the second prompt 4 words and 23 tokens.
	data := `[{"id": "a", "conversations": [{"from": "human", "value": "what is the capital city"}, {"from": "gpt", "value": "Paris, in France!"}]},
{"id": "b", "conversations": [{"from": "human", "value": "supercalifragilistic words here"}, {"from": "gpt", "value": "the answer is long enough"}]}]`
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	set, _, err := workloads.Load("sharegpt:"+file, workloads.LoadOptions{Tokenizer: tk, TimeScale: 1,
		ShareGPT: workloads.ShareGPTOptions{MinLen: 4, MaxPromptLen: 12, MaxTotalLen: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Requests) != 1 || set.Skipped != 1 || !strings.Contains(strings.Join(set.Notes, " "), "over 12 tokens") {
		t.Fatalf("%d requests, %d skipped, notes %q", len(set.Requests), set.Skipped, set.Notes)
	}
	r := set.Requests[0]
	if in, out := count(t, tk, "what is the capital city"), count(t, tk, "Paris, in France!"); r.InputTokens != in || r.MaxTokens != out || out == 4 {
		t.Errorf("input %d, max_tokens %d; want %d and %d tokens (the reply is 4 words)", r.InputTokens, r.MaxTokens, in, out)
	}
}
