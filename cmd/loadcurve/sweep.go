package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/field"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/result"
	"github.com/loadcurve/loadcurve/runner"
	"github.com/loadcurve/loadcurve/sim"
	"github.com/loadcurve/loadcurve/sweep"
)

// defaultObjectives are the objectives of a sweep that gives none, for its target, and whose
// they are (runner.DefaultObjectives); read before the settings, which take them.
func defaultObjectives(c *cli.Context) (string, string) {
	o := runner.Options{Target: loadgen.Target{BaseURL: c.String("base-url")}, SimLabel: c.String("sim-profile")}
	if o.Target.BaseURL == "" && c.String("sim-model") == "mdc" {
		q, err := queueConfig(c, "sim-")
		if err != nil {
			return sweep.DefaultObjectives, "the default" // refused with the queue's flags
		}
		o.Queue = &q
	}
	return runner.DefaultObjectives(o)
}

func sweepFlags() []cli.Flag {
	load := []cli.Flag{
		&cli.StringFlag{Name: "request-rates", Category: catLoad, Value: "auto", Usage: "tiers: a list 1,2,4,8; a range LO:HI:geom:N or LO:HI:lin:N; or auto (probe saturation, then search the capacity)"},
		&cli.StringFlag{Name: "max-concurrencies", Category: catLoad, Usage: "closed-loop tiers instead of rates: concurrency levels 1,2,4,8 (users, each sending its next request when the last one ended, after --think-time) or auto (search the capacity in users)"},
		burstinessFlag(),
		seedFlag(),
		&cli.IntFlag{Name: "num-requests", Aliases: []string{"num-prompts"}, Category: catLoad, DefaultText: "none: tiers run until decided", Usage: "fixed tiers of this many requests instead of tiers that run until their verdict is decided (vLLM's --num-prompts)"},
		&cli.DurationFlag{Name: "duration", Category: catLoad, DefaultText: "none: tiers run until decided", Usage: "fixed tiers of this length instead of tiers that run until their verdict is decided (sharded sweeps need it)"},
		&cli.IntFlag{Name: "tier-requests", Category: catLoad, Value: sweep.DefaultTierRequests, Usage: "a tier that runs until decided is planned for this many arrivals at most (within --min/--max-tier-duration)"},
		&cli.DurationFlag{Name: "min-tier-duration", Category: catLoad, Value: sweep.DefaultMinTierDuration, Usage: "shortest cap of a tier that runs until decided"},
		&cli.DurationFlag{Name: "max-tier-duration", Category: catLoad, Value: sweep.DefaultMaxTierDuration, Usage: "longest cap of a tier that runs until decided (the confirmation may run three times as long, for three times --tier-requests)"},
		&cli.DurationFlag{Name: "drain-timeout", Category: catLoad, Value: sweep.DefaultDrain, Usage: "after a tier's arrivals, how long its stragglers may run before they are canceled, so no tier's tail leaks into the next"},
		&cli.DurationFlag{Name: "cooldown", Category: catLoad, Usage: "pause between tiers"},
		&cli.DurationFlag{Name: "budget", Category: catLoad, Value: sweep.DefaultBudget, Usage: "auto: the most load the whole sweep puts on the target (probes, search and confirmation): the answer is the best it earned in that time; 0: no bound"},
		&cli.Float64Flag{Name: "precision", Category: catLoad, Value: sweep.DefaultPrecision, Usage: "auto: the search wants tiers within this relative distance on either side of its capacity estimate"},
		&cli.IntFlag{Name: "max-tiers", Category: catLoad, Value: sweep.DefaultMaxTiers, Usage: "auto: most tiers of the search (probes and the confirmation apart)"},
		&cli.BoolFlag{Name: "no-confirm", Category: catLoad, Usage: "do not run the tier that verifies the operating point"},
		&cli.IntFlag{Name: "repeat", Category: catLoad, Value: 1, Usage: "run the whole decision this many times with fresh seeds, and report the run-to-run spread of the capacity"},
	}
	return withVLLMFlags("sweep", concat(targetFlags(), load, clientFlags(), shardFlags(), sourceFlags(), objectiveFlags(), outputFlags(), []cli.Flag{plotFormatsFlag(catOutput)}, runInfoFlags(),
		[]cli.Flag{boundedMemoryFlag("summarise every tier as its records arrive and keep none in memory, for long tiers")}, simFlags("sim-"),
		[]cli.Flag{scenarioFlag(), resumeFlag()}))
}

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name:      "sweep",
		Usage:     "find the capacity of a deployment at its objectives, and verify an operating point below it",
		ArgsUsage: " ",
		Description: "With --request-rates auto (the default) it probes the saturation rate, then searches the capacity: each\n" +
			"tier runs until its verdict against --target-share is decided at --confidence (or its cap), in steady state\n" +
			"(warm-up and drain left out), and the capacity is where the monotone fit of the compliant share against the\n" +
			"realised rate crosses the target. The operating point (capacity less --headroom) is then verified by a tier\n" +
			"run at it. Compliance = success AND every --goodput objective met (default: " + sweep.DefaultObjectives + " for a real target,\n" +
			"the embedded deployment's own without --base-url: " + sim.ProfileObjectives(sim.ProfileDefault) + " for its default profile).",
		Flags: sweepFlags(),
		Before: func(c *cli.Context) error {
			if err := applyScenario(c); err != nil {
				return err
			}
			return applyResume(c)
		},
		Action: sweepAction,
	}
}

