package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/compare"
	"github.com/loadcurve/loadcurve/report"
	"github.com/loadcurve/loadcurve/result"
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
		Flags: concat(objectiveFlags(), []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "compare even when the results are not comparable (output stamped NOT COMPARABLE)"},
			&cli.Float64Flag{Name: "a-cost-per-hour", DefaultText: "none: no cost ledger", Usage: "A's running cost per hour (enables the cost ledger)"},
			&cli.Float64Flag{Name: "b-cost-per-hour", DefaultText: "none", Usage: "B's running cost per hour"},
			&cli.StringFlag{Name: "currency", Usage: "currency label"},
			&cli.Float64Flag{Name: "paired-confidence", Value: 0.95, Usage: "confidence level of the paired intervals"},
			&cli.StringFlag{Name: "out", Usage: "directory for compare.json, compare.csv, overlay plots and report.html"},
			&cli.BoolFlag{Name: "replace", Usage: "let --out replace a comparison already there"},
			plotFormatsFlag(""),
			&cli.StringFlag{Name: "format", Value: report.FormatTable, Usage: "table or json"},
			scenarioFlag(),
		}),
		Before: applyScenario,
		Action: compareAction,
	}
}

func compareAction(c *cli.Context) error {
	args := c.Args().Slice()
	// vLLM-style "--goodput ttft:500 tpot:50": further KEY:MS pairs arrive as arguments.
	var paths []string
	for _, a := range args {
		if _, err := os.Stat(a); err == nil || !c.IsSet("goodput") {
			paths = append(paths, a)
		}
	}
	if len(paths) != 2 {
		return usagef("compare takes two results, A and B (directories or records.jsonl files); got %d", len(paths))
	}
	var errs []error
	format := c.String("format")
	if format != report.FormatTable && format != report.FormatJSON {
		errs = append(errs, fmt.Errorf("--format must be table or json, got %q", format))
	}
	plots, err := plotFormats(c)
	if err != nil {
		errs = append(errs, err)
	}
	conf := c.Float64("paired-confidence")
	if !(conf > 0 && conf < 1) {
		errs = append(errs, fmt.Errorf("--paired-confidence must be in (0,1), got %v", conf))
	}
	var costs *compare.Costs
	if c.IsSet("a-cost-per-hour") || c.IsSet("b-cost-per-hour") {
		for _, s := range []string{"a", "b"} {
			if !c.IsSet(s + "-cost-per-hour") {
				errs = append(errs, fmt.Errorf("--%s-cost-per-hour is required for the cost ledger", s))
			} else if v := c.Float64(s + "-cost-per-hour"); !(v >= 0) {
				errs = append(errs, fmt.Errorf("--%s-cost-per-hour must be a finite number >= 0, got %v", s, v))
			}
		}
		costs = &compare.Costs{A: c.Float64("a-cost-per-hour"), B: c.Float64("b-cost-per-hour"), Currency: c.String("currency")}
	}
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	var sides [2]compare.Side
	for i, p := range paths {
		l, err := loadResult(c, p, 2, false, c.App.ErrWriter)
		if err != nil {
			return err
		}
		sides[i] = compare.Side{Name: []string{"A", "B"}[i], Path: p, File: l.File, Result: l.Result}
	}
	res, err := compare.Results(sides[0], sides[1], compare.Options{Confidence: conf, Force: c.Bool("force"), Costs: costs})
	if errors.Is(err, compare.ErrNotComparable) {
		for _, m := range res.Mismatches {
			fmt.Fprintf(c.App.ErrWriter, "  %s\n", m)
		}
		return usagef("%s and %s are not comparable (%d differences above); --force compares them anyway, stamped NOT COMPARABLE", paths[0], paths[1], len(res.Mismatches))
	}
	if err != nil {
		return err
	}
	if res.Stamp != "" {
		fmt.Fprintf(c.App.ErrWriter, "loadcurve: WARNING: %s\n", res.Stamp)
		for _, m := range res.Mismatches {
			fmt.Fprintf(c.App.ErrWriter, "  %s\n", m)
		}
	}
	w := c.App.Writer
	if format == report.FormatJSON {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(w, string(b))
	} else if err := report.CompareText(w, res, sides[0].Result, sides[1].Result); err != nil {
		return err
	}
	out := c.String("out")
	if out == "" {
		return nil
	}
	if err := prepareOut(result.Out{Dir: out, Kind: result.Comparison, Replace: c.Bool("replace")}); err != nil {
		return err
	}
	if err := res.Write(filepath.Join(out, result.CompareName)); err != nil {
		return err
	}
	if err := writeScenario(out, c); err != nil {
		return err
	}
	return report.WriteCompareFiles(out, res, sides[0].Result, sides[1].Result, plots)
}
