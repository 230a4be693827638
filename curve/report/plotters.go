package report

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// This file holds the small plot.Plotter implementations the plots need and
// gonum does not provide: vertical marker lines, horizontal reference lines,
// the frame of the data area, a legend (with the markers' labels) above the
// data area, and axis ticks with more labels.

// labelStyle is the text style of marker labels and legend entries.
func labelStyle(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(plotFont, size),
		Handler: plot.DefaultTextHandler,
	}
}

// vLine is a vertical line across the data area at x. Its label is drawn by the plot's
// legend, above the data area over the line (see legend), never over the data.
type vLine struct {
	x     float64
	label string
	line  draw.LineStyle
}

// Plot implements plot.Plotter.
func (v *vLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(v.x)
	if !c.ContainsX(x) {
		return
	}
	c.StrokeLine2(v.line, x, c.Min.Y, x, c.Max.Y)
}

// DataRange implements plot.DataRanger: the line widens the X range to
// include it and leaves the Y range alone.
func (v *vLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	return v.x, v.x, math.Inf(1), math.Inf(-1)
}

// hLine is a horizontal reference line (an objective, a target) across the
// data area at y.
type hLine struct {
	y    float64
	line draw.LineStyle
}

// Plot implements plot.Plotter.
func (h *hLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(h.y)
	if !c.ContainsY(y) {
		return
	}
	c.StrokeLine2(h.line, c.Min.X, y, c.Max.X, y)
}

// DataRange implements plot.DataRanger: the line widens the Y range to
// include it and leaves the X range alone.
func (h *hLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), h.y, h.y
}

// Thumbnail implements plot.Thumbnailer.
func (h *hLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(h.line, c.Min.X, y, c.Max.X, y)
}

// xBand shades the data area between x0 and x1 (a tier's steady-state window) across its
// whole height.
type xBand struct {
	x0, x1 float64
	fill   color.Color
}

// Plot implements plot.Plotter.
func (b *xBand) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0, x1 := max(trX(b.x0), c.Min.X), min(trX(b.x1), c.Max.X)
	if x1 <= x0 {
		return
	}
	c.SetColor(b.fill)
	c.Fill(vg.Rectangle{Min: vg.Point{X: x0, Y: c.Min.Y}, Max: vg.Point{X: x1, Y: c.Max.Y}}.Path())
}

// DataRange implements plot.DataRanger: the band widens the X range to include it and leaves
// the Y range alone.
func (b *xBand) DataRange() (xmin, xmax, ymin, ymax float64) {
	return b.x0, b.x1, math.Inf(1), math.Inf(-1)
}

// Thumbnail implements plot.Thumbnailer.
func (b *xBand) Thumbnail(c *draw.Canvas) {
	c.SetColor(b.fill)
	c.Fill(c.Rectangle.Path())
}

// label names the band in a legend.
func (b *xBand) label() string {
	return "steady-state window " + formatShort(b.x0) + "–" + formatShort(b.x1) + " s"
}

// frameStyle outlines the data area of every plot: the axes' box, inside which everything
// drawn from the data stays (the page's structural test finds the box by this style).
var frameStyle = draw.LineStyle{Color: color.Gray{Y: 0x99}, Width: vg.Points(0.75)}

// legendBoxStyle outlines the legend (the page's structural test finds legends by it).
var legendBoxStyle = draw.LineStyle{Color: color.Gray{Y: 0xCC}, Width: vg.Points(0.5)}

// frame strokes the data area's outline.
type frame struct{}

// Plot implements plot.Plotter.
func (frame) Plot(c draw.Canvas, _ *plot.Plot) {
	r := c.Rectangle
	c.StrokeLines(frameStyle, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}, r.Min})
}

// Sizes of what the legend draws above the data area.
var (
	legendTextSize = vg.Points(10)
	labelTextSize  = vg.Points(9.5)
	legendThumbW   = vg.Points(22)
	legendGap      = vg.Points(4)  // between a thumbnail and its text
	legendColGap   = vg.Points(14) // between two entries in a row
	legendPad      = vg.Points(4)  // inside the legend's box
	stripGap       = vg.Points(4)  // between the strip's parts, and above the data area
	// stripMargin is how much narrower than the plot the data area is taken to be when the
	// strip is laid out (the Y axis, its labels and the margins take the rest): generous, so
	// that the laid-out rows always fit the real data area.
	stripMargin = vg.Points(110)
	// labelMark points at a marker's line from its label.
	labelMark = "▼"
)

