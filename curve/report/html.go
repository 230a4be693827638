package report

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// HTML is a self-contained report page, answer first: the title and a line on what was
// measured, the headline (the answer, its confidence and what it is worth) beside the main
// figure, then the tables, the plots and the sections (the evidence), and last the settings
// (Identity) and the reasoning (Notes). It has a small embedded style sheet, fits a 1400 px
// wide window without scrolling sideways, and makes no request of any kind when opened: it has
// no scripts, links, images or fonts to fetch, and a Content-Security-Policy of default-src
// 'none' says so to the browser as well.
//
// Every text reaches the page through pageText: a NaN or an infinity a caller lets through
// reads "—" or "inf", and a table cell that is an infinite rate, "inf (all at once)".
type HTML struct {
	Title string
	// Subtitle is one line under the title: what was measured, how (optional).
	Subtitle string
	// Headline is the answer, shown first; nil for none.
	Headline *Headline
	// Figure is the SVG beside the headline (checked as PlotsSVG are); nil for none.
	Figure []byte
	// Identity lists key/value pairs (target, model, workload fingerprint,
	// seed…), shown under "Settings" after the evidence.
	Identity [][2]string
	Tables   []Table
	// PlotsSVG are SVG documents (as [Render] or [WritePlots] make them)
	// inlined in order, two a row. Each is checked before inlining: it must parse as XML
	// with an <svg> root and hold no script, event handler, foreign object or
	// reference outside itself ([HTML.Write] fails otherwise).
	PlotsSVG [][]byte
	// Sections follow the plots: each a heading, a paragraph, its own tables and plots
	// (checked as PlotsSVG are), e.g. the tiers' time series.
	Sections []HTMLSection
	// Notes are the reasoning, last.
	Notes []string
	// Stamp, when non-empty, is shown as a banner at the top and in the page
	// title (e.g. "NOT COMPARABLE" for a forced compare).
	Stamp string
}

// Headline is the answer at the top of a page: a few facts, each a label, a value and what
// qualifies it, and sentences under them.
type Headline struct {
	Facts []Fact
	Lines []string
}

// Fact is one figure of a headline: "capacity" "84.9 req/s" "between 75.8 and 108 req/s at
// 95 % confidence", with an optional badge ("verified") whose Status colours it.
type Fact struct {
	Label, Value, Detail string
	Badge                string
	Status               Status
}

// Status colours a headline badge.
type Status string

// Statuses.
const (
	StatusNone Status = ""
	StatusOK   Status = "ok"   // verified, meets
	StatusWarn Status = "warn" // not verified, uncertain, a bound
	StatusBad  Status = "bad"  // fails, not comparable
)

// HTMLSection is a titled part of a report page: a paragraph, tables and plots. A Collapsed
// section shows only its title until it is opened (a <details> element): the details a
// reader asks for, one click away.
type HTMLSection struct {
	Title, Text string
	Tables      []Table
	PlotsSVG    [][]byte
	// Wide plots take the page's width, one a row (time series); others go two a row.
	Wide      bool
	Collapsed bool
}

// htmlCell, htmlRow and htmlTable are a Table prepared for the template.
type htmlCell struct {
	Text string
	Num  bool
	// Wrap: a text cell longer than wrapCell runes (a verdict in words) wraps within its
	// column, so that the table keeps to the window; shorter ones (an interval) stay whole.
	Wrap bool
}

// wrapCell is the length past which a text cell wraps.
const wrapCell = 40

type htmlRow struct {
	Cells     []htmlCell
	Highlight bool
	Mark      string
}

type htmlTable struct {
	Title   string
	Head    []htmlCell
	Rows    []htmlRow
	Notes   []string
	HasMark bool // a highlighted row exists: add the marker column
}

type htmlSection struct {
	Title, Text     string
	Tabs            []htmlTable
	Plots           []template.HTML
	Wide, Collapsed bool
}

