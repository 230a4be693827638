package report

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Plot size. PNG files are rendered at PNGDPI dots per inch, so a PNG is
// PlotWidthPx × PlotHeightPx pixels.
const (
	PlotWidth  = 9 * vg.Inch
	PlotHeight = 5.5 * vg.Inch
	PNGDPI     = 96

	PlotWidthPx  = 864 // PlotWidth at PNGDPI
	PlotHeightPx = 528 // PlotHeight at PNGDPI
)

// LogScaleRatio is the ratio of the largest to the smallest latency on a
// latency plot from which its Y axis is logarithmic: past it, the flat part
// of a curve would be squashed against the axis by the queueing part.
const LogScaleRatio = 30

func (c Curve) rateUnit() string { return c.Axis.Unit() }

// ErrNoData is returned (wrapped) when a plot would have nothing to draw.
var ErrNoData = errors.New("no data to plot")

// CurvePoint is one tier of a load curve: one offered rate and what it
// produced.
type CurvePoint struct {
	Rate, NominalRate float64 // req/s: Rate is the x-axis (the realised rate in the steady state)

	RawOutputThroughput, CompliantOutputThroughput float64 // tok/s

	CompliantRequestShare, WilsonLow, WilsonHigh float64 // 0..1

	// Latency maps a metric ("ttft", "tpot", "itl", "e2el",
	// "e2el_including_client_queue") to a percentile key ("p50", "p90",
	// "p99", "p99.9") to milliseconds.
	Latency map[string]map[string]float64

	FailureRatio float64 // 0..1
}

// Marker is a vertical line at an offered rate, labelled.
type Marker struct {
	Label string
	Rate  float64 // req/s
	// AtLeast marks a lower bound (a capacity no tier was heavy enough to find): the label
	// reads "≥ rate", never the rate as if it were measured.
	AtLeast bool
	// Series is the index of the series the marker belongs to (its colour, with several).
	Series int
}

// CurveSeries is the load curve of one deployment.
type CurveSeries struct {
	Name   string
	Points []CurvePoint
}

// Curve is what the plots draw: one or more series (compare overlays two)
// and the analysis of the first.
type Curve struct {
	// Title and Subtitle identify the run (target, model, workload, seed…);
	// they head every plot.
	Title, Subtitle string
	// Axis is what the x-axis counts: requests or sessions per second, or users.
	Axis curve.Axis
	// Unit is what the throughputs count (records.Header.Unit): output tokens when empty.
	Unit records.Unit

	Series []CurveSeries

	// Markers of the first series, drawn on the throughput plot; nil means
	// absent. OperatingPoint is also drawn on the latency and share plots.
	Plateau, Knee, OperatingPoint, Capacity *Marker

	// More are markers of any series (Marker.Series), e.g. each side's operating point in a
	// comparison, drawn in their series' colour on the throughput and share plots.
	More []Marker

	// Objectives maps a latency metric to its objective in ms, drawn as a
	// horizontal dashed line on that metric's latency plot.
	Objectives map[string]float64

	// TargetShare (0..1) is drawn on the share plot when positive.
	TargetShare float64
}

// metricName is the display name of a latency metric key (measure.Metrics' label).
func metricName(key string) string {
	if m, ok := measure.MetricOf(key); ok {
		return m.Label
	}
	return key
}

// plotFont is the typeface of every plot: Liberation Sans, whose widths are Arial's, so that
// a browser without it draws the SVG's text in the same space with Arial or Helvetica.
var plotFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// svgFonts gives the SVG's font a fallback list (gonum names one family only).
var svgFonts = strings.NewReplacer("font-family:Liberation Sans;", "font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif;")

// Colours: the Okabe–Ito palette, distinguishable with the common forms of
// colour blindness.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xFF}, // blue
	color.RGBA{0xE6, 0x9F, 0x00, 0xFF}, // orange
	color.RGBA{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	color.RGBA{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
}

var (
	objectiveColor = color.RGBA{0xC0, 0x00, 0x00, 0xFF}
	markerColor    = color.RGBA{0x55, 0x55, 0x55, 0xFF}
)

// Dash patterns, indexed by the role of a line.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)},
}

var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{},
}

func pick[T any](xs []T, i int) T { return xs[i%len(xs)] }

