package report_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loadcurve/loadcurve/curve/report"
)

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

// sweepTable is a sweep summary as the CLI would build it.
func sweepTable() report.Table {
	f := report.FormatFloat
	return report.Table{
		Title:   "sweep: sim latency-tuned, objectives ttft:500 itl:50",
		Columns: []string{"offered req/s", "realised req/s", "raw tok/s", "compliant tok/s", "share", "p99 TTFT ms", "note"},
		Align:   []bool{true, true, true, true, true, true, false},
		Rows: [][]string{
			{f(1, 1), f(0.99, 2), f(195.9, 1), f(195.9, 1), "100.0 %", f(183.4, 1), ""},
			{f(8, 1), f(7.93, 2), f(1167.2, 1), f(1131.0, 1), "96.9 %", f(204.1, 1), ""},
			{f(16, 1), f(15.8, 2), f(1770.6, 1), f(238.3, 1), "13.5 %", f(3107.9, 1), "client_bound"},
			{f(math.Inf(1), 1), f(math.NaN(), 2), f(1802, 1), f(0, 1), "0.0 %", f(math.NaN(), 1)}, // short row
		},
		Notes:     []string{"share: compliant requests / requests issued (95 % Wilson interval in curve.csv)", "tier 3 was client-bound: schedule lag p99 12.3 ms > 5 ms"},
		Highlight: 1,
	}
}

func TestTableGolden(t *testing.T) {
	plain := report.Table{Columns: []string{"a", "b"}, Rows: [][]string{{"x", "y"}}, Highlight: -1}
	custom := sweepTable()
	custom.HighlightLabel = "◀ best"
	custom.Title = "multi\nline\ttitle"
	custom.Rows = append(custom.Rows, []string{"1", "2", "3", "4", "5", "6", "line\nbreak, \"quoted\""})
	tests := []struct {
		name  string
		table report.Table
	}{
		{"sweep", sweepTable()},
		{"plain", plain},
		{"custom", custom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var txt, cs bytes.Buffer
			if err := tt.table.Text(&txt); err != nil {
				t.Fatal(err)
			}
			if err := tt.table.CSV(&cs); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".txt", txt.Bytes())
			golden(t, tt.name+".csv", cs.Bytes())
		})
	}
}

// The CSV reads back as the same grid, short rows padded.
func TestTableCSVRoundTrip(t *testing.T) {
	tab := sweepTable()
	tab.Rows = append(tab.Rows, []string{"a,b", "\"q\"", "multi\nline"})
	var b bytes.Buffer
	if err := tab.CSV(&b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(tab.Rows)+1 || !slices.Equal(recs[0], tab.Columns) {
		t.Fatalf("read %d records, header %q", len(recs), recs[0])
	}
	for i, r := range tab.Rows {
		for j, c := range recs[i+1] {
			want := ""
			if j < len(r) {
				want = r[j]
			}
			if c != want {
				t.Errorf("row %d col %d = %q, want %q", i, j, c, want)
			}
		}
	}
}

type failWriter struct{}

var errWrite = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestTableErrors(t *testing.T) {
	long := report.Table{Title: "t", Columns: []string{"a"}, Rows: [][]string{{"1", "2"}}}
	tests := []struct {
		name string
		err  error
		is   error
	}{
		{"text, row longer than columns", long.Text(&bytes.Buffer{}), nil},
		{"csv, row longer than columns", long.CSV(&bytes.Buffer{}), nil},
		{"text, no columns", report.Table{}.Text(&bytes.Buffer{}), nil},
		{"text, failing writer", sweepTable().Text(failWriter{}), errWrite},
		{"csv, failing writer", sweepTable().CSV(failWriter{}), errWrite},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: no error", tt.name)
		} else if tt.is != nil && !errors.Is(tt.err, tt.is) {
			t.Errorf("%s: error %v does not wrap %v", tt.name, tt.err, tt.is)
		}
	}
}
