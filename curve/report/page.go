package report

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/timeseries"
)

// This file makes report.html of a result: the page of a run or of a sweep (of rates, users
// or sessions), answer first.

// WriteResultPage renders a result's plots into dir (WritePlots, in plots, from PlotCurve)
// and its report.html (ResultPage, with the tiers' time series ts; nil: none), and returns the
// names written.
func WriteResultPage(dir string, r *result.Result, ts map[int]timeseries.Series, plots PlotFormats) ([]string, error) {
	var written []string
	if c := PlotCurve(r); len(c.Series[0].Points) > 0 {
		paths, err := WritePlots(dir, c, plots)
		for _, p := range paths {
			written = append(written, filepath.Base(p))
		}
		if err != nil {
			return written, err
		}
	}
	page, err := ResultPage(r, ts)
	if err != nil {
		return written, err
	}
	if err := WriteHTML(dir, page); err != nil {
		return written, err
	}
	return append(written, "report.html"), nil
}

// PlotCurve is the curve a result's plots draw: CurveOf, with a capacity that is only a lower
// bound labelled as one ("capacity ≥ 8.09 req/s").
func PlotCurve(r *result.Result) Curve {
	c := CurveOf(r)
	if c.Capacity != nil && r.Analysis.Capacity != nil && r.Analysis.Capacity.LowerBoundOnly() {
		m := *c.Capacity
		m.AtLeast = true
		c.Capacity = &m
	}
	return c
}

// ResultPage is report.html of a result, answer first (see HTML). A sweep's page: the headline
// (capacity with its interval, the operating point and whether a tier verified it, compliant
// against raw throughput there, the curve's knee and plateau, what the decision cost) beside
// the load curve (RenderLoadCurve); the tiers (less-used columns one click away); latency
// against the arrival rate; sessions by turn; each tier second by second; the settings and the
// reasoning. A run's page: its tier's verdict, throughput and latency beside its time series;
// its latency distribution; its tier; sessions by turn; the settings and the reasoning.
func ResultPage(r *result.Result, ts map[int]timeseries.Series) (HTML, error) {
	h := HTML{Title: pageTitle(r), Subtitle: pageSubtitle(r), Identity: IdentityRows(r)}
	run := r.Shape().OneTier()
	if run {
		h.Headline = runHeadline(r)
	} else {
		h.Headline = sweepHeadline(r)
	}
	c := PlotCurve(r)
	c.Title, c.Subtitle = "", "" // the page's title says it
	c.Series[0].Name = ""        // one series: its lines need no name
	hasCurve := len(c.Series[0].Points) > 0
	if !run && hasCurve {
		fig, err := RenderLoadCurve(c, "svg")
		if err != nil {
			return h, fmt.Errorf("report: load curve of %q: %w", h.Title, err)
		}
		h.Figure = fig
	}
	if run {
		if fig, err := runFigure(r, ts); err != nil {
			return h, err
		} else if fig != nil {
			h.Figure = fig
		} else if hasCurve {
			if h.Figure, err = RenderLoadCurve(c, "svg"); err != nil {
				return h, fmt.Errorf("report: load curve of %q: %w", h.Title, err)
			}
		}
		if t, ok := latencyTable(r); ok {
			h.Tables = append(h.Tables, t)
		}
	}

	main, details := splitColumns(CurveTable(r), detailColumn)
	if run {
		main.Title = "The tier (steady-state figures)"
	}
	h.Tables = append(h.Tables, main)
	if len(details.Columns) > 1 {
		h.Sections = append(h.Sections, HTMLSection{Title: "More columns of the tiers: " + strings.Join(details.Columns[1:], ", "),
			Tables: []Table{details}, Collapsed: true})
	}
	if sec, ok := serverSection(r); ok {
		h.Sections = append(h.Sections, sec)
	}
	if !run && hasCurve {
		sec, err := latencySection(c)
		if err != nil {
			return h, err
		}
		if len(sec.PlotsSVG) > 0 {
			h.Sections = append(h.Sections, sec)
		}
	}
	secs, err := sessionSections(r)
	if err != nil {
		return h, err
	}
	h.Sections = append(h.Sections, secs...)
	if !run || h.Figure == nil || ts == nil {
		// A run's time series is its figure already.
		if sec, ok, err := timeSeriesSection(r, ts); err != nil {
			return h, err
		} else if ok {
			h.Sections = append(h.Sections, sec)
		}
	}
	h.Notes = append(append([]string(nil), r.Notes...), r.Analysis.Notes...)
	return h, nil
}

