package report_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/report"
)

// The structural test of every report page. A person looks at the pages in a real browser
// (scripts/screenshots.sh renders each type at 1400×900); CI cannot, so these tests hold
// the page to what those screenshots showed: the answer first (the headline and its figure
// before any table), every table a <table> that fits a 1400 px wide window, no NaN or Inf
// anywhere, and every line of every plot inside its axes' box, with the legends off the data.

// pageWant is what a page of one type must show.
type pageWant struct {
	headline []string // texts the headline holds
	figure   bool     // a figure beside the headline
	present  []string // texts the page holds
	absent   []string // texts it must not hold
}

// pageWidth is the width the page's content has in a 1400 px window (the style sheet's
// max-width).
const pageWidth = 1320

// checkPage renders h and holds it to the structure every page shares and to want.
func checkPage(t *testing.T, name string, h report.HTML, want pageWant) string {
	t.Helper()
	var b bytes.Buffer
	if err := h.Write(&b); err != nil {
		t.Fatal(err)
	}
	keep(t, name+".html", b.Bytes())
	return checkPageBytes(t, name, b.Bytes(), want)
}

// checkPageBytes is checkPage of a page already written; it returns the page's text.
func checkPageBytes(t *testing.T, name string, page []byte, want pageWant) string {
	t.Helper()
	all := parsePage(t, page)
	checkNoExternalLoads(t, all)

	// The answer first.
	index := func(match func(*node) bool) int {
		for i, n := range all {
			if match(n) {
				return i
			}
		}
		return -1
	}
	headline := index(func(n *node) bool { return n.class == "headline" })
	hero := index(func(n *node) bool { return n.name == "figure" && n.class == "hero" })
	table := index(func(n *node) bool { return n.name == "table" })
	switch {
	case headline < 0:
		t.Errorf("%s: no headline", name)
	case table >= 0 && headline > table:
		t.Errorf("%s: the headline comes after a table", name)
	}
	if want.figure && (hero < 0 || (table >= 0 && hero > table)) {
		t.Errorf("%s: no figure before the tables (figure at %d, first table at %d)", name, hero, table)
	}
	if headline >= 0 {
		for _, w := range want.headline {
			if !strings.Contains(all[headline].text, w) {
				t.Errorf("%s: the headline does not say %q:\n%s", name, w, squash(all[headline].text))
			}
		}
	}
	text := all[0].text // <html>: every text of the page, the plots' included
	for _, w := range want.present {
		if !strings.Contains(text, w) {
			t.Errorf("%s: the page does not say %q", name, w)
		}
	}
	for _, w := range want.absent {
		if strings.Contains(text, w) {
			t.Errorf("%s: the page says %q", name, w)
		}
	}
	if m := nonFinite.FindAllString(text, 5); len(m) > 0 {
		t.Errorf("%s: the page shows %q", name, m)
	}

	// Every table is a table: no list item is one drawn in text.
	for _, li := range find(all, "li") {
		if textTable.MatchString(li.text) {
			t.Errorf("%s: a list item is a table drawn in text: %q", name, li.text)
		}
	}
	tables, svgs := pageParts(t, page)
	if len(find(all, "table")) != len(tables) {
		t.Fatalf("%s: %d tables parsed of %d", name, len(tables), len(find(all, "table")))
	}
	for _, tab := range tables {
		if w := tableWidth(tab); w > pageWidth {
			t.Errorf("%s: table %q is about %d px wide, more than the page's %d", name, tab.head(), w, pageWidth)
		}
	}
	for i, s := range svgs {
		checkPlot(t, fmt.Sprintf("%s, plot %d", name, i), s)
	}
	return text
}

// nonFinite is how Go prints NaN and infinities: none may reach a person.
var nonFinite = regexp.MustCompile(`NaN|[+-]?\bInf\b`)

// textTable matches a table drawn in text: a rule of dashes, or cells aligned by runs of spaces.
var textTable = regexp.MustCompile(`-{4,}|\S {3,}\S+ {3,}\S`)

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// htmlTable is a <table> of the page: its rows of cells' texts.
type htmlTable struct {
	class string
	rows  [][]string
	// wraps marks the cells (row, column) that wrap within their column (class "words").
	wraps map[[2]int]bool
}

func (t htmlTable) head() string {
	if len(t.rows) == 0 {
		return ""
	}
	return strings.Join(t.rows[0], " | ")
}

// svgPath is a <path> of a plot: its points (arcs at their end points, widened by their
// radius) and its style.
type svgPath struct {
	style  string
	points [][2]float64
	radius float64
}

