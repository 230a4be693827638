package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/curve/compare"
	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/curve/result"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "put two run or sweep results side by side, after checking that they are comparable",
		ArgsUsage: "A B",
		Description: "Checks first that A and B sent the same traffic (request-set fingerprint, schedule and seed, cache policy,\n" +
			"request body parameters, metric definitions, objectives and target share, and a tier rate in common); on a\n" +
			"mismatch it exits 2 naming each difference, unless --force, which stamps every output NOT COMPARABLE. Then\n" +
			"compares tier by tier at equal rate, request by request (paired: the same request ids in both) with a\n" +
			"confidence interval of the median latency difference B−A, and each side's capacity and operating point.\n" +
			"Give --a-cost-per-hour and --b-cost-per-hour for the cost ledger. Each side's settings come from its records\n" +
			"header; --goodput (and the analysis flags) override them for both.",
		Flags:  cliparam.Concat(objectiveFlags(), compareFlags(), []cli.Flag{scenarioFlag()}),
		Before: applyScenario,
		Action: compareAction,
	}
}

func compareAction(c *cli.Context) error {
	paths := c.Args().Slice()
	if len(paths) != 2 {
		return usagef("compare takes two results, A and B (directories or records.jsonl files); got %d", len(paths))
	}
	o, s := report.DefaultCompareOutput(), compare.DefaultSettings()
	ps := s.Params()
	bad := append(bind.Apply(c, o.Params(), false), bind.Apply(c, ps, false)...)
	errs := append(o.Validate(), bad...)
	opts, optErrs := s.Options(ps)
	if errs = append(errs, optErrs...); len(errs) > 0 {
		return usageErrors(errs)
	}
	var sides [2]compare.Side
	for i, p := range paths {
		l, err := loadResult(c, p, false, c.App.ErrWriter)
		if err != nil {
			return err
		}
		sides[i] = compare.Side{Name: []string{"A", "B"}[i], Path: p, File: l.File, Result: l.Result}
	}
	res, err := compare.Results(sides[0], sides[1], opts)
	if err != nil && !errors.Is(err, compare.ErrNotComparable) {
		return err
	}
	say(c, "WARNING: ", res.Stamp)
	for _, m := range res.Mismatches {
		fmt.Fprintf(c.App.ErrWriter, "  %s\n", m)
	}
	if err != nil {
		return usageError{bind.Error(err)}
	}
	if err := report.PrintComparison(c.App.Writer, o.Format, res, sides[0].Result, sides[1].Result); err != nil {
		return err
	}
	return writeOut(c, result.Out{Dir: o.Out, Kind: result.Comparison, Replace: o.Replace}, func(dir string) error {
		return report.WriteComparison(dir, res, sides[0].Result, sides[1].Result, o.Plots)
	})
}

// compareFlags are compare's settings (compare.Settings), then how the comparison is shown and
// where its files go (report.CompareOutput).
func compareFlags() []cli.Flag {
	s, o := compare.DefaultSettings(), report.DefaultCompareOutput()
	return cliparam.Concat(bind.Flags("", s.Params()), bind.Flags("", o.Params()))
}
