package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/curve/cost"
	"github.com/loadcurve/loadcurve/curve/report"
)

func costFlags() []cli.Flag {
	a, b, p, o := cost.NewSide("A"), cost.NewSide("B"), cost.DefaultParams(), report.DefaultLedgerOutput()
	return cliparam.Concat(bind.Flags("", a.Params()), bind.Flags("", b.Params()), bind.Flags("", p.Inputs()), bind.Flags("", o.Params()))
}

func costCommand() *cli.Command {
	return &cli.Command{
		Name:      "cost",
		Usage:     "cost per million effective tokens of A and B, break-even compliant share, payback period",
		ArgsUsage: " ",
		Description: "Effective output = raw output × compliant token share. B's break-even share s* = (cost_B·Q_A/cost_A)/raw_B.\n" +
			"Example (the seed article's constructed numbers):\n" +
			"  loadcurve cost --a-cost-per-hour 100 --a-raw-throughput 10000 --a-compliant-share 0.95 \\\n" +
			"                 --b-cost-per-hour 80 --b-raw-throughput 12000 --b-compliant-share 0.60\n" +
			"From results (--a DIR): the figures its records give under the settings they were made with.",
		Flags:  costFlags(),
		Action: costAction,
	}
}

// sideFigures reads one side's option from flags or from a result.
func sideFigures(c *cli.Context, name string) (cost.Option, []error) {
	side := cost.NewSide(name)
	ps := side.Params()
	errs := append(bind.Apply(c, ps, false), side.Check(ps)...)
	o, flag := side.Option, func(f string) string { return bind.Flag(side.Field(f)) }
	if path := side.Result; path != "" {
		l, err := loadResult(nil, path, false, c.App.ErrWriter)
		if err != nil {
			return o, append(errs, fmt.Errorf("%s %s: %w", flag(cost.FieldResult), path, err))
		}
		f, err := l.Result.FiguresAt(side.Tier)
		if err != nil {
			return o, append(errs, fmt.Errorf("%s %s: %w", flag(cost.FieldResult), path, err))
		}
		o = o.Measured(f)
	}
	return o, append(errs, side.CheckFigures(o)...)
}

func costAction(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usagef("unexpected argument %q", c.Args().First())
	}
	a, errs := sideFigures(c, "A")
	b, bErrs := sideFigures(c, "B")
	errs = append(errs, bErrs...)
	lo, p := report.DefaultLedgerOutput(), cost.DefaultParams()
	errs = append(append(errs, bind.Apply(c, lo.Params(), false)...), lo.Validate()...)
	errs = append(errs, bind.Apply(c, p.Inputs(), false)...)
	errs = append(errs, p.Validate()...)
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	l, err := cost.NewLedger(a, b, p)
	if err != nil {
		return usageError{err}
	}
	return report.PrintLedger(c.App.Writer, lo.Format, l)
}
