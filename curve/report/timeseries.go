package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/measure/timeseries"
)

// TimeSeriesSlice is the slice length of the time series the report writes.
const TimeSeriesSlice = timeseries.DefaultSlice

// TimeSeriesPlotTiers bounds the time-series plots of report.html: a result with more tiers
// than this has only its curve's tiers and its confirmations plotted, not its probes (every
// tier still has its CSV).
const TimeSeriesPlotTiers = 12

// TimeSeriesName is the name of tier t's time series in a result directory.
func TimeSeriesName(tier int) string { return fmt.Sprintf("timeseries_tier%02d.csv", tier) }

// TimeSeriesOf returns the time series of every tier of a records file read whole, by tier
// index (timeseries.Of of each tier's records, in file order).
func TimeSeriesOf(f *records.File) map[int]timeseries.Series {
	builders := make(map[int]*timeseries.Builder, len(f.Tiers))
	for _, t := range f.Tiers {
		builders[t.Tier] = timeseries.NewBuilder(TimeSeriesSlice)
	}
	for i := range f.Records {
		if b := builders[f.Records[i].Tier]; b != nil {
			b.Add(&f.Records[i])
		}
	}
	out := make(map[int]timeseries.Series, len(builders))
	for t, b := range builders {
		out[t] = b.Series()
	}
	return out
}

// ReadTimeSeries returns the time series of every tier of the records file at path, reading
// it one line at a time and holding the records of one tier at a time (a tier's series is
// made at its closing line), in a few durations per request and its ITL gaps. It gives
// TimeSeriesOf's series.
func ReadTimeSeries(path string) (map[int]timeseries.Series, error) {
	out, late, err := scanTimeSeries(path, nil)
	if err != nil || len(late) == 0 {
		return out, err
	}
	// Records of these tiers came after their closing lines (not a file loadcurve writes, but
	// one it reads): read them again, whole.
	again, _, err := scanTimeSeries(path, late)
	if err != nil {
		return nil, err
	}
	for t, s := range again {
		out[t] = s
	}
	return out, nil
}

