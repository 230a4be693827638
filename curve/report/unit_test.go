package report_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestThroughputSaysItsUnit: the throughput plot of a result that counts input tokens (an
// embeddings endpoint) says "input" in its title, its axis and its legend; by default "output".
func TestThroughputSaysItsUnit(t *testing.T) {
	for _, tc := range []struct {
		unit records.Unit
		word string
	}{{records.UnitInputTokens, "input"}, {"", "output"}} {
		c := fixtureCurve()
		c.Unit = tc.unit
		p, err := report.ThroughputPlot(c)
		if err != nil {
			t.Fatal(err)
		}
		svg, err := report.Render(p, "svg")
		if err != nil {
			t.Fatal(err)
		}
		texts := svgTexts(t, svg)
		if !slices.Contains(texts, tc.word+" throughput (tok/s)") || !slices.Contains(texts, "raw "+tc.word) || !slices.Contains(texts, "compliant "+tc.word) ||
			!slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, " "+tc.word+" throughput vs ") }) {
			t.Errorf("unit %q: texts %q", tc.unit, texts)
		}
	}
}
