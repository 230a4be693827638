package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/loadcurve/loadcurve/compare"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/sweep"
)

// CompareTables are the tables of a comparison: the two sides at equal rate (steady-state
// figures), the paired differences, and the cost at equal load when priced.
func CompareTables(res compare.Result) []Table {
	f := FormatFloat
	rate := "rate req/s"
	for _, t := range res.Tiers {
		for _, s := range []*measure.Summary{t.A, t.B} {
			switch {
			case s != nil && s.Users > 0:
				rate = "users" // closed-loop tiers: their concurrency levels
			case s != nil && s.Sessions != nil:
				rate = "rate sessions/s" // the schedule's arrivals started sessions
			}
		}
	}
	tiers := Table{Title: "A vs B at equal rate (steady-state figures; compl. req. share = compliant request share)", Highlight: -1,
		Columns: []string{rate, "A raw tok/s", "B raw tok/s", "A compl. tok/s", "B compl. tok/s", "B/A compl.",
			"A compl. req. share", "B compl. req. share", "A p99 ttft", "B p99 ttft", "A failed", "B failed"},
		Align: []bool{true, true, true, true, true, true, true, true, true, true, true, true}}
	get := func(s *measure.Summary, fn func(*measure.Summary) string) string {
		if s == nil {
			return NaNText
		}
		return fn(s)
	}
	raw := func(s *measure.Summary) float64 { r, _, _ := s.Throughputs(); return r }
	compl := func(s *measure.Summary) float64 { _, c, _ := s.Throughputs(); return c }
	share := func(s *measure.Summary) float64 { return s.Share() }
	for _, t := range res.Tiers {
		ratio := NaNText
		if t.A != nil && t.B != nil && compl(t.A) > 0 {
			ratio = f(compl(t.B)/compl(t.A), 3)
		}
		tiers.Rows = append(tiers.Rows, []string{rateCell(float64(t.Rate)),
			get(t.A, func(s *measure.Summary) string { return f(raw(s), 0) }),
			get(t.B, func(s *measure.Summary) string { return f(raw(s), 0) }),
			get(t.A, func(s *measure.Summary) string { return f(compl(s), 0) }),
			get(t.B, func(s *measure.Summary) string { return f(compl(s), 0) }),
			ratio,
			get(t.A, func(s *measure.Summary) string { return f(share(s), 4) }),
			get(t.B, func(s *measure.Summary) string { return f(share(s), 4) }),
			get(t.A, func(s *measure.Summary) string { return f(s.TTFT.Percentiles["p99"], 1) }),
			get(t.B, func(s *measure.Summary) string { return f(s.TTFT.Percentiles["p99"], 1) }),
			get(t.A, func(s *measure.Summary) string { return strconv.Itoa(s.Failed) }),
			get(t.B, func(s *measure.Summary) string { return strconv.Itoa(s.Failed) }),
		})
	}
	paired := Table{Title: "Paired differences B−A over identical requests (median, with its interval)", Highlight: -1,
		Columns: []string{rate, "metric", "pairs", "median B−A ms", "interval ms", "B better / worse"},
		Align:   []bool{true, false, true, true, false, false}}
	for _, p := range res.Paired {
		if p.Result == nil {
			paired.Rows = append(paired.Rows, []string{rateCell(float64(p.Rate)), p.Metric, NaNText, NaNText, p.Error, ""})
			continue
		}
		r := p.Result
		paired.Rows = append(paired.Rows, []string{rateCell(float64(p.Rate)), p.Metric, strconv.Itoa(r.N), f(r.MedianDiff, 2),
			"[" + f(r.CILow, 2) + ", " + f(r.CIHigh, 2) + "]", fmt.Sprintf("%d / %d", r.Wins, r.Losses)})
	}
	out := []Table{tiers, paired}
	if len(res.EqualLoad) > 0 {
		title := "Cost per million effective tokens at equal load"
		if res.Ledger != nil && res.Ledger.Currency != "" {
			title += " (" + res.Ledger.Currency + ")"
		}
		t := Table{Title: title, Highlight: -1, Columns: []string{rate, "A", "B", "B vs A"}, Align: []bool{true, true, true, true}}
		opt := func(v *float64, pct bool) string {
			switch {
			case v == nil:
				return "no effective output"
			case pct:
				return fmt.Sprintf("%+.1f %%", 100**v)
			}
			return FormatFloat(*v, 2)
		}
		for _, r := range res.EqualLoad {
			t.Rows = append(t.Rows, []string{rateCell(float64(r.Rate)), opt(r.A, false), opt(r.B, false), opt(r.BvsA, true)})
		}
		out = append(out, t)
	}
	return out
}

