package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/loadcurve/loadcurve/plan"
)

// PlanText prints capacity plans for a forecast: per deployment the replicas at peak (with the
// scale-out formula), the utilisation, the monthly cost static and following the profile, and
// the cost per million effective tokens; with two, which is cheaper and where that flips.
func PlanText(w io.Writer, plans []plan.Result, cmp *plan.Comparison) {
	f := FormatFloat
	t := Table{Title: "Capacity plan for the forecast (replicas of each deployment at its operating point)", Highlight: -1,
		Columns: []string{"deployment", "op. point req/s", "peak req/s", "replicas at peak", "load/replica at peak", "of capacity",
			"static /month", "following /month", "mean replicas", "per M effective tok (static)", "per M effective tok (following)"},
		Align: []bool{false, true, true, true, true, true, true, true, true, true, true}}
	for _, r := range plans {
		capUse := "—"
		if u := r.UtilisationOfCapacityAtPeak; u != nil {
			capUse = pctText(*u)
		}
		t.Rows = append(t.Rows, []string{r.Deployment.Name, f(r.Deployment.OperatingRate, 3), f(r.PeakRate, 3), strconv.Itoa(r.PeakReplicas),
			f(r.LoadPerReplicaAtPeak, 3), capUse, f(r.Static.CostPerMonth, 0), f(r.Following.CostPerMonth, 0), f(r.Following.MeanReplicas, 2),
			f(r.Static.CostPerMillionEffectiveTokens, 4), f(r.Following.CostPerMillionEffectiveTokens, 4)})
	}
	_ = t.Text(w) // a well-formed table
	for _, r := range plans {
		fmt.Fprintf(w, "%s: %s; %s.\n", r.Deployment.Name, r.PeakReplicasFormula, r.Following.Rule)
	}
	if cmp != nil {
		fmt.Fprintf(w, "Following the profile: %s\n", cmp.Following.Summary)
		fmt.Fprintf(w, "Static (replicas for the peak): %s\n", cmp.Static.Summary)
		if cmp.Following.PaybackNote != "" {
			fmt.Fprintf(w, "Payback: %s\n", cmp.Following.PaybackNote)
		}
	}
}

// PlanTimelinePlot draws one period of the forecast: the demand and, for each plan, the
// replicas running when they follow it (right scale: replicas × operating rate, the rate they
// can carry), as steps.
func PlanTimelinePlot(plans []plan.Result) (*plot.Plot, error) {
	if len(plans) == 0 || len(plans[0].Timeline) == 0 {
		return nil, ErrNoData
	}
	p := plot.New()
	p.Title.Text = "Demand and the capacity of the replicas following it, over one period"
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
	p.Legend.Add("demand", demand)
	for i, r := range plans {
		op := r.Deployment.OperatingRate
		l, err := plotter.NewLine(steps(r.Timeline, r.PeriodHours*3600, func(s plan.Step) float64 { return float64(s.Replicas) * op }))
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = pick(palette, i), vg.Points(1.2)
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s: replicas × %s req/s", r.Deployment.Name, FormatFloat(op, 3)), l)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Y.Min = 0
	return p, nil
}

// PlanCostPlot draws both deployments' cost per million effective tokens against the forecast's
// peak (the forecast scaled, its shape kept), following the profile: where the lines cross,
// the cheaper deployment changes (the break-even levels).
func PlanCostPlot(c plan.Comparison) (*plot.Plot, error) {
	if len(c.Curve) == 0 {
		return nil, ErrNoData
	}
	p := plot.New()
	p.Title.Text = "Cost per million effective tokens against the forecast's peak"
	p.X.Label.Text = "forecast peak (req/s)"
	p.Y.Label.Text = "cost per million effective tokens"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{}, plot.LogTicks{}
	for i, side := range []struct {
		name string
		y    func(plan.CurvePoint) float64
	}{
		{c.A.Deployment.Name, func(pt plan.CurvePoint) float64 { return pt.FollowingA }},
		{c.B.Deployment.Name, func(pt plan.CurvePoint) float64 { return pt.FollowingB }},
	} {
		var xy plotter.XYs
		for _, pt := range c.Curve {
			if y := side.y(pt); pt.PeakRate > 0 && y > 0 && !math.IsInf(y, 0) && !math.IsNaN(y) {
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
		p.Legend.Add(side.name, l)
	}
	if peak := c.A.PeakRate; peak > 0 {
		p.Add(&vLine{x: peak, label: "this forecast", line: draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(1)}})
	}
	p.Legend.Top = true
	return p, nil
}
