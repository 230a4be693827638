package tokens

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
)

// BenchmarkSplit splits 1,024 words of prompt text with Llama 3's pattern: its scanner, and
// regexp2 (which the scanner stands in for).
func BenchmarkSplit(b *testing.B) {
	words := strings.Fields("the of and to in is was for on that with as by at from his it an were are which this be has had university national")
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for i := range 1024 {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(words[r.IntN(len(words))])
	}
	text := sb.String()
	re := regexp2.MustCompile(llama3Pattern, regexp2.None)
	for _, m := range []struct {
		name string
		m    matcher
	}{{"scanner", knownPattern(llama3Pattern)}, {"regexp2", regex{re}}} {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			var dst []span
			for b.Loop() {
				dst = m.m.matches(text, dst[:0])
			}
		})
	}
}