// withAlpha returns the opaque colour c at opacity a (0..1).
func withAlpha(c color.Color, a float64) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = uint8(255*a + 0.5)
	return n
}

// finite reports whether every value is a finite number.
func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// sortedPoints returns the points of s ordered by offered rate; points at a
// non-finite rate (an "inf" tier) cannot be placed on an axis and are left out.
func sortedPoints(s CurveSeries) []CurvePoint {
	pts := make([]CurvePoint, 0, len(s.Points))
	for _, p := range s.Points {
		if finite(p.Rate) {
			pts = append(pts, p)
		}
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].Rate < pts[j].Rate })
	return pts
}

// xys collects (offered rate, f(point)) for the points where f is finite.
func xys(pts []CurvePoint, f func(CurvePoint) float64) plotter.XYs {
	var out plotter.XYs
	for _, p := range pts {
		if y := f(p); finite(y) {
			out = append(out, plotter.XY{X: p.Rate, Y: y})
		}
	}
	return out
}

// seriesLabel names what of series i a legend entry shows.
func seriesLabel(c Curve, i int, what string) string {
	name := c.Series[i].Name
	if name == "" {
		if len(c.Series) == 1 {
			return what
		}
		name = "series " + strconv.Itoa(i+1)
	}
	return name + ": " + what
}

// newPlot returns a plot with the house style (the curve's identity above
// the plot's own title, a grid, the offered rate on X) and its legend, drawn
// above the data area by finish.
func newPlot(c Curve, title string) (*plot.Plot, *legend) {
	p := plot.New()
	head := title
	if c.Title != "" {
		head = c.Title + " — " + title
	}
	if c.Subtitle != "" {
		head += "\n" + c.Subtitle
	}
	p.Title.Text = head
	p.Title.TextStyle.Font = font.From(plotFont, vg.Points(13))
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(plotFont, vg.Points(12))
		a.Tick.Label.Font = font.From(plotFont, vg.Points(10))
		a.Padding = 0 // the axes lie on the frame of the data area
	}
	p.X.Label.Text = c.Axis.Title()
	p.X.Tick.Marker = linearTicks{}
	p.Y.Tick.Marker = linearTicks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xDD}
	grid.Horizontal.Color = color.Gray{Y: 0xDD}
	p.Add(grid)
	return p, &legend{}
}

// nearData is the axis range for data from lo to hi: a little wider than the data, from zero
// only when zero is near (the data start within 15 % of hi from it): an axis from 0 to 130
// for tiers from 50 to 125 req/s would spend 40 % of the plot on rates nobody measured.
func nearData(lo, hi float64) (float64, float64) {
	if !finite(lo, hi) {
		return 0, 1
	}
	pad := 0.04 * (hi - lo)
	if pad <= 0 {
		pad = math.Max(0.1*math.Abs(hi), 0.5)
	}
	from, to := lo-pad, hi+pad
	if lo >= 0 && (from < 0 || lo <= 0.15*hi) {
		from = 0
	}
	return from, to
}

// finish sets the X range near the data (unless the caller fixed it: lg.xFixed), adds
// headroom above the data (the Y span grows by the factor headroom, in log units on a log
// axis) so that no point sits on the frame, frames the data area, lays the legend and the
// markers' labels out above it (reserving their strip through the title's padding) and adds
// the legend last.
func finish(p *plot.Plot, lg *legend, headroom float64, log bool) {
	if !lg.xFixed {
		p.X.Min, p.X.Max = nearData(p.X.Min, p.X.Max)
	}
	if p.X.Max <= p.X.Min {
		p.X.Max = p.X.Min + 1
	}
	if log {
		p.Y.Max = p.Y.Min * math.Pow(p.Y.Max/p.Y.Min, headroom)
	} else {
		p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)*headroom
	}
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	p.Add(frame{})
	p.Title.Padding = vg.Points(6) + lg.layout(p)
	p.Add(lg)
}

// addLine adds a line with point glyphs and its legend entry.
func addLine(p *plot.Plot, lg *legend, pts plotter.XYs, label string, col color.Color, dash []vg.Length, glyph draw.GlyphDrawer, width vg.Length) error {
	if len(pts) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return fmt.Errorf("report: line %q: %w", label, err)
	}
	l.LineStyle = draw.LineStyle{Color: col, Width: width, Dashes: dash}
	s.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: glyph}
	p.Add(l, s)
	lg.add(label, l, s)
	return nil
}

