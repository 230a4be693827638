package report_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/loadcurve/loadcurve/curve/report"
)

// svgTexts parses b as XML, checks that the root element is <svg>, and
// returns the character data of every <text> element.
func svgTexts(t *testing.T, b []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var texts []string
	depth, inText := 0, false
	var cur strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse as XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 && e.Name.Local != "svg" {
				t.Fatalf("SVG root element is <%s>", e.Name.Local)
			}
			depth++
			if e.Name.Local == "text" {
				inText = true
				cur.Reset()
			}
		case xml.EndElement:
			depth--
			if e.Name.Local == "text" {
				inText = false
				texts = append(texts, cur.String())
			}
		case xml.CharData:
			if inText {
				cur.Write(e)
			}
		}
	}
	if depth != 0 {
		t.Fatalf("SVG ends inside an element (depth %d)", depth)
	}
	return texts
}

// markerless strips the mark that points a marker's label at its line ("▼ knee 9.5 req/s",
// or "knee 9.5 req/s ▼" set left of the line).
func markerless(texts []string) []string {
	out := make([]string, len(texts))
	for i, s := range texts {
		out[i] = strings.TrimSuffix(strings.TrimPrefix(s, "▼ "), " ▼")
	}
	return out
}

// checkPNG decodes b and checks its size.
func checkPNG(t *testing.T, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	if got := img.Bounds().Size(); got.X != report.PlotWidthPx || got.Y != report.PlotHeightPx {
		t.Fatalf("PNG is %dx%d, want %dx%d", got.X, got.Y, report.PlotWidthPx, report.PlotHeightPx)
	}
}

