package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/records"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "re-derive summaries, the load curve, plots and report.html from a records file, optionally under new objectives",
		ArgsUsage: "DIR|records.jsonl",
		Description: "Reads records.jsonl (the raw truth) and recomputes everything else without sending any load.\n" +
			"Options not given are taken from the directory's curve.json, else the defaults.",
		Flags: concat(objectiveFlags(), []cli.Flag{
			&cli.Float64Flag{Name: "target-share", Category: catObjective, Value: curve.DefaultTargetShare, Usage: "compliant request share a tier must reach, in (0,1]"},
			&cli.Float64Flag{Name: "headroom", Category: catObjective, Value: curve.DefaultHeadroom, Usage: "operating point = capacity × (1 − headroom), in [0,1)"},
		}, outputFlags()),
		Action: reportAction,
	}
}

// resolveRecords accepts a directory holding records.jsonl or the file itself.
func resolveRecords(arg string) (dir, path string, err error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return "", "", usagef("%s: %v", arg, err)
	}
	if fi.IsDir() {
		return arg, filepath.Join(arg, "records.jsonl"), nil
	}
	return filepath.Dir(arg), arg, nil
}

// loadTiers reads a records file into tiers.
func loadTiers(path string) (*records.File, []tierData, error) {
	f, err := records.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var tiers []tierData
	for _, t := range f.Tiers {
		tiers = append(tiers, tierData{info: tierInfo{index: t.Tier, maxConc: f.Header.MaxConcurrency, rate: float64(t.RequestRate), burst: float64(t.Burstiness),
			arrival: t.Arrival, planned: t.Planned, fingerprint: t.WorkloadFingerprint}, recs: f.TierRecords(t.Tier),
			server: f.ServerMetrics[t.Tier]})
	}
	if len(tiers) == 0 {
		return nil, nil, fmt.Errorf("%s has no tier: it holds no measurement", path)
	}
	return f, tiers, nil
}

func reportAction(c *cli.Context) error {
	if c.Args().Len() < 1 || (c.Args().Len() > 1 && !c.IsSet("goodput")) {
		return usagef("report takes one argument, a result directory or records.jsonl; got %d", c.Args().Len())
	}
	dir, path, err := resolveRecords(c.Args().First())
	if err != nil {
		return err
	}
	f, tiers, err := loadTiers(path)
	if err != nil {
		return err
	}
	for _, w := range f.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "loadcurve: warning: %s: %s\n", path, w)
	}
	// Defaults: what the saved curve.json used, unless overridden.
	var saved curveOptions
	hasSaved := false
	if b, err := os.ReadFile(filepath.Join(dir, "curve.json")); err == nil {
		var cf struct {
			Options curveOptions `json:"options"`
		}
		if err := json.Unmarshal(b, &cf); err != nil {
			return fmt.Errorf("read %s: %w", filepath.Join(dir, "curve.json"), err)
		}
		saved, hasSaved = cf.Options, true
	}
	var errs []error
	opts, mErrs := measureOptions(c, 1)
	errs = append(errs, mErrs...)
	params := curve.Params{TargetShare: c.Float64("target-share"), Headroom: c.Float64("headroom")}
	if hasSaved {
		if !c.IsSet("goodput") && saved.Objectives != "" {
			if opts.Objectives, err = measure.ParseGoodput([]string{saved.Objectives}); err != nil {
				errs = append(errs, fmt.Errorf("curve.json objectives: %w", err))
			}
		}
		if !c.IsSet("metric-percentiles") && len(saved.Percentiles) > 0 {
			opts.Percentiles = saved.Percentiles
		}
		if !c.IsSet("max-schedule-lag") && saved.MaxScheduleLagMs > 0 {
			opts.MaxScheduleLag = msDuration(saved.MaxScheduleLagMs)
		}
		if !c.IsSet("target-share") {
			params.TargetShare = saved.Params.TargetShare
		}
		if !c.IsSet("headroom") {
			params.Headroom = saved.Params.Headroom
		}
		if !c.IsSet("target-share") && !c.IsSet("headroom") {
			params = saved.Params
		}
	}
	errs = append(errs, params.Validate()...)
	format, err := outputFormat(c)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	out := c.String("out")
	if out == "" {
		out = dir
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", out, err)
	}
	if f.Header.Command == "run" && len(tiers) == 1 {
		sum := summarize(tiers[0], opts)
		sum.MaxConcurrency = f.Header.MaxConcurrency
		if err := writeJSON(out, "summary.json", summaryFile{Header: f.Header, Summary: sum, Server: tiers[0].server}); err != nil {
			return err
		}
		if format == "json" {
			b, _ := json.MarshalIndent(sum, "", "  ")
			fmt.Fprintln(c.App.Writer, string(b))
		} else {
			writeSummaryText(c.App.Writer, sum, f.Header.Model, f.Header.Target)
			writeServerText(c.App.Writer, tiers[0].server)
		}
		return nil
	}
	cf := buildCurve(f.Header, tiers, curveOptions{Objectives: opts.Objectives.String(), Percentiles: opts.Percentiles,
		MaxScheduleLagMs: ms(opts.MaxScheduleLag), Params: params}, opts)
	return emitCurve(c.App.Writer, c.App.ErrWriter, format, out, cf)
}