// markerLabel is "label 12.5 req/s" ("label ≥ 12.5 req/s" for a lower bound), with a
// default label, naming the series when there are several (the markers of More name theirs in
// their label and colour).
func markerLabel(c Curve, m *Marker, def string) string {
	label := m.Label
	if label == "" {
		label = def
	}
	if m.AtLeast {
		label += " ≥"
	}
	label += " " + formatShort(m.Rate) + " " + c.rateUnit()
	if len(c.Series) > 1 && def != "" && m.Series < len(c.Series) && c.Series[m.Series].Name != "" {
		label += " (" + c.Series[m.Series].Name + ")"
	}
	return label
}

// axisWords names a curve's X axis in a heading.
func axisWords(c Curve) string { return c.Axis.Words() }

// checkCurve rejects a curve without any point.
func checkCurve(c Curve) error {
	for _, s := range c.Series {
		if len(s.Points) > 0 {
			return nil
		}
	}
	return fmt.Errorf("report: curve %q has no points: %w", c.Title, ErrNoData)
}

// ThroughputPlot draws raw and compliant ("effective") output throughput
// against the offered rate, one colour per series (raw dashed, compliant
// solid), with the plateau, knee, operating point and capacity of the first
// series as labelled vertical lines.
func ThroughputPlot(c Curve) (*plot.Plot, error) {
	if err := checkCurve(c); err != nil {
		return nil, err
	}
	p, lg := newPlot(c, c.Unit.Short()+" throughput vs "+axisWords(c))
	p.Y.Label.Text = c.Unit.Short() + " throughput (tok/s)"
	n := 0
	for i, s := range c.Series {
		pts := sortedPoints(s)
		col := pick(palette, i)
		raw := xys(pts, func(q CurvePoint) float64 { return q.RawOutputThroughput })
		comp := xys(pts, func(q CurvePoint) float64 { return q.CompliantOutputThroughput })
		if err := addLine(p, lg, raw, seriesLabel(c, i, "raw "+c.Unit.Short()), col, dashes[1], draw.RingGlyph{}, vg.Points(1.5)); err != nil {
			return nil, err
		}
		if err := addLine(p, lg, comp, seriesLabel(c, i, "compliant "+c.Unit.Short()), col, nil, draw.CircleGlyph{}, vg.Points(2)); err != nil {
			return nil, err
		}
		n += len(raw) + len(comp)
	}
	if n == 0 {
		return nil, fmt.Errorf("report: throughput plot of %q: no finite point: %w", c.Title, ErrNoData)
	}
	p.Y.Min = 0
	addMarkers(p, lg, c, markAll)
	finish(p, lg, 1.05, false)
	return p, nil
}

// Which markers a plot draws.
type markerMode int

const (
	markAll            markerMode = iota // every marker, labelled
	markOperatingPoint                   // the first series' operating point only, labelled
	markAllUnlabelled                    // every marker, unlabelled (a panel under one that labels them)
)

// addMarkers adds the curve's markers as vertical lines, their labels to the legend's strip
// (the markers of More only with every marker).
func addMarkers(p *plot.Plot, lg *legend, c Curve, mode markerMode) {
	onlyOperatingPoint := mode == markOperatingPoint
	mark := func(v *vLine) {
		if mode == markAllUnlabelled {
			v.label = ""
		}
		lg.mark(p, v)
	}
	ms := []struct {
		m     *Marker
		def   string
		style draw.LineStyle
	}{
		{c.Plateau, "plateau", draw.LineStyle{Color: markerColor, Width: vg.Points(1), Dashes: dashes[2]}},
		{c.Knee, "knee", draw.LineStyle{Color: markerColor, Width: vg.Points(1), Dashes: dashes[3]}},
		{c.OperatingPoint, "operating point", draw.LineStyle{Color: color.Black, Width: vg.Points(1.5)}},
		{c.Capacity, "capacity", draw.LineStyle{Color: markerColor, Width: vg.Points(1), Dashes: dashes[1]}},
	}
	for _, m := range ms {
		if m.m == nil || !finite(m.m.Rate) || (onlyOperatingPoint && m.def != "operating point") {
			continue
		}
		mark(&vLine{x: m.m.Rate, label: markerLabel(c, m.m, m.def), line: m.style})
	}
	if onlyOperatingPoint {
		return
	}
	for _, m := range c.More {
		if !finite(m.Rate) {
			continue
		}
		style := draw.LineStyle{Color: pick(palette, m.Series), Width: vg.Points(1.5), Dashes: dashes[1]}
		if strings.Contains(m.Label, "operating point") {
			style.Dashes = nil
		}
		mark(&vLine{x: m.Rate, label: markerLabel(c, &m, ""), line: style})
	}
}

