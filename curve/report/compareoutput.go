package report

import (
	"fmt"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// FieldPlotFormats names the setting of the files written of every plot (PlotFormats).
const FieldPlotFormats = "plot file formats"

// Set reads the formats as ParsePlotFormats does (param.Value); a list it does not read is a
// field error on FieldPlotFormats.
func (f *PlotFormats) Set(s string) error {
	v, err := ParsePlotFormats(s)
	if err != nil {
		return field.Errorf(FieldPlotFormats, "%w", err)
	}
	*f = v
	return nil
}

// PlotFormatsParam declares the plot files written of a result's or a comparison's plots, bound
// to f.
func PlotFormatsParam(f *PlotFormats) param.Param {
	return param.Var(FieldPlotFormats, f, fmt.Sprintf("files written of every plot with %v: svg, png, svg,png or %s (report.html draws its own; the PNGs are most of the time spent writing a result)",
		field.Ref(FieldOut), PlotFormatNone))
}

// CompareOutput is the user's choices about how a comparison is shown and where its files go:
// the directory its files are written to (WriteComparison; none when empty), where a
// comparison already there is replaced only with Replace, the plot files written there, and
// the format it is printed in (PrintComparison: a table or JSON).
type CompareOutput struct {
	Out     string
	Replace bool
	Plots   PlotFormats
	Format  string
}

// DefaultCompareOutput is the output nobody chose: a table, no files (every plot format when
// there are).
func DefaultCompareOutput() CompareOutput {
	return CompareOutput{Plots: DefaultPlotFormats, Format: FormatTable}
}

// Params declares the settings, bound to o.
func (o *CompareOutput) Params() []param.Param {
	return []param.Param{
		param.String(FieldOut, &o.Out, "directory for compare.json, compare.csv, overlay plots and report.html"),
		param.Bool(FieldReplace, &o.Replace, fmt.Sprintf("let %v replace a comparison already there", field.Ref(FieldOut))),
		PlotFormatsParam(&o.Plots),
		param.String(FieldFormat, &o.Format, "table or json"),
	}
}

// Validate returns what is wrong with the settings: a format PrintComparison does not write.
func (o CompareOutput) Validate() []error { return tableOrJSON(o.Format) }

// LedgerOutput is the user's choice of how a cost ledger is printed (PrintLedger: a table or
// JSON).
type LedgerOutput struct{ Format string }

// DefaultLedgerOutput is the output nobody chose: a table.
func DefaultLedgerOutput() LedgerOutput { return LedgerOutput{Format: FormatTable} }

// Params declares the setting, bound to o.
func (o *LedgerOutput) Params() []param.Param {
	return []param.Param{param.String(FieldFormat, &o.Format, "table or json")}
}

// Validate returns what is wrong with the setting: a format PrintLedger does not write.
func (o LedgerOutput) Validate() []error { return tableOrJSON(o.Format) }

// tableOrJSON refuses a format other than a table or JSON.
func tableOrJSON(format string) []error {
	if format != FormatTable && format != FormatJSON {
		return []error{field.Errorf(FieldFormat, "must be %s or %s, got %q", FormatTable, FormatJSON, format)}
	}
	return nil
}