// CompareText prints a comparison: the stamp when not comparable, the two sides, each side's
// decision, the tables and the cost ledger.
func CompareText(w io.Writer, res compare.Result, a, b *sweep.Result) error {
	if res.Stamp != "" {
		fmt.Fprintf(w, "*** %s ***\n\n", res.Stamp)
	}
	for i, r := range []*sweep.Result{a, b} {
		name := r.Header.Model
		if r.Header.Sim != "" {
			name = "sim " + r.Header.Sim
		}
		fmt.Fprintf(w, "%s: %s (%s, %s)\n", []string{"A", "B"}[i], []string{res.A, res.B}[i], r.Header.Target, name)
	}
	fmt.Fprintln(w)
	for i, d := range res.Decisions {
		if r := []*sweep.Result{a, b}[i]; r.Header.Command == records.CommandRun {
			fmt.Fprintf(w, "%s: a run of one tier: %s\n", d.Side, runVerdict(r))
			continue
		}
		line := fmt.Sprintf("%s: capacity %s", d.Side, d.CapacityText)
		if op := d.OperatingPoint; op != nil {
			status := "not verified"
			if op.Verified() {
				status = "verified"
			}
			line += fmt.Sprintf("; operating point %s %s (%s)", fmtRate(op.Rate), RateUnit([]*sweep.Result{a, b}[i]), status)
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	for _, t := range CompareTables(res) {
		if err := t.Text(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	switch {
	case res.Ledger != nil:
		fmt.Fprint(w, res.Ledger.Text())
	case res.LedgerError != "":
		fmt.Fprintf(w, "No cost ledger at the operating points: %s.\n", res.LedgerError)
	}
	if res.Stamp != "" {
		fmt.Fprintf(w, "\n*** %s ***\n", res.Stamp)
	}
	return nil
}

// WriteCompareFiles writes compare.csv (the equal-rate table), the overlay plots of both curves
// and report.html into dir.
func WriteCompareFiles(dir string, res compare.Result, a, b *sweep.Result) error {
	tables := CompareTables(res)
	var buf bytes.Buffer
	if err := tables[0].CSV(&buf); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "compare.csv"), buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write compare.csv: %w", err)
	}
	c := CurveOf(a)
	c.Title = "A vs B"
	c.Series = []CurveSeries{SeriesOf(a, "A: "+sideName(a)), SeriesOf(b, "B: "+sideName(b))}
	c.Plateau, c.Knee, c.Capacity, c.OperatingPoint = nil, nil, nil, nil
	var svgs [][]byte
	if len(c.Series[0].Points)+len(c.Series[1].Points) > 0 {
		paths, err := WritePlots(dir, c)
		if err != nil {
			return err
		}
		for _, p := range paths {
			if filepath.Ext(p) == ".svg" {
				b, err := os.ReadFile(p)
				if err != nil {
					return fmt.Errorf("read back %s: %w", p, err)
				}
				svgs = append(svgs, b)
			}
		}
	}
	var notes []string
	var text bytes.Buffer
	if err := CompareText(&text, res, a, b); err == nil && res.Ledger != nil {
		notes = append(notes, res.Ledger.Text())
	}
	for _, m := range res.Mismatches {
		notes = append(notes, m.String())
	}
	h := HTML{Title: "loadcurve compare", Identity: [][2]string{{"A", res.A}, {"B", res.B}}, Tables: tables, PlotsSVG: svgs, Notes: notes, Stamp: res.Stamp}
	return WriteHTML(dir, h)
}

// runVerdict says how a run's tier stands against the target share.
func runVerdict(r *sweep.Result) string {
	for _, v := range r.Analysis.Points {
		return fmt.Sprintf("%s against the %s target (%s compliant in steady state)", v.Verdict, pctText(r.Analysis.Params.TargetShare), pctText(v.Share))
	}
	return "no steady state to judge (a burst at rate inf)"
}

func sideName(r *sweep.Result) string {
	if r.Header.Sim != "" {
		return "sim:" + r.Header.Sim
	}
	return r.Header.Model
}