// scanTimeSeries reads the series of the tiers in only (every tier when nil). Without only, a
// tier's series is made at its closing line and the tiers with records after it are returned
// in late; with only, at the end of the file.
func scanTimeSeries(path string, only map[int]bool) (out map[int]timeseries.Series, late map[int]bool, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read records: %w", err)
	}
	defer fh.Close()
	out, late = map[int]timeseries.Series{}, map[int]bool{}
	open := map[int]*timeseries.Builder{}
	_, err = records.Scan(fh, records.Visitor{
		Tier: func(t records.Tier) error {
			if only == nil || only[t.Tier] {
				open[t.Tier] = timeseries.NewBuilder(TimeSeriesSlice)
			}
			return nil
		},
		TierEnd: func(e records.TierEnd) error {
			if b := open[e.Tier]; b != nil && only == nil {
				out[e.Tier] = b.Series()
				delete(open, e.Tier)
			}
			return nil
		},
		Record: func(r *records.Record) error {
			if b := open[r.Tier]; b != nil {
				b.Add(r)
			} else if _, closed := out[r.Tier]; closed {
				late[r.Tier] = true
			}
			return nil
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read records %s: %w", path, err)
	}
	for t, b := range open { // tiers without a closing line
		out[t] = b.Series()
	}
	return out, late, nil
}

// writeTimeSeries writes timeseries_tierNN.csv for every tier of r that ts holds.
func writeTimeSeries(dir string, r *result.Result, ts map[int]timeseries.Series) ([]string, error) {
	var written []string
	for _, tr := range r.Tiers {
		s, ok := ts[tr.Tier.Tier]
		if !ok {
			continue
		}
		var b bytes.Buffer
		if err := s.WriteCSV(&b); err != nil {
			return written, err
		}
		name := TimeSeriesName(tr.Tier.Tier)
		if err := result.WriteFile(filepath.Join(dir, name), b.Bytes()); err != nil {
			return written, err
		}
		written = append(written, name)
	}
	return written, nil
}

// timeSeriesSection is the part of report.html with the tiers' time-series plots; ok false
// when there is none.
func timeSeriesSection(r *result.Result, ts map[int]timeseries.Series) (HTMLSection, bool, error) {
	sec := HTMLSection{Title: "Within each tier, second by second",
		Text: "From the records alone (timeseries_tierNN.csv has every column): requests offered, completed and failed per second " +
			"and the mean number in flight, then the TTFT of the requests whose first token came in each second. " +
			"The shaded band is the steady-state window (on planned time) the tier's figures come from: before it the warm-up, " +
			"after the end of the arrivals the drain."}
	few := len(r.Tiers) <= TimeSeriesPlotTiers
	if !few {
		sec.Text += fmt.Sprintf(" With more than %d tiers, the curve's tiers and the confirmations are plotted, not the probes.", TimeSeriesPlotTiers)
	}
	obj := objectiveMap(r.Settings.Measure.Objectives)["ttft"]
	for _, tr := range r.Tiers {
		s, ok := ts[tr.Tier.Tier]
		if !ok || len(s.Slices) == 0 || !(few || tr.Tier.CurveRole() || tr.Tier.Role == records.RoleConfirm) {
			continue
		}
		load := curve.LevelText(tr.Summary, func(rate float64, _ string) string {
			if math.IsInf(rate, 1) {
				return InfRateText
			}
			return fmtRate(rate) + " " + RateUnit(r) // the result's unit, whatever one tier shows
		})
		t := TierTimeSeries{
			// The page names the model and the target.
			Title:         fmt.Sprintf("tier %d: %s %s", tr.Tier.Tier, roleText(tr.Tier), load),
			Series:        s,
			ArrivalsEnd:   tr.Tier.ArrivalsEnd().Seconds(),
			TTFTObjective: obj,
		}
		if st := tr.Summary.Steady; st != nil {
			t.SteadyStart, t.SteadyEnd = st.Start, st.End
		}
		b, err := RenderTimeSeries(t, "svg")
		if err != nil {
			return sec, false, fmt.Errorf("report: time series of tier %d: %w", tr.Tier.Tier, err)
		}
		sec.PlotsSVG = append(sec.PlotsSVG, b)
	}
	return sec, len(sec.PlotsSVG) > 0, nil
}

// TierTimeSeries is what a tier's time-series plot draws.
type TierTimeSeries struct {
	// Title and Subtitle identify the tier; they head the plot.
	Title, Subtitle string
	Series          timeseries.Series
	// SteadyStart and SteadyEnd bound the tier's steady-state window in seconds from T0 (on
	// planned time), shaded; none when SteadyEnd ≤ SteadyStart.
	SteadyStart, SteadyEnd float64
	// ArrivalsEnd is the end of the arrival phase in seconds from T0, marked by a vertical line
	// (0: unknown, not marked): the drain follows it.
	ArrivalsEnd float64
	// TTFTObjective is the TTFT objective in ms, drawn when positive.
	TTFTObjective float64
}

// Colours of the time-series plots' lines and window.
var (
	offeredColor = palette[1]
	failedColor  = palette[5]
	flightColor  = palette[2]
	windowFill   = color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x30}
)

// timeGlyphs: lines of at most this many points also mark each point, so that a sparse series
// (a slice without a first token leaves a gap the line bridges) shows where its values are.
const timeGlyphs = 120

// TimeSeriesPlots draws a tier's time series on two panels sharing the time axis: load (the
// offered, completed and, when any failed, failed requests per second, and the mean number in
// flight) and latency (TTFT p50 and p99 by the slice of the first token, with the objective);
// latency is nil when no request had a first token. Values are drawn at the middle of their
// slice (of their step of several slices when the tier has more than 1800 slices: rates and
// means over the step, the highest TTFT of its slices); the steady-state window is shaded on
// both panels and the end of the arrivals marked.
func TimeSeriesPlots(t TierTimeSeries) (load, latency *plot.Plot, err error) {
	s := t.Series
	if len(s.Slices) == 0 {
		return nil, nil, fmt.Errorf("report: time series %q has no slice: %w", t.Title, ErrNoData)
	}
	end := float64(len(s.Slices)) * s.Slice.Seconds()
	pts, step := plotPoints(s)
	if load, err = t.loadPlot(pts, end); err != nil {
		return nil, nil, err
	}
	p50 := pointColumn(pts, func(q plotPoint) float64 { return q.p50 })
	p99 := pointColumn(pts, func(q plotPoint) float64 { return q.p99 })
	if len(p50)+len(p99) == 0 {
		load.X.Label.Text = "time from the tier's start T0 (s)"
		return load, nil, nil
	}
	if latency, err = t.latencyPlot(p50, p99, end, step); err != nil {
		return nil, nil, err
	}
	return load, latency, nil
}

