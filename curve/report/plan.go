package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/loadcurve/loadcurve/curve/plan"
)

// planMoney names the money of plans: their currency, or plan.CostUnits.
func planMoney(plans []plan.Result) string {
	if len(plans) > 0 && plans[0].Currency != "" {
		return plans[0].Currency
	}
	return plan.CostUnits
}

// PlanTable is the capacity plan of each deployment for the forecast, one row each: its
// operating point, the replicas at the peak and their load, the monthly cost static and
// following the profile, and the cost per million effective tokens, in the plans' currency.
func PlanTable(plans []plan.Result) Table {
	f := FormatFloat
	cur := planMoney(plans)
	t := Table{Title: "Capacity plan for the forecast (replicas of each deployment at its operating point; costs in " + cur + ")", Highlight: -1,
		Columns: []string{"deployment", "op. point req/s", "op. point", "peak req/s", "replicas at peak", "load/replica at peak", "of capacity",
			"static /month", "following /month", "mean replicas", "per M effective tok (static)", "per M effective tok (following)"},
		Align: []bool{false, true, false, true, true, true, true, true, true, true, true, true}}
	for _, r := range plans {
		capUse := "—"
		if u := r.UtilisationOfCapacityAtPeak; u != nil {
			capUse = pctText(*u)
			if r.Deployment.CapacityIsLowerBound {
				capUse = "≤ " + capUse // the capacity is only a lower bound
			}
		}
		t.Rows = append(t.Rows, []string{r.Deployment.Name, f(r.Deployment.OperatingRate, 3), verifiedCell(r.Deployment), f(r.PeakRate, 3), strconv.Itoa(r.PeakReplicas),
			f(r.LoadPerReplicaAtPeak, 3), capUse, f(r.Static.CostPerMonth, 0), f(r.Following.CostPerMonth, 0), f(r.Following.MeanReplicas, 2),
			f(r.Static.CostPerMillionEffectiveTokens, 4), f(r.Following.CostPerMillionEffectiveTokens, 4)})
	}
	return t
}

// verifiedCell says in the plan's table whether the operating point was verified.
func verifiedCell(d plan.Deployment) string {
	switch {
	case d.Verified:
		return "verified"
	case d.Unverified():
		return "NOT verified"
	}
	return "given" // figures given, not read from a sweep
}

// unverifiedText says, for a deployment planned from an operating point its sweep did not
// verify, what that means for its plan, with the sweep's reason when why is set; "" otherwise.
func unverifiedText(d plan.Deployment, why bool) string {
	if !d.Unverified() {
		return ""
	}
	reason := ""
	if why {
		reason = " (" + d.Verification + ")"
	}
	return fmt.Sprintf("%s: planned from an unverified operating point%s; its replicas rest on what the sweep expected one replica to carry, not on what one was shown to", d.Name, reason)
}

// PlanText prints capacity plans for a forecast: per deployment the replicas at peak (with the
// scale-out formula), the utilisation, the monthly cost static and following the profile, and
// the cost per million effective tokens (in the plans' currency, or cost units); with two,
// which is cheaper and where that flips.
func PlanText(w io.Writer, plans []plan.Result, cmp *plan.Comparison) {
	if len(plans) > 0 && plans[0].Forecast != "" {
		fmt.Fprintf(w, "Forecast: %s.\n", plans[0].Forecast)
	}
	_ = PlanTable(plans).Text(w) // a well-formed table
	for _, r := range plans {
		if u := unverifiedText(r.Deployment, true); u != "" {
			fmt.Fprintf(w, "%s.\n", u)
		}
		fmt.Fprintf(w, "%s: %s; %s.\n", r.Deployment.Name, r.PeakReplicasFormula, r.Following.Rule)
		if t := tokensText(r.Deployment); t != "" {
			fmt.Fprintf(w, "%s: %s.\n", r.Deployment.Name, t)
		}
		if u := r.UtilisationOfCapacityAtPeak; u != nil && r.Deployment.CapacityIsLowerBound {
			fmt.Fprintf(w, "%s: at the peak each replica runs at most %s of its capacity, which the sweep only bounded: at least %s req/s.\n",
				r.Deployment.Name, pctText(*u), FormatFloat(r.Deployment.Capacity, 3))
		}
	}
	if cmp != nil {
		if cmp.Stamp != "" {
			fmt.Fprintf(w, "%s: %s\n", cmp.Stamp, strings.Join(cmp.Differences, "; "))
		}
		fmt.Fprintf(w, "Following the profile: %s\n", cmp.Following.Summary)
		fmt.Fprintf(w, "Static (replicas for the peak): %s\n", cmp.Static.Summary)
		if cmp.Following.PaybackNote != "" {
			fmt.Fprintf(w, "Payback: %s\n", cmp.Following.PaybackNote)
		}
	}
}