// LatencyPlot draws the given percentiles of one latency metric against the
// offered rate (all percentiles found in the curve when percentiles is
// empty), with the metric's objective as a dashed horizontal line and the
// operating point as a vertical one. The Y axis is logarithmic when the
// largest value is at least [LogScaleRatio] times the smallest.
//
// With one series each percentile has its own colour; with several, each
// series has its colour and each percentile its dash pattern.
func LatencyPlot(c Curve, metric string, percentiles []string) (*plot.Plot, error) {
	if err := checkCurve(c); err != nil {
		return nil, err
	}
	if len(percentiles) == 0 {
		percentiles = Percentiles(c, metric)
	}
	type line struct {
		pts   plotter.XYs
		label string
		col   color.Color
		dash  []vg.Length
		glyph draw.GlyphDrawer
	}
	var lines []line
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range c.Series {
		pts := sortedPoints(s)
		for k, pk := range percentiles {
			xy := xys(pts, func(q CurvePoint) float64 {
				if v, ok := q.Latency[metric][pk]; ok {
					return v
				}
				return math.NaN()
			})
			if len(xy) == 0 {
				continue
			}
			for _, v := range xy {
				lo, hi = math.Min(lo, v.Y), math.Max(hi, v.Y)
			}
			l := line{pts: xy, label: seriesLabel(c, i, pk), glyph: pick(glyphs, k)}
			if len(c.Series) == 1 {
				l.col = pick(palette, k)
			} else {
				l.col, l.dash = pick(palette, i), pick(dashes, k)
			}
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("report: latency plot of %q for %s %v: %w", c.Title, metric, percentiles, ErrNoData)
	}
	obj, hasObj := c.Objectives[metric]
	hasObj = hasObj && finite(obj) && obj > 0
	if hasObj {
		lo, hi = math.Min(lo, obj), math.Max(hi, obj)
	}
	log := lo > 0 && hi/lo >= LogScaleRatio

	name := metricName(metric)
	p, lg := newPlot(c, name+" vs "+axisWords(c))
	p.Y.Label.Text = name + " (ms)"
	if log {
		p.Y.Label.Text = name + " (ms, log scale)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	for _, l := range lines {
		if err := addLine(p, lg, l.pts, l.label, l.col, l.dash, l.glyph, vg.Points(1.5)); err != nil {
			return nil, err
		}
	}
	if hasObj {
		h := &hLine{y: obj, line: draw.LineStyle{Color: objectiveColor, Width: vg.Points(1.5), Dashes: dashes[1]}}
		p.Add(h)
		lg.add("objective "+formatShort(obj)+" ms", h)
	}
	if log {
		p.Y.Min, p.Y.Max = lo/1.2, hi
	} else {
		p.Y.Min = 0
	}
	addMarkers(p, lg, c, markOperatingPoint)
	finish(p, lg, 1.05, log)
	return p, nil
}

// SharePlot draws the compliant request share (in per cent) against the
// offered rate with its Wilson interval as a shaded band and error bars,
// the share of failed requests when any failed, and the target share as a
// dashed horizontal line. The Y axis ends at 100 % and starts near the lowest
// value drawn (below the target), at a multiple of 10 %.
func SharePlot(c Curve) (*plot.Plot, error) { return sharePlot(c, markOperatingPoint) }

func sharePlot(c Curve, mode markerMode) (*plot.Plot, error) {
	if err := checkCurve(c); err != nil {
		return nil, err
	}
	p, lg := newPlot(c, "compliant request share vs "+axisWords(c))
	p.Y.Label.Text = "share of requests (%)"
	n := 0
	for i, s := range c.Series {
		pts := sortedPoints(s)
		col := pick(palette, i)
		band, err := addBand(p, i, pts, col)
		if err != nil {
			return nil, err
		}
		share := xys(pts, func(q CurvePoint) float64 { return 100 * q.CompliantRequestShare })
		if err := addLine(p, lg, share, seriesLabel(c, i, "compliant request share"), col, nil, draw.CircleGlyph{}, vg.Points(2)); err != nil {
			return nil, err
		}
		if band != nil {
			lg.add(seriesLabel(c, i, "Wilson interval"), band)
		}
		n += len(share)
		fail := xys(pts, func(q CurvePoint) float64 { return 100 * q.FailureRatio })
		if slices.ContainsFunc(fail, func(v plotter.XY) bool { return v.Y > 0 }) {
			if err := addLine(p, lg, fail, seriesLabel(c, i, "failed requests"), withAlpha(col, 0.7), dashes[2], draw.CrossGlyph{}, vg.Points(1)); err != nil {
				return nil, err
			}
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("report: share plot of %q: no finite point: %w", c.Title, ErrNoData)
	}
	if c.TargetShare > 0 && finite(c.TargetShare) {
		h := &hLine{y: 100 * c.TargetShare, line: draw.LineStyle{Color: objectiveColor, Width: vg.Points(1.5), Dashes: dashes[1]}}
		p.Add(h)
		lg.add("target "+formatShort(100*c.TargetShare)+" %", h)
	}
	addMarkers(p, lg, c, mode)
	// p.Y.Min is the lowest value drawn (the band, the bars, the failures and the target
	// included): the axis starts at the multiple of 10 % below it.
	p.Y.Min = math.Max(0, math.Floor(math.Min(p.Y.Min, 100)/10-0.05)*10)
	p.Y.Max = 100
	finish(p, lg, 1.03, false)
	return p, nil
}

// addBand adds the Wilson interval of series i: a translucent band through
// the tiers and an error bar at each (the band guides the eye; the bars are
// what was measured). It returns the band for the legend, nil when there is
// none (fewer than two tiers with an interval).
func addBand(p *plot.Plot, i int, pts []CurvePoint, col color.Color) (plot.Thumbnailer, error) {
	var mid plotter.XYs
	var errs plotter.YErrors
	var lower, upper plotter.XYs
	for _, q := range pts {
		s, lo, hi := q.CompliantRequestShare, q.WilsonLow, q.WilsonHigh
		if !finite(s, lo, hi) {
			continue
		}
		lo, hi = math.Min(lo, s), math.Max(hi, s)
		mid = append(mid, plotter.XY{X: q.Rate, Y: 100 * s})
		errs = append(errs, struct{ Low, High float64 }{100 * (s - lo), 100 * (hi - s)})
		lower = append(lower, plotter.XY{X: q.Rate, Y: 100 * lo})
		upper = append(upper, plotter.XY{X: q.Rate, Y: 100 * hi})
	}
	if len(mid) == 0 {
		return nil, nil
	}
	var thumb plot.Thumbnailer
	if len(mid) >= 2 {
		ring := append(plotter.XYs{}, lower...)
		for k := len(upper) - 1; k >= 0; k-- {
			ring = append(ring, upper[k])
		}
		band, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, fmt.Errorf("report: Wilson band of series %d: %w", i, err)
		}
		band.Color = withAlpha(col, 0.18)
		band.LineStyle.Width = 0
		p.Add(band)
		thumb = band
	}
	bars := &plotter.YErrorBars{
		XYs:       mid,
		YErrors:   errs,
		LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1)},
		CapWidth:  vg.Points(6),
	}
	p.Add(bars)
	return thumb, nil
}