// keep writes b to -plotdir when it is set.
func keep(t *testing.T, name string, b []byte) {
	t.Helper()
	if *plotDir == "" {
		return
	}
	if err := os.MkdirAll(*plotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*plotDir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPlotsRender(t *testing.T) {
	tests := []struct {
		name  string
		build func() (*plot.Plot, error)
		want  []string // texts that must appear in the SVG
		logY  bool
		// compare plots are drawn by the same code as the single ones; to
		// keep the package fast under -race (rasterising costs about a second
		// per PNG there) they are rendered as PNG only for -plotdir.
		svgOnly bool
	}{
		{
			name:  "throughput",
			build: func() (*plot.Plot, error) { return report.ThroughputPlot(fixtureCurve()) },
			want: []string{
				"sim latency-tuned — output throughput vs arrival rate",
				"model sim-7b · synthetic 512/200 · Poisson · seed 42",
				"arrival rate (req/s, realised in the steady-state window)", "output throughput (tok/s)",
				"raw output", "compliant output",
				"plateau 12 req/s", "knee 9.5 req/s", "operating point 8 req/s", "capacity at objective 10 req/s",
				// Y ticks every 500 tok/s: four labels over 0–1850; X ticks every 5 req/s from 0
				// (the tiers start at 1, near it).
				"0", "500", "1000", "1500", "5", "10", "15",
			},
		},
		{
			name:  "latency_ttft",
			build: func() (*plot.Plot, error) { return report.LatencyPlot(fixtureCurve(), "ttft", nil) },
			// TTFT runs from 72 ms to several seconds: a log axis, labelled
			// at 1-2-5 steps because it spans fewer than four decades.
			want: []string{"TTFT (ms, log scale)", "p50", "p90", "p99", "objective 500 ms", "operating point 8 req/s", "100", "200", "500", "1000"},
			logY: true,
		},
		{
			name:  "latency_itl",
			build: func() (*plot.Plot, error) { return report.LatencyPlot(fixtureCurve(), "itl", []string{"p50", "p99"}) },
			// ITL stays within 18–56 ms: a linear axis.
			want: []string{"ITL (ms)", "p50", "p99", "objective 50 ms", "10", "20", "30", "40", "50"},
		},
		{
			name:  "share",
			build: func() (*plot.Plot, error) { return report.SharePlot(fixtureCurve()) },
			want:  []string{"share of requests (%)", "compliant request share", "Wilson interval", "failed requests", "target 95 %", "0", "100"},
		},
		{
			name:  "compare_throughput",
			build: func() (*plot.Plot, error) { return report.ThroughputPlot(compareCurve()) },
			want: []string{
				"A latency-tuned: raw output", "A latency-tuned: compliant output", "B throughput-tuned: raw output", "B throughput-tuned: compliant output",
				"operating point 8 req/s (A latency-tuned)", // markers belong to the first series
			},
			svgOnly: true,
		},
		{
			name:    "compare_latency_ttft",
			build:   func() (*plot.Plot, error) { return report.LatencyPlot(compareCurve(), "ttft", nil) },
			want:    []string{"A latency-tuned: p50", "B throughput-tuned: p99", "objective 500 ms"},
			logY:    true,
			svgOnly: true,
		},
		{
			name:    "compare_share",
			build:   func() (*plot.Plot, error) { return report.SharePlot(compareCurve()) },
			want:    []string{"A latency-tuned: compliant request share", "B throughput-tuned: Wilson interval"},
			svgOnly: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := tt.build()
			if err != nil {
				t.Fatal(err)
			}
			if _, isLog := p.Y.Scale.(plot.LogScale); isLog != tt.logY {
				t.Errorf("log Y axis = %v, want %v", isLog, tt.logY)
			}
			svg, err := report.Render(p, "svg")
			if err != nil {
				t.Fatal(err)
			}
			texts := markerless(svgTexts(t, svg))
			for _, w := range tt.want {
				if !slices.Contains(texts, w) {
					t.Errorf("SVG has no text %q; texts: %q", w, texts)
				}
			}
			keep(t, tt.name+".svg", svg)
			if tt.svgOnly && *plotDir == "" {
				return
			}
			pngBytes, err := report.Render(p, "png")
			if err != nil {
				t.Fatal(err)
			}
			checkPNG(t, pngBytes)
			keep(t, tt.name+".png", pngBytes)
		})
	}
}

func TestPlotRanges(t *testing.T) {
	c := fixtureCurve()
	c.Objectives["itl"] = 500 // far above every ITL value
	c.Capacity.Rate = 30      // beyond the last tier

	tp, err := report.ThroughputPlot(c)
	if err != nil {
		t.Fatal(err)
	}
	if tp.X.Min != 0 || tp.Y.Min != 0 {
		t.Errorf("throughput axes start at (%g, %g), want (0, 0)", tp.X.Min, tp.Y.Min)
	}
	if tp.X.Max < 30 {
		t.Errorf("throughput X axis ends at %g, before the capacity marker at 30", tp.X.Max)
	}

	lp, err := report.LatencyPlot(c, "itl", nil)
	if err != nil {
		t.Fatal(err)
	}
	if lp.Y.Max < 500 {
		t.Errorf("ITL Y axis ends at %g, below the 500 ms objective", lp.Y.Max)
	}

	sp, err := report.SharePlot(c)
	if err != nil {
		t.Fatal(err)
	}
	// The share axis is per cent: 0 to 100 plus a little headroom.
	if sp.Y.Min != 0 || sp.Y.Max < 100 || sp.Y.Max > 110 {
		t.Errorf("share Y axis is [%g, %g], want [0, 100..110]", sp.Y.Min, sp.Y.Max)
	}
}

func TestPlotErrors(t *testing.T) {
	empty := report.Curve{Title: "empty", Series: []report.CurveSeries{{Name: "A"}}}
	nan := math.NaN()
	allNaN := report.Curve{Series: []report.CurveSeries{{Points: []report.CurvePoint{{
		Rate: 1, RawOutputThroughput: nan, CompliantOutputThroughput: nan, CompliantRequestShare: nan,
	}}}}}
	tests := []struct {
		name string
		err  func() error
	}{
		{"throughput of no points", func() error { _, err := report.ThroughputPlot(empty); return err }},
		{"share of no points", func() error { _, err := report.SharePlot(empty); return err }},
		{"latency of no points", func() error { _, err := report.LatencyPlot(empty, "ttft", nil); return err }},
		{"latency of an absent metric", func() error { _, err := report.LatencyPlot(fixtureCurve(), "tpot", nil); return err }},
		{"latency of an absent percentile", func() error {
			_, err := report.LatencyPlot(fixtureCurve(), "ttft", []string{"p99.9"})
			return err
		}},
		{"throughput of NaN only", func() error { _, err := report.ThroughputPlot(allNaN); return err }},
		{"share of NaN only", func() error { _, err := report.SharePlot(allNaN); return err }},
		{"write plots of no points", func() error { _, err := report.WritePlots(t.TempDir(), empty, report.DefaultPlotFormats); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.err(); !errors.Is(err, report.ErrNoData) {
				t.Fatalf("error = %v, want one wrapping ErrNoData", err)
			}
		})
	}
}

// A sweep may hold an "inf" tier and undefined values (NaN): they cannot be
// placed on an axis and are left out, and the rest still renders.
func TestPlotsSkipNonFinite(t *testing.T) {
	c := fixtureCurve()
	s := &c.Series[0]
	s.Points = append(s.Points, report.CurvePoint{
		Rate: math.Inf(1), RawOutputThroughput: 2400, CompliantRequestShare: 0.1,
		Latency: map[string]map[string]float64{"ttft": {"p50": 9000}},
	})
	s.Points[0].CompliantOutputThroughput = math.NaN()
	s.Points[1].WilsonLow = math.NaN()
	s.Points[2].Latency["ttft"]["p90"] = math.Inf(1)
	// Points given out of order are drawn in rate order.
	s.Points[3], s.Points[5] = s.Points[5], s.Points[3]

	for name, build := range map[string]func() (*plot.Plot, error){
		"throughput": func() (*plot.Plot, error) { return report.ThroughputPlot(c) },
		"latency":    func() (*plot.Plot, error) { return report.LatencyPlot(c, "ttft", nil) },
		"share":      func() (*plot.Plot, error) { return report.SharePlot(c) },
	} {
		t.Run(name, func(t *testing.T) {
			p, err := build()
			if err != nil {
				t.Fatal(err)
			}
			if math.IsInf(p.X.Max, 0) || p.X.Max > 17 {
				t.Errorf("X axis ends at %g: the inf tier leaked in", p.X.Max)
			}
			b, err := report.Render(p, "svg")
			if err != nil {
				t.Fatal(err)
			}
			svgTexts(t, b)
		})
	}
}

func TestWritePlots(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "plots") // created by WritePlots
	c := fixtureCurve()
	// One latency metric only, with a key that is not a safe file name (it
	// is made one): fewer PNGs to rasterise, which is slow under -race.
	for i, q := range c.Series[0].Points {
		q.Latency = map[string]map[string]float64{"e2el/x": {"p50": 900 + float64(i)}}
		c.Series[0].Points[i] = q
	}
	paths, err := report.WritePlots(dir, c, report.DefaultPlotFormats)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		if filepath.Dir(p) != dir {
			t.Errorf("%s is not in %s", p, dir)
		}
		names = append(names, filepath.Base(p))
	}
	want := []string{
		"throughput.svg", "throughput.png",
		"latency_e2el_x.svg", "latency_e2el_x.png",
		"share.svg", "share.png",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("wrote %q, want %q", names, want)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, ".png") {
			checkPNG(t, b)
		} else {
			svgTexts(t, b)
		}
	}
}

