package report

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/loadcurve/loadcurve/curve/compare"
	"github.com/loadcurve/loadcurve/curve/cost"
	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/timeseries"
)

// PrintPlan writes a plan document to w in format: FormatJSON as plan.json holds it, else the
// plans (PlanText) and the rehearsal (RehearsalText).
func PrintPlan(w io.Writer, format string, doc plan.Document) error {
	if format == FormatJSON {
		b, err := doc.Encode()
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	PlanText(w, doc.Plans, doc.Comparison)
	RehearsalText(w, doc.Rehearsals)
	return nil
}

// WritePlan writes a plan's files into dir: plan.json (the document) and report.html
// (PlanPage).
func WritePlan(dir string, doc plan.Document) error {
	if err := doc.Write(filepath.Join(dir, result.PlanName)); err != nil {
		return err
	}
	page, err := PlanPage(doc.Plans, doc.Comparison, doc.Rehearsals, doc.Conclusions)
	if err != nil {
		return err
	}
	return WriteHTML(dir, page)
}

// PrintComparison writes a comparison of a and b to w in format: FormatJSON as indented JSON,
// else as CompareText.
func PrintComparison(w io.Writer, format string, res compare.Result, a, b *result.Result) error {
	if format == FormatJSON {
		return printJSON(w, res)
	}
	return CompareText(w, res, a, b)
}

// WriteComparison writes a comparison's files into dir: compare.json (compare.Result.Write),
// then compare.csv, the overlay plots (in plots) and report.html (WriteCompareFiles).
func WriteComparison(dir string, res compare.Result, a, b *result.Result, plots PlotFormats) error {
	if err := res.Write(filepath.Join(dir, result.CompareName)); err != nil {
		return err
	}
	return WriteCompareFiles(dir, res, a, b, plots)
}

// PrintLedger writes a cost ledger to w in format: FormatJSON as indented JSON, else as its
// text (cost.Ledger.Text).
func PrintLedger(w io.Writer, format string, l cost.Ledger) error {
	if format == FormatJSON {
		return printJSON(w, l)
	}
	_, err := io.WriteString(w, l.Text())
	return err
}

// WriteLoaded writes the files of a result rebuilt from its records (result.Load) into dir
// (WriteResultSeries), with the tiers' time series when the records were read whole (in bounded
// memory a series would hold a tier's records: none are written then), its plots in plots.
func WriteLoaded(dir string, l *result.Loaded, plots PlotFormats) error {
	ts := map[int]timeseries.Series(nil)
	if l.File != nil {
		ts = TimeSeriesOf(l.File)
	}
	return WriteResultSeries(dir, l.Result, ts, plots)
}

// printJSON writes v as indented JSON and a newline.
func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}
