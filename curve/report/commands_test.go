package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/compare"
	"github.com/loadcurve/loadcurve/curve/cost"
	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/curve/result"
)

// TestPrintAndWritePlan: a plan prints as plan.json holds it, or as its text; its files are
// plan.json and report.html.
func TestPrintAndWritePlan(t *testing.T) {
	ps, cmp := plans(t, "USD")
	doc := plan.Document{Plans: ps, Comparison: cmp}
	var js, text, want bytes.Buffer
	if err := report.PrintPlan(&js, report.FormatJSON, doc); err != nil {
		t.Fatal(err)
	}
	if b, _ := doc.Encode(); js.String() != string(b) {
		t.Errorf("json: not plan.json's bytes:\n%s", js.String())
	}
	if err := report.PrintPlan(&text, report.FormatTable, doc); err != nil {
		t.Fatal(err)
	}
	report.PlanText(&want, ps, cmp)
	if text.String() != want.String() {
		t.Errorf("table: not PlanText's:\n%s", text.String())
	}
	dir := t.TempDir()
	if err := report.WritePlan(dir, doc); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, result.PlanName))
	if err != nil || string(b) != js.String() {
		t.Errorf("plan.json: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Error(err)
	}
}

// TestPrintAndWriteComparison: a comparison prints as JSON that reads back, or as
// CompareText; its files start with compare.json.
func TestPrintAndWriteComparison(t *testing.T) {
	res := comparison(t)
	var js, text, want bytes.Buffer
	if err := report.PrintComparison(&js, report.FormatJSON, res, fastPage.res, slowPage.res); err != nil {
		t.Fatal(err)
	}
	var back compare.Result
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.A != res.A || len(back.Tiers) != len(res.Tiers) {
		t.Errorf("json does not read back (%v): %s", err, js.String())
	}
	if err := report.PrintComparison(&text, report.FormatTable, res, fastPage.res, slowPage.res); err != nil {
		t.Fatal(err)
	}
	if err := report.CompareText(&want, res, fastPage.res, slowPage.res); err != nil || text.String() != want.String() {
		t.Errorf("table: not CompareText's (%v)", err)
	}
	dir := t.TempDir()
	if err := report.WriteComparison(dir, res, fastPage.res, slowPage.res, svgOnly); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{result.CompareName, "compare.csv", "report.html"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// TestPrintLedger: the ledger prints as its JSON or as its text.
func TestPrintLedger(t *testing.T) {
	a := cost.Option{Name: "A", CostPerHour: 100, RawThroughput: 10000, CompliantShare: 0.95}
	b := cost.Option{Name: "B", CostPerHour: 80, RawThroughput: 12000, CompliantShare: 0.6}
	l, err := cost.NewLedger(a, b, cost.Params{})
	if err != nil {
		t.Fatal(err)
	}
	var js, text bytes.Buffer
	if err := report.PrintLedger(&js, report.FormatJSON, l); err != nil {
		t.Fatal(err)
	}
	var back cost.Ledger
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || !strings.HasSuffix(js.String(), "}\n") {
		t.Errorf("json does not read back (%v): %s", err, js.String())
	}
	if err := report.PrintLedger(&text, report.FormatTable, l); err != nil || text.String() != l.Text() {
		t.Errorf("table: not the ledger's text (%v)", err)
	}
}

// TestWriteLoaded: a result read in bounded memory (no records held) is written without time
// series; its answer file is written as WriteResult writes it.
func TestWriteLoaded(t *testing.T) {
	pageResults(t)
	dir, want := t.TempDir(), t.TempDir()
	if err := report.WriteLoaded(dir, &result.Loaded{Result: runPageR.res}, svgOnly); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteResult(want, runPageR.res); err != nil {
		t.Fatal(err)
	}
	name := runPageR.res.Shape().AnswerName()
	got, err1 := os.ReadFile(filepath.Join(dir, name))
	exp, err2 := os.ReadFile(filepath.Join(want, name))
	if err1 != nil || err2 != nil || !bytes.Equal(got, exp) {
		t.Errorf("%s differs from WriteResult's (%v, %v)", name, err1, err2)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "timeseries_tier*.csv")); len(m) > 0 {
		t.Errorf("time series written without the records: %v", m)
	}
}