// pointColumn is one value of every point, where it is finite, at the point's time.
func pointColumn(pts []plotPoint, f func(plotPoint) float64) plotter.XYs {
	out := make(plotter.XYs, 0, len(pts))
	for _, q := range pts {
		if y := f(q); finite(y) {
			out = append(out, plotter.XY{X: q.x, Y: y})
		}
	}
	return out
}

// loadPlot is the load panel: offered, completed, failed (when any failed) and in flight.
func (t TierTimeSeries) loadPlot(pts []plotPoint, end float64) (*plot.Plot, error) {
	load, lg := newPlot(Curve{Title: t.Title, Subtitle: t.Subtitle}, "requests second by second")
	load.Y.Label.Text = "requests/s · in flight"
	load.X.Label.Text = ""
	load.X.Min, load.X.Max, lg.xFixed = 0, 1.03*end, true
	window := t.addWindow(load)
	failed := false
	for _, q := range pts {
		failed = failed || q.failed > 0
	}
	lines := []struct {
		label string
		f     func(plotPoint) float64
		col   color.Color
		dash  []vg.Length
		show  bool
	}{
		{"offered (planned) per second", func(q plotPoint) float64 { return q.offered }, offeredColor, dashes[1], true},
		{"completed (ok) per second", func(q plotPoint) float64 { return q.completed }, palette[0], nil, true},
		{"failed per second", func(q plotPoint) float64 { return q.failed }, failedColor, dashes[2], failed},
		{"in flight (mean)", func(q plotPoint) float64 { return q.running }, flightColor, nil, true},
	}
	for k, l := range lines {
		if l.show {
			if err := addTimeLine(load, lg, pointColumn(pts, l.f), l.label, l.col, l.dash, pick(glyphs, k)); err != nil {
				return nil, err
			}
		}
	}
	if window != nil {
		lg.add(window.label(), window)
	}
	load.Y.Min = 0
	t.addArrivalsEnd(load, lg, true)
	finish(load, lg, 1.05, false)
	return load, nil
}

// latencyPlot is the latency panel: TTFT p50 and p99 (the highest slice of each step of step
// slices), with the objective, on a log scale when they span LogScaleRatio or more.
func (t TierTimeSeries) latencyPlot(p50, p99 plotter.XYs, end float64, step int) (*plot.Plot, error) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range append(append(plotter.XYs{}, p50...), p99...) {
		lo, hi = math.Min(lo, v.Y), math.Max(hi, v.Y)
	}
	obj := t.TTFTObjective
	hasObj := finite(obj) && obj > 0
	if hasObj {
		lo, hi = math.Min(lo, obj), math.Max(hi, obj)
	}
	log := lo > 0 && hi/lo >= LogScaleRatio
	latency, lg := newPlot(Curve{}, "TTFT by the second of the first token")
	latency.X.Label.Text = "time from the tier's start T0 (s)"
	latency.Y.Label.Text = "TTFT (ms)"
	latency.X.Min, latency.X.Max, lg.xFixed = 0, 1.03*end, true
	if log {
		latency.Y.Label.Text = "TTFT (ms, log scale)"
		latency.Y.Scale = plot.LogScale{}
		latency.Y.Tick.Marker = logTicks{}
	}
	window := t.addWindow(latency)
	for k, l := range []struct {
		label string
		pts   plotter.XYs
	}{{"p50", p50}, {"p99", p99}} {
		label := l.label
		if step > 1 {
			label += fmt.Sprintf(" (the highest slice of each %s s)", formatShort(float64(step)*t.Series.Slice.Seconds()))
		}
		if err := addTimeLine(latency, lg, l.pts, label, pick(palette, k), nil, pick(glyphs, k)); err != nil {
			return nil, err
		}
	}
	if hasObj {
		h := &hLine{y: obj, line: draw.LineStyle{Color: objectiveColor, Width: vg.Points(1.5), Dashes: dashes[1]}}
		latency.Add(h)
		lg.add("objective "+formatShort(obj)+" ms", h)
	}
	if window != nil {
		lg.add(window.label(), window)
	}
	if log {
		latency.Y.Min, latency.Y.Max = lo/1.2, hi
	} else {
		latency.Y.Min = 0
	}
	t.addArrivalsEnd(latency, lg, false)
	finish(latency, lg, 1.05, log)
	return latency, nil
}

