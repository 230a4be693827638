package report_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/loadcurve/loadcurve/curve/report"
)

// node is a parsed element of the page: enough of a DOM for the checks.
type node struct {
	name  string
	attrs []xml.Attr
	text  string // all character data inside, children included
	class string
}

// parsePage parses the page strictly as XML (the template is written to be
// XHTML-compatible) and returns its elements in document order.
func parsePage(t *testing.T, page []byte) []*node {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	var all, open []*node
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("page does not parse: %v\n%s", err, page)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			n := &node{name: e.Name.Local, attrs: e.Attr}
			for _, a := range e.Attr {
				if a.Name.Local == "class" {
					n.class = a.Value
				}
			}
			all = append(all, n)
			open = append(open, n)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			for _, n := range open {
				n.text += string(e)
			}
		}
	}
	if len(open) != 0 {
		t.Fatalf("page ends with %d elements open", len(open))
	}
	return all
}

// find returns the elements named name.
func find(all []*node, name string) []*node {
	var out []*node
	for _, n := range all {
		if n.name == name {
			out = append(out, n)
		}
	}
	return out
}

// checkNoExternalLoads fails when anything in the page could make the
// browser fetch: an element that loads by nature, an attribute that
// references a URL other than a fragment or data:, or CSS with @import or
// url() to outside.
func checkNoExternalLoads(t *testing.T, all []*node) {
	t.Helper()
	loaders := []string{"script", "link", "img", "iframe", "object", "embed", "audio", "video", "source", "image", "use", "foreignObject", "base", "form"}
	refAttrs := []string{"href", "src", "srcset", "action", "formaction", "poster", "data", "background", "cite", "manifest"}
	for _, n := range all {
		if slices.Contains(loaders, n.name) {
			t.Errorf("page has a <%s> element", n.name)
		}
		for _, a := range n.attrs {
			v := strings.TrimSpace(a.Value)
			if slices.Contains(refAttrs, strings.ToLower(a.Name.Local)) && !strings.HasPrefix(v, "#") {
				t.Errorf("<%s %s=%q> refers to a resource", n.name, a.Name.Local, v)
			}
			if strings.Contains(strings.ToLower(v), "url(") {
				t.Errorf("<%s %s=%q> has a url()", n.name, a.Name.Local, v)
			}
		}
		if n.name == "style" {
			if css := strings.ToLower(n.text); strings.Contains(css, "url(") || strings.Contains(css, "@import") || strings.Contains(css, "http") {
				t.Errorf("style sheet can load resources:\n%s", n.text)
			}
		}
	}
}

// namespaces are the SVG namespace declarations: names, not loads.
var namespaces = strings.NewReplacer(`xmlns="http://www.w3.org/2000/svg"`, "", `xmlns:xlink="http://www.w3.org/1999/xlink"`, "")

// fixturePage is a sweep report with two plots and every part filled.
func fixturePage(t *testing.T) report.HTML {
	t.Helper()
	c := fixtureCurve()
	var svgs [][]byte
	for _, build := range []func(report.Curve) (*plot.Plot, error){report.ThroughputPlot, report.SharePlot} {
		p, err := build(c)
		if err != nil {
			t.Fatal(err)
		}
		b, err := report.Render(p, "svg")
		if err != nil {
			t.Fatal(err)
		}
		svgs = append(svgs, b)
	}
	return report.HTML{
		Title: "loadcurve sweep: sim latency-tuned",
		Identity: [][2]string{
			{"target", "in-process simulated deployment"},
			{"model", "sim-7b"},
			{"workload", "synthetic 512/200, fingerprint 3f9a…"},
			{"seed", "42"},
		},
		Tables:   []report.Table{sweepTable()},
		PlotsSVG: svgs,
		Notes:    []string{"schedule lag stayed under 5 ms at every tier"},
	}
}

