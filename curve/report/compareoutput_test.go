package report_test

import (
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// TestCompareOutputParams: what is not given is a table, no files, and every plot format;
// what is given is read; plot formats that do not parse and a format PrintComparison does not
// write are refused, each named as its input.
func TestCompareOutputParams(t *testing.T) {
	flag := func(name string) string { return "--" + strings.ReplaceAll(name, " ", "-") }
	tests := []struct {
		name  string
		given map[string]string
		want  report.CompareOutput
		errs  []string // rendered, applying's then Validate's
	}{
		{"defaults", nil, report.CompareOutput{Plots: report.PlotFormats{SVG: true, PNG: true}, Format: report.FormatTable}, nil},
		{"given", map[string]string{report.FieldOut: "d", report.FieldReplace: "true", report.FieldPlotFormats: "png", report.FieldFormat: report.FormatJSON},
			report.CompareOutput{Out: "d", Replace: true, Plots: report.PlotFormats{PNG: true}, Format: report.FormatJSON}, nil},
		{"no plots", map[string]string{report.FieldPlotFormats: report.PlotFormatNone},
			report.CompareOutput{Format: report.FormatTable}, nil},
		{"bad plots and format", map[string]string{report.FieldPlotFormats: "svg,gif", report.FieldFormat: report.FormatCSV},
			report.CompareOutput{Plots: report.PlotFormats{SVG: true, PNG: true}, Format: report.FormatCSV},
			[]string{`--plot-file-formats: "gif" is not a plot format: want svg, png, both comma-separated (svg,png), or none`,
				`--printed-format must be table or json, got "csv"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := report.DefaultCompareOutput()
			errs := param.Apply(o.Params(), func(f string) ([]string, bool) {
				if v, ok := tt.given[f]; ok {
					return []string{v}, true
				}
				return nil, false
			})
			if o != tt.want {
				t.Errorf("output %+v, want %+v", o, tt.want)
			}
			var got []string
			for _, err := range append(errs, o.Validate()...) {
				fe := field.Of(err)
				if fe == nil {
					t.Fatalf("%v is not a field error", err)
				}
				got = append(got, fe.Render(flag))
			}
			if strings.Join(got, "\n") != strings.Join(tt.errs, "\n") {
				t.Errorf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.errs, "\n"))
			}
		})
	}
}

// TestPlotFormatsParam: the declared default is every format, written as ParsePlotFormats
// reads it; its usage names the output directory's input.
func TestPlotFormatsParam(t *testing.T) {
	f := report.DefaultPlotFormats
	p := report.PlotFormatsParam(&f)
	if p.Field != report.FieldPlotFormats || p.Current() != "svg,png" {
		t.Errorf("param %s, default %v; want %s, svg,png", p.Field, p.Current(), report.FieldPlotFormats)
	}
	if u := param.Render(p.Usage, func(n string) string { return "<" + n + ">" }); !strings.HasPrefix(u, "files written of every plot with <"+report.FieldOut+">: svg, png, svg,png or none") {
		t.Errorf("usage %q", u)
	}
}

// TestLedgerOutput: a ledger is printed as a table unless given JSON; any other format is
// refused, named as the format.
func TestLedgerOutput(t *testing.T) {
	for _, tc := range []struct {
		given string
		want  string
		bad   bool
	}{
		{"", report.FormatTable, false},
		{report.FormatJSON, report.FormatJSON, false},
		{report.FormatCSV, report.FormatCSV, true},
	} {
		o := report.DefaultLedgerOutput()
		if errs := param.Apply(o.Params(), func(f string) ([]string, bool) {
			if f == report.FieldFormat && tc.given != "" {
				return []string{tc.given}, true
			}
			return nil, false
		}); len(errs) > 0 {
			t.Fatal(errs)
		}
		errs := o.Validate()
		if o.Format != tc.want || (len(errs) > 0) != tc.bad {
			t.Errorf("given %q: format %q, errors %v; want %q, refused %v", tc.given, o.Format, errs, tc.want, tc.bad)
		}
		if tc.bad && field.Of(errs[0]).Render(func(n string) string { return "--format" }) != `--format must be table or json, got "csv"` {
			t.Errorf("given %q: %v", tc.given, errs[0])
		}
	}
}