// pageTitle names what the page is about.
func pageTitle(r *result.Result) string {
	what := r.Shape().String() // "sweep of users", "run of sessions"
	if n := r.Axis().Noun(); n != "" {
		what += " of " + n
	}
	name := r.Header.Model
	if name == "" {
		name = "(no model)"
	}
	return fmt.Sprintf("loadcurve %s: %s at %s", what, name, r.Header.Target)
}

// pageSubtitle says in one line what was sent and how it was judged.
func pageSubtitle(r *result.Result) string {
	h, p := r.Header, r.Analysis.Params
	parts := []string{h.Workload, h.Arrival,
		fmt.Sprintf("objectives %s, met by %s of requests at %s confidence", orNone(r.Settings.Measure.Objectives.String()), pctText(p.TargetShare), pctText(p.Confidence)),
		fmt.Sprintf("%s %s", durText(r.TargetSeconds), result.LoadWords(h))}
	if !h.StartWall.IsZero() {
		parts = append(parts, "started "+h.StartWall.Format("2006-01-02 15:04 MST"))
	}
	if h.Sim != "" {
		parts = append(parts, "the simulated deployment "+h.Sim+" (a model, not a measurement)")
	}
	var out []string
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, " · ")
}

// sweepHeadline is the answer of a sweep: capacity, operating point, what it delivers there,
// the curve's shape and what the decision cost.
func sweepHeadline(r *result.Result) *Headline {
	a := r.Analysis
	u := RateUnit(r)
	hl := &Headline{}
	hl.Facts = append(hl.Facts, capacityFact(a, u))
	if op := a.OperatingPoint; op != nil {
		hl.Facts = append(hl.Facts, operatingFact(a, u))
		if f, ok := a.OperatingFigures(); ok {
			hl.Facts = append(hl.Facts, deliveredFact(f, op.Verified(), a.Axis))
		}
	}
	var shape []string
	if a.Knee != nil {
		shape = append(shape, fmt.Sprintf("non-compliance turns systematic at %s %s (the knee)", fmtRate(a.Knee.Rate), u))
	}
	if a.Plateau != nil {
		shape = append(shape, fmt.Sprintf("raw throughput levels off at %s tok/s from %s %s", FormatFloat(a.Plateau.Throughput, 0), fmtRate(a.Plateau.StartRate), u))
	}
	if len(shape) > 0 {
		hl.Lines = append(hl.Lines, upperFirst(strings.Join(shape, "; "))+".")
	}
	if s := r.Spread(); s != nil {
		hl.Lines = append(hl.Lines, fmt.Sprintf("%d repetitions found capacities from %s to %s %s (relative standard deviation %s); %d verified their operating point.",
			s.N, fmtRate(s.Min), fmtRate(s.Max), u, spreadPct(s.RelativeStdDev), s.VerifiedOperations))
	}
	hl.Lines = append(hl.Lines, fmt.Sprintf("The decision took %d tiers and %s %s%s.", len(r.Tiers), durText(r.TargetSeconds), result.LoadWords(r.Header), budgetWords(r)))
	if c := clientLine(r); c != "" {
		hl.Lines = append(hl.Lines, c)
	}
	for _, n := range r.BudgetNotes {
		hl.Lines = append(hl.Lines, upperFirst(n)+".") // what the budget changed, in the sweep's words
	}
	if !r.Complete {
		hl.Lines = append(hl.Lines, "INCOMPLETE: some tiers were interrupted, cut, or had requests canceled at their drain deadline.")
	}
	return hl
}

