package report

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// HTML is a self-contained report page: identity, tables, inline SVG plots
// and notes, with a small embedded style sheet. The page makes no request
// of any kind when opened: it has no scripts, links, images or fonts to
// fetch, and a Content-Security-Policy of default-src 'none' says so to the
// browser as well.
type HTML struct {
	Title string
	// Identity lists key/value pairs (target, model, workload fingerprint,
	// seed…) shown under the title.
	Identity [][2]string
	Tables   []Table
	// PlotsSVG are SVG documents (as [Render] or [WritePlots] make them)
	// inlined in order. Each is checked before inlining: it must parse as XML
	// with an <svg> root and hold no script, event handler, foreign object or
	// reference outside itself ([HTML.Write] fails otherwise).
	PlotsSVG [][]byte
	// Sections follow the plots: each a heading, a paragraph and its own plots (checked as
	// PlotsSVG are), e.g. the tiers' time series.
	Sections []HTMLSection
	Notes    []string
	// Stamp, when non-empty, is shown as a banner at the top and in the page
	// title (e.g. "NOT COMPARABLE" for a forced compare).
	Stamp string
}

// HTMLSection is a titled group of plots of a report page.
type HTMLSection struct {
	Title, Text string
	PlotsSVG    [][]byte
}

// htmlCell, htmlRow and htmlTable are a Table prepared for the template.
type htmlCell struct {
	Text string
	Num  bool
}

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
	Title, Text string
	Plots       []template.HTML
}

type htmlPage struct {
	HTML
	Tabs  []htmlTable
	Plots []template.HTML
	Secs  []htmlSection
}

// Write renders the page to w. User strings (title, identity, cells, notes,
// stamp) are escaped by html/template; only the checked SVG is inlined raw.
func (h HTML) Write(w io.Writer) error {
	page := htmlPage{HTML: h}
	for _, t := range h.Tables {
		ht, err := t.html()
		if err != nil {
			return err
		}
		page.Tabs = append(page.Tabs, ht)
	}
	for i, svg := range h.PlotsSVG {
		s, err := inlineSVG(svg)
		if err != nil {
			return fmt.Errorf("report: plot %d of %q: %w", i, h.Title, err)
		}
		page.Plots = append(page.Plots, template.HTML(s)) // checked by inlineSVG
	}
	for _, sec := range h.Sections {
		hs := htmlSection{Title: sec.Title, Text: sec.Text}
		for i, svg := range sec.PlotsSVG {
			s, err := inlineSVG(svg)
			if err != nil {
				return fmt.Errorf("report: plot %d of section %q of %q: %w", i, sec.Title, h.Title, err)
			}
			hs.Plots = append(hs.Plots, template.HTML(s)) // checked by inlineSVG
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

// html prepares a table for the page.
func (t Table) html() (htmlTable, error) {
	if err := t.validate(); err != nil {
		return htmlTable{}, err
	}
	ht := htmlTable{Title: t.Title, Notes: t.Notes}
	for j, c := range t.Columns {
		ht.Head = append(ht.Head, htmlCell{Text: c, Num: t.rightAligned(j)})
	}
	for i, r := range t.Rows {
		row := htmlRow{Highlight: t.highlighted(i)}
		for j := range t.Columns {
			row.Cells = append(row.Cells, htmlCell{Text: cell(r, j), Num: t.rightAligned(j)})
		}
		if row.Highlight {
			row.Mark = t.marker()
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
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",sans-serif;color:#1b1b1b;background:#fff;margin:0 auto;max-width:1000px;padding:1.5em}
h1{font-size:1.5em;margin:.2em 0 .6em}
h2{font-size:1.15em;margin:1.6em 0 .5em}
.stamp{background:#b00020;color:#fff;font-weight:700;letter-spacing:.05em;padding:.6em 1em;margin-bottom:1em;border-radius:4px}
table{border-collapse:collapse;margin:.3em 0}
table.identity th{text-align:left;font-weight:600;padding:.15em 1.2em .15em 0;color:#555}
table.identity td{font-family:ui-monospace,"Liberation Mono",monospace;word-break:break-all}
.scroll{overflow-x:auto}
table.data{font-variant-numeric:tabular-nums;font-size:.92em}
table.data th,table.data td{padding:.3em .55em;border-bottom:1px solid #ddd;white-space:nowrap}
table.data th{text-align:left;border-bottom:2px solid #999}
table.data .num{text-align:right}
table.data tr.highlight td{background:#fff4cc;font-weight:600}
table.data td.mark{color:#8a6d00}
ul.notes{color:#444;padding-left:1.2em}
p.lead{color:#444;max-width:864px}
figure.plot{margin:1.5em 0}
figure.plot svg{width:100%;height:auto;max-width:864px}
footer{margin-top:2em;color:#888;font-size:.85em}
</style>
</head>
<body>
{{- if .Stamp}}
<div class="stamp" role="alert">{{.Stamp}}</div>
{{- end}}
<h1>{{.Title}}</h1>
{{- if .Identity}}
<table class="identity">
{{- range .Identity}}
<tr><th scope="row">{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- range .Tabs}}
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
<tr{{if .Highlight}} class="highlight"{{end}}>{{range .Cells}}<td{{if .Num}} class="num"{{end}}>{{.Text}}</td>{{end}}{{if $mark}}<td class="mark">{{.Mark}}</td>{{end}}</tr>
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
{{- range .Plots}}
<figure class="plot">
{{.}}
</figure>
{{- end}}
{{- range .Secs}}
<section>
<h2>{{.Title}}</h2>
{{- if .Text}}
<p class="lead">{{.Text}}</p>
{{- end}}
{{- range .Plots}}
<figure class="plot">
{{.}}
</figure>
{{- end}}
</section>
{{- end}}
{{- if .Notes}}
<h2>Notes</h2>
<ul class="notes">
{{- range .Notes}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
<footer>Generated by loadcurve.</footer>
</body>
</html>
`))
