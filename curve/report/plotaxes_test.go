package report_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/report"
)

// curveAt is a one-series curve with a tier at each rate: shares falling past the third.
func curveAt(ax curve.Axis, rates ...float64) report.Curve {
	c := report.Curve{Axis: ax, TargetShare: 0.99, Objectives: map[string]float64{"ttft": 100}}
	s := report.CurveSeries{}
	for i, r := range rates {
		share := 1.0
		if i >= 2 {
			share = 1 - 0.2*float64(i-1)
		}
		s.Points = append(s.Points, report.CurvePoint{Rate: r, RawOutputThroughput: 100 * r, CompliantOutputThroughput: 100 * r * share,
			CompliantRequestShare: share, WilsonLow: share - 0.02, WilsonHigh: math.Min(1, share+0.01),
			Latency: map[string]map[string]float64{"ttft": {"p50": 10 * r, "p99": 20 * r}}})
	}
	c.Series = []report.CurveSeries{s}
	return c
}

// TestPlotAxesStartNearTheData: the rate axis starts near the first tier, at zero only when
// zero is near; the share axis starts at the 10 % below the lowest value drawn.
func TestPlotAxesStartNearTheData(t *testing.T) {
	builds := map[string]func(report.Curve) (*plot.Plot, error){
		"throughput": report.ThroughputPlot,
		"share":      report.SharePlot,
		"latency":    func(c report.Curve) (*plot.Plot, error) { return report.LatencyPlot(c, "ttft", nil) },
	}
	tests := []struct {
		name   string
		c      report.Curve
		lo, hi float64 // where the X axis must start
	}{
		// The sweep: tiers from 52 to 125 req/s drawn from 0 wasted 40 % of the plot.
		{"tiers from 52 req/s", curveAt(curve.AxisRate, 52, 83, 108, 125), 45, 52},
		{"tiers from 1 req/s start at 0", curveAt(curve.AxisRate, 1, 2, 4, 8, 16), 0, 0},
		{"1 to 8 users start at 0", curveAt(curve.AxisUsers, 1, 2, 4, 8), 0, 0},
		{"one tier at 200", curveAt(curve.AxisRate, 200), 150, 200},
	}
	for _, tt := range tests {
		for name, build := range builds {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				p, err := build(tt.c)
				if err != nil {
					t.Fatal(err)
				}
				if p.X.Min < tt.lo || p.X.Min > tt.hi {
					t.Errorf("X axis starts at %g, want in [%g, %g]", p.X.Min, tt.lo, tt.hi)
				}
				last := tt.c.Series[0].Points[len(tt.c.Series[0].Points)-1].Rate
				if p.X.Max <= last {
					t.Errorf("X axis ends at %g, not past the last tier at %g", p.X.Max, last)
				}
			})
		}
	}

	for _, tt := range []struct {
		name   string
		shares []float64
		yMin   float64
	}{
		{"every tier near 100 %", []float64{1, 0.999, 0.995}, 90},
		{"one tier at 37 % (its interval from 34 %)", []float64{1, 0.997, 0.89, 0.37}, 30},
	} {
		t.Run("share axis/"+tt.name, func(t *testing.T) {
			c := curveAt(curve.AxisRate, 1, 2, 3, 4)
			c.Series[0].Points = c.Series[0].Points[:len(tt.shares)]
			for i, s := range tt.shares {
				q := &c.Series[0].Points[i]
				q.CompliantRequestShare, q.WilsonLow, q.WilsonHigh = s, s-0.03, math.Min(1, s+0.01)
			}
			p, err := report.SharePlot(c)
			if err != nil {
				t.Fatal(err)
			}
			if p.Y.Min != tt.yMin || p.Y.Max < 100 || p.Y.Max > 104 {
				t.Errorf("share axis [%g, %g], want [%g, 100…104]", p.Y.Min, p.Y.Max, tt.yMin)
			}
		})
	}
}

// TestLowerBoundReadsAsOne: a capacity that is only a lower bound (a run, or a sweep with no
// failing tier) is labelled "capacity ≥ …" on the plots, as its notes say "at least".
func TestLowerBoundReadsAsOne(t *testing.T) {
	pageResults(t)
	r := runPageR.res
	if c := r.Analysis.Capacity; c == nil || !c.LowerBoundOnly() {
		t.Fatalf("the run fixture's capacity %+v is not a lower bound: the test needs one", c)
	}
	c := report.PlotCurve(r)
	if c.Capacity == nil || !c.Capacity.AtLeast {
		t.Fatalf("capacity marker %+v does not say it is a lower bound", c.Capacity)
	}
	p, err := report.ThroughputPlot(c)
	if err != nil {
		t.Fatal(err)
	}
	svg, err := report.Render(p, "svg")
	if err != nil {
		t.Fatal(err)
	}
	texts := markerless(svgTexts(t, svg))
	if !slices.ContainsFunc(texts, func(s string) bool { return strings.HasPrefix(s, "capacity ≥ ") && strings.HasSuffix(s, " req/s") }) {
		t.Errorf("no \"capacity ≥ … req/s\" label; texts: %q", texts)
	}
	// A sweep that brackets its capacity labels it as measured.
	if c := report.PlotCurve(ratePage.res); c.Capacity != nil && c.Capacity.AtLeast != ratePage.res.Analysis.Capacity.LowerBoundOnly() {
		t.Errorf("rate sweep: marker AtLeast %v for a capacity %v", c.Capacity.AtLeast, ratePage.res.Analysis.Capacity)
	}
}