// capacityFact states the capacity with its interval, a lower bound as one, and no capacity
// with the reason.
func capacityFact(a curve.Analysis, u string) Fact {
	c := a.Capacity
	conf := pctText(a.Params.Confidence)
	target := pctText(a.Params.TargetShare)
	switch {
	case c == nil:
		why := "see the reasoning below"
		for _, n := range a.Notes {
			if strings.HasPrefix(n, "no capacity") || strings.HasPrefix(n, "no tier") {
				why = n
				break
			}
		}
		return Fact{Label: "capacity", Value: "none found", Detail: why, Badge: "no answer", Status: StatusBad}
	case c.LowerBoundOnly():
		return Fact{Label: "capacity", Value: "≥ " + fmtRate(c.Rate) + " " + u, Badge: "lower bound", Status: StatusWarn,
			Detail: fmt.Sprintf("at least this: every tier met the %s target; none was heavy enough to miss it%s", target, producing(c))}
	}
	lo, hi := NaNText, NaNText
	if c.Low > 0 {
		lo = fmtRate(c.Low)
	}
	if c.High != nil {
		hi = fmtRate(*c.High)
	}
	d := fmt.Sprintf("interval [%s, %s] %s at %s confidence", lo, hi, u, conf)
	if around := aroundText(c); around != "" {
		d = fmt.Sprintf("interval [%s, %s] %s (%s around it) at %s confidence", lo, hi, u, around, conf)
	}
	var why []string
	if c.Low == 0 {
		why = append(why, fmt.Sprintf("no tier meets the %s target with confidence yet", target))
	}
	if c.High == nil {
		why = append(why, "no tier misses it with confidence yet")
	}
	if len(why) > 0 {
		d += ": " + strings.Join(why, "; ")
	}
	f := Fact{Label: "capacity", Value: fmtRate(c.Rate) + " " + u, Detail: d + producing(c)}
	if c.Low == 0 || c.High == nil {
		f.Badge, f.Status = "not bracketed", StatusWarn
	}
	return f
}

// producing says, on the concurrency axis, the request rate a capacity's users produce.
func producing(c *curve.Capacity) string {
	if c.RequestRate > 0 {
		return fmt.Sprintf("; its users produce %s req/s", fmtRate(c.RequestRate))
	}
	return ""
}

// operatingFact states the operating point and whether a tier verified it (OperatingPoint's
// own judgement), with what the confirmation measured or why there is none.
func operatingFact(a curve.Analysis, u string) Fact {
	op := a.OperatingPoint
	f := Fact{Label: "operating point", Value: fmtRate(op.Rate) + " " + u}
	headroom := fmt.Sprintf("the capacity less %s headroom", pctText(a.Params.Headroom))
	if op.Verified() {
		f.Badge, f.Status = "verified", StatusOK
	} else {
		f.Badge, f.Status = "NOT verified", StatusWarn
	}
	// The analysis's own sentence: by what it is verified, or what is missing (the terminal
	// and a capacity plan say the same).
	f.Detail = headroom + "; " + op.Verification
	if op.Verification == "" { // an analysis from before the sentence was kept
		f.Detail = headroom
	}
	return f
}

// verdictWords says a verdict against the target in plain words.
func verdictWords(v curve.Verdict, p curve.Params) string {
	switch v {
	case curve.VerdictMeets:
		return fmt.Sprintf("meeting the %s target with %s confidence", pctText(p.TargetShare), pctText(p.Confidence))
	case curve.VerdictFails:
		return fmt.Sprintf("missing the %s target with %s confidence", pctText(p.TargetShare), pctText(p.Confidence))
	case curve.VerdictUncertain:
		return fmt.Sprintf("not yet enough requests to claim %s at %s confidence", pctText(p.TargetShare), pctText(p.Confidence))
	case curve.VerdictInsufficient:
		return "too few requests in its steady state to judge"
	case curve.VerdictExcluded:
		return "not judged (see its reason below)"
	}
	return string(v)
}