// Percentiles returns the percentile keys that metric has anywhere in the
// curve, ordered by percentile ("p50" < "p90" < "p99" < "p99.9"); keys that
// are not of the form pNUMBER come last, in lexical order.
func Percentiles(c Curve, metric string) []string {
	seen := map[string]bool{}
	for _, s := range c.Series {
		for _, q := range s.Points {
			for k := range q.Latency[metric] {
				seen[k] = true
			}
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sortPercentiles(keys)
	return keys
}

// sortPercentiles orders percentile keys numerically.
func sortPercentiles(keys []string) {
	num := func(k string) (float64, bool) {
		v, err := strconv.ParseFloat(strings.TrimPrefix(k, "p"), 64)
		return v, err == nil && strings.HasPrefix(k, "p")
	}
	sort.Slice(keys, func(i, j int) bool {
		a, aok := num(keys[i])
		b, bok := num(keys[j])
		switch {
		case aok && bok && a != b:
			return a < b
		case aok != bok:
			return aok
		}
		return keys[i] < keys[j]
	})
}

// Metrics returns the latency metrics present anywhere in the curve: the
// known ones in the order of METRICS.md, then any others in lexical order.
func Metrics(c Curve) []string {
	seen := map[string]bool{}
	for _, s := range c.Series {
		for _, q := range s.Points {
			for m, ps := range q.Latency {
				if len(ps) > 0 {
					seen[m] = true
				}
			}
		}
	}
	var out, rest []string
	for _, m := range measure.Metrics {
		if seen[m.Key] {
			out = append(out, m.Key)
			delete(seen, m.Key)
		}
	}
	for m := range seen {
		rest = append(rest, m)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// Render draws p at [PlotWidth] × [PlotHeight] in format ("svg", "png",
// "pdf", …) and returns the bytes.
func Render(p *plot.Plot, format string) ([]byte, error) {
	var b bytes.Buffer
	if format == "png" {
		// At PNGDPI explicitly, so that the pixel size is ours to state; deflated at the fastest
		// level (png.BestSpeed): see pngSpeed.
		c := vgimg.NewWith(vgimg.UseWH(PlotWidth, PlotHeight), vgimg.UseDPI(PNGDPI))
		p.Draw(draw.New(c))
		if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&b, c.Image()); err != nil {
			return nil, fmt.Errorf("report: render %s: %w", format, err)
		}
		return b.Bytes(), nil
	}
	wt, err := p.WriterTo(PlotWidth, PlotHeight, format)
	if err != nil {
		return nil, fmt.Errorf("report: render %s: %w", format, err)
	}
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: render %s: %w", format, err)
	}
	return svgOut(format, b.Bytes()), nil
}

// svgOut gives an SVG's fonts their fallbacks; other formats are returned as they are.
func svgOut(format string, b []byte) []byte {
	if format != "svg" {
		return b
	}
	return []byte(svgFonts.Replace(string(b)))
}

// Size of the load-curve figure (RenderLoadCurve) at the top of a report page.
const (
	FigureWidth  = 9 * vg.Inch
	FigureHeight = 6.9 * vg.Inch
)

// RenderLoadCurve draws the load curve as one figure in format ("svg", "png", …),
// FigureWidth × FigureHeight: output throughput (raw and compliant) above, the compliant
// request share with its interval and the target below, on one arrival-rate axis, with every
// marker (capacity, operating point, knee, plateau, and More) on both panels, labelled above
// the first. The curve's Title and Subtitle head the figure when set.
func RenderLoadCurve(c Curve, format string) ([]byte, error) {
	top, err := ThroughputPlot(c)
	if err != nil {
		return nil, err
	}
	head := c
	head.Title, head.Subtitle = "", ""
	bottom, err := sharePlot(head, markAllUnlabelled)
	if err != nil {
		return nil, err
	}
	top.X.Label.Text = ""
	if c.Title == "" {
		// The page heads the figure; each panel's Y axis names what it shows.
		untitled(top)
	}
	untitled(bottom)
	// One X range for both (each is near its own data; the union holds both).
	lo, hi := math.Min(top.X.Min, bottom.X.Min), math.Max(top.X.Max, bottom.X.Max)
	top.X.Min, top.X.Max, bottom.X.Min, bottom.X.Max = lo, hi, lo, hi
	return renderPanels(format, FigureWidth, FigureHeight, top, bottom)
}

// untitled leaves p's title out but keeps the strip its padding reserves for the legend.
func untitled(p *plot.Plot) {
	p.Title.Text = " "
	p.Title.TextStyle.Font.Size = vg.Points(1)
}

// renderPanels draws plots one above the other, w × h, aligned on their axes, in format.
func renderPanels(format string, w, h vg.Length, plots ...*plot.Plot) ([]byte, error) {
	var cw vg.CanvasWriterTo
	var err error
	if format == "png" {
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI))}
	} else if cw, err = draw.NewFormattedCanvas(w, h, format); err != nil {
		return nil, fmt.Errorf("report: render %s: %w", format, err)
	}
	rows := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		rows[i] = []*plot.Plot{p}
	}
	panels := plot.Align(rows, draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(2)}, draw.New(cw))
	for i, p := range plots {
		p.Draw(panels[i][0])
	}
	var b bytes.Buffer
	if _, err := cw.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: render %s: %w", format, err)
	}
	return svgOut(format, b.Bytes()), nil
}

