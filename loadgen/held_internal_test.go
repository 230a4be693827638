package loadgen

import (
	"errors"
	"strings"
	"testing"
)

// TestHeldBudget: a client's budget is the one given, or the default and at least one answer
// as large as the response cap; a request is refused only what would take the total past it,
// in words that say whether other requests hold the rest or the piece is beyond the whole
// budget; what is given back can be taken again, and the peak is kept.
func TestHeldBudget(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    Target
		want int64
	}{
		{"the default", Target{}, DefaultMaxHeldBytes + readerSize},
		{"a response cap above it", Target{MaxResponseBytes: 256 << 20}, 256<<20 + readerSize},
		{"a response cap below it", Target{MaxResponseBytes: 1 << 20}, DefaultMaxHeldBytes + readerSize},
		{"one given", Target{MaxHeldBytes: 1 << 20, MaxResponseBytes: 256 << 20}, 1 << 20},
	} {
		if got := heldLimit(tc.t); got != tc.want {
			t.Errorf("%s: a budget of %d, want %d", tc.name, got, tc.want)
		}
	}

	b := newHeldBudget(64 << 10)
	first, second := held{b: b}, held{b: b}
	buf, err := first.grow(nil, 40<<10, 0, "an event line")
	if err != nil || cap(buf) != 64<<10 {
		t.Fatalf("the first 40 kB: cap %d, %v; want the 64 KiB class", cap(buf), err)
	}
	_, err = second.grow(nil, 10, 0, "an event line")
	if !errors.Is(err, errHeldFull) || !strings.Contains(err.Error(), "held by other requests") {
		t.Errorf("a piece while the budget is held: %v", err)
	}
	_, err = second.grow(nil, 100<<10, 0, "an answer")
	if !errors.Is(err, errHeldFull) || !strings.Contains(err.Error(), "more than the 65536 bytes the client holds for all of them") {
		t.Errorf("a piece beyond the whole budget: %v", err)
	}
	first.drop(buf)
	if _, err := second.grow(nil, 10, 0, "an event line"); err != nil {
		t.Errorf("after the first gave its piece back: %v", err)
	}
	second.release()
	if b.used.Load() != 0 || b.peak.Load() != 64<<10 || b.refused.Load() != 2 {
		t.Errorf("used %d, peak %d, refused %d; want 0, 65536, 2", b.used.Load(), b.peak.Load(), b.refused.Load())
	}
}