// legend explains a plot without drawing over its data: in a strip between the title and the
// axes' box it holds, from the bottom up, the labels of the vertical markers (each just above
// its line, in the lowest row where it overlaps no other label) and the legend entries
// (flowing left to right, in rows). finish lays the strip out and reserves its height through
// the title's padding; the legend is added as the last plotter and draws above its canvas.
type legend struct {
	entries []legendEntry
	markers []*vLine
	// width is the width the plot is drawn at (PlotWidth unless set), for the layout.
	width vg.Length
	// xFixed: the caller has set the X range (finish keeps it).
	xFixed bool

	// The layout (finish): each entry's row and left offset, each marker label's row, and the
	// rows of each part.
	entryRow   []int
	entryX     []vg.Length
	markerRow  []int
	legendRows int
	labelRows  int
}

type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

func (l *legend) add(label string, thumbs ...plot.Thumbnailer) {
	l.entries = append(l.entries, legendEntry{label: label, thumbs: thumbs})
}

// mark adds a vertical marker line to p, its label to the strip.
func (l *legend) mark(p *plot.Plot, v *vLine) {
	p.Add(v)
	if v.label != "" && finite(v.x) {
		l.markers = append(l.markers, v)
	}
}

func legendRowH() vg.Length { return labelStyle(legendTextSize).Height("Mg") + vg.Points(3) }
func labelRowH() vg.Length  { return labelStyle(labelTextSize).Height("Mg") + vg.Points(2) }

// markerText is what a marker's label reads: the mark over its line, then the label (or the
// label, then the mark, when it is set to the left of the line).
func markerText(label string, left bool) string {
	if left {
		return label + " " + labelMark
	}
	return labelMark + " " + label
}

// layout places the entries and the marker labels for p's X range, and returns the strip's
// height. The data area's width is estimated (stripMargin narrower than the plot), so that the
// real positions are at least as far apart as the laid-out ones.
func (l *legend) layout(p *plot.Plot) vg.Length {
	w := l.width
	if w == 0 {
		w = PlotWidth
	}
	avail := w - stripMargin
	ls := labelStyle(legendTextSize)
	l.entryRow, l.entryX, l.legendRows = make([]int, len(l.entries)), make([]vg.Length, len(l.entries)), 0
	x, row := vg.Length(0), 0
	for i, e := range l.entries {
		ew := legendThumbW + legendGap + ls.Width(e.label)
		if x > 0 && legendPad+x+ew > avail {
			row, x = row+1, 0
		}
		l.entryRow[i], l.entryX[i] = row, legendPad+x
		x += ew + legendColGap
		l.legendRows = row + 1
	}

	ms := labelStyle(labelTextSize)
	type span struct{ lo, hi vg.Length }
	var rows [][]span
	l.markerRow = make([]int, len(l.markers))
	for i, m := range l.markers {
		lo, hi, _ := l.labelSpan(p, m, avail, ms)
		r := 0
		for ; r < len(rows); r++ {
			free := true
			for _, s := range rows[r] {
				if lo < s.hi+legendColGap/2 && s.lo < hi+legendColGap/2 {
					free = false
					break
				}
			}
			if free {
				break
			}
		}
		if r == len(rows) {
			rows = append(rows, nil)
		}
		rows[r] = append(rows[r], span{lo, hi})
		l.markerRow[i] = r
	}
	l.labelRows = len(rows)

	h := vg.Length(0)
	if l.labelRows > 0 {
		h += vg.Length(l.labelRows)*labelRowH() + stripGap
	}
	if l.legendRows > 0 {
		h += vg.Length(l.legendRows)*legendRowH() + 2*legendPad + stripGap
	}
	return h
}

// labelSpan is where marker m's label goes across a data area width wide, from its left edge:
// right of its line, or left of it (left true) when it would pass the right edge, and from
// the left edge when it fits neither way.
func (l *legend) labelSpan(p *plot.Plot, m *vLine, width vg.Length, sty text.Style) (lo, hi vg.Length, left bool) {
	x := vg.Length((m.x - p.X.Min) / (p.X.Max - p.X.Min) * float64(width))
	if p.X.Max <= p.X.Min || !finite(float64(x)) {
		x = 0
	}
	half := sty.Width(labelMark) / 2
	w := sty.Width(markerText(m.label, false))
	switch {
	case x-half+w <= width:
		return x - half, x - half + w, false
	case x+half-w >= 0:
		return x + half - w, x + half, true
	}
	return 0, w, false
}

