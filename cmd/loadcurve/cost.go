package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cost"
	"github.com/loadcurve/loadcurve/report"
)

func costFlags() []cli.Flag {
	var fl []cli.Flag
	for _, side := range []string{"a", "b"} {
		S := map[string]string{"a": "A", "b": "B"}[side]
		fl = append(fl,
			&cli.Float64Flag{Name: side + "-cost-per-hour", DefaultText: "none: required", Usage: S + "'s total running cost per hour"},
			&cli.Float64Flag{Name: side + "-raw-throughput", DefaultText: "none", Usage: S + "'s raw output throughput, tok/s (or from --" + side + ")"},
			&cli.Float64Flag{Name: side + "-compliant-share", DefaultText: "none", Usage: S + "'s compliant token share in [0,1] (or from --" + side + ")"},
			&cli.Float64Flag{Name: side + "-maintenance", Usage: S + "'s extra maintenance cost per period"},
			&cli.StringFlag{Name: side, Usage: "take " + S + "'s throughput and share from a result directory or records file: at its verified operating point (the confirmation tier's measured figures), else the curve there, or --" + side + "-tier"},
			&cli.IntFlag{Name: side + "-tier", Value: -1, DefaultText: "none: the operating point", Usage: "with --" + side + ": use this tier's steady-state figures instead"},
		)
	}
	return append(fl,
		&cli.Float64Flag{Name: "one-time", Usage: "one-time investment of moving from A to B (migration, acceptance)"},
		&cli.Float64Flag{Name: "hours-per-period", Value: cost.DefaultHoursPerPeriod, Usage: "hours in one period for maintenance and payback (730 = a month)"},
		&cli.StringFlag{Name: "currency", Value: "", Usage: "currency label"},
		&cli.StringFlag{Name: "format", Value: "table", Usage: "table or json"},
	)
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
func sideFigures(c *cli.Context, side string) (cost.Option, []error) {
	o := cost.Option{Name: map[string]string{"a": "A", "b": "B"}[side], CostPerHour: c.Float64(side + "-cost-per-hour"),
		Maintenance: c.Float64(side + "-maintenance")}
	var errs []error
	if !c.IsSet(side + "-cost-per-hour") {
		errs = append(errs, fmt.Errorf("--%s-cost-per-hour is required", side))
	}
	if path := c.String(side); path != "" {
		if c.IsSet(side+"-raw-throughput") || c.IsSet(side+"-compliant-share") {
			errs = append(errs, fmt.Errorf("give --%s or --%s-raw-throughput/--%s-compliant-share, not both", side, side, side))
		}
		l, err := loadResult(nil, path, 0, false, c.App.ErrWriter)
		if err != nil {
			return o, append(errs, fmt.Errorf("--%s %s: %w", side, path, err))
		}
		f, err := l.Result.FiguresAt(c.Int(side + "-tier"))
		if err != nil {
			return o, append(errs, fmt.Errorf("--%s %s: %w", side, path, err))
		}
		o = o.Measured(f)
	} else {
		for _, f := range []string{"-raw-throughput", "-compliant-share"} {
			if !c.IsSet(side + f) {
				errs = append(errs, fmt.Errorf("--%s%s is required (or --%s DIR to read it from a result)", side, f, side))
			}
		}
		o.RawThroughput, o.CompliantShare = c.Float64(side+"-raw-throughput"), c.Float64(side+"-compliant-share")
	}
	for _, err := range o.Validate() {
		var fe *cost.FieldError
		if errors.As(err, &fe) {
			err = errors.New(fe.Render("--" + side + "-" + fe.Field)) // the field is its flag's suffix
		}
		errs = append(errs, err)
	}
	return o, errs
}

func costAction(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usagef("unexpected argument %q", c.Args().First())
	}
	a, errs := sideFigures(c, "a")
	b, bErrs := sideFigures(c, "b")
	errs = append(errs, bErrs...)
	format := c.String("format")
	if format != "table" && format != "json" {
		errs = append(errs, fmt.Errorf("--format must be table or json, got %q", format))
	}
	p := cost.Params{Currency: c.String("currency"), HoursPerPeriod: c.Float64("hours-per-period"), OneTime: c.Float64("one-time")}
	errs = append(errs, p.Validate()...)
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	l, err := cost.NewLedger(a, b, p)
	if err != nil {
		return usageError{err}
	}
	return report.PrintLedger(c.App.Writer, format, l)
}
