package report

import (
	"fmt"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// Names of the settings of how a result is shown and where its files go.
const (
	FieldOut     = "result files directory"
	FieldReplace = "replacing a result's files"
	FieldFormat  = "printed format"
	FieldVerbose = "reasoning shown"
	FieldQuiet   = "progress display off"
)

// Output is the user's choices about how a result is shown and where its files go: the
// format it is printed in (Print), with the reasoning behind its judgements (Verbose) or not,
// without a progress display (Quiet), the directory its files are written to (Out: none
// when empty), where a result already there is replaced only with Replace, and the files
// written of every plot (Plots).
type Output struct {
	Out     string
	Replace bool
	Format  string
	Verbose bool
	Quiet   bool
	Plots   PlotFormats
}

// DefaultOutput is the output nobody chose: a table, no files; when files are written, every
// plot as SVG and PNG.
func DefaultOutput() Output { return Output{Format: FormatTable, Plots: DefaultPlotFormats} }

// Params declares the settings, bound to o.
func (o *Output) Params() []param.Param {
	return []param.Param{
		param.String(FieldOut, &o.Out, "directory for records.jsonl, summaries, plots and report.html"),
		param.Bool(FieldReplace, &o.Replace, fmt.Sprintf("let %v replace a result already in that directory (all of it)", field.Ref(FieldOut))),
		param.String(FieldFormat, &o.Format, "stdout format: table, json or csv"),
		param.Bool(FieldVerbose, &o.Verbose, "also print the reasoning behind every judgement (trend tests, variance factors, windows)"),
		param.Bool(FieldQuiet, &o.Quiet, "no progress display"),
		PlotFormatsParam(&o.Plots),
	}
}

// Validate returns what is wrong with the settings: a format Print does not write
// (ParseFormat).
func (o Output) Validate() []error {
	if _, err := ParseFormat(o.Format); err != nil {
		return []error{field.Errorf(FieldFormat, "%w", err)}
	}
	return nil
}

// PlanOutput is the user's choices about how a plan is shown and where its files go: the
// format it is printed in (PrintPlan: a table or JSON) and the directory its files are written
// to (WritePlan; none when empty), where a plan already there is replaced only with Replace.
type PlanOutput struct {
	Format  string
	Out     string
	Replace bool
}

// DefaultPlanOutput is the output nobody chose: a table, no files.
func DefaultPlanOutput() PlanOutput { return PlanOutput{Format: FormatTable} }

// Params declares the settings, bound to o.
func (o *PlanOutput) Params() []param.Param {
	return []param.Param{
		param.String(FieldFormat, &o.Format, "table or json"),
		param.String(FieldOut, &o.Out, "directory for plan.json, its plots and report.html"),
		param.Bool(FieldReplace, &o.Replace, fmt.Sprintf("let %v replace a plan already there", field.Ref(FieldOut))),
	}
}

// Validate returns what is wrong with the settings: a format PrintPlan does not write.
func (o PlanOutput) Validate() []error {
	if o.Format != FormatTable && o.Format != FormatJSON {
		return []error{field.Sentencef(FieldFormat, "%v %q: want %s or %s", field.Ref(FieldFormat), o.Format, FormatTable, FormatJSON)}
	}
	return nil
}