// tokensText says how a deployment's tokens per request were counted; "" when they were not.
func tokensText(d plan.Deployment) string {
	c := d.Tokens
	if c == nil || c.Compliant == 0 || c.Requests == 0 {
		return ""
	}
	return fmt.Sprintf("%.6g output tokens per compliant request, %d of %d requests compliant (%s), counted in %s",
		c.TokensPerCompliantRequest(), c.Compliant, c.Requests, pctText(c.CompliantShare()), strings.Join(c.Windows, ", "))
}

// PlanPage is report.html of a capacity plan, answer first: per deployment the replicas at the
// forecast's peak and what they cost a month and per million effective tokens (in the plans'
// currency, or cost units), and with two which is cheaper, beside the forecast's demand and the
// capacity of the replicas following it; then the plan's table, the cost of both against the
// forecast's level, the rehearsals, and the rules and notes.
func PlanPage(plans []plan.Result, cmp *plan.Comparison, trials []plan.Trial, conclusions []string) (HTML, error) {
	if len(plans) == 0 {
		return HTML{}, fmt.Errorf("report: a plan page without a plan: %w", ErrNoData)
	}
	cur := planMoney(plans)
	first := plans[0]
	h := HTML{Title: "loadcurve plan: " + planNames(plans) + " for the forecast",
		Subtitle: fmt.Sprintf("forecast peak %s req/s, mean %s req/s over a %s h period · a month is %s h · %s · costs in %s",
			fmtRate(first.PeakRate), fmtRate(first.MeanRate), formatShort(first.PeriodHours), formatShort(first.HoursPerMonth),
			lagText(first.ScaleUpLagSeconds), cur)}
	h.Headline = planHeadline(plans, cmp, conclusions, cur)
	if p, err := PlanTimelinePlot(plans); err == nil {
		if h.Figure, err = Render(p, "svg"); err != nil {
			return h, err
		}
	} else if !errors.Is(err, ErrNoData) {
		return h, err
	}
	t := PlanTable(plans)
	for _, r := range plans {
		t.Notes = append(t.Notes, fmt.Sprintf("%s: %s; %s; figures from %s", r.Deployment.Name, r.PeakReplicasFormula, r.Following.Rule, orNone(r.Deployment.Source)))
		if tt := tokensText(r.Deployment); tt != "" {
			t.Notes = append(t.Notes, r.Deployment.Name+": "+tt)
		}
	}
	h.Tables = append(h.Tables, t)
	if cmp != nil {
		h.Tables = append(h.Tables, breakEvenTable(*cmp))
		sec, err := planCostSection(*cmp)
		if err != nil {
			return h, err
		}
		h.Sections = append(h.Sections, sec...)
	}
	if len(trials) > 0 {
		h.Sections = append(h.Sections, HTMLSection{Title: "Rehearsals on the simulated deployment's replicas", Tables: []Table{trialTable(trials)}})
	}
	for _, r := range plans {
		for _, n := range r.Notes {
			h.Notes = append(h.Notes, r.Deployment.Name+": "+n)
		}
	}
	if cmp != nil {
		h.Notes = append(h.Notes, cmp.Notes...)
		if n := cmp.Following.PaybackNote; n != "" {
			h.Notes = append(h.Notes, "payback: "+n)
		}
	}
	return h, nil
}

// planHeadline is a plan page's answer: each deployment's replicas at the peak and its cost,
// which is cheaper, and the lines that qualify it (the comparison's stamp, the forecast,
// warnings, the rehearsals' conclusions).
func planHeadline(plans []plan.Result, cmp *plan.Comparison, conclusions []string, cur string) *Headline {
	hl := &Headline{}
	for _, r := range plans {
		hl.Facts = append(hl.Facts, replicasFact(r), Fact{Label: r.Deployment.Name + ": cost a month, following the profile",
			Value: FormatFloat(r.Following.CostPerMonth, 0) + " " + cur,
			Detail: fmt.Sprintf("%s %s per million effective tokens (mean %s replicas); with %d replicas all the time: %s %s a month, %s per million",
				FormatFloat(r.Following.CostPerMillionEffectiveTokens, 4), cur, FormatFloat(r.Following.MeanReplicas, 2), r.PeakReplicas,
				FormatFloat(r.Static.CostPerMonth, 0), cur, FormatFloat(r.Static.CostPerMillionEffectiveTokens, 4))})
	}
	if cmp != nil {
		v := cmp.Following
		f := Fact{Label: "cheaper for this forecast, following the profile", Value: "both cost the same", Detail: v.Summary + "; with replicas for the peak: " + cmp.Static.Summary}
		if v.Cheaper != "" {
			f.Value = v.Cheaper
			if ch := v.UnitCostChange; finite(ch) && ch != 0 {
				f.Badge = fmt.Sprintf("B %+.1f %% per effective token", 100*ch)
				f.Status = StatusOK
			}
		}
		hl.Facts = append(hl.Facts, f)
		if cmp.Stamp != "" {
			hl.Lines = append(hl.Lines, cmp.Stamp+": "+strings.Join(cmp.Differences, "; "))
		}
	}
	first := plans[0]
	if first.Forecast != "" {
		hl.Lines = append(hl.Lines, "Forecast: "+first.Forecast+".")
	}
	for _, w := range first.Warnings {
		hl.Lines = append(hl.Lines, "WARNING: "+w+".")
	}
	for _, r := range plans {
		if u := unverifiedText(r.Deployment, false); u != "" { // the fact above says why
			hl.Lines = append(hl.Lines, "WARNING: "+u+".")
		}
	}
	hl.Lines = append(hl.Lines, conclusions...)
	return hl
}