type htmlFact struct {
	Label, Value, Detail, Badge string
	Status                      Status
}

type htmlPage struct {
	Title, Subtitle, Stamp string
	Facts                  []htmlFact
	Lines                  []string
	Figure                 template.HTML
	Identity               [][2]string
	Tabs                   []htmlTable
	Plots                  []template.HTML
	Secs                   []htmlSection
	Notes                  []string
}

// Write renders the page to w. User strings (title, identity, cells, notes,
// stamp) are escaped by html/template; only the checked SVG is inlined raw.
func (h HTML) Write(w io.Writer) error {
	page := htmlPage{Title: pageText(h.Title), Subtitle: pageText(h.Subtitle), Stamp: pageText(h.Stamp),
		Notes: pageTexts(h.Notes)}
	if hl := h.Headline; hl != nil {
		for _, f := range hl.Facts {
			page.Facts = append(page.Facts, htmlFact{Label: pageText(f.Label), Value: pageText(f.Value), Detail: pageText(f.Detail),
				Badge: pageText(f.Badge), Status: f.Status})
		}
		page.Lines = pageTexts(hl.Lines)
	}
	if h.Figure != nil {
		s, err := inlineSVG(h.Figure)
		if err != nil {
			return fmt.Errorf("report: figure of %q: %w", h.Title, err)
		}
		page.Figure = template.HTML(s) // checked by inlineSVG
	}
	for _, kv := range h.Identity {
		page.Identity = append(page.Identity, [2]string{pageText(kv[0]), pageText(kv[1])})
	}
	tabs, err := htmlTables(h.Tables)
	if err != nil {
		return err
	}
	page.Tabs = tabs
	if page.Plots, err = inlineSVGs(h.PlotsSVG, "plot %d of "+strconv.Quote(h.Title)); err != nil {
		return err
	}
	for _, sec := range h.Sections {
		hs := htmlSection{Title: pageText(sec.Title), Text: pageText(sec.Text), Wide: sec.Wide, Collapsed: sec.Collapsed}
		if hs.Tabs, err = htmlTables(sec.Tables); err != nil {
			return err
		}
		if hs.Plots, err = inlineSVGs(sec.PlotsSVG, "plot %d of section "+strconv.Quote(sec.Title)+" of "+strconv.Quote(h.Title)); err != nil {
			return err
		}
		page.Secs = append(page.Secs, hs)
	}
	bw := bufio.NewWriter(w)
	if err := pageTemplate.Execute(bw, page); err != nil {
		return fmt.Errorf("report: render HTML %q: %w", h.Title, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write HTML %q: %w", h.Title, err)
	}
	return nil
}

// htmlTables prepares tables for the page.
func htmlTables(ts []Table) ([]htmlTable, error) {
	var out []htmlTable
	for _, t := range ts {
		ht, err := t.html()
		if err != nil {
			return nil, err
		}
		out = append(out, ht)
	}
	return out, nil
}

// inlineSVGs checks and inlines plots; what names plot i in an error (a format with %d).
func inlineSVGs(svgs [][]byte, what string) ([]template.HTML, error) {
	var out []template.HTML
	for i, svg := range svgs {
		s, err := inlineSVG(svg)
		if err != nil {
			return nil, fmt.Errorf("report: "+what+": %w", i, err)
		}
		out = append(out, template.HTML(s)) // checked by inlineSVG
	}
	return out, nil
}

// nonFinite matches what Go prints for NaN and the infinities inside a text.
var nonFinite = regexp.MustCompile(`[+-]?\b(?:NaN|Inf)\b`)

// pageText is s as the page shows it: NaN reads "—" (an undefined value) and ±Inf "inf" or
// "-inf", wherever a caller let Go's spelling through.
func pageText(s string) string {
	if !strings.Contains(s, "NaN") && !strings.Contains(s, "Inf") {
		return s
	}
	return nonFinite.ReplaceAllStringFunc(s, func(m string) string {
		switch m {
		case "NaN", "+NaN", "-NaN":
			return NaNText
		case "-Inf":
			return "-inf"
		}
		return "inf"
	})
}

func pageTexts(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = pageText(s)
	}
	return out
}