// deliveredFact states compliant against raw output at the operating point, measured there
// or expected from the curve (the library's figures say which).
func deliveredFact(f curve.Figures, verified bool, ax curve.Axis) Fact {
	share := NaNText
	if f.RawOutputThroughput > 0 {
		share = pctText(f.CompliantOutputThroughput / f.RawOutputThroughput)
	}
	d := fmt.Sprintf("of %s tok/s raw (%s of it compliant); from %s", FormatFloat(f.RawOutputThroughput, 0), share, f.Source)
	if !ax.Open() && f.Rate > 0 { // the request rate a closed loop produced: say at how many users
		d += fmt.Sprintf(", at %s users", fmtRate(float64(f.Rate)))
	}
	out := Fact{Label: "compliant output there", Value: FormatFloat(f.CompliantOutputThroughput, 0) + " tok/s", Detail: d}
	if !verified {
		out.Badge, out.Status = "expected", StatusWarn
		if strings.HasPrefix(f.Source, "confirmation") {
			out.Badge = "measured"
		}
	}
	return out
}

// runHeadline is the answer of a run: its tier's verdict, what it delivered and its latency.
func runHeadline(r *result.Result) *Headline {
	hl := &Headline{}
	if len(r.Tiers) == 0 {
		return hl
	}
	s := r.Tiers[0].Summary
	a := r.Analysis
	u := RateUnit(r)
	rate := fmtRate(s.NominalRate) + " " + u
	if math.IsInf(s.NominalRate, 1) {
		rate = InfRateText
	}
	if len(a.Points) > 0 {
		v := a.Points[0]
		f := Fact{Label: fmt.Sprintf("compliant share at %s (%s realised)", rate, fmtRate(v.Rate)), Value: pctText(v.Share), Badge: string(v.Verdict),
			Detail: fmt.Sprintf("interval [%s, %s] on %s effective requests: %s", pctText(v.ShareLo), pctText(v.ShareHi), FormatFloat(v.EffectiveRequests, 0),
				verdictWords(v.Verdict, a.Params))}
		switch v.Verdict {
		case curve.VerdictMeets:
			f.Status = StatusOK
		case curve.VerdictFails:
			f.Status = StatusBad
		default:
			f.Status = StatusWarn
		}
		hl.Facts = append(hl.Facts, f)
	} else {
		hl.Facts = append(hl.Facts, Fact{Label: "compliant share at " + rate, Value: pctText(s.CompliantRequestShare), Badge: "not judged", Status: StatusWarn,
			Detail: "no steady state to judge: " + steadyWhy(s)})
	}
	raw, compl, steady := s.Throughputs()
	where := "in the steady state"
	if !steady {
		where = "over the whole tier"
	}
	hl.Facts = append(hl.Facts, Fact{Label: "compliant output", Value: FormatFloat(compl, 0) + " tok/s",
		Detail: fmt.Sprintf("of %s tok/s raw %s; %d of %d requests ok, %d failed", FormatFloat(raw, 0), where, s.Completed, s.Issued, s.Failed)})
	var lat []string
	for _, m := range []struct {
		name string
		st   measure.Stats
	}{{"TTFT", s.TTFT}, {"TPOT", s.TPOT}, {"E2EL", s.E2EL}} {
		if m.st.Count > 0 {
			lat = append(lat, fmt.Sprintf("%s %s / %s ms", m.name, FormatFloat(m.st.Median, 1), FormatFloat(m.st.Percentiles["p99"], 1)))
		}
	}
	if len(lat) > 0 {
		hl.Facts = append(hl.Facts, Fact{Label: "latency, median / p99", Value: lat[0], Detail: strings.Join(lat[1:], " · ")})
	}
	if ss := s.Sessions; ss != nil && len(ss.ByTurn) > 1 {
		first, last := ss.ByTurn[0], ss.ByTurn[len(ss.ByTurn)-1]
		hl.Lines = append(hl.Lines, fmt.Sprintf("%d sessions of %s turns on average; from turn %d to turn %d the prompt grows from %s to %s tokens and the p99 TTFT goes from %s to %s ms.",
			ss.Sessions, formatShort(float64(ss.MeanTurns)), first.Turn, last.Turn, FormatFloat(float64(first.MeanInputTokens), 0),
			FormatFloat(float64(last.MeanInputTokens), 0), FormatFloat(float64(first.TTFT.P99), 1), FormatFloat(float64(last.TTFT.P99), 1)))
	}
	if c := a.Capacity; c != nil && c.LowerBoundOnly() && len(a.Points) > 0 {
		if a.Points[0].Verdict == curve.VerdictMeets {
			hl.Lines = append(hl.Lines, fmt.Sprintf("A run of one tier: the capacity is at least %s %s (the tier met the target with confidence); a sweep finds where it gives out.", fmtRate(c.Rate), u))
		} else {
			hl.Lines = append(hl.Lines, fmt.Sprintf("A run of one tier: as far as it shows, the capacity is at least %s %s, not yet confirmed (the tier is %s); a longer run would decide, and a sweep finds where it gives out.",
				fmtRate(c.Rate), u, a.Points[0].Verdict))
		}
	}
	if s.ClientBound {
		hl.Lines = append(hl.Lines, "CLIENT-BOUND: "+s.ClientBoundReason)
	}
	if !r.Complete {
		hl.Lines = append(hl.Lines, "INCOMPLETE: the run was stopped before every planned request finished.")
	}
	return hl
}

