package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/compare"
	"github.com/loadcurve/loadcurve/curve/cost"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
)

// CompareTables are the tables of a comparison: the two sides at equal rate (steady-state
// figures), the paired differences, and the cost at equal load when priced.
func CompareTables(res compare.Result) []Table {
	f := FormatFloat
	var both []measure.Summary
	for _, t := range res.Tiers {
		for _, s := range []*measure.Summary{t.A, t.B} {
			if s != nil {
				both = append(both, *s)
			}
		}
	}
	rate := curve.SweepAxis(both).Heading()
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
func CompareText(w io.Writer, res compare.Result, a, b *result.Result) error {
	if res.Stamp != "" {
		fmt.Fprintf(w, "*** %s ***\n\n", res.Stamp)
	}
	for i, r := range []*result.Result{a, b} {
		name := r.Header.Model
		if r.Header.Sim != "" {
			name = "sim " + r.Header.Sim
		}
		fmt.Fprintf(w, "%s: %s (%s, %s)\n", []string{"A", "B"}[i], []string{res.A, res.B}[i], r.Header.Target, name)
	}
	fmt.Fprintln(w)
	for i, d := range res.Decisions {
		if r := []*result.Result{a, b}[i]; r.Shape().OneTier() {
			fmt.Fprintf(w, "%s: a run of one tier: %s\n", d.Side, runVerdict(r))
			continue
		}
		line := fmt.Sprintf("%s: capacity %s", d.Side, d.CapacityText)
		if op := d.OperatingPoint; op != nil {
			status := "not verified"
			if op.Verified() {
				status = "verified"
			}
			line += fmt.Sprintf("; operating point %s %s (%s)", fmtRate(op.Rate), RateUnit([]*result.Result{a, b}[i]), status)
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
// (in plots) and report.html (ComparePage) into dir.
func WriteCompareFiles(dir string, res compare.Result, a, b *result.Result, plots PlotFormats) error {
	tables := CompareTables(res)
	var buf bytes.Buffer
	if err := tables[0].CSV(&buf); err != nil {
		return err
	}
	if err := result.WriteFile(filepath.Join(dir, "compare.csv"), buf.Bytes()); err != nil {
		return err
	}
	c := compareCurve(res, a, b)
	c.Title = "A vs B"
	if len(c.Series[0].Points)+len(c.Series[1].Points) > 0 {
		if _, err := WritePlots(dir, c, plots); err != nil {
			return err
		}
	}
	page, err := ComparePage(res, a, b)
	if err != nil {
		return err
	}
	return WriteHTML(dir, page)
}

// compareCurve overlays both results' curves, with each side's operating point and capacity
// marked in its colour.
func compareCurve(res compare.Result, a, b *result.Result) Curve {
	c := CurveOf(a)
	c.Title, c.Subtitle = "", ""
	c.Series = []CurveSeries{SeriesOf(a, "A: "+sideName(a)), SeriesOf(b, "B: "+sideName(b))}
	c.Plateau, c.Knee, c.Capacity, c.OperatingPoint = nil, nil, nil, nil
	for i, d := range res.Decisions {
		side := []string{"A", "B"}[i]
		if op := d.OperatingPoint; op != nil && finite(op.Rate) {
			label := side + " operating point"
			if !op.Verified() {
				label += " (not verified)"
			}
			c.More = append(c.More, Marker{Label: label, Rate: op.Rate, Series: i})
		}
		if cp := d.Capacity; cp != nil && finite(cp.Rate) {
			c.More = append(c.More, Marker{Label: side + " capacity", Rate: cp.Rate, AtLeast: cp.LowerBoundOnly(), Series: i})
		}
	}
	return c
}

// ComparePage is report.html of a comparison, answer first: each side's operating point (and
// whether a tier verified it) with its capacity and what it delivers there, and what B costs
// against A per effective token when both are priced, beside both load curves; then the
// tables at equal rate, the paired differences and the cost at equal load, the cost ledger,
// latency against the arrival rate, the settings and the notes. A comparison forced past a
// mismatch carries its stamp.
func ComparePage(res compare.Result, a, b *result.Result) (HTML, error) {
	sides := []*result.Result{a, b}
	h := HTML{Title: "loadcurve compare: A vs B", Stamp: res.Stamp,
		Subtitle: fmt.Sprintf("A: %s (%s) · B: %s (%s) · objectives %s", res.A, sideName(a), res.B, sideName(b), orNone(a.Settings.Measure.Objectives.String())),
		Identity: [][2]string{{"A", res.A}, {"B", res.B}}}
	for i, r := range sides {
		side := []string{"A", "B"}[i]
		for _, kv := range IdentityRows(r) {
			h.Identity = append(h.Identity, [2]string{side + " " + kv[0], kv[1]})
		}
	}
	hl := &Headline{}
	for i, d := range res.Decisions {
		hl.Facts = append(hl.Facts, sideFact(d, sides[i], []string{"A", "B"}[i]))
	}
	switch l := res.Ledger; {
	case l != nil:
		hl.Facts = append(hl.Facts, ledgerFact(*l))
	case res.LedgerError != "":
		hl.Facts = append(hl.Facts, Fact{Label: "cost per million effective tokens", Value: "not priced", Detail: res.LedgerError})
	}
	if res.Stamp != "" {
		hl.Lines = append(hl.Lines, res.Stamp+": the two results differ in what they measured (see the notes); the figures are shown, not compared.")
	}
	h.Headline = hl

	c := compareCurve(res, a, b)
	if len(c.Series[0].Points)+len(c.Series[1].Points) > 0 {
		fig, err := RenderLoadCurve(c, "svg")
		if err != nil {
			return h, fmt.Errorf("report: compare load curves: %w", err)
		}
		h.Figure = fig
		sec, err := latencySection(c)
		if err != nil {
			return h, err
		}
		sec.Text = "Both sides' percentiles at each tier, in their steady-state windows; dashed red: the objective."
		if len(sec.PlotsSVG) > 0 {
			h.Sections = append(h.Sections, sec)
		}
	}
	h.Tables = CompareTables(res)
	if l := res.Ledger; l != nil {
		h.Tables = append(h.Tables, ledgerTable(*l))
	}
	for _, m := range res.Mismatches {
		h.Notes = append(h.Notes, m.String())
	}
	if l := res.Ledger; l != nil {
		h.Notes = append(h.Notes, "cost ledger: payback: "+l.PaybackNote)
		for _, n := range l.Notes {
			h.Notes = append(h.Notes, "cost ledger: "+n)
		}
	}
	return h, nil
}

// sideFact is one side of a comparison in the headline: its operating point and whether it
// was verified, its capacity and what it delivers there.
func sideFact(d compare.Decision, r *result.Result, side string) Fact {
	u := RateUnit(r)
	f := Fact{Label: side + ": " + sideName(r) + ", operating point"}
	if r.Shape().OneTier() {
		f.Label = side + ": " + sideName(r) + ", a run of one tier"
		f.Value = runVerdict(r)
		return f
	}
	op := d.OperatingPoint
	if op == nil {
		f.Value, f.Badge, f.Status = "none", "no answer", StatusBad
		f.Detail = "capacity " + d.CapacityText
		return f
	}
	f.Value = fmtRate(op.Rate) + " " + u
	if op.Verified() {
		f.Badge, f.Status = "verified", StatusOK
	} else {
		f.Badge, f.Status = "NOT verified", StatusWarn
	}
	f.Detail = "capacity " + d.CapacityText
	if fg := d.Figures; fg != nil {
		f.Detail += fmt.Sprintf("; %s tok/s compliant of %s tok/s raw there (%s)", FormatFloat(fg.CompliantOutputThroughput, 0), FormatFloat(fg.RawOutputThroughput, 0), fg.Source)
	}
	return f
}

// money names a ledger's currency, "cost units" when it has none.
func money(currency string) string {
	if currency == "" {
		return "cost units"
	}
	return currency
}

// ledgerFact says what B costs against A per effective token.
func ledgerFact(l cost.Ledger) Fact {
	ch := l.BvsAUnitCostChange
	value := "B costs the same as A"
	switch {
	case !finite(ch):
		value = "B against A: " + NaNText
	case ch < 0:
		value = fmt.Sprintf("B %s %% cheaper", FormatFloat(-100*ch, 1))
	case ch > 0:
		value = fmt.Sprintf("B %s %% dearer", FormatFloat(100*ch, 1))
	}
	d := fmt.Sprintf("per million effective tokens at the operating points: A %s, B %s %s", FormatFloat(l.A.CostPerMillionEffective, 2),
		FormatFloat(l.B.CostPerMillionEffective, 2), money(l.Currency))
	if s := l.BreakEvenCompliantShare; finite(s) && s > 0 {
		d += fmt.Sprintf("; B breaks even with A at a compliant share of %s", pctText(s))
	}
	d += fmt.Sprintf("; moving to B saves %s %s per %s h at A's volume", FormatFloat(l.NetSavingsPerPeriod, 2), money(l.Currency), FormatFloat(l.HoursPerPeriod, 0))
	return Fact{Label: "cost per effective token", Value: value, Detail: d}
}

// ledgerTable is the cost ledger as a table: A and B side by side.
func ledgerTable(l cost.Ledger) Table {
	cur := money(l.Currency)
	f := FormatFloat
	t := Table{Title: fmt.Sprintf("Cost ledger at the operating points (%s; period %s h)", cur, f(l.HoursPerPeriod, 0)), Highlight: -1,
		Columns: []string{"", "A", "B"}, Align: []bool{false, true, true}}
	t.Rows = [][]string{
		{"name", l.A.Option.Name, l.B.Option.Name},
		{"cost per hour (" + cur + ")", f(l.A.Option.CostPerHour, 2), f(l.B.Option.CostPerHour, 2)},
		{"raw " + l.Counted() + " throughput (tok/s)", f(l.A.Option.RawThroughput, 0), f(l.B.Option.RawThroughput, 0)},
		{"compliant token share", pctText(l.A.Option.CompliantShare), pctText(l.B.Option.CompliantShare)},
		{"effective throughput (tok/s)", f(l.A.EffectiveThroughput, 0), f(l.B.EffectiveThroughput, 0)},
		{"cost per million " + l.EffectiveTokens() + " (" + cur + ")", f(l.A.CostPerMillionEffective, 2), f(l.B.CostPerMillionEffective, 2)},
		{"running cost per period at A's effective volume (" + cur + ")", f(l.A.CostPerPeriod, 2), f(l.B.CostPerPeriod, 2)},
		{"extra maintenance per period (" + cur + ")", f(l.A.Option.Maintenance, 2), f(l.B.Option.Maintenance, 2)},
	}
	return t
}

// runVerdict says how a run's tier stands against the target share.
func runVerdict(r *result.Result) string {
	for _, v := range r.Analysis.Points {
		return fmt.Sprintf("%s against the %s target (%s compliant in steady state)", v.Verdict, pctText(r.Analysis.Params.TargetShare), pctText(v.Share))
	}
	return "no steady state to judge (a burst at rate inf)"
}

func sideName(r *result.Result) string {
	if r.Header.Sim != "" {
		return "sim:" + r.Header.Sim
	}
	return r.Header.Model
}
