package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/report"
)

// TestPlanSaysABoundCapacityIsABound: a utilisation of a capacity the sweep only bounded from
// below is shown as at most that share, in the table, the text and the page; the text states
// the forecast's bucket and its warning.
func TestPlanSaysABoundCapacityIsABound(t *testing.T) {
	var offsets []time.Duration
	for i := range 900 { // 60 s at 10 req/s, then a 20 s spike at 30 req/s inside a minute
		offsets = append(offsets, time.Duration(i)*100*time.Millisecond)
	}
	for i := range 600 {
		offsets = append(offsets, 90*time.Second+time.Duration(i)*time.Second/30)
	}
	f, err := plan.FromArrivals(offsets, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	d := plan.Deployment{Name: "A", OperatingRate: 8, Capacity: 10, CapacityIsLowerBound: true, CompliantTokensPerRequest: 100, RawTokensPerRequest: 100, CostPerHour: 1}
	r, err := plan.Plan(d, f, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if row := report.PlanTable([]plan.Result{r}).Rows[0]; !strings.HasPrefix(row[6], "≤ ") || row[2] != "given" {
		t.Errorf("of capacity: %q (operating point %q)", row[6], row[2])
	}
	var b bytes.Buffer
	report.PlanText(&b, []plan.Result{r}, nil)
	if s := b.String(); !strings.Contains(s, "at most") || !strings.Contains(s, "Forecast: 1500 arrivals of a trace over") || !strings.Contains(s, "in buckets of 1m") {
		t.Errorf("text:\n%s", s)
	}
	page, err := report.PlanPage([]plan.Result{r}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Join(page.Headline.Lines, "\n"); len(r.Warnings) == 0 || !strings.Contains(lines, "WARNING: the forecast's peak depends on its bucket") {
		t.Errorf("warnings %q; headline lines:\n%s", r.Warnings, lines)
	}
	if facts := page.Headline.Facts; len(facts) == 0 || !strings.Contains(facts[0].Detail, "at most") {
		t.Errorf("headline facts %+v", facts)
	}
}
