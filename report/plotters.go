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
// gonum does not provide: labelled vertical lines, horizontal reference
// lines, a legend on a background box, and log-axis ticks with more labels.

// labelStyle is the text style of marker labels and legend entries.
func labelStyle(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, size),
		Handler: plot.DefaultTextHandler,
	}
}

// boxFill is the translucent white behind labels and the legend.
var boxFill = color.NRGBA{R: 0xFF, G: 0xFF, B: 0xFF, A: 0xE0}

// vLine is a vertical line across the data area at x, with a label near its
// top. Labels of several lines go in successive rows (slot 0 at the top) so
// that near lines do not print over each other.
type vLine struct {
	x     float64
	label string
	line  draw.LineStyle
	slot  int
}

// Plot implements plot.Plotter.
func (v *vLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(v.x)
	if !c.ContainsX(x) {
		return
	}
	c.StrokeLine2(v.line, x, c.Min.Y, x, c.Max.Y)
	if v.label == "" {
		return
	}
	sty := labelStyle(vg.Points(9))
	pad := vg.Points(3)
	w, h := sty.Width(v.label), sty.Height(v.label)
	top := c.Max.Y - pad - vg.Length(v.slot)*(h+2*pad)
	left := x + pad
	if left+w+pad > c.Max.X {
		left = x - pad - w
	}
	box := vg.Rectangle{Min: vg.Point{X: left - pad/2, Y: top - h - pad/2}, Max: vg.Point{X: left + w + pad/2, Y: top + pad/2}}
	c.SetColor(boxFill)
	c.Fill(box.Path())
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	c.FillText(sty, vg.Point{X: left, Y: top}, v.label)
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

// legend draws legend entries on a translucent box in a corner of the data
// area. gonum's own legend has no background, so lines showed through its
// text; this one is added as the last plotter, above the data.
type legend struct {
	entries []legendEntry
	top     bool
	cols    int // entries side by side, row by row (0: one column)
}

type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

func (l *legend) add(label string, thumbs ...plot.Thumbnailer) {
	l.entries = append(l.entries, legendEntry{label: label, thumbs: thumbs})
}

// Plot implements plot.Plotter, drawing in the left corner, top or bottom.
func (l *legend) Plot(c draw.Canvas, _ *plot.Plot) {
	if len(l.entries) == 0 {
		return
	}
	sty := labelStyle(vg.Points(10))
	var (
		inset  = vg.Points(6)
		pad    = vg.Points(5)
		thumbW = vg.Points(24)
		gap    = vg.Points(5)
		rowH   = sty.Height("Mg") + vg.Points(3)
		textW  vg.Length
	)
	for _, e := range l.entries {
		textW = max(textW, sty.Width(e.label))
	}
	cols := min(max(l.cols, 1), len(l.entries))
	rows := (len(l.entries) + cols - 1) / cols
	colW := thumbW + gap + textW + pad
	w := pad + vg.Length(cols)*colW
	h := pad + vg.Length(rows)*rowH + pad
	box := vg.Rectangle{Min: vg.Point{X: c.Min.X + inset}}
	box.Max.X = box.Min.X + w
	if l.top {
		box.Max.Y = c.Max.Y - inset
		box.Min.Y = box.Max.Y - h
	} else {
		box.Min.Y = c.Min.Y + inset
		box.Max.Y = box.Min.Y + h
	}
	c.SetColor(boxFill)
	c.Fill(box.Path())
	c.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 0xAA}, Width: vg.Points(0.5)})
	c.Stroke(box.Path())

	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	for i, e := range l.entries {
		top := box.Max.Y - pad - vg.Length(i/cols)*rowH
		mid := top - rowH/2
		left := box.Min.X + pad + vg.Length(i%cols)*colW
		thumb := &draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: left, Y: mid - rowH/2 + vg.Points(1)},
			Max: vg.Point{X: left + thumbW, Y: mid + rowH/2 - vg.Points(1)},
		}}
		for _, t := range e.thumbs {
			t.Thumbnail(thumb)
		}
		c.FillText(sty, vg.Point{X: left + thumbW + gap, Y: mid}, e.label)
	}
}

// logTicks marks a logarithmic axis. gonum's LogTicks labels powers of ten
// only, which leaves a latency axis spanning one or two decades with one or
// two numbers; this labels 1, 2 and 5 times a power of ten when the axis
// spans at most two and a half decades, powers of ten otherwise, with unlabelled minor
// ticks at every integer multiple.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	first, last := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	labelled := map[int]bool{1: true, 2: true, 5: true}
	if math.Log10(hi/lo) > 2.5 {
		labelled = map[int]bool{1: true}
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
