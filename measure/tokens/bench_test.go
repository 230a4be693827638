package tokens_test

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/measure/tokens"
	"github.com/loadcurve/loadcurve/workloads"
)

// prompt is a text of n words drawn as loadcurve's synthetic prompts are (words from a small
// English vocabulary after single spaces), about 1.1 tokens a word in the families' tokenizers.
func prompt(n int, seed uint64) string {
	words := strings.Fields(`the of and to in is was for on that with as by at from his it an were are which this be
has had or not first one their its new after but who they have her she two been other when there all during into
school time may years more most only over city some world would where later up such used many can state about
national out known university united then made also between part through american year both under three include`)
	r := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

// BenchmarkCount counts 1,024-word prompts (a different one each time) with each family's
// tokenizer; tokens/s is the rate of sizing prompts.
func BenchmarkCount(b *testing.B) {
	for _, name := range families {
		b.Run(name, func(b *testing.B) {
			tk := tokens.Fixture(b, name)
			prompts := make([]string, 64)
			for i := range prompts {
				prompts[i] = prompt(1024, uint64(i))
			}
			tokens := 0
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				n, err := tk.Count(prompts[i%len(prompts)])
				if err != nil {
					b.Fatal(err)
				}
				tokens += n
			}
			b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkSizePrompts materialises 100,000 synthetic prompts of 1,024 tokens each (vLLM's
// default --random-input-len) in the default cache mode: sized in the tokenizer's tokens, then
// the cold-cache nonce made room for. Run it once: go test -bench SizePrompts -benchtime 1x.
func BenchmarkSizePrompts(b *testing.B) {
	for _, name := range []string{"llama3", "gemma3"} {
		b.Run(name, func(b *testing.B) {
			tk := tokens.Fixture(b, name)
			const n, length = 100_000, 1024
			b.ResetTimer()
			for b.Loop() {
				set, err := workloads.Synthetic{InputLen: length, OutputLen: 128, Tokenizer: tk}.Generate(n)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := workloads.ApplyCold(set, workloads.NewNonce()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*length*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkCountPrompts counts the prompts `loadcurve workload --tokenizer FILE
// --random-input-len 1024 --num-requests 2000` writes (the same requests: seed 0), which
// scripts/tokenizer-reference/bench.mjs counts with the references.
func BenchmarkCountPrompts(b *testing.B) {
	for _, name := range families {
		b.Run(name, func(b *testing.B) {
			tk := tokens.Fixture(b, name)
			set, err := workloads.Synthetic{InputLen: 1024, OutputLen: 128, Tokenizer: tk}.Generate(2000)
			if err != nil {
				b.Fatal(err)
			}
			texts := make([]string, len(set.Requests))
			for i := range texts {
				texts[i] = set.Requests[i].Text()
			}
			total := 0
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				n, err := tk.Count(texts[i%len(texts)])
				if err != nil {
					b.Fatal(err)
				}
				total += n
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkParse parses a family's tokenizer.json (decompressed before the timer): what
// --tokenizer costs once per command, the file's shape checked before it is decoded.
func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"llama3", "gemma3"} {
		b.Run(name, func(b *testing.B) {
			data := readXZ(b, filepath.Join("testdata", "models", name+".json.xz"))
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tokens.Parse(name+".json", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
