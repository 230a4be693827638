package report_test

import (
	"testing"

	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// TestOutputParams: what is not given is a table, no files, and every plot as SVG and PNG when
// files are written; what is given is read; a format Print does not write, or a word that is
// not a plot format, is refused, named as its setting.
func TestOutputParams(t *testing.T) {
	def := report.DefaultPlotFormats
	tests := []struct {
		name  string
		given map[string]string
		want  report.Output
		bad   string // the setting refused
	}{
		{"defaults", nil, report.Output{Format: report.FormatTable, Plots: def}, ""},
		{"given", map[string]string{report.FieldOut: "d", report.FieldReplace: "true", report.FieldFormat: report.FormatCSV, report.FieldVerbose: "true", report.FieldQuiet: "true", report.FieldPlotFormats: "png"},
			report.Output{Out: "d", Replace: true, Format: report.FormatCSV, Verbose: true, Quiet: true, Plots: report.PlotFormats{PNG: true}}, ""},
		{"json", map[string]string{report.FieldFormat: report.FormatJSON}, report.Output{Format: report.FormatJSON, Plots: def}, ""},
		{"no plots", map[string]string{report.FieldPlotFormats: "none"}, report.Output{Format: report.FormatTable}, ""},
		{"unknown format", map[string]string{report.FieldFormat: "yaml"}, report.Output{Format: "yaml", Plots: def}, report.FieldFormat},
		{"unknown plot format", map[string]string{report.FieldPlotFormats: "svg,gif"}, report.Output{Format: report.FormatTable, Plots: def}, report.FieldPlotFormats},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := report.DefaultOutput()
			errs := param.Apply(o.Params(), func(f string) ([]string, bool) {
				if v, ok := tt.given[f]; ok {
					return []string{v}, true
				}
				return nil, false
			})
			if o != tt.want {
				t.Errorf("output %+v, want %+v", o, tt.want)
			}
			errs = append(errs, o.Validate()...)
			if bad := len(errs) > 0; bad != (tt.bad != "") {
				t.Fatalf("errors %v, want some: %v", errs, tt.bad != "")
			}
			if tt.bad != "" && (field.Of(errs[0]) == nil || field.Of(errs[0]).Name != tt.bad) {
				t.Errorf("error %v is not the %s's", errs[0], tt.bad)
			}
		})
	}
}

// TestPlanOutputValidate: a plan is printed as a table or JSON, nothing else (not even CSV,
// which a result may be).
func TestPlanOutputValidate(t *testing.T) {
	for _, tt := range []struct {
		format string
		ok     bool
	}{{report.FormatTable, true}, {report.FormatJSON, true}, {report.FormatCSV, false}, {"", false}} {
		o := report.DefaultPlanOutput()
		if errs := param.Apply(o.Params(), func(f string) ([]string, bool) {
			if f == report.FieldFormat {
				return []string{tt.format}, true
			}
			return nil, false
		}); len(errs) > 0 {
			t.Fatal(errs)
		}
		errs := o.Validate()
		if (len(errs) == 0) != tt.ok {
			t.Errorf("format %q: errors %v, want ok %v", tt.format, errs, tt.ok)
		}
		if !tt.ok && len(errs) > 0 && field.Of(errs[0]).Text(nil) != report.FieldFormat+` "`+tt.format+`": want table or json` {
			t.Errorf("format %q: %v", tt.format, errs[0])
		}
	}
}
