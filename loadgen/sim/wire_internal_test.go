package sim

import (
	"encoding/json"
	"testing"
)

// TestEncoderAllocations keeps the per-chunk encoding free of allocations in
// every answer mode: reasoning, content, a tool call, the straddling chunk
// and the usage chunk with its details.
func TestEncoderAllocations(t *testing.T) {
	modes := []struct {
		name   string
		reason int
		toolID string
	}{
		{"content", 0, ""},
		{"reasoning", 5, ""},
		{"reasoning and tool call", 5, "call_0123456789abcdef"},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			e := newEncoder(true, "chatcmpl-x-1", 1, `"m"`)
			e.setAnswer(m.reason, 16, m.toolID, []byte(`"f"`))
			b := make([]byte, 0, 1<<14)
			u := usageInfo{prompt: 10, completion: 16, cacheOn: true, cached: 8, reasonOn: true, reasoning: 5}
			allocs := testing.AllocsPerRun(100, func() {
				b = e.role(b[:0])
				for from := 0; from < 16; from = chunkEnd(from, 3, 16) {
					finish := ""
					if chunkEnd(from, 3, 16) == 16 {
						finish = "length"
					}
					b = e.content(b, from, chunkEnd(from, 3, 16), finish)
				}
				b = e.usage(b, u)
			})
			if allocs != 0 {
				t.Errorf("%v allocations per stream, want 0", allocs)
			}
			// And the whole stream is well-formed JSON, event by event.
			for _, ev := range splitEvents(b) {
				if !json.Valid(ev) {
					t.Errorf("event is not JSON: %s", ev)
				}
			}
		})
	}
}

func splitEvents(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i+1 < len(b) && !(b[i] == '\n' && b[i+1] == '\n') {
			i++
		}
		out = append(out, b[len("data: "):i])
		b = b[min(i+2, len(b)):]
	}
	return out
}
