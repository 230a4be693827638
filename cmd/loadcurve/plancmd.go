package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/field"
	"github.com/loadcurve/loadcurve/param"
	"github.com/loadcurve/loadcurve/plan"
	"github.com/loadcurve/loadcurve/report"
	"github.com/loadcurve/loadcurve/result"
	"github.com/loadcurve/loadcurve/sweep"
)

func planCommand() *cli.Command {
	return &cli.Command{
		Name:      "plan",
		Usage:     "replicas, monthly cost and cost per effective token for a forecast, from sweeps' verified operating points",
		ArgsUsage: "RESULT [RESULT_B]",
		Description: "Reads one or two sweep results (their verified operating points) and a forecast (--peak, or --profile\n" +
			"time,rate CSV), and states per deployment the replicas needed at peak (requests spread evenly: each replica\n" +
			"sees peak/N with the same burstiness), their utilisation, the monthly cost with replicas for the peak and\n" +
			"following the profile (scaling up --scale-up-lag ahead of demand), and the cost per million effective tokens\n" +
			"(idle capacity is paid for). With two results: which is cheaper for this forecast, and the forecast levels\n" +
			"where that flips, after compare's comparability check (--allow-different plans results measured differently,\n" +
			"stamped NOT COMPARABLE), and the payback of a one-time cost by cost's rule. Tokens per request are counted\n" +
			"in the records. --rehearse tries the plan on the embedded deployment's replicas. Each result's settings\n" +
			"come from its records header; --goodput (and the analysis flags) override them for both.",
		Flags:  planFlags(),
		Before: applyScenario,
		Action: planAction,
	}
}

// planFlags are plan's settings (plan.Settings), where it writes, and its rehearsal's
// (plan.Rehearsal), after the objective and analysis flags.
func planFlags() []cli.Flag {
	s, o, r := plan.DefaultSettings(), report.DefaultPlanOutput(), plan.DefaultRehearsal()
	rehearsal := r.Params()
	return concat(objectiveFlags(), flagsOf("", s.Params()), flagsOf("", o.Params()), flagsOf("", rehearsal[:1]), []cli.Flag{scenarioFlag()},
		flagsOf(catRehearse, rehearsal[1:]), sourceFlags())
}

// planSide is one result a plan reads.
type planSide struct {
	name, dir string
	loaded    *sweep.Loaded
	d         plan.Deployment
}

func planAction(c *cli.Context) error {
	args := resultArgs(c)
	if len(args) < 1 || len(args) > 2 {
		return usagef("plan: want one or two result directories (A, and B to compare), got %d", len(args))
	}
	o := report.DefaultPlanOutput()
	if errs := append(applyFlags(c, o.Params(), false), o.Validate()...); len(errs) > 0 {
		return usageError{flagError(errs[0])}
	}
	set, rehearsal := plan.DefaultSettings(), plan.DefaultRehearsal()
	ps, rps := set.Params(), rehearsal.Params()
	errs := flagErrors(append(applyFlags(c, ps, false), applyFlags(c, rps, false)...))
	f, err := set.ForecastSource(ps).Read()
	if err != nil {
		errs = append(errs, usageError{flagError(err)})
	}
	var sides []*planSide
	for i, dir := range args {
		side := &planSide{name: plan.Sides[i], dir: dir}
		sides = append(sides, side)
		perHour, oneTime, err := set.Costs(i)
		if err != nil {
			errs = append(errs, usageError{flagError(err)})
		}
		if side.loaded, err = loadResult(c, dir, len(args), false, c.App.ErrWriter); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", side.name, err))
			continue
		}
		// The result's axis says what its rates count: plan refuses sessions and users.
		d, verified, err := plan.FromResult(side.name, side.loaded.Result, side.loaded.File)
		if err != nil {
			errs = append(errs, usagef("%s (%s): %v", side.name, dir, err))
			continue
		}
		warning, err := set.CheckVerified(side.name, dir, d, verified)
		if err != nil {
			errs = append(errs, usageError{flagError(err)})
			continue
		}
		planWarning(c, warning)
		d.CostPerHour, d.OneTimeCost = perHour, oneTime
		side.d = d
	}
	var comparability *plan.Comparability
	if len(errs) == 0 && len(sides) == 2 {
		k, warning, err := set.CheckComparable(sides[0].loaded.Result, sides[1].loaded.Result, sides[0].dir, sides[1].dir)
		if k != nil {
			for _, d := range k.Differences {
				fmt.Fprintf(c.App.ErrWriter, "  %s\n", d)
			}
		}
		if err != nil {
			errs = append(errs, usageError{flagError(err)})
		}
		planWarning(c, warning)
		comparability = k
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	opts := set.Options(comparability)
	for _, w := range f.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "loadcurve: WARNING: %s\n", w)
	}
	for _, err := range opts.Validate() {
		if fe := field.Of(err); fe != nil && fe.Name == plan.FieldCurrency {
			return usageError{flagError(err)}
		}
	}
	var ds []plan.Deployment
	for _, side := range sides {
		ds = append(ds, side.d)
	}
	doc, err := plan.NewDocument(f, opts, ds...)
	if err != nil {
		return usageError{err}
	}
	if rehearsal.On {
		trials, err := rehearse(c, rehearsal, rps, sides, doc.Plans, f)
		if err != nil {
			return err
		}
		doc.SetRehearsals(trials)
	}
	if err := report.PrintPlan(c.App.Writer, o.Format, doc); err != nil {
		return err
	}
	if o.Out != "" {
		return writePlan(c, o, doc)
	}
	return nil
}

// planWarning writes a library's warning, the inputs it refers to written as their flags;
// nothing when it is empty.
func planWarning(c *cli.Context, warning string) {
	if warning != "" {
		fmt.Fprintf(c.App.ErrWriter, "loadcurve: WARNING: %s\n", param.Render(warning, flagOf))
	}
}

// writePlan writes the plan's files (report.WritePlan: plan.json, report.html) and the scenario into o.Out.
func writePlan(c *cli.Context, o report.PlanOutput, doc plan.Document) error {
	out := o.Out
	if err := prepareOut(result.Out{Dir: out, Kind: result.Plan, Replace: o.Replace}); err != nil {
		return err
	}
	if err := report.WritePlan(out, doc); err != nil {
		return err
	}
	if err := writeScenario(out, c); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "loadcurve: wrote the plan to %s (plan.json, report.html)\n", out)
	return nil
}
