package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/curve/result"
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
	s, o, r := plan.DefaultSettings(), report.DefaultPlanOutput(), plan.DefaultRehearsal(rehearsalDefaults())
	rehearsal := r.Params()
	return cliparam.Concat(objectiveFlags(), bind.Flags("", s.Params()), bind.Flags("", o.Params()), bind.Flags("", rehearsal[:1]), []cli.Flag{scenarioFlag()},
		bind.Flags(catRehearse, rehearsal[1:]), sourceFlags())
}

func planAction(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) < 1 || len(args) > 2 {
		return usagef("plan: want one or two result directories (A, and B to compare), got %d", len(args))
	}
	o := report.DefaultPlanOutput()
	if errs := append(bind.Apply(c, o.Params(), false), o.Validate()...); len(errs) > 0 {
		return usageError{bind.Error(errs[0])}
	}
	set, rehearsal := plan.DefaultSettings(), plan.DefaultRehearsal(rehearsalDefaults())
	ps, rps := set.Params(), rehearsal.Params()
	errs := append(bind.Apply(c, ps, false), bind.Apply(c, rps, false)...)
	f, err := set.ForecastSource(ps).Read()
	if err != nil {
		errs = append(errs, err)
	}
	ins := make([]plan.Input, len(args))
	for i, dir := range args {
		ins[i] = plan.Input{Side: plan.Sides[i], Dir: dir}
		if ins[i].Loaded, err = loadResult(c, dir, false, c.App.ErrWriter); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", plan.Sides[i], err))
		}
	}
	ds, k, bad := set.Deployments(ins, func(w string) { say(c, "WARNING: ", w) }, func(d string) { fmt.Fprintf(c.App.ErrWriter, "  %s\n", d) })
	if errs = append(errs, bad...); len(errs) > 0 {
		return usageErrors(errs)
	}
	doc, err := set.Document(f, ds, k, func(w string) { say(c, "WARNING: ", w) })
	if err != nil {
		return usageErrors([]error{err})
	}
	if rehearsal.On {
		trials, err := rehearse(c, rehearsal, rps, ins, doc.Plans, f)
		if err != nil {
			return err
		}
		doc.SetRehearsals(trials)
	}
	if err := report.PrintPlan(c.App.Writer, o.Format, doc); err != nil {
		return err
	}
	err = writeOut(c, result.Out{Dir: o.Out, Kind: result.Plan, Replace: o.Replace}, func(dir string) error { return report.WritePlan(dir, doc) })
	if err == nil && o.Out != "" {
		say(c, "", "wrote the plan to "+o.Out+" (plan.json, report.html)")
	}
	return err
}