// InfRateText is how a page shows an infinite arrival rate: every request sent at T0.
const InfRateText = "inf (all at once)"

// cellText is a table cell as the page shows it: pageText, and a cell that is an infinite
// rate alone says what it means.
func cellText(s string) string {
	s = pageText(s)
	if s == "inf" {
		return InfRateText
	}
	return s
}

// html prepares a table for the page.
func (t Table) html() (htmlTable, error) {
	if err := t.validate(); err != nil {
		return htmlTable{}, err
	}
	ht := htmlTable{Title: pageText(t.Title), Notes: pageTexts(t.Notes)}
	for j, c := range t.Columns {
		ht.Head = append(ht.Head, htmlCell{Text: pageText(c), Num: t.rightAligned(j)})
	}
	for i, r := range t.Rows {
		row := htmlRow{Highlight: t.highlighted(i)}
		for j := range t.Columns {
			text := cellText(cell(r, j))
			row.Cells = append(row.Cells, htmlCell{Text: text, Num: t.rightAligned(j), Wrap: !t.rightAligned(j) && utf8.RuneCountInString(text) > wrapCell})
		}
		if row.Highlight {
			row.Mark = pageText(t.marker())
			ht.HasMark = true
		}
		ht.Rows = append(ht.Rows, row)
	}
	return ht, nil
}

// errUnsafeSVG is wrapped by the reasons an SVG is refused.
var errUnsafeSVG = errors.New("SVG not safe to inline")

// forbiddenSVGElements run code, embed other documents or load resources.
var forbiddenSVGElements = map[string]bool{
	"script": true, "foreignObject": true, "iframe": true, "object": true,
	"embed": true, "audio": true, "video": true, "link": true, "handler": true,
}

// inlineSVG checks an SVG document and returns it from its <svg> element on
// (the XML declaration and comments before it have no place inside HTML).
func inlineSVG(b []byte) (string, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	start := -1
	depth := 0
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("%w: does not parse: %w", errUnsafeSVG, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if e.Name.Local != "svg" || start >= 0 {
					return "", fmt.Errorf("%w: root element <%s> is not a single <svg>", errUnsafeSVG, e.Name.Local)
				}
				start = int(off)
			}
			depth++
			if forbiddenSVGElements[e.Name.Local] {
				return "", fmt.Errorf("%w: has a <%s> element", errUnsafeSVG, e.Name.Local)
			}
			for _, a := range e.Attr {
				if err := checkSVGAttr(a); err != nil {
					return "", err
				}
			}
		case xml.EndElement:
			depth--
		case xml.CharData:
			if externalCSS(string(e)) {
				return "", fmt.Errorf("%w: style text refers outside the document", errUnsafeSVG)
			}
		case xml.ProcInst, xml.Directive:
			if depth > 0 {
				return "", fmt.Errorf("%w: processing instruction or directive inside <svg>", errUnsafeSVG)
			}
		}
	}
	if start < 0 {
		return "", fmt.Errorf("%w: no <svg> element", errUnsafeSVG)
	}
	return strings.TrimSpace(string(b[start:])), nil
}

// checkSVGAttr refuses event handlers and references outside the document.
func checkSVGAttr(a xml.Attr) error {
	name := strings.ToLower(a.Name.Local)
	v := strings.TrimSpace(a.Value)
	switch {
	case a.Name.Space == "xmlns" || (a.Name.Space == "" && name == "xmlns"):
		return nil // namespace declarations name, they do not load
	case strings.HasPrefix(name, "on"):
		return fmt.Errorf("%w: event handler attribute %s", errUnsafeSVG, a.Name.Local)
	case name == "href" || name == "src":
		if !strings.HasPrefix(v, "#") && !strings.HasPrefix(v, "data:") {
			return fmt.Errorf("%w: %s=%q refers outside the document", errUnsafeSVG, a.Name.Local, v)
		}
	case externalCSS(v):
		return fmt.Errorf("%w: attribute %s refers outside the document", errUnsafeSVG, a.Name.Local)
	}
	return nil
}

