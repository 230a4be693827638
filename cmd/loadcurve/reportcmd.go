package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

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
		}, outputFlags(), []cli.Flag{boundedMemoryFlag("read the file one line at a time and summarise on the fly, for files too big for memory")}),
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

// tierInfoOf is a tier's identity as its records file states it.
func tierInfoOf(h records.Header, t records.Tier) tierInfo {
	return tierInfo{index: t.Tier, maxConc: h.MaxConcurrency, rate: float64(t.RequestRate), burst: float64(t.Burstiness),
		arrival: t.Arrival, planned: t.Planned, fingerprint: t.WorkloadFingerprint}
}

// loadTiers reads a records file into tiers.
func loadTiers(path string) (*records.File, []tierData, error) {
	f, err := records.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var tiers []tierData
	for _, t := range f.Tiers {
		tiers = append(tiers, tierData{info: tierInfoOf(f.Header, t), recs: f.TierRecords(t.Tier), server: f.ServerMetrics[t.Tier]})
	}
	if len(tiers) == 0 {
		return nil, nil, fmt.Errorf("%s has no tier: it holds no measurement", path)
	}
	return f, tiers, nil
}

// scanTiers reads a records file one line at a time into per-tier streaming summaries
// (report --bounded-memory): it keeps no record, only each tier's sketches and the two numbers
// per ok request that the trend test needs (16 bytes each).
func scanTiers(path string, opts measure.Options) (records.Header, []tierData, []string, error) {
	var h records.Header
	var tiers []tierData
	byIndex := map[int]int{}
	fh, err := os.Open(path)
	if err != nil {
		return h, nil, nil, fmt.Errorf("read records: %w", err)
	}
	defer fh.Close()
	warnings, err := records.Scan(fh, records.Visitor{
		Header: func(hd records.Header) error { h = hd; return nil },
		Tier: func(t records.Tier) error {
			if _, dup := byIndex[t.Tier]; dup {
				return fmt.Errorf("tier %d appears twice", t.Tier)
			}
			acc, err := measure.NewApproxAccumulator(opts, 0)
			if err != nil {
				return usagef("--bounded-memory: %v", err)
			}
			byIndex[t.Tier] = len(tiers)
			tiers = append(tiers, tierData{info: tierInfoOf(h, t), approx: acc})
			return nil
		},
		Record: func(r *records.Record) error {
			i, ok := byIndex[r.Tier]
			if !ok {
				return nil // like loadTiers: a record outside every declared tier counts nowhere
			}
			t := &tiers[i]
			t.approx.Add(r)
			t.trendX, t.trendY = appendTrendPoint(t.trendX, t.trendY, r)
			return nil
		},
		ServerMetrics: func(m records.ServerMetrics) error {
			if i, ok := byIndex[m.Tier]; ok {
				tiers[i].server = m.Metrics
			}
			return nil
		},
	})
	if err != nil {
		var u usageError
		if errors.As(err, &u) {
			return h, nil, nil, u
		}
		return h, nil, nil, fmt.Errorf("read records %s: %w", path, err)
	}
	if len(tiers) == 0 {
		return h, nil, nil, fmt.Errorf("%s has no tier: it holds no measurement", path)
	}
	return h, tiers, warnings, nil
}

func reportAction(c *cli.Context) error {
	if c.Args().Len() < 1 || (c.Args().Len() > 1 && !c.IsSet("goodput")) {
		return usagef("report takes one argument, a result directory or records.jsonl; got %d", c.Args().Len())
	}
	dir, path, err := resolveRecords(c.Args().First())
	if err != nil {
		return err
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
		if !c.IsSet("percentile-metrics") && saved.PercentileMetrics != nil {
			opts.Metrics = saved.PercentileMetrics
		}
		if !c.IsSet("window-warmup") && saved.WindowWarmupS > 0 {
			opts.Warmup = time.Duration(math.Round(saved.WindowWarmupS * 1e9))
		}
		if !c.IsSet("window-cooldown") && saved.WindowCooldownS > 0 {
			opts.Cooldown = time.Duration(math.Round(saved.WindowCooldownS * 1e9))
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
	var header records.Header
	var tiers []tierData
	var warnings []string
	bounded, err := boundedMemory(c, opts)
	if err != nil {
		return err
	}
	if bounded {
		header, tiers, warnings, err = scanTiers(path, opts)
	} else {
		var f *records.File
		if f, tiers, err = loadTiers(path); err == nil {
			header, warnings = f.Header, f.Warnings
		}
	}
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(c.App.ErrWriter, "loadcurve: warning: %s: %s\n", path, w)
	}
	out := c.String("out")
	if out == "" {
		out = dir
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", out, err)
	}
	if header.Command == "run" && len(tiers) == 1 {
		sum := summarize(tiers[0], opts)
		sum.MaxConcurrency = header.MaxConcurrency
		if err := writeJSON(out, "summary.json", summaryFile{Header: header, Summary: sum, Server: tiers[0].server}); err != nil {
			return err
		}
		switch format {
		case "json":
			b, _ := json.MarshalIndent(sum, "", "  ")
			fmt.Fprintln(c.App.Writer, string(b))
		case "csv":
			if err := writeSummaryCSV(c.App.Writer, sum); err != nil {
				return err
			}
		default:
			writeSummaryText(c.App.Writer, sum, header.Model, header.Target)
			writeServerText(c.App.Writer, tiers[0].server)
		}
		return nil
	}
	cf := buildCurve(header, tiers, optionsOf(opts, params), opts)
	return emitCurve(c.App.Writer, c.App.ErrWriter, format, out, cf)
}
