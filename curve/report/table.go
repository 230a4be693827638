package report

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// HighlightMarker is appended by [Table.Text] to the highlighted row when the
// table does not name its own (see [Table.HighlightLabel]).
const HighlightMarker = "◀ operating point"

// columnGap separates the columns of [Table.Text].
const columnGap = "  "

// Table is a titled grid of preformatted cells (use [FormatFloat] for numbers
// so that every output agrees on them).
//
// Highlight is the index of a row to mark (the operating point of a sweep,
// say), or -1 for none. Note that the zero value 0 marks the first row:
// set Highlight to -1 in a table without one.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]string
	// Align[i] right-aligns column i (numbers); missing entries mean left.
	Align []bool
	// Notes are printed under the table, one a line.
	Notes []string
	// Highlight is the row index to mark, -1 for none.
	Highlight int
	// HighlightLabel replaces [HighlightMarker] as the mark of the
	// highlighted row when non-empty.
	HighlightLabel string
}

// validate checks that every row fits the columns.
func (t Table) validate() error {
	if len(t.Columns) == 0 {
		return fmt.Errorf("report: table %q has no columns", t.Title)
	}
	for i, r := range t.Rows {
		if len(r) > len(t.Columns) {
			return fmt.Errorf("report: table %q: row %d has %d cells for %d columns", t.Title, i, len(r), len(t.Columns))
		}
	}
	return nil
}

// highlighted reports whether row i is the highlighted one.
func (t Table) highlighted(i int) bool { return t.Highlight >= 0 && i == t.Highlight }

// rightAligned reports whether column j is right-aligned.
func (t Table) rightAligned(j int) bool { return j < len(t.Align) && t.Align[j] }

// marker is the text that marks the highlighted row.
func (t Table) marker() string {
	if t.HighlightLabel != "" {
		return t.HighlightLabel
	}
	return HighlightMarker
}

// cell returns cell j of row r, or "" past the end of a short row.
func cell(r []string, j int) string {
	if j < len(r) {
		return r[j]
	}
	return ""
}

// oneLine makes s safe for one terminal line: line breaks and tabs become
// spaces so that they cannot break the alignment.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\n', '\r', '\t', '\v', '\f':
			return ' '
		}
		return r
	}, s)
}

// Text writes the table as aligned plain-text columns: the title, the
// header, a rule of dashes, one line per row, then the notes. Right-aligned
// columns are padded on the left. Widths count runes, so "—" and "µs" align;
// wide (East Asian) characters are not accounted for. Trailing spaces are
// trimmed from every line. The highlighted row ends with the marker.
func (t Table) Text(w io.Writer) error {
	if err := t.validate(); err != nil {
		return err
	}
	widths := make([]int, len(t.Columns))
	for j, c := range t.Columns {
		widths[j] = utf8.RuneCountInString(oneLine(c))
	}
	for _, r := range t.Rows {
		for j := range t.Columns {
			widths[j] = max(widths[j], utf8.RuneCountInString(oneLine(cell(r, j))))
		}
	}

	bw := bufio.NewWriter(w)
	line := func(cells func(j int) string, right func(j int) bool, suffix string) {
		var b strings.Builder
		for j := range t.Columns {
			if j > 0 {
				b.WriteString(columnGap)
			}
			s := oneLine(cells(j))
			pad := strings.Repeat(" ", widths[j]-utf8.RuneCountInString(s))
			if right(j) {
				b.WriteString(pad + s)
			} else {
				b.WriteString(s + pad)
			}
		}
		if suffix != "" {
			b.WriteString(columnGap + suffix)
		}
		bw.WriteString(strings.TrimRight(b.String(), " ") + "\n")
	}

	if t.Title != "" {
		bw.WriteString(oneLine(t.Title) + "\n")
	}
	line(func(j int) string { return t.Columns[j] }, t.rightAligned, "")
	line(func(j int) string { return strings.Repeat("-", widths[j]) }, t.rightAligned, "")
	for i, r := range t.Rows {
		suffix := ""
		if t.highlighted(i) {
			suffix = oneLine(t.marker())
		}
		line(func(j int) string { return cell(r, j) }, t.rightAligned, suffix)
	}
	if len(t.Notes) > 0 {
		bw.WriteString("\n")
		for _, n := range t.Notes {
			bw.WriteString(oneLine(n) + "\n")
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write table %q: %w", t.Title, err)
	}
	return nil
}

// CSV writes the table as RFC 4180 CSV: a header line with the column names,
// then one line per row, short rows padded with empty cells. Title, notes and
// the highlight are presentation and are left out, so the file stays one
// plain grid for spreadsheets and scripts.
func (t Table) CSV(w io.Writer) error {
	if err := t.validate(); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
		return fmt.Errorf("report: write CSV header of %q: %w", t.Title, err)
	}
	rec := make([]string, len(t.Columns))
	for i, r := range t.Rows {
		for j := range rec {
			rec[j] = cell(r, j)
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("report: write CSV row %d of %q: %w", i, t.Title, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("report: write CSV %q: %w", t.Title, err)
	}
	return nil
}