// maxPlotPoints bounds the points of a time-series line: a longer tier is drawn in steps of
// several slices.
const maxPlotPoints = 1800

// plotPoint is what the time-series plot draws at x (seconds from T0): requests per second,
// the mean in flight and the TTFT percentiles (ms).
type plotPoint struct {
	x, offered, completed, failed, running, p50, p99 float64
}

// plotPoints returns the points of a series, one per step of the slices, and the step: one
// slice, or as many as keep the points within maxPlotPoints. Over a step, the rates and the
// mean in flight are exact (counts over the step's length, the mean of equal slices' means);
// percentiles do not combine, so a step's TTFT is the highest of its slices'.
func plotPoints(s timeseries.Series) ([]plotPoint, int) {
	n := len(s.Slices)
	step := (n + maxPlotPoints - 1) / maxPlotPoints
	d := s.Slice.Seconds()
	out := make([]plotPoint, 0, (n+step-1)/step)
	for i := 0; i < n; i += step {
		g := s.Slices[i:min(i+step, n)]
		q := plotPoint{x: (float64(i) + float64(len(g))/2) * d, p50: math.NaN(), p99: math.NaN()}
		for _, x := range g {
			q.offered += float64(x.Offered)
			q.completed += float64(x.Completed)
			q.failed += float64(x.Errors + x.Canceled)
			q.running += x.Running
			q.p50, q.p99 = highest(q.p50, x.TTFTP50), highest(q.p99, x.TTFTP99)
		}
		length := float64(len(g)) * d
		q.offered, q.completed, q.failed = q.offered/length, q.completed/length, q.failed/length
		q.running /= float64(len(g))
		out = append(out, q)
	}
	return out, step
}

// highest is the larger of a and b, ignoring a NaN.
func highest(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return math.Max(a, b)
}

// addWindow shades the steady-state window on p, under everything added after it; nil when
// the tier has none.
func (t TierTimeSeries) addWindow(p *plot.Plot) *xBand {
	if !finite(t.SteadyStart, t.SteadyEnd) || t.SteadyEnd <= t.SteadyStart {
		return nil
	}
	b := &xBand{x0: t.SteadyStart, x1: t.SteadyEnd, fill: windowFill}
	p.Add(b)
	return b
}

// addArrivalsEnd marks the end of the arrival phase, labelled on the top panel only.
func (t TierTimeSeries) addArrivalsEnd(p *plot.Plot, lg *legend, label bool) {
	if !(t.ArrivalsEnd > 0) || !finite(t.ArrivalsEnd) {
		return
	}
	v := &vLine{x: t.ArrivalsEnd, line: draw.LineStyle{Color: markerColor, Width: vg.Points(1), Dashes: dashes[3]}}
	if label {
		v.label = "arrivals end " + formatShort(t.ArrivalsEnd) + " s"
	}
	lg.mark(p, v)
}

// addTimeLine adds a line through the finite values of a series, with its legend entry; the
// points are marked too when there are few of them.
func addTimeLine(p *plot.Plot, lg *legend, pts plotter.XYs, label string, col color.Color, dash []vg.Length, glyph draw.GlyphDrawer) error {
	if len(pts) == 0 {
		return nil
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("report: line %q: %w", label, err)
	}
	l.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.5), Dashes: dash}
	thumbs := []plot.Thumbnailer{l}
	p.Add(l)
	if len(pts) <= timeGlyphs {
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return fmt.Errorf("report: points %q: %w", label, err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2), Shape: glyph}
		p.Add(s)
		thumbs = append(thumbs, s)
	}
	lg.add(label, thumbs...)
	return nil
}

// RenderTimeSeries draws a tier's time series (TimeSeriesPlots) in format ("svg", "png", …):
// the two panels one above the other, aligned on the time axis, PlotWidth wide; the load
// panel alone, PlotWidth × PlotHeight, when there is no latency panel.
func RenderTimeSeries(t TierTimeSeries, format string) ([]byte, error) {
	return renderTimeSeries(t, format, PlotWidth, PlotHeight*8/5)
}

// renderTimeSeries is RenderTimeSeries at w × h (the load panel alone at w × h·5/8).
func renderTimeSeries(t TierTimeSeries, format string, w, h vg.Length) ([]byte, error) {
	load, latency, err := TimeSeriesPlots(t)
	if err != nil {
		return nil, err
	}
	if latency == nil {
		return renderPanels(format, w, h*5/8, load)
	}
	return renderPanels(format, w, h, load, latency)
}