// fileName makes a metric key safe as part of a file name.
func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}

// PlotFormats are the files WritePlots writes of each plot: SVG (scalable; report.html draws
// its own from the same plots), PNG (for documents and chat; rasterising and deflating it is
// most of the cost of writing a result), both or neither.
type PlotFormats struct{ SVG, PNG bool }

// DefaultPlotFormats writes every plot as SVG and as PNG.
var DefaultPlotFormats = PlotFormats{SVG: true, PNG: true}

// PlotFormatNone is ParsePlotFormats' word for no plot files.
const PlotFormatNone = "none"

// ParsePlotFormats reads a comma-separated list of "svg" and "png", or "none".
func ParsePlotFormats(s string) (PlotFormats, error) {
	var f PlotFormats
	if strings.TrimSpace(s) == PlotFormatNone {
		return f, nil
	}
	for _, w := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(w)) {
		case "svg":
			f.SVG = true
		case "png":
			f.PNG = true
		default:
			return PlotFormats{}, fmt.Errorf("%q is not a plot format: want svg, png, both comma-separated (svg,png), or %s", w, PlotFormatNone)
		}
	}
	return f, nil
}

// String is the list ParsePlotFormats reads back: "svg,png", "svg", "png" or "none".
func (f PlotFormats) String() string {
	if exts := f.exts(); len(exts) > 0 {
		return strings.Join(exts, ",")
	}
	return PlotFormatNone
}