func TestMetricsAndPercentiles(t *testing.T) {
	c := report.Curve{Series: []report.CurveSeries{
		{Points: []report.CurvePoint{{Latency: map[string]map[string]float64{
			"zzz":   {"p50": 1},
			"e2el":  {"p99": 1, "p99.9": 1, "mean": 1},
			"empty": {},
		}}}},
		{Points: []report.CurvePoint{{Latency: map[string]map[string]float64{
			"ttft": {"p50": 1},
			"e2el": {"p50": 1, "p9": 1, "p90": 1},
		}}}},
	}}
	if got, want := report.Metrics(c), []string{"ttft", "e2el", "zzz"}; !slices.Equal(got, want) {
		t.Errorf("Metrics = %q, want %q", got, want)
	}
	// Numeric order, not lexical ("p9" < "p50"); non-percentile keys last.
	if got, want := report.Percentiles(c, "e2el"), []string{"p9", "p50", "p90", "p99", "p99.9", "mean"}; !slices.Equal(got, want) {
		t.Errorf("Percentiles = %q, want %q", got, want)
	}
}

func BenchmarkWritePlots(b *testing.B) {
	c := compareCurve()
	dir := b.TempDir()
	for b.Loop() {
		if _, err := report.WritePlots(dir, c, report.DefaultPlotFormats); err != nil {
			b.Fatal(err)
		}
	}
}

