package tokens

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/internal/racedetector"
)

// TestCutsChangeNoToken holds tokenizeParts to the whole-word merge it stands in for, on the
// SentencePiece vocabularies of Gemma 3 (whose ">▁</" and ▁-runs cover some ▁) and Llama 2:
// random texts of words, spaces, ▁, the characters around those entries, and the alphabet.
func TestCutsChangeNoToken(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("reads the model families' files: natively only")
	}
	parts := append([]string{"▁", "▁▁", "> </", ">", "</", " ", "  ", "the", "word", "<b>", "</b>", "x"}, alphabet...)
	preload(t, "gemma3", "llama2")
	for _, name := range []string{"gemma3", "llama2"} {
		b := fixture(t, name).p.model.(*bpe)
		if b.cuts == nil {
			t.Fatalf("%s: no cuts", name)
		}
		whole := *b
		whole.cuts, whole.cache = nil, new(wordCache)
		r := rand.New(rand.NewPCG(3, 4))
		e := new(encoder)
		for range 5000 {
			var sb strings.Builder
			for range 1 + r.IntN(30) {
				sb.WriteString(parts[r.IntN(len(parts))])
			}
			text := strings.ReplaceAll(sb.String(), " ", "▁")
			e.ids = e.ids[:0]
			if err := b.tokenize(e, text); err != nil {
				t.Fatal(err)
			}
			got := slices.Clone(e.ids)
			e.ids = e.ids[:0]
			if err := whole.merge(e, text); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, e.ids) {
				t.Fatalf("%s: %q: in parts %v, whole %v", name, text, got, e.ids)
			}
		}
	}
}
