package tokens_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/tokens"
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
