package loadgen_test

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/loadcurve/loadcurve/loadgen"
)

// TestProgressLine: the display draws the label, the counters and the caller's status, erases
// what a longer earlier line left, and cuts a line wider than the terminal so that it never
// wraps (a wrapped line is not overwritten by the next redraw).
func TestProgressLine(t *testing.T) {
	status := func(elapsed time.Duration) string { return "load 4m12s of 1h0m0s · sweep ETA ≤ 55m48s" }
	tests := []struct {
		name   string
		width  int
		status func(time.Duration) string
		want   []string
	}{
		{"counters alone", 0, nil, []string{"tier 3 of at most 31 (8.02 req/s)  812/2000 done, 5 in flight, 1 failed, "}},
		{"with the status", 0, status, []string{"812/2000 done", "s · load 4m12s of 1h0m0s · sweep ETA ≤ 55m48s\x1b[K"}},
		{"cut to the terminal", 60, status, []string{"tier 3 of at most 31", "…\x1b[K"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			p := &loadgen.Progress{Status: tt.status}
			p.Planned.Store(2000)
			p.Done.Store(812)
			p.InFlight.Store(5)
			p.Errors.Store(1)
			loadgen.ProgressLine(&b, tt.width)("tier 3 of at most 31 (8.02 req/s)", p)()
			out := b.String()
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("%q lacks %q", out, w)
				}
			}
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\r") {
				line = strings.TrimSuffix(line, "\x1b[K")
				if n := utf8.RuneCountInString(line); tt.width > 0 && n >= tt.width {
					t.Errorf("a line of %d runes on a terminal %d wide: %q", n, tt.width, line)
				}
			}
		})
	}
}