// replicasFact is a deployment's replicas at the forecast's peak, with what each carries and
// whether its operating point was verified.
func replicasFact(r plan.Result) Fact {
	d := r.Deployment
	use := ""
	if u := r.UtilisationOfCapacityAtPeak; u != nil {
		use = fmt.Sprintf(", %s of its capacity", pctText(*u))
		if d.CapacityIsLowerBound {
			use = fmt.Sprintf(", at most %s of its capacity (only bounded: at least %s req/s)", pctText(*u), FormatFloat(d.Capacity, 3))
		}
	}
	f := Fact{Label: fmt.Sprintf("%s: replicas at the %s req/s peak", d.Name, fmtRate(r.PeakRate)),
		Value:  fmt.Sprintf("%d replicas", r.PeakReplicas),
		Detail: fmt.Sprintf("%s; each carries %s req/s at the peak%s (its operating point: %s req/s)", r.PeakReplicasFormula, FormatFloat(r.LoadPerReplicaAtPeak, 3), use, FormatFloat(d.OperatingRate, 3))}
	switch {
	case d.Unverified():
		f.Badge, f.Status = "NOT verified", StatusWarn
		f.Detail += "; the operating point is " + d.Verification
	case d.Verified:
		f.Badge, f.Status = "verified", StatusOK
		f.Detail += "; the operating point is " + d.Verification
	}
	return f
}

// planCostSection is the plot of both deployments' cost per million effective tokens against
// the forecast's level, when there is data for it.
func planCostSection(cmp plan.Comparison) ([]HTMLSection, error) {
	p, err := PlanCostPlot(cmp)
	if errors.Is(err, ErrNoData) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	b, err := Render(p, "svg")
	if err != nil {
		return nil, err
	}
	return []HTMLSection{{Title: "Cost per million effective tokens against the forecast's level",
		Text:     "The forecast scaled (its shape kept) from 1/100 to 100 times its peak, replicas following it: where the lines cross, the cheaper deployment changes. Costs are steps (whole replicas); the table above has the exact break-even levels.",
		PlotsSVG: [][]byte{b}}}, nil
}

// lagText says when replicas start.
func lagText(seconds float64) string {
	if !(seconds > 0) {
		return "replicas start when demand needs them"
	}
	return "replicas start " + durText(seconds) + " ahead of demand"
}

// planNames is "A" or "A vs B".
func planNames(plans []plan.Result) string {
	var names []string
	for _, r := range plans {
		names = append(names, r.Deployment.Name)
	}
	return strings.Join(names, " vs ")
}

// breakEvenTable lists, on both bases, which deployment is cheaper and the forecast levels
// where that changes.
func breakEvenTable(c plan.Comparison) Table {
	t := Table{Title: "Which is cheaper, and where that changes (forecast peaks, req/s)", Highlight: -1,
		Columns: []string{"replicas", "cheaper for this forecast", "B vs A per effective token", "B − A a month", "changes at peak", "in words"},
		Align:   []bool{false, false, true, true, false, false}}
	cur := planMoney([]plan.Result{c.A})
	for _, v := range []plan.Verdict{c.Following, c.Static} {
		basis := "following the profile"
		if v.Basis == plan.BasisStatic {
			basis = "for the peak, all the time"
		}
		cheaper := v.Cheaper
		if cheaper == "" {
			cheaper = "the same"
		}
		var at []string
		for _, be := range v.BreakEvens {
			at = append(at, FormatFloat(be.PeakRate, 3))
		}
		if len(at) == 0 {
			at = []string{"none"}
		}
		t.Rows = append(t.Rows, []string{basis, cheaper, fmt.Sprintf("%+.1f %%", 100*v.UnitCostChange),
			FormatFloat(v.CostPerMonthDifference, 0) + " " + cur, strings.Join(at, ", "), v.Summary})
	}
	return t
}

