package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/loadgen/shard"
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
		Flags:  mergeFlags(),
		Action: mergeAction,
	}
}

// mergeFlags are a merge's settings (shard.MergeSettings): where it writes, then what
// judges the shards.
func mergeFlags() []cli.Flag {
	s := shard.DefaultMergeSettings()
	ps := s.Params()
	return cliparam.Concat(bind.Flags(catOutput, ps[:3]), bind.Flags(catObjective, ps[3:]))
}

func mergeAction(c *cli.Context) error {
	if c.Args().Len() < 1 {
		return usageError{errors.New("merge: give the shards' result directories (or records.jsonl files, or a pattern such as /results/shard-*)")}
	}
	s := shard.DefaultMergeSettings()
	if errs := append(bind.Apply(c, s.Params(), false), s.Validate()...); len(errs) > 0 {
		return usageErrors(errs)
	}
	out := s.Out
	in, err := shard.ReadInputs(c.Args().Slice())
	if err != nil {
		return usageError{fmt.Errorf("merge: %w", err)}
	}
	if err := shard.CheckOut(out, in); err != nil {
		return usageError{fmt.Errorf("merge: %w", err)}
	}
	if err := prepareOut(c, result.Out{Dir: out, Kind: result.Measured, Replace: s.Replace}); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	merged, rep, err := shard.MergeInputs(in, s.Options)
	if err != nil {
		return usageError{fmt.Errorf("merge: %w", err)} // the files are not the shards of one run
	}
	if err := shard.WriteResult(out, in, merged, rep); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if err := rep.WriteText(c.App.Writer); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	fmt.Fprintf(c.App.Writer, "\nwrote %s (%d requests in %d tiers) and merge.json\n", filepath.Join(out, result.RecordsName), len(merged.Records), len(merged.Tiers))
	fmt.Fprintf(c.App.Writer, "next: loadcurve report %s (the shards' settings travel in the records header)\n", out)
	return nil
}