func TestHTMLPage(t *testing.T) {
	h := fixturePage(t)
	var b bytes.Buffer
	if err := h.Write(&b); err != nil {
		t.Fatal(err)
	}
	keep(t, "report.html", b.Bytes())
	all := parsePage(t, b.Bytes())
	checkNoExternalLoads(t, all)
	if s := namespaces.Replace(b.String()); strings.Contains(s, "http://") || strings.Contains(s, "https://") {
		t.Errorf("page mentions a URL though no input held one")
	}

	if got := find(all, "title"); len(got) != 1 || got[0].text != h.Title {
		t.Errorf("title elements: %+v", got)
	}
	if got := find(all, "svg"); len(got) != 2 {
		t.Errorf("page has %d <svg> elements, want 2", len(got))
	}
	for _, f := range find(all, "figure") {
		if !strings.Contains(f.text, "arrival rate (req/s, realised in the steady-state window)") {
			t.Errorf("figure without the plot's axis label: %q", f.text)
		}
	}
	if len(find(all, "style")) != 1 {
		t.Error("page has no embedded style sheet")
	}

	// The table: header, one row per table row, numbers right-aligned, the
	// highlighted row marked.
	tab := sweepTable()
	var data *node
	for _, n := range find(all, "table") {
		if n.class == "data" {
			data = n
		}
	}
	if data == nil {
		t.Fatal("no data table")
	}
	for _, c := range tab.Columns {
		if !strings.Contains(data.text, c) {
			t.Errorf("table lacks column %q", c)
		}
	}
	var highlighted []*node
	for _, tr := range find(all, "tr") {
		if tr.class == "highlight" {
			highlighted = append(highlighted, tr)
		}
	}
	if len(highlighted) != 1 || !strings.Contains(highlighted[0].text, "1167.2") || !strings.Contains(highlighted[0].text, report.HighlightMarker) {
		t.Errorf("highlighted rows: %+v", highlighted)
	}
	nums := 0
	for _, td := range find(all, "td") {
		if td.class == "num" {
			nums++
		}
	}
	// 4 rows × 6 numeric columns (the short last row is padded).
	if nums != 24 {
		t.Errorf("%d right-aligned cells, want 24", nums)
	}
	// Identity rows, then the data table's header and rows.
	if got, want := len(find(all, "tr")), len(h.Identity)+1+len(tab.Rows); got != want {
		t.Errorf("%d table rows, want %d", got, want)
	}
	text := all[0].text // <html>: all the text of the page
	for _, want := range []string{"in-process simulated deployment", "fingerprint 3f9a…", tab.Notes[1], h.Notes[0]} {
		if !strings.Contains(text, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, d := range find(all, "div") {
		if d.class == "stamp" {
			t.Error("stamp banner shown without a stamp")
		}
	}
}

// Every user string is escaped: markup in it shows as text and adds no
// element; a URL in the identity is text, not a link.
func TestHTMLEscapes(t *testing.T) {
	evil := `<script>alert("x")</script><img src="https://example.com/x.png"/>&amp;`
	h := report.HTML{
		Title:    "t " + evil,
		Identity: [][2]string{{"base url " + evil, "http://127.0.0.1:8000/v1 " + evil}},
		Tables: []report.Table{{
			Title: evil, Columns: []string{evil}, Rows: [][]string{{evil}}, Notes: []string{evil},
			Highlight: 0, HighlightLabel: evil,
		}},
		Notes: []string{evil},
		Stamp: "NOT COMPARABLE " + evil,
	}
	var b bytes.Buffer
	if err := h.Write(&b); err != nil {
		t.Fatal(err)
	}
	all := parsePage(t, b.Bytes())
	checkNoExternalLoads(t, all)
	for _, name := range []string{"script", "img"} {
		if n := find(all, name); len(n) != 0 {
			t.Errorf("user text made %d <%s> elements", len(n), name)
		}
	}
	page := all[0].text // <html>: all the text of the page
	if got := strings.Count(page, evil); got < 10 {
		t.Errorf("the user string appears %d times as text, want ≥ 10 (title ×2, identity ×2, table ×5, notes, stamp)", got)
	}
	var stamp *node
	for _, d := range find(all, "div") {
		if d.class == "stamp" {
			stamp = d
		}
	}
	if stamp == nil || !strings.HasPrefix(stamp.text, "NOT COMPARABLE") {
		t.Errorf("no stamp banner: %+v", stamp)
	}
	if ti := find(all, "title"); len(ti) != 1 || !strings.HasPrefix(ti[0].text, "[NOT COMPARABLE") {
		t.Errorf("page title does not carry the stamp: %+v", ti)
	}
}

// An SVG that could run code or load something is refused, not inlined.
func TestHTMLRefusesUnsafeSVG(t *testing.T) {
	tests := []struct{ name, svg string }{
		{"not XML", `<svg><g></svg>`},
		{"not svg", `<html></html>`},
		{"empty", ``},
		{"script", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`},
		{"event handler", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>`},
		{"external image", `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><image xlink:href="https://example.com/a.png"/></svg>`},
		{"external use", `<svg xmlns="http://www.w3.org/2000/svg"><use href="http://example.com/s.svg#a"/></svg>`},
		{"css import", `<svg xmlns="http://www.w3.org/2000/svg"><style>@import "http://example.com/a.css";</style></svg>`},
		{"css url", `<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill:url( 'https://example.com/p')"/></svg>`},
		{"foreign object", `<svg xmlns="http://www.w3.org/2000/svg"><foreignObject/></svg>`},
		{"two roots", `<svg></svg><svg></svg>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := report.HTML{Title: "x", PlotsSVG: [][]byte{[]byte(tt.svg)}}
			var b bytes.Buffer
			if err := h.Write(&b); err == nil {
				t.Fatalf("inlined an unsafe SVG:\n%s", b.String())
			}
		})
	}
	// Fragment and data: references stay allowed.
	ok := `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><defs><g id="a"/></defs><use xlink:href="#a"/><image href="data:image/png;base64,AAAA"/><rect style="fill:url(#a)"/></svg>`
	var b bytes.Buffer
	if err := (report.HTML{Title: "x", PlotsSVG: [][]byte{[]byte(ok)}}).Write(&b); err != nil {
		t.Fatalf("refused a self-contained SVG: %v", err)
	}
	if strings.Contains(b.String(), "<?xml") {
		t.Error("the XML declaration was inlined into the page")
	}
}

func TestHTMLTableError(t *testing.T) {
	h := report.HTML{Tables: []report.Table{{Columns: []string{"a"}, Rows: [][]string{{"1", "2"}}}}}
	if err := h.Write(io.Discard); err == nil {
		t.Fatal("no error for a row longer than the columns")
	}
	if err := fixturePage(t).Write(failWriter{}); !errors.Is(err, errWrite) {
		t.Fatalf("error %v does not wrap the writer's", err)
	}
}