// trialTable is the rehearsals, one row per trial.
func trialTable(trials []plan.Trial) Table {
	t := Table{Highlight: -1, Columns: []string{"deployment", "replicas", "", "peak req/s", "realised req/s", "verdict", "compliant", "interval", "target"},
		Align: []bool{false, true, false, true, true, false, true, false, true}}
	for _, r := range trials {
		what := "another count"
		if r.Planned {
			what = "the plan"
		}
		t.Rows = append(t.Rows, []string{r.Deployment, strconv.Itoa(r.Replicas), what, FormatFloat(r.PeakRate, 3), FormatFloat(r.RealisedRate, 3),
			r.Verdict, pctText(r.Share), "[" + pctText(r.ShareLo) + ", " + pctText(r.ShareHi) + "]", pctText(r.TargetShare)})
	}
	return t
}

// PlanTimelinePlot draws one period of the forecast: the demand and, for each plan, the
// capacity of the replicas running when they follow it (replicas × operating rate, the rate they
// can carry), as steps, with the legend above the data.
func PlanTimelinePlot(plans []plan.Result) (*plot.Plot, error) {
	if len(plans) == 0 || len(plans[0].Timeline) == 0 {
		return nil, ErrNoData
	}
	p, lg := newPlot(Curve{}, "demand and the capacity of the replicas following it, over one period")
	p.X.Label.Text = "time (hours from the start of the period)"
	p.Y.Label.Text = "requests per second"
	steps := func(tl []plan.Step, period float64, y func(plan.Step) float64) plotter.XYs {
		var xy plotter.XYs
		for i, s := range tl {
			end := period
			if i+1 < len(tl) {
				end = tl[i+1].TSeconds
			}
			xy = append(xy, plotter.XY{X: s.TSeconds / 3600, Y: y(s)}, plotter.XY{X: end / 3600, Y: y(s)})
		}
		return xy
	}
	first := plans[0]
	demand, err := plotter.NewLine(steps(first.Timeline, first.PeriodHours*3600, func(s plan.Step) float64 { return s.Demand }))
	if err != nil {
		return nil, err
	}
	demand.Color, demand.Width = color.Black, vg.Points(1.5)
	p.Add(demand)
	lg.add("demand (the forecast)", demand)
	for i, r := range plans {
		op := r.Deployment.OperatingRate
		l, err := plotter.NewLine(steps(r.Timeline, r.PeriodHours*3600, func(s plan.Step) float64 { return float64(s.Replicas) * op }))
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = pick(palette, i), vg.Points(1.2)
		l.Dashes = pick(dashes[1:], i)
		p.Add(l)
		lg.add(fmt.Sprintf("%s: replicas running × %s req/s each", r.Deployment.Name, FormatFloat(op, 3)), l)
	}
	p.Y.Min = 0
	p.X.Min, p.X.Max, lg.xFixed = 0, first.PeriodHours, true
	finish(p, lg, 1.06, false)
	return p, nil
}

// PlanCostPlot draws both deployments' cost per million effective tokens against the forecast's
// peak (the forecast scaled, its shape kept), following the profile: where the lines cross,
// the cheaper deployment changes (the break-even levels).
func PlanCostPlot(c plan.Comparison) (*plot.Plot, error) {
	if len(c.Curve) == 0 {
		return nil, ErrNoData
	}
	p, lg := newPlot(Curve{}, "cost per million effective tokens against the forecast's peak")
	p.X.Label.Text = "forecast peak (req/s, log scale)"
	p.Y.Label.Text = "per M effective tokens (" + planMoney([]plan.Result{c.A}) + ")"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	n := 0
	for i, side := range []struct {
		name string
		y    func(plan.CurvePoint) float64
	}{
		{c.A.Deployment.Name, func(pt plan.CurvePoint) float64 { return pt.FollowingA }},
		{c.B.Deployment.Name, func(pt plan.CurvePoint) float64 { return pt.FollowingB }},
	} {
		var xy plotter.XYs
		for _, pt := range c.Curve {
			if y := side.y(pt); pt.PeakRate > 0 && y > 0 && finite(y) {
				xy = append(xy, plotter.XY{X: pt.PeakRate, Y: y})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = pick(palette, i), vg.Points(1.5)
		p.Add(l)
		lg.add(side.name+", replicas following the profile", l)
		n += len(xy)
	}
	if n == 0 {
		return nil, ErrNoData
	}
	if peak := c.A.PeakRate; peak > 0 && finite(peak) {
		lg.mark(p, &vLine{x: peak, label: "this forecast " + formatShort(peak) + " req/s", line: draw.LineStyle{Color: markerColor, Width: vg.Points(1), Dashes: dashes[1]}})
	}
	lo, hi := p.Y.Min, p.Y.Max
	p.Y.Min, p.Y.Max = lo/1.1, hi
	lg.xFixed = true // a log axis: its range is the data's
	finish(p, lg, 1.03, true)
	return p, nil
}