// pageParts walks the page's tables and its plots' paths.
func pageParts(t *testing.T, page []byte) (tables []htmlTable, svgs [][]svgPath) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	var tab *htmlTable
	var cell *strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := func(name string) string {
				for _, a := range e.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			switch e.Name.Local {
			case "table":
				tab = &htmlTable{class: attr("class")}
			case "tr":
				if tab != nil {
					tab.rows = append(tab.rows, nil)
				}
			case "th", "td":
				cell = &strings.Builder{}
				if tab != nil && attr("class") == "words" && len(tab.rows) > 0 {
					if tab.wraps == nil {
						tab.wraps = map[[2]int]bool{}
					}
					tab.wraps[[2]int{len(tab.rows) - 1, len(tab.rows[len(tab.rows)-1])}] = true
				}
			case "svg":
				svgs = append(svgs, nil)
			case "path":
				p, err := parsePath(attr("d"))
				if err != nil {
					t.Fatal(err)
				}
				p.style = attr("style")
				svgs[len(svgs)-1] = append(svgs[len(svgs)-1], p)
			}
		case xml.EndElement:
			switch e.Name.Local {
			case "table":
				tables = append(tables, *tab)
				tab = nil
			case "th", "td":
				if tab != nil && len(tab.rows) > 0 {
					r := &tab.rows[len(tab.rows)-1]
					*r = append(*r, strings.TrimSpace(cell.String()))
				}
				cell = nil
			}
		case xml.CharData:
			if cell != nil {
				cell.Write(e)
			}
		}
	}
	return tables, svgs
}

// parsePath reads the M, L, A and Z commands gonum's SVG canvas writes.
func parsePath(d string) (svgPath, error) {
	var p svgPath
	for _, seg := range pathSegment.FindAllString(d, -1) {
		var nums []float64
		for _, f := range pathNumber.FindAllString(seg[1:], -1) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return p, err
			}
			nums = append(nums, v)
		}
		switch seg[0] {
		case 'M', 'L':
			if len(nums)%2 != 0 {
				return p, fmt.Errorf("path %q: odd coordinates in %q", d, seg)
			}
			for i := 0; i < len(nums); i += 2 {
				p.points = append(p.points, [2]float64{nums[i], nums[i+1]})
			}
		case 'A':
			if len(nums)%7 != 0 {
				return p, fmt.Errorf("path %q: arc %q", d, seg)
			}
			for i := 0; i < len(nums); i += 7 {
				p.radius = math.Max(p.radius, math.Max(nums[i], nums[i+1]))
				p.points = append(p.points, [2]float64{nums[i+5], nums[i+6]})
			}
		case 'Z':
		default:
			return p, fmt.Errorf("path %q: command %c not understood", d, seg[0])
		}
	}
	return p, nil
}

var (
	pathSegment = regexp.MustCompile(`[A-Za-z][^A-Za-z]*`)
	pathNumber  = regexp.MustCompile(`-?[0-9]*\.?[0-9]+(?:e-?[0-9]+)?`)
)

// The styles the plots draw their frames and legends with (report's frameStyle and
// legendBoxStyle), and gonum's axes and ticks.
const (
	frameStyleSVG  = "stroke:#999999;stroke-width:0.75"
	legendStyleSVG = "stroke:#CCCCCC;stroke-width:0.5"
	axisStyleSVG   = "stroke:#000000;stroke-width:0.5"
)

type box struct{ x0, y0, x1, y1 float64 }

func (b box) holds(x, y, tol float64) bool {
	return x >= b.x0-tol && x <= b.x1+tol && y >= b.y0-tol && y <= b.y1+tol
}

func (b box) overlaps(o box) bool { return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1 }