// externalCSS reports whether CSS text can load something from outside: an
// @import, or a url() whose target is not a fragment or data: URL.
func externalCSS(s string) bool {
	l := strings.ToLower(s)
	if strings.Contains(l, "@import") {
		return true
	}
	for {
		i := strings.Index(l, "url(")
		if i < 0 {
			return false
		}
		l = strings.TrimLeft(l[i+len("url("):], " \t\r\n'\"")
		if !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "data:") {
			return true
		}
	}
}

// pageTemplate is the report page. It is XHTML-compatible (every element
// closed) so that it also parses as XML.
var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"/>
<title>{{if .Stamp}}[{{.Stamp}}] {{end}}{{.Title}}</title>
<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif;color:#1b1b1b;background:#fff;margin:0 auto;max-width:1320px;padding:.8em 1.5em 1.5em}
h1{font-size:1.35em;margin:.1em 0 .1em}
h2{font-size:1.15em;margin:1.4em 0 .4em}
h3{font-size:1em;margin:1em 0 .3em}
p.sub{color:#555;margin:0 0 .8em;font-size:.92em}
.stamp{background:#b00020;color:#fff;font-weight:700;letter-spacing:.05em;padding:.5em 1em;margin-bottom:.6em;border-radius:4px}
.top{display:grid;grid-template-columns:minmax(280px,390px) minmax(0,1fr);gap:1.5em;align-items:start}
.top.nofig{grid-template-columns:minmax(0,1fr)}
.headline{border-left:4px solid #0072b2;padding:.2em 0 .2em 1em}
.fact{margin:0 0 .85em}
.fact .label{font-size:.78em;text-transform:uppercase;letter-spacing:.05em;color:#666}
.fact .value{font-size:1.6em;font-weight:700;line-height:1.25;font-variant-numeric:tabular-nums}
.fact .detail{color:#333;font-size:.9em}
.badge{display:inline-block;font-size:.5em;font-weight:700;letter-spacing:.03em;padding:.15em .55em;border-radius:3px;vertical-align:middle;margin-left:.4em;background:#eee;color:#333}
.badge.ok{background:#dff3e4;color:#17602c}
.badge.warn{background:#fff0c2;color:#6b4f00}
.badge.bad{background:#fbdede;color:#8f1a1a}
.headline p{margin:.4em 0;color:#333;font-size:.9em}
figure{margin:0}
figure.hero svg{width:100%;height:auto;display:block}
.plots{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:1em 1.5em;margin:.6em 0}
.plots.wide{grid-template-columns:minmax(0,1fr)}
.plots svg{width:100%;height:auto;display:block}
.plots.wide svg{max-width:1000px}
table{border-collapse:collapse;margin:.3em 0}
table.identity th{text-align:left;font-weight:600;padding:.15em 1.2em .15em 0;color:#555;vertical-align:top;white-space:nowrap}
table.identity td{font-family:ui-monospace,"Liberation Mono",monospace;font-size:.9em;word-break:break-all}
.scroll{overflow-x:auto;max-width:100%}
table.data{font-variant-numeric:tabular-nums;font-size:.9em}
table.data th,table.data td{padding:.28em .5em;border-bottom:1px solid #ddd;white-space:nowrap}
table.data th{text-align:left;border-bottom:2px solid #999;white-space:normal;vertical-align:bottom}
table.data .num{text-align:right}
table.data tr.highlight td{background:#fff4cc;font-weight:600}
table.data td.mark{color:#6b4f00;white-space:normal}
table.data td.words{white-space:normal;min-width:16em}
table.data td.mark div{width:8.5em}
ul.notes{color:#444;padding-left:1.2em;font-size:.92em}
ul.notes li{margin:.2em 0}
p.lead{color:#444;max-width:1000px;font-size:.92em}
details{margin:.8em 0}
details>summary{cursor:pointer;font-weight:600;color:#0a5a8c}
footer{margin-top:2em;color:#888;font-size:.85em}
@media (max-width:1100px){.top{grid-template-columns:minmax(0,1fr)}.plots{grid-template-columns:minmax(0,1fr)}}
</style>
</head>
<body>
{{- if .Stamp}}
<div class="stamp" role="alert">{{.Stamp}}</div>
{{- end}}
<h1>{{.Title}}</h1>
{{- if .Subtitle}}
<p class="sub">{{.Subtitle}}</p>
{{- end}}
{{- if or .Facts .Lines .Figure}}
<div class="top{{if not .Figure}} nofig{{end}}">
<div class="headline">
{{- range .Facts}}
<div class="fact">
<div class="label">{{.Label}}</div>
<div class="value">{{.Value}}{{if .Badge}} <span class="badge{{if .Status}} {{.Status}}{{end}}">{{.Badge}}</span>{{end}}</div>
{{- if .Detail}}
<div class="detail">{{.Detail}}</div>
{{- end}}
</div>
{{- end}}
{{- range .Lines}}
<p>{{.}}</p>
{{- end}}
</div>
{{- if .Figure}}
<figure class="hero">
{{.Figure}}
</figure>
{{- end}}
</div>
{{- end}}
{{- range .Tabs}}
{{template "table" .}}
{{- end}}
{{- if .Plots}}
<div class="plots">
{{- range .Plots}}
<figure class="plot">
{{.}}
</figure>
{{- end}}
</div>
{{- end}}
{{- range .Secs}}
{{- if .Collapsed}}
<details>
<summary>{{.Title}}</summary>
{{- template "section" .}}
</details>
{{- else}}
<section>
<h2>{{.Title}}</h2>
{{- template "section" .}}
</section>
{{- end}}
{{- end}}
{{- if .Identity}}
<h2>Settings</h2>
<table class="identity">
{{- range .Identity}}
<tr><th scope="row">{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- if .Notes}}
<h2>How each judgement was made</h2>
<ul class="notes">
{{- range .Notes}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
<footer>Generated by loadcurve.</footer>
</body>
</html>
{{- define "section"}}
{{- if .Text}}
<p class="lead">{{.Text}}</p>
{{- end}}
{{- range .Tabs}}
{{template "table" .}}
{{- end}}
{{- if .Plots}}
<div class="plots{{if .Wide}} wide{{end}}">
{{- range .Plots}}
<figure class="plot">
{{.}}
</figure>
{{- end}}
</div>
{{- end}}
{{- end}}
{{- define "table"}}
<section>
{{- if .Title}}
<h2>{{.Title}}</h2>
{{- end}}
<div class="scroll">
<table class="data">
<thead><tr>{{range .Head}}<th{{if .Num}} class="num"{{end}}>{{.Text}}</th>{{end}}{{if .HasMark}}<th></th>{{end}}</tr></thead>
<tbody>
{{- $mark := .HasMark}}
{{- range .Rows}}
<tr{{if .Highlight}} class="highlight"{{end}}>{{range .Cells}}<td{{if .Num}} class="num"{{else if .Wrap}} class="words"{{end}}>{{.Text}}</td>{{end}}{{if $mark}}<td class="mark"><div>{{.Mark}}</div></td>{{end}}</tr>
{{- end}}
</tbody>
</table>
</div>
{{- if .Notes}}
<ul class="notes">
{{- range .Notes}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
</section>
{{- end}}
`))
