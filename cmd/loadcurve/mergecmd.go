package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/shard"
	"github.com/loadcurve/loadcurve/sweep"
)

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge the records of the shards of one run (--shard i/k) into one result directory",
		ArgsUsage: "DIR|records.jsonl|PATTERN...",
		Description: "Checks that the files are the shards 0..k-1 of one run (same run identity, same k, each index once,\n" +
			"the same tiers) and says which shard is missing, duplicated or from another run otherwise.\n" +
			"Writes OUT/records.jsonl (an ordinary records file: `loadcurve report OUT` reads it unchanged) and\n" +
			"OUT/merge.json, and prints per tier the spread of the shards' wall-clock anchors (start jitter and\n" +
			"drift; an offset between the hosts' clocks cannot show there: check NTP), each shard's own\n" +
			"schedule-lag p99, and shards whose failure share stands out.\n" +
			"A PATTERN such as /results/shard-* is expanded by merge itself when no shell did.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Category: catOutput, Usage: "directory for the merged records.jsonl and merge.json (required)"},
			&cli.BoolFlag{Name: "replace", Category: catOutput, Usage: "let --out replace a result already in that directory"},
			&cli.DurationFlag{Name: "max-anchor-spread", Category: catOutput, Value: shard.DefaultMaxAnchorSpread, Usage: "warn when the shards' wall-clock anchors of a tier spread more"},
			&cli.DurationFlag{Name: "max-schedule-lag", Category: catObjective, Value: measure.DefaultMaxScheduleLag, Usage: "a shard whose schedule-lag p99 exceeds this was client-bound"},
		},
		Action: mergeAction,
	}
}

func mergeAction(c *cli.Context) error {
	if c.Args().Len() < 1 {
		return usageError{errors.New("merge: give the shards' result directories (or records.jsonl files, or a pattern such as /results/shard-*)")}
	}
	out := c.String("out")
	if out == "" {
		return usageError{errors.New("merge: --out DIR is required (the merged result directory)")}
	}
	in, err := shard.ReadInputs(c.Args().Slice())
	if err != nil {
		return usageError{fmt.Errorf("merge: %w", err)}
	}
	target := filepath.Join(out, shard.RecordsName)
	for _, x := range in {
		if samePath(x.Name, target) {
			return usagef("merge: --out %s would overwrite the shard file %s: choose another directory", out, x.Name)
		}
	}
	if held, err := sweep.HoldsResult(out); err != nil {
		return fmt.Errorf("merge: --out %s: %w", out, err)
	} else if held {
		if !c.Bool("replace") {
			return usagef("merge: --out %s already holds a result: choose another directory, or pass --replace to replace all of it", out)
		}
		if err := sweep.ClearResult(out, ""); err != nil {
			return fmt.Errorf("merge: --out %s: %w", out, err)
		}
	}
	merged, rep, err := shard.MergeInputs(in, shard.Options{
		MaxAnchorSpread: c.Duration("max-anchor-spread"), MaxScheduleLag: c.Duration("max-schedule-lag")})
	if err != nil {
		return usageError{fmt.Errorf("merge: %w", err)} // the files are not the shards of one run
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("merge: --out %s: %w", out, err)
	}
	if err := shard.WriteFile(target, merged); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("merge: encode merge.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out, "merge.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if err := rep.WriteText(c.App.Writer); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	fmt.Fprintf(c.App.Writer, "\nwrote %s (%d requests in %d tiers) and merge.json\n", target, len(merged.Records), len(merged.Tiers))
	fmt.Fprintf(c.App.Writer, "next: loadcurve report %s (the shards' settings travel in the records header)\n", out)
	return nil
}

// samePath reports whether a and b name the same file (b need not exist).
func samePath(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == ab
}