// exts are the file extensions f writes, SVG first.
func (f PlotFormats) exts() []string {
	var out []string
	if f.SVG {
		out = append(out, "svg")
	}
	if f.PNG {
		out = append(out, "png")
	}
	return out
}

// WritePlots renders the curve's plots into dir (created if missing) in
// formats: throughput, one latency plot per metric present
// (latency_ttft, latency_tpot, latency_itl, …, each with every percentile
// found), and share. It returns the paths written, SVG before PNG; with no
// format it writes nothing and creates no directory.
func WritePlots(dir string, c Curve, formats PlotFormats) ([]string, error) {
	if err := checkCurve(c); err != nil {
		return nil, err
	}
	exts := formats.exts()
	if len(exts) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: create plot directory: %w", err)
	}
	type job struct {
		name  string
		build func() (*plot.Plot, error)
	}
	jobs := []job{{"throughput", func() (*plot.Plot, error) { return ThroughputPlot(c) }}}
	for _, m := range Metrics(c) {
		jobs = append(jobs, job{"latency_" + fileName(m), func() (*plot.Plot, error) { return LatencyPlot(c, m, nil) }})
	}
	jobs = append(jobs, job{"share", func() (*plot.Plot, error) { return SharePlot(c) }})

	var paths []string
	for _, j := range jobs {
		p, err := j.build()
		if errors.Is(err, ErrNoData) && strings.HasPrefix(j.name, "latency_") {
			continue // e.g. no ITL when every output is one token: nothing to draw, not a failure
		}
		if err != nil {
			return paths, fmt.Errorf("report: plot %s: %w", j.name, err)
		}
		for _, ext := range exts {
			b, err := Render(p, ext)
			if err != nil {
				return paths, fmt.Errorf("report: plot %s: %w", j.name, err)
			}
			path := filepath.Join(dir, j.name+"."+ext)
			if err := result.WriteFile(path, b); err != nil {
				return paths, fmt.Errorf("report: write plot: %w", err)
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}