func boxOf(p svgPath) box {
	b := box{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, q := range p.points {
		b.x0, b.y0, b.x1, b.y1 = math.Min(b.x0, q[0]), math.Min(b.y0, q[1]), math.Max(b.x1, q[0]), math.Max(b.y1, q[1])
	}
	return b
}

// checkPlot holds a plot to its axes: it has a frame (the axes' box), every path it draws
// from its data lies inside a frame (a glyph may reach past it by its radius), the legends lie
// outside every frame, and what a legend draws stays inside its box.
func checkPlot(t *testing.T, name string, paths []svgPath) {
	t.Helper()
	var frames, legends []box
	for _, p := range paths {
		switch {
		case strings.Contains(p.style, frameStyleSVG):
			frames = append(frames, boxOf(p))
		case strings.Contains(p.style, legendStyleSVG):
			legends = append(legends, boxOf(p))
		}
	}
	if len(frames) == 0 {
		t.Errorf("%s: no frame (axes' box) found", name)
		return
	}
	for _, l := range legends {
		for _, f := range frames {
			if l.overlaps(f) {
				t.Errorf("%s: a legend %v lies on the data area %v", name, l, f)
			}
		}
	}
	bad := 0
	for _, p := range paths {
		if strings.Contains(p.style, frameStyleSVG) || strings.Contains(p.style, legendStyleSVG) || strings.Contains(p.style, axisStyleSVG) ||
			(strings.Contains(p.style, "fill:#FFFFFF") && !strings.Contains(p.style, "stroke")) {
			continue // the frames, legend boxes, axes and ticks, and the backgrounds
		}
		tol := 0.6 + p.radius
		inside := func(bs []box, tol float64) bool {
			for _, b := range bs {
				all := true
				for _, q := range p.points {
					all = all && b.holds(q[0], q[1], tol)
				}
				if all {
					return true
				}
			}
			return false
		}
		if !inside(frames, tol) && !inside(legends, tol) {
			if bad++; bad <= 3 {
				t.Errorf("%s: a path (%s) at %v lies outside its axes %v and its legends %v", name, p.style, boxOf(p), frames, legends)
			}
			continue
		}
		// gonum clips a line at the axes' box: a line along the top of the box is data cut off
		// (or drawn on the frame, where it cannot be read). Vertical lines (markers) and the
		// grid span the box by design.
		if b := boxOf(p); p.radius == 0 && b.x1 > b.x0 && strings.Contains(p.style, "stroke:") && !strings.Contains(p.style, "stroke:#DDDDDD") {
			for _, f := range frames {
				if f.holds(b.x0, b.y0, tol) && f.holds(b.x1, b.y1, tol) && b.y1 > f.y1-0.5 {
					if bad++; bad <= 3 {
						t.Errorf("%s: a line (%s) at %v reaches the top of its axes %v: its data are cut off", name, p.style, b, f)
					}
				}
			}
		}
	}
}

// tableWidth estimates a table's width in the page's font: each column as wide as its widest
// cell (a header as its longest word, since headers wrap; a cell of words that wraps as its
// 16em, or its longest word), 7.6 px a character, 13.5 px of padding a cell; a highlighted row's
// mark is a fixed 8.5em.
func tableWidth(t htmlTable) int {
	var cols []int
	for i, r := range t.rows {
		for j, c := range r {
			n := utf8.RuneCountInString(c)
			if t.wraps[[2]int{i, j}] {
				n = 32 // 16em of a 15 px font
				for _, w := range strings.Fields(c) {
					n = max(n, utf8.RuneCountInString(w))
				}
			}
			if i == 0 {
				n = 0
				for _, w := range strings.Fields(c) {
					n = max(n, utf8.RuneCountInString(w))
				}
			}
			if j >= len(cols) {
				cols = append(cols, 0)
			}
			w := int(7.6*float64(n)) + 14
			if strings.HasPrefix(c, "◀") { // the mark of the highlighted row wraps in 8.5em
				w = 130
			}
			cols[j] = max(cols[j], w)
		}
	}
	sum := 0
	for _, c := range cols {
		sum += c
	}
	return sum
}

// TestPages holds every page type to the structure of the answer-first page.
func TestPages(t *testing.T) {
	pageResults(t)
	cmp := comparison(t)
	plans2, cmp2 := plans(t, "EUR")
	tests := []struct {
		name string
		page func() (report.HTML, error)
		want pageWant
	}{
		{"rate sweep", func() (report.HTML, error) { return report.ResultPage(ratePage.res, ratePage.ts) }, pageWant{
			headline: []string{"capacity", "req/s", "interval [", "operating point", "compliant output there", "tok/s raw"},
			figure:   true,
			present:  []string{"inf (all at once)", "Latency against the arrival rate", "Within each tier, second by second", "Settings", "How each judgement was made"},
		}},
		{"users sweep", func() (report.HTML, error) { return report.ResultPage(usersPage.res, usersPage.ts) }, pageWant{
			headline: []string{"capacity", "users", "its users produce", "operating point"},
			figure:   true,
			present:  []string{"concurrency (users of a closed loop)", "Latency against the concurrency"},
			absent:   []string{"producing 219 users", "users/s"},
		}},
		{"run", func() (report.HTML, error) { return report.ResultPage(runPageR.res, runPageR.ts) }, pageWant{
			headline: []string{"compliant share at 4 req/s", "compliant output", "latency, median / p99", "TTFT"},
			figure:   true,
			present:  []string{"Latency (ms, the tier's requests)", "requests second by second"},
		}},
		{"sessions run", func() (report.HTML, error) { return report.ResultPage(sessionsPage.res, sessionsPage.ts) }, pageWant{
			headline: []string{"sessions/s", "compliant output", "sessions of 3 turns on average; from turn 1 to turn 3 the prompt grows"},
			figure:   true,
			present:  []string{"loadcurve run of sessions", "Sessions by turn", "latency by turn of the session", "mean input tok"},
			absent:   []string{"tier tier"},
		}},
		{"burst run", func() (report.HTML, error) { return report.ResultPage(burstPage.res, burstPage.ts) }, pageWant{
			headline: []string{"inf (all at once)"},
			present:  []string{"inf (all at once)"},
		}},
		{"compare", func() (report.HTML, error) { return report.ComparePage(cmp, fastPage.res, slowPage.res) }, pageWant{
			headline: []string{"A: sim:mdc, operating point", "B: sim:mdc, operating point", "cost per effective token", "USD"},
			figure:   true,
			present:  []string{"A vs B at equal rate", "Cost ledger at the operating points (USD"},
		}},
		{"plan", func() (report.HTML, error) { return report.PlanPage(plans2, cmp2, nil, nil) }, pageWant{
			headline: []string{"A: replicas at the 61 req/s peak", "EUR", "cheaper for this forecast"},
			figure:   true,
			present:  []string{"Capacity plan for the forecast", "costs in EUR", "Which is cheaper, and where that changes"},
			absent:   []string{"cost units"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := tt.page()
			if err != nil {
				t.Fatal(err)
			}
			checkPage(t, strings.ReplaceAll(tt.name, " ", "_"), h, tt.want)
		})
	}
}

// TestPlanPageWithoutCurrency: amounts are in cost units when no currency was given, and the
// rehearsals are a table.
func TestPlanPageWithoutCurrency(t *testing.T) {
	ps, _ := plans(t, "")
	trials := []plan.Trial{
		{Deployment: "A", Replicas: 3, Planned: true, PeakRate: 12, RealisedRate: 11.9, Verdict: "meets", TargetShare: 0.99, Share: 1, ShareLo: 0.995, ShareHi: 1},
		{Deployment: "A", Replicas: 2, PeakRate: 12, RealisedRate: 12.1, Verdict: "fails", TargetShare: 0.99, Share: 0.9, ShareLo: 0.88, ShareHi: 0.92},
	}
	h, err := report.PlanPage(ps[:1], nil, trials, []string{"A: the plan holds and is tight"})
	if err != nil {
		t.Fatal(err)
	}
	text := checkPage(t, "plan_cost_units", h, pageWant{
		headline: []string{"cost units", "the plan holds and is tight"},
		figure:   true,
		present:  []string{"costs in cost units", "Rehearsals on the simulated deployment's replicas", "another count"},
	})
	if strings.Contains(text, "EUR") {
		t.Error("a currency shows though none was given")
	}
	var b bytes.Buffer
	report.PlanText(&b, ps, nil)
	if !strings.Contains(b.String(), "costs in cost units") {
		t.Errorf("the plan's text does not name the money:\n%s", b.String())
	}
}

// TestPageTextNeverShowsNaN: a NaN or an infinity that reaches the page in any text reads
// "—" or "inf", and a cell that is an infinite rate reads "inf (all at once)".
func TestPageTextNeverShowsNaN(t *testing.T) {
	h := report.HTML{Title: "tier 0 (NaN req/s)", Subtitle: "rate +Inf", Identity: [][2]string{{"x", "NaN / NaN"}},
		Headline: &report.Headline{Facts: []report.Fact{{Label: "capacity", Value: fmt.Sprint(math.NaN()), Detail: fmt.Sprint(math.Inf(-1))}}},
		Tables:   []report.Table{{Columns: []string{"rate", "share"}, Rows: [][]string{{"inf", fmt.Sprint(math.NaN())}}, Highlight: -1}},
		Notes:    []string{"tier 0 (NaN req/s) at +Inf", "Information and Infinity stay"}}
	var b bytes.Buffer
	if err := h.Write(&b); err != nil {
		t.Fatal(err)
	}
	all := parsePage(t, b.Bytes())
	text := all[0].text
	if m := nonFinite.FindAllString(text, -1); len(m) > 0 {
		t.Errorf("the page shows %q", m)
	}
	for _, want := range []string{"tier 0 (— req/s)", "— / —", "rate inf", "-inf", "inf (all at once)", "Information and Infinity stay"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
}

// TestWriteResultPage: a result's directory gets its plots and the answer-first page, the
// plots' files labelled as the page's are (a lower bound as "≥").
func TestWriteResultPage(t *testing.T) {
	pageResults(t)
	t.Parallel()
	dir := t.TempDir()
	names, err := report.WriteResultPage(dir, runPageR.res, runPageR.ts, report.DefaultPlotFormats)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, "report.html") || !slices.Contains(names, "throughput.png") || !slices.Contains(names, "share.svg") {
		t.Errorf("wrote %q", names)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	checkPageBytes(t, "written run", page, pageWant{headline: []string{"compliant share at 4 req/s"}, figure: true})
	svg, err := os.ReadFile(filepath.Join(dir, "throughput.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(markerless(svgTexts(t, svg)), func(s string) bool { return strings.HasPrefix(s, "capacity ≥ ") }) {
		t.Error("throughput.svg does not label the run's capacity as a lower bound")
	}
}