// Plot implements plot.Plotter: the strip above c, the data area.
func (l *legend) Plot(c draw.Canvas, p *plot.Plot) {
	base := c.Max.Y + stripGap
	if len(l.markers) > 0 && len(l.markerRow) == len(l.markers) {
		sty := labelStyle(labelTextSize)
		sty.YAlign = draw.YBottom
		sty.XAlign = draw.XLeft
		trX, _ := p.Transforms(&c)
		width := c.Max.X - c.Min.X
		for i, m := range l.markers {
			if !c.ContainsX(trX(m.x)) {
				continue
			}
			lo, _, left := l.labelSpan(p, m, width, sty)
			c.FillText(sty, vg.Point{X: c.Min.X + lo, Y: base + vg.Length(l.markerRow[i])*labelRowH()}, markerText(m.label, left))
		}
		base += vg.Length(l.labelRows)*labelRowH() + stripGap
	}
	if len(l.entries) == 0 || len(l.entryRow) != len(l.entries) {
		return
	}
	sty := labelStyle(legendTextSize)
	rowH := legendRowH()
	right := vg.Length(0)
	for i, e := range l.entries {
		right = max(right, l.entryX[i]+legendThumbW+legendGap+sty.Width(e.label))
	}
	box := vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: base}, Max: vg.Point{X: c.Min.X + right + legendPad, Y: base + vg.Length(l.legendRows)*rowH + 2*legendPad}}
	c.StrokeLines(legendBoxStyle, []vg.Point{box.Min, {X: box.Max.X, Y: box.Min.Y}, box.Max, {X: box.Min.X, Y: box.Max.Y}, box.Min})
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	for i, e := range l.entries {
		// Rows from the top of the box down.
		mid := box.Max.Y - legendPad - vg.Length(l.entryRow[i])*rowH - rowH/2
		left := c.Min.X + l.entryX[i]
		thumb := &draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: left, Y: mid - rowH/2 + vg.Points(1.5)},
			Max: vg.Point{X: left + legendThumbW, Y: mid + rowH/2 - vg.Points(1.5)},
		}}
		for _, t := range e.thumbs {
			t.Thumbnail(thumb)
		}
		c.FillText(sty, vg.Point{X: left + legendThumbW + legendGap, Y: mid}, e.label)
	}
}

// logTicks marks a logarithmic axis. gonum's LogTicks labels powers of ten
// only, which leaves a latency axis spanning one or two decades with one or
// two numbers; this labels 1, 2 and 5 times a power of ten when the axis
// spans at most two and a half decades (every multiple when it spans less than one), powers
// of ten otherwise, with unlabelled minor ticks at every integer multiple.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	first, last := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	labelled := map[int]bool{1: true, 2: true, 5: true}
	switch span := math.Log10(hi / lo); {
	case span > 2.5:
		labelled = map[int]bool{1: true}
	case span < 1: // less than a decade: every multiple, or there would be one or two labels
		labelled = map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true}
	}
	const eps = 1e-9
	var ts []plot.Tick
	for e := first; e <= last; e++ {
		base := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * base
			if v < lo*(1-eps) || v > hi*(1+eps) {
				continue
			}
			t := plot.Tick{Value: v}
			if labelled[m] {
				t.Label = formatShort(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// linearTicks marks a linear axis with about six labels at a "nice" step
// (1, 2 or 5 times a power of ten) and unlabelled minor ticks between them;
// gonum's default aims at three labels, too few to read values off a curve.
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finite(lo, hi) || !(hi > lo) {
		return nil
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step, minor := 10*mag, 5
	for _, m := range []struct {
		f     float64
		minor int
	}{{1, 5}, {2, 4}, {5, 5}} {
		if raw <= m.f*mag {
			step, minor = m.f*mag, m.minor
			break
		}
	}
	decimals := max(0, -int(math.Floor(math.Log10(step))))
	var ts []plot.Tick
	first := math.Ceil(lo/step-1e-9) * step
	for k := 0; ; k++ {
		v := first + float64(k)*step
		if v > hi+step*1e-9 {
			break
		}
		ts = append(ts, plot.Tick{Value: v, Label: FormatFloat(v, decimals)})
	}
	sub := step / float64(minor)
	for v := math.Ceil(lo/sub-1e-9) * sub; v <= hi+sub*1e-9; v += sub {
		if r := math.Mod(math.Abs(v-first), step); r > sub/2 && step-r > sub/2 {
			ts = append(ts, plot.Tick{Value: v})
		}
	}
	return ts
}