func TestWritePlotsSkipsLatencyMetricsWithoutData(t *testing.T) {
	c := report.Curve{Title: "one-token outputs", TargetShare: 0.99, Series: []report.CurveSeries{{Name: "x", Points: []report.CurvePoint{
		{Rate: 1, RawOutputThroughput: 10, CompliantOutputThroughput: 10, CompliantRequestShare: 1, WilsonLow: 0.9, WilsonHigh: 1,
			Latency: map[string]map[string]float64{"ttft": {"p50": 10, "p99": 20}, "itl": {"p50": math.NaN(), "p99": math.NaN()}}},
		{Rate: 2, RawOutputThroughput: 20, CompliantOutputThroughput: 20, CompliantRequestShare: 1, WilsonLow: 0.9, WilsonHigh: 1,
			Latency: map[string]map[string]float64{"ttft": {"p50": 11, "p99": 22}, "itl": {"p50": math.NaN(), "p99": math.NaN()}}},
	}}}}
	dir := t.TempDir()
	paths, err := report.WritePlots(dir, c, svgOnly)
	if err != nil {
		t.Fatalf("a metric without data failed the whole report: %v", err)
	}
	for _, p := range paths {
		if strings.Contains(p, "latency_itl") {
			t.Errorf("drew an ITL plot without ITL data: %s", p)
		}
	}
	if len(paths) != 3 { // throughput, ttft, share
		t.Errorf("wrote %v", paths)
	}
}

// TestPlotFormats: the plot files follow the formats asked for, in their text form and back;
// none writes nothing (not even the directory), and a word that is not a format is refused
// naming it.
// svgOnly writes plots as SVG alone, for the tests that read no PNG.
var svgOnly = report.PlotFormats{SVG: true}

func TestPlotFormats(t *testing.T) {
	t.Parallel()
	c := fixtureCurve()
	for i, q := range c.Series[0].Points { // one latency plot: fewer to draw
		q.Latency = map[string]map[string]float64{"ttft": {"p50": 100 + float64(i)}}
		c.Series[0].Points[i] = q
	}
	// Both formats are written by TestWritePlots (PNGs are slow to draw under -race).
	tests := []struct {
		in, text string
		want     []string
	}{
		{"svg,png", "svg,png", nil},
		{"png, SVG", "svg,png", nil},
		{"svg", "svg", []string{"throughput.svg", "latency_ttft.svg", "share.svg"}},
		{"png", "png", []string{"throughput.png", "latency_ttft.png", "share.png"}},
		{"none", "none", nil},
	}
	for _, tt := range tests {
		f, err := report.ParsePlotFormats(tt.in)
		if err != nil {
			t.Fatalf("ParsePlotFormats(%q): %v", tt.in, err)
		}
		if f.String() != tt.text {
			t.Errorf("ParsePlotFormats(%q).String() = %q, want %q", tt.in, f.String(), tt.text)
		}
		if back, err := report.ParsePlotFormats(f.String()); err != nil || back != f {
			t.Errorf("%q does not read back: %+v, %v", f.String(), back, err)
		}
		if f.SVG && f.PNG {
			continue
		}
		dir := filepath.Join(t.TempDir(), "plots")
		paths, err := report.WritePlots(dir, c, f)
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		var names []string
		for _, p := range paths {
			names = append(names, filepath.Base(p))
		}
		if !slices.Equal(names, tt.want) {
			t.Errorf("%s: wrote %q, want %q", tt.in, names, tt.want)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != len(tt.want) {
			t.Errorf("%s: the directory holds %d files, want %d", tt.in, len(entries), len(tt.want))
		}
	}
	if report.DefaultPlotFormats.String() != "svg,png" {
		t.Errorf("the default writes %s, want svg,png", report.DefaultPlotFormats)
	}
	for _, bad := range []string{"", "jpg", "svg,", "svg,none"} {
		if _, err := report.ParsePlotFormats(bad); err == nil {
			t.Errorf("ParsePlotFormats(%q) accepted it", bad)
		}
	}
	if _, err := report.ParsePlotFormats("svg,gif"); err == nil || !strings.Contains(err.Error(), `"gif"`) {
		t.Errorf("the refusal does not name the bad word: %v", err)
	}
}
