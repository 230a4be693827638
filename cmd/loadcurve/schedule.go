package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/workloads"
)

func scheduleCommand() *cli.Command {
	return &cli.Command{
		Name:      "schedule",
		Usage:     "print a seeded arrival schedule: one planned offset in seconds per line",
		ArgsUsage: " ",
		Flags:     loadFlags("1", 10),
		Action: func(c *cli.Context) error {
			if c.Args().Len() > 0 {
				return usagef("unexpected argument %q", c.Args().First())
			}
			spec, errs := arrivalSpec(c)
			n, d, cErrs := loadCount(c)
			if errs = append(errs, cErrs...); len(errs) > 0 {
				return usageErrors(errs)
			}
			offsets, err := spec.Whole(n, d, c.Int64("seed"))
			var size *arrival.SizeError
			if errors.As(err, &size) {
				return usageError{errors.New(size.Explain(bind.Flag))}
			}
			if err != nil {
				return usageError{err}
			}
			// The line on stderr comes first, as when the listing was flushed after it.
			fmt.Fprintf(c.App.ErrWriter, "# %s\n", arrival.Describe(spec, c.Int64("seed"), offsets))
			return arrival.WriteOffsets(c.App.Writer, offsets)
		},
	}
}

func workloadCommand() *cli.Command {
	s := workloads.DefaultSetSettings()
	setFlags := bind.Flags("", s.Params())
	setFlags[0].(*cli.IntFlag).Aliases = nil // --num-prompts is vLLM's name of a run's requests
	return &cli.Command{
		Name:      "workload",
		Usage:     "materialise a request set to JSONL and print its fingerprint",
		ArgsUsage: " ",
		Description: "Any --workload source; the JSONL written with --out loads back with --workload FILE.jsonl\n" +
			"and has the same fingerprint (a trace's schedule is not written: replay the trace itself).",
		Flags: append(append(sourceFlags(), setFlags...), &cli.StringFlag{Name: "tokenizer", Category: catWorkload,
			Usage: "size the prompts (count a file's) in this tokenizer's tokens: a tokenizer.json, a model directory, or a Hugging Face model id in the local cache"}),
		Action: func(c *cli.Context) error {
			if c.Args().Len() > 0 {
				return usagef("unexpected argument %q", c.Args().First())
			}
			set := workloads.DefaultSetSettings()
			ps := set.Params()
			src, errs := readSource(c)
			errs = append(errs, bind.Apply(c, ps, false)...)
			n, err := set.Size(src, ps)
			if err != nil {
				errs = append(errs, err)
			}
			if len(errs) > 0 {
				return usageErrors(errs)
			}
			say(c, "workload: ", src.Notes...)
			if err := src.CheckSize(n); err != nil {
				return usageError{err}
			}
			rs, notes, err := src.TierSet(n, set.Seed)
			if err != nil {
				return usageError{err}
			}
			say(c, "workload: ", notes...)
			if out := set.Out; out != "" {
				if err := workloads.Save(out, rs); err != nil {
					return err
				}
				fmt.Fprintf(c.App.ErrWriter, "wrote %d requests to %s\n", len(rs.Requests), filepath.Clean(out))
			}
			fmt.Fprintf(c.App.Writer, "%s  %s  %d requests\n", rs.Fingerprint, rs.Source, len(rs.Requests))
			if rs.Tokenizer != nil {
				fmt.Fprintf(c.App.ErrWriter, "input tokens counted with %s\n", workloads.Identity(rs.Tokenizer))
			}
			return nil
		},
	}
}
