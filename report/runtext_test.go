package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/report"
	sweeppkg "github.com/loadcurve/loadcurve/sweep"
)

// TestRunTextWarnsOfNoOutput: a server that answers [DONE] with nothing before it makes every
// request ok with 0 tokens; the result must say so, not show a clean 100 % ok.
func TestRunTextWarnsOfNoOutput(t *testing.T) {
	for _, tt := range []struct {
		tokens int
		warn   bool
	}{{0, true}, {120, false}} {
		var b bytes.Buffer
		report.RunText(&b, sweeppkg.RunFile{Summary: measure.Summary{Planned: 10, Issued: 10, Completed: 10, TotalOutputTokens: tt.tokens,
			Outcomes: map[string]int{"ok": 10}}})
		if got := strings.Contains(b.String(), "none of the 10 successful requests streamed an output token"); got != tt.warn {
			t.Errorf("%d tokens: warning %v, want %v:\n%s", tt.tokens, got, tt.warn, b.String())
		}
	}
}
