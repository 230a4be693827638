package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/curve/result"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "re-derive a result from its records file, optionally under other objectives or analysis settings",
		ArgsUsage: "DIR|records.jsonl",
		Description: "Reads records.jsonl (the raw truth, whose header holds every setting the result was made with) and\n" +
			"recomputes the summaries, the curve, the capacity and the operating point without sending any load. With no\n" +
			"option changed it reproduces the original result exactly. It prints the result; --out DIR also writes its\n" +
			"files there (a directory holding a result is refused unless --replace).",
		Flags:  cliparam.Concat(objectiveFlags(), outputFlags(), []cli.Flag{boundedMemoryFlag("read the file one line at a time and summarise on the fly, for files too big for memory")}),
		Action: reportAction,
	}
}

// loadResult rebuilds a result from its records under the settings its header states, changed
// by the flags the user set (c nil: none); the reader's warnings go to warn.
func loadResult(c *cli.Context, arg string, bounded bool, warn io.Writer) (*result.Loaded, error) {
	var override func(result.Settings) (result.Settings, error)
	if c != nil {
		override = func(base result.Settings) (result.Settings, error) {
			s, errs := readSettings(c, base)
			if len(errs) == 0 && bounded {
				_, err := boundedMemory(c, s.Measure)
				return s, err
			}
			return s, usageErrors(errs)
		}
	}
	l, err := result.Load(arg, override, bounded)
	if err != nil {
		if _, ok := err.(usageError); ok {
			return nil, err
		}
		return nil, usagef("%s: %v", arg, bind.Error(err))
	}
	for _, w := range l.Warnings {
		fmt.Fprintf(warn, "loadcurve: warning: %s: %s\n", l.Path, w)
	}
	return l, nil
}

func reportAction(c *cli.Context) error {
	if c.Args().Len() != 1 {
		return usagef("report takes one argument, a result directory or records.jsonl; got %d", c.Args().Len())
	}
	o := report.DefaultOutput()
	errs := bind.Apply(c, o.Params(), false)
	if errs = append(errs, o.Validate()...); len(errs) > 0 {
		return usageErrors(errs)
	}
	l, err := loadResult(c, c.Args().First(), c.Bool("bounded-memory"), c.App.ErrWriter)
	if err != nil {
		return err
	}
	if out := o.Out; out != "" {
		// A replace keeps the records being reported.
		if err := prepareOut(c, result.Out{Dir: out, Kind: result.Derived, Replace: o.Replace, Keep: l.Path}); err != nil {
			return err
		}
		if err := report.WriteLoaded(out, l, o.Plots); err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "loadcurve: wrote the result derived from %s to %s\n", l.Path, filepath.Clean(out))
	}
	return report.Print(c.App.Writer, o.Format, l.Result, o.Verbose)
}