// steadyWhy says why a tier has no steady state.
func steadyWhy(s measure.Summary) string {
	switch {
	case math.IsInf(s.NominalRate, 1):
		return "every request was sent at once (rate " + InfRateText + ")"
	case s.Steady != nil && s.Steady.Note != "":
		return s.Steady.Note
	}
	return "see the reasoning below"
}

// runFigure is a run's time series (nil without one).
func runFigure(r *result.Result, ts map[int]timeseries.Series) ([]byte, error) {
	if len(r.Tiers) != 1 {
		return nil, nil
	}
	tr := r.Tiers[0]
	s, ok := ts[tr.Tier.Tier]
	if !ok || len(s.Slices) == 0 {
		return nil, nil
	}
	t := TierTimeSeries{Series: s, ArrivalsEnd: tr.Tier.ArrivalsEnd().Seconds(),
		TTFTObjective: objectiveMap(r.Settings.Measure.Objectives)["ttft"]}
	if st := tr.Summary.Steady; st != nil {
		t.SteadyStart, t.SteadyEnd = st.Start, st.End
	}
	b, err := renderTimeSeries(t, "svg", FigureWidth, FigureHeight)
	if err != nil {
		return nil, fmt.Errorf("report: time series of the run: %w", err)
	}
	return b, nil
}