func sweepAction(c *cli.Context) error {
	var errs []error
	rates, err := sweep.ParseRates(c.String("request-rates"))
	if err != nil {
		errs = append(errs, err)
	}
	burst, err := arrival.ParseBurstiness(c.String("burstiness"))
	if err != nil {
		errs = append(errs, err)
	}
	defaulted := !c.IsSet("goodput")
	objs, whose := defaultObjectives(c)
	if defaulted {
		if err := c.Set("goodput", objs); err != nil {
			errs = append(errs, err)
		}
	}
	lc, e := readLoadCommand(c, sweep.DefaultSettings())
	errs = append(errs, e...)
	var conc sweep.Concurrency
	concBad := false
	if c.IsSet("max-concurrencies") {
		if conc, err = sweep.ParseConcurrencies(c.String("max-concurrencies")); err != nil {
			errs, concBad = append(errs, flagError(err)), true
		}
		conc.Think = c.Duration("think-time")
		errs = append(errs, flagErrors(runner.CheckVirtualUsers(lc.target))...)
		errs = append(errs, flagErrors(sweep.CheckClosedLoop(c.IsSet("request-rates"), c.String("think-time-dist")))...)
		rates = sweep.Rates{}
	}
	cfg := sweep.Config{Rates: rates, Concurrency: conc, Burstiness: burst, MaxConcurrency: lc.client.maxConc, Requests: c.Int("num-requests"),
		Duration: c.Duration("duration"), TierRequests: c.Int("tier-requests"), MinTierDuration: c.Duration("min-tier-duration"),
		MaxTierDuration: c.Duration("max-tier-duration"), Drain: c.Duration("drain-timeout"), Cooldown: c.Duration("cooldown"),
		Seed: c.Int64("seed"), Settings: lc.settings, Precision: c.Float64("precision"), MaxTiers: c.Int("max-tiers"),
		Confirm: !c.Bool("no-confirm"), Repeat: c.Int("repeat"), Bounded: lc.bounded, StartAt: lc.startAt, Budget: c.Duration("budget"),
		Sessions: lc.source != nil && lc.source.Sessions(),
		Given: sweep.Given{Requests: c.IsSet("num-requests"), Duration: c.IsSet("duration"), TierRequests: c.IsSet("tier-requests"),
			MinTierDuration: c.IsSet("min-tier-duration"), MaxTierDuration: c.IsSet("max-tier-duration"), Drain: c.IsSet("drain-timeout"),
			Precision: c.IsSet("precision"), MaxTiers: c.IsSet("max-tiers"), Repeat: c.IsSet("repeat"), Budget: true}}
	for _, e := range cfg.Validate() {
		if fe := field.Of(e); fe != nil && fe.Name == sweep.FieldRates && (concBad || !rates.Auto && len(rates.List) == 0 && c.IsSet("request-rates")) {
			continue // ParseRates or ParseConcurrencies already said what is wrong with the tiers
		}
		errs = append(errs, flagError(e))
	}
	if lc.source != nil && lc.source.Trace != nil {
		errs = append(errs, fmt.Errorf("--workload %s is a trace: a trace is its own schedule, one tier; replay it with `loadcurve run` (and --trace-time-scale)", lc.source.Spec))
	}
	var resume *sweep.Resume
	if c.IsSet("resume") {
		if err := runner.CheckResumable(lc.target); err != nil {
			errs = append(errs, flagError(err))
		} else if resume, err = sweep.OpenResume(lc.outDir); err != nil {
			errs = append(errs, fmt.Errorf("--resume %s: %w", lc.outDir, err))
		}
	}
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	stderr := c.App.ErrWriter
	if resume != nil {
		lc.target.OutDir, lc.target.AppendRecords = lc.outDir, true
		for _, w := range resume.Warnings {
			fmt.Fprintf(stderr, "loadcurve: %s: %s\n", resume.Path, w)
		}
		fmt.Fprintf(stderr, "loadcurve: resuming the sweep in %s: %s\n", lc.outDir, resume.Describe())
	} else if err := lc.prepareOut(); err != nil {
		return err
	}
	if !defaulted {
		whose = "" // given
	}
	fmt.Fprintf(stderr, "loadcurve: %s\n", lc.settings.Judging(whose, flagOf))
	if note := runner.ExactCapacityNote(lc.target, lc.settings.Measure.Objectives, lc.settings.Params.TargetShare); note != "" {
		fmt.Fprintf(stderr, "loadcurve: %s\n", note)
	}
	if bounds := cfg.Bounds(lc.target.Virtual, flagOf); bounds != "" {
		fmt.Fprintf(stderr, "loadcurve: %s\n", bounds)
	}
	s, err := lc.open(c, records.CommandSweep, result.SweepSchedule{Tiers: rates, Burstiness: float64(burst)})
	if err != nil {
		return err
	}
	defer s.Close()
	tune := func(x *sweep.Executor) {
		// The scenario is written when the first tier starts, beside the records file: what a
		// resume of this sweep reads its flags from.
		x.Runner = sweep.BeforeFirstTier(x.Runner, func() error {
			if lc.outDir == "" {
				return nil
			}
			return writeScenario(lc.outDir, c)
		})
		if resume != nil {
			x.Resume, x.Fingerprint = resume, lc.target.Fingerprint
		}
	}
	if resume != nil {
		if diffs := resumeHeaderDiffers(resume.Header, s.Header); len(diffs) > 0 {
			for i, d := range diffs {
				diffs[i] = fmt.Errorf("--resume %s: %w", lc.outDir, d)
			}
			return usageErrors(diffs)
		}
		s.Header = resume.Header // the sweep's own, as its records file holds it
	}
	res, err := runExecutor(c.Context, c, s, cfg, tune)
	var mismatch *sweep.MismatchError
	if errors.As(err, &mismatch) {
		return usagef("--resume %s: %v", lc.outDir, mismatch)
	}
	if lost := sweep.RecordsLost(err); lost != nil && res != nil && len(res.Tiers) > 0 {
		// The tiers that ran are whole in memory: show and save what can be, then fail. The
		// tier the file lost has no closing line there: a resume runs it again.
		return errors.Join(lc.finish(c, s, res), lost,
			fmt.Errorf("once the disk has room, continue the sweep with: %s", resumeCommand(c, lc.outDir)))
	}
	if err != nil {
		return err
	}
	if len(res.Tiers) == 0 {
		return lc.interrupted(c)
	}
	if err := lc.finish(c, s, res); err != nil {
		return err
	}
	if c.Context.Err() != nil {
		return lc.interrupted(c)
	}
	return nil
}

// interrupted is an interrupted sweep's last word: that its result is incomplete and, when it
// kept a records file, the command that continues it.
func (lc *loadCommand) interrupted(c *cli.Context) error {
	if lc.outDir == "" {
		return fmt.Errorf("%w (without --out, nothing was kept to resume)", errInterrupted)
	}
	if _, err := os.Stat(filepath.Join(lc.outDir, result.RecordsName)); err != nil {
		return fmt.Errorf("%w (no tier started: nothing to resume)", errInterrupted)
	}
	return fmt.Errorf("%w; continue the sweep with: %s", errInterrupted, resumeCommand(c, lc.outDir))
}