// latencyTable is a run's latency distribution: one row per metric it reports, its mean,
// median and percentiles in ms.
func latencyTable(r *result.Result) (Table, bool) {
	if len(r.Tiers) != 1 {
		return Table{}, false
	}
	s := r.Tiers[0].Summary
	keys := make([]string, 0, len(s.Percentiles))
	for _, p := range s.Percentiles {
		if p != 50 {
			keys = append(keys, measure.PercentileKey(p))
		}
	}
	t := Table{Title: "Latency (ms, the tier's requests)", Highlight: -1, Columns: append([]string{"metric", "requests", "mean", "median"}, keys...)}
	for range t.Columns {
		t.Align = append(t.Align, true)
	}
	t.Align[0] = false
	for _, metric := range measure.Metrics {
		m := struct {
			key, name string
			st        measure.Stats
		}{metric.Key, metric.Label, *metric.Stats(&s)}
		if !s.Reports(m.key) || m.st.Count == 0 {
			continue
		}
		row := []string{m.name, strconv.Itoa(m.st.Count), FormatFloat(m.st.Mean, 2), FormatFloat(m.st.Median, 2)}
		for _, k := range keys {
			v, ok := m.st.Percentiles[k]
			if !ok {
				v = math.NaN()
			}
			row = append(row, FormatFloat(v, 2))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, len(t.Rows) > 0
}

// detailColumn reports whether a column of the tier table goes to its details table (how a
// tier ended, the server's own metrics): the main table keeps what decides.
func detailColumn(col string) bool {
	return col == "ended" || strings.HasPrefix(col, "srv ")
}

// splitColumns moves the columns for which detail is true from t into a second table, keyed
// by t's first column; main keeps the rest, its title, notes and highlight.
func splitColumns(t Table, detail func(string) bool) (main, details Table) {
	main = t
	main.Columns, main.Align, main.Rows = nil, nil, nil
	details = Table{Highlight: t.Highlight, HighlightLabel: t.HighlightLabel}
	var keep, move []int
	for j, c := range t.Columns {
		if j > 0 && detail(c) {
			move = append(move, j)
		} else {
			keep = append(keep, j)
		}
	}
	if len(move) == 0 {
		return t, Table{Highlight: -1}
	}
	move = append([]int{0}, move...)
	pick := func(idx []int, into *Table) {
		for _, j := range idx {
			into.Columns = append(into.Columns, t.Columns[j])
			into.Align = append(into.Align, t.rightAligned(j))
		}
		for _, r := range t.Rows {
			row := make([]string, 0, len(idx))
			for _, j := range idx {
				row = append(row, cell(r, j))
			}
			into.Rows = append(into.Rows, row)
		}
	}
	pick(keep, &main)
	pick(move, &details)
	return main, details
}

// serverSection is what the target's own metrics said over each tier, when they were scraped.
func serverSection(r *result.Result) (HTMLSection, bool) {
	t := Table{Highlight: -1, Columns: []string{"tier", "mean running", "max running", "mean waiting", "max waiting", "KV cache %", "prefix hit %", "preemptions", "scrapes"},
		Align: []bool{true, true, true, true, true, true, true, true, true}}
	var notes []string
	for _, tr := range r.Tiers {
		if tr.Server == nil {
			continue
		}
		tm := decodeServer(tr.Server)
		t.Rows = append(t.Rows, []string{strconv.Itoa(tr.Tier.Tier), optF(tm.MeanRunning, 1, 1), optF(tm.MaxRunning, 1, 0), optF(tm.MeanWaiting, 1, 1),
			optF(tm.MaxWaiting, 1, 0), optF(tm.MeanKVUsage, 100, 1), optF(tm.PrefixCacheHitRate, 100, 1), optF(tm.Preemptions, 1, 0),
			fmt.Sprintf("%d (%d failed)", tm.Scrapes, tm.Failures)})
		for _, n := range tm.Notes {
			notes = append(notes, fmt.Sprintf("tier %d: %s", tr.Tier.Tier, n))
		}
	}
	if len(t.Rows) == 0 {
		return HTMLSection{}, false
	}
	t.Notes = notes
	return HTMLSection{Title: "The target's own metrics, tier by tier", Tables: []Table{t}, Collapsed: true}, true
}

// latencySection is the latency of every metric against the arrival rate, two plots a row.
func latencySection(c Curve) (HTMLSection, error) {
	sec := HTMLSection{Title: "Latency against the " + axisWords(c),
		Text: "Each tier's percentiles in its steady-state window; dashed red: the objective; the black line: the operating point."}
	for _, m := range Metrics(c) {
		p, err := LatencyPlot(c, m, nil)
		if errors.Is(err, ErrNoData) {
			continue
		}
		if err != nil {
			return sec, err
		}
		b, err := Render(p, "svg")
		if err != nil {
			return sec, err
		}
		sec.PlotsSVG = append(sec.PlotsSVG, b)
	}
	return sec, nil
}

// sessionSections are the metrics by turn of a result's tiers of sessions: the tier the
// answer rests on (the verified confirmation, else the run's one tier, else the heaviest tier
// that met the target) open with its plot, every other tier one click away.
func sessionSections(r *result.Result) ([]HTMLSection, error) {
	var tiers []result.TierResult
	for _, tr := range r.Tiers {
		if tr.Summary.Sessions != nil && len(tr.Summary.Sessions.ByTurn) > 0 {
			tiers = append(tiers, tr)
		}
	}
	if len(tiers) == 0 {
		return nil, nil
	}
	lead := tiers[0].Tier.Tier
	if cf := confirmation(r.Analysis); cf != nil {
		lead = cf.Tier
	} else {
		best := -1.0
		for _, v := range r.Analysis.Points {
			if v.Verdict == curve.VerdictMeets && v.Rate > best && slices.ContainsFunc(tiers, func(tr result.TierResult) bool { return tr.Tier.Tier == v.Tier }) {
				lead, best = v.Tier, v.Rate
			}
		}
	}
	var open, rest []HTMLSection
	for _, tr := range tiers {
		ss := tr.Summary.Sessions
		t := SessionTable(ss)
		t.Title = ""
		sec := HTMLSection{Title: fmt.Sprintf("Sessions by turn, tier %d (%s, %s sessions/s): %d sessions started at %s sessions/s",
			tr.Tier.Tier, roleText(tr.Tier), rateCell(tr.Summary.NominalRate), ss.Sessions, FormatFloat(float64(ss.SessionRate), 3)),
			Text:   "Each turn carries the session's history, so the prompt, the prefix cache's share of it and the latencies grow with the turn.",
			Tables: []Table{t}}
		if tr.Tier.Tier != lead {
			sec.Collapsed = true
			rest = append(rest, sec)
			continue
		}
		p, err := SessionTurnsPlot(ss)
		if err == nil {
			b, err := Render(p, "svg")
			if err != nil {
				return nil, err
			}
			sec.PlotsSVG = [][]byte{b}
		} else if !errors.Is(err, ErrNoData) {
			return nil, err
		}
		open = append(open, sec)
	}
	return append(open, rest...), nil
}

// confirmation is the analysis's confirmation at its operating point, nil without one.
func confirmation(a curve.Analysis) *curve.Confirmation {
	if op := a.OperatingPoint; op != nil && op.Confirmation != nil && op.Confirmation.AtThisPoint {
		return op.Confirmation
	}
	return nil
}

// SessionTurnsPlot draws a tier of sessions' latency by turn: the median and p99 TTFT and the
// median E2EL of the k-th turns (ms), which grow with the history each turn carries.
func SessionTurnsPlot(ss *measure.Sessions) (*plot.Plot, error) {
	if ss == nil || len(ss.ByTurn) == 0 {
		return nil, fmt.Errorf("report: sessions without turns: %w", ErrNoData)
	}
	p, lg := newPlot(Curve{}, "latency by turn of the session")
	p.X.Label.Text = "turn of the session"
	p.X.Tick.Marker = integerTicks{}
	p.Y.Label.Text = "ms"
	n := 0
	for k, l := range []struct {
		name string
		f    func(measure.TurnStats) measure.Number
	}{
		{"TTFT median", func(t measure.TurnStats) measure.Number { return t.TTFT.Median }},
		{"TTFT p99", func(t measure.TurnStats) measure.Number { return t.TTFT.P99 }},
		{"E2EL median", func(t measure.TurnStats) measure.Number { return t.E2EL.Median }},
	} {
		var xy plotter.XYs
		for _, t := range ss.ByTurn {
			if v := float64(l.f(t)); finite(v) {
				xy = append(xy, plotter.XY{X: float64(t.Turn), Y: v})
			}
		}
		if err := addLine(p, lg, xy, l.name, pick(palette, k), pick(dashes, k), pick(glyphs, k), vg.Points(1.5)); err != nil {
			return nil, err
		}
		n += len(xy)
	}
	if n == 0 {
		return nil, fmt.Errorf("report: sessions without latencies by turn: %w", ErrNoData)
	}
	p.Y.Min = 0
	finish(p, lg, 1.05, false)
	return p, nil
}

// integerTicks labels whole numbers only (turns, replicas): a step of 1, 2, 5, 10, …
type integerTicks struct{}

// Ticks implements plot.Ticker.
func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finite(lo, hi) || !(hi > lo) {
		return nil
	}
	step := 1.0
	for k := 0; step < (hi-lo)/8; k++ {
		step = []float64{1, 2, 5}[k%3] * math.Pow(10, float64(k/3))
	}
	var out []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		out = append(out, plot.Tick{Value: v, Label: strconv.Itoa(int(v))})
	}
	return out
}

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
