package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/cmd/internal/resume"
	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// defaultObjectives are the objectives of a sweep that gives none, for its target, and whose
// they are (runner.DefaultObjectives).
func defaultObjectives(c *cli.Context) (measure.Objectives, string) {
	o := runner.Options{Target: loadgen.Target{BaseURL: c.String("base-url")}}
	if o.Target.BaseURL == "" && simOptions(c, "sim-", &o) != nil {
		return sweep.DefaultObjectives, "the default" // refused with the sim's flags
	}
	return runner.DefaultObjectives(o)
}

// embeddedObjectives are the embedded deployment's objectives at its default profile, as help
// text says them.
func embeddedObjectives() string {
	o, _ := runner.DefaultObjectives(runner.Options{})
	return o.String()
}

// loadSettings are the settings run and sweep start from, before their flags: the defaults,
// judging by the objectives a sweep of the target would judge by when --goodput is not given
// (defaultObjectives), the one rule of run and sweep; whose is whose they are ("" when given).
func loadSettings(c *cli.Context) (s result.Settings, whose string) {
	s = result.DefaultSettings()
	if !c.IsSet("goodput") {
		s.Measure.Objectives, whose = defaultObjectives(c)
	}
	return s, whose
}

func sweepFlags() []cli.Flag {
	cfg := sweep.DefaultConfig()
	knobs := bind.Flags(catLoad, cfg.Params())
	for _, f := range knobs {
		if f, ok := f.(*cli.IntFlag); ok && f.Name == "tier-requests" {
			f.Usage = "a tier that runs until decided is planned for this many arrivals at most (within --min/--max-tier-duration)" // both bounds in one
		}
	}
	load := cliparam.Concat(knobs[:2], []cli.Flag{burstinessFlag(), seedFlag()}, knobs[2:])
	return vllm.WithFlags("sweep", cliparam.Concat([]cli.Flag{helpAll()}, targetFlags(), load, clientFlags(), shardFlags(), sourceFlags(), objectiveFlags(), outputFlags(), runInfoFlags(),
		[]cli.Flag{boundedMemoryFlag("summarise every tier as its records arrive and keep none in memory, for long tiers")}, simFlags("sim-"),
		[]cli.Flag{scenarioFlag(), resume.Flag(catOutput)}))
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
			"run at it. Compliance = success AND every --goodput objective met (default: " + sweep.DefaultObjectives.String() + " for a real target,\n" +
			"the embedded deployment's own without --base-url: " + embeddedObjectives() + " for its default profile).",
		Flags: sweepFlags(),
		Before: func(c *cli.Context) error {
			if err := applyScenario(c); err != nil {
				return err
			}
			return usageErrors(resume.Apply(c, claimResumed))
		},
		Action: sweepAction,
	}
}

func sweepAction(c *cli.Context) error {
	in, errs := readSweep(c)
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	return in.run(c)
}

// sweepInput is what a sweep's command line says, read and checked: the executor's
// configuration and the arrivals' burstiness, whose objectives it judges by, the load command
// (target, settings, workload, output) and the interrupted sweep it resumes, if any.
type sweepInput struct {
	cfg     sweep.Config
	spec    arrival.Spec
	whose   string
	lc      *loadCommand
	resumed *sweep.Resume
}

// readSweep reads a sweep's flags, every problem in the order the flags are read.
func readSweep(c *cli.Context) (sweepInput, []error) {
	in := sweepInput{cfg: sweep.DefaultConfig(), spec: arrival.Spec{Burstiness: arrival.DefaultBurstiness}} // the burstiness is shared with run's flag
	ps := in.cfg.Params()
	errs := bind.Apply(c, ps[:1], true) // the rates: their errors come first
	errs = append(errs, bind.Apply(c, in.spec.Params()[1:2], false)...)
	base, whose := loadSettings(c)
	lc, e := readLoadCommand(c, base)
	in.whose, in.lc, errs = whose, lc, append(errs, e...)
	errs = append(errs, bind.Apply(c, ps[1:], true)...)
	cfg := &in.cfg
	if param.IsGiven(ps, sweep.FieldUsers) {
		cfg.Concurrency.Think = c.Duration("think-time")
		errs = append(errs, bind.Errors(runner.CheckVirtualUsers(lc.target))...)
		errs = append(errs, bind.Errors(sweep.CheckClosedLoop(param.IsGiven(ps, sweep.FieldRates), c.String("think-time-dist")))...)
	}
	cfg.Burstiness, cfg.MaxConcurrency, cfg.Seed, cfg.Settings = in.spec.Burstiness, lc.target.MaxConcurrency, c.Int64("seed"), lc.settings
	cfg.Bounded, cfg.StartAt, cfg.Sessions = lc.bounded, lc.target.StartAt, lc.source != nil && lc.source.Sessions()
	*cfg, e = cfg.Check(ps)
	errs = append(errs, e...)
	if err := sweep.CheckSource(lc.source); err != nil {
		errs = append(errs, err)
	}
	resumed, err := resume.Open(c, lc.target, lc.out.Out)
	if err != nil {
		errs = append(errs, err)
	}
	in.resumed = resumed
	return in, errs
}

// run prepares the result directory (or reopens the interrupted sweep's), opens the session,
// runs the sweep and writes its result.
func (in sweepInput) run(c *cli.Context) error {
	lc, resumed := in.lc, in.resumed
	if resumed != nil {
		lc.target.OutDir, lc.target.AppendRecords = lc.out.Out, true
		say(c, resumed.Path+": ", resumed.Warnings...)
		say(c, "", "resuming the sweep in "+lc.out.Out+": "+resumed.Describe())
	} else if err := lc.prepareOut(c); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "loadcurve: %s\n", lc.settings.Judging(in.whose, bind.Flag))
	say(c, "", runner.ExactCapacityNote(lc.target, lc.settings.Measure.Objectives, lc.settings.Params.TargetShare), in.cfg.Bounds(lc.target.Virtual, bind.Flag))
	schedule := result.SweepSchedule{Tiers: in.cfg.Rates, Burstiness: float64(in.spec.Burstiness)}
	if err := in.checkResumable(schedule); err != nil {
		return err
	}
	s, err := lc.open(c, records.CommandSweep, schedule)
	if err != nil {
		return err
	}
	defer s.Close()
	scenario := lc.scenarioFirst(c)
	tune := func(x *sweep.Executor) {
		scenario(x)
		if resumed != nil {
			x.Resume, x.Fingerprint = resumed, lc.target.Fingerprint
		}
	}
	if resumed != nil {
		if diffs := resume.HeaderDiffers(lc.out.Out, resumed.Header, s.Header); len(diffs) > 0 {
			return usageErrors(diffs)
		}
		s.Header = resumed.Header // the sweep's own, as its records file holds it
	}
	res, err := runExecutor(c.Context, c, s, in.cfg, tune)
	return in.finish(c, s, res, err)
}

// checkResumable compares what a resumed sweep would measure with what it measured, before
// the target starts (the model GET /models names is checked once it has: run). nil when the
// sweep is not resumed.
func (in sweepInput) checkResumable(schedule result.SweepSchedule) error {
	if in.resumed == nil {
		return nil
	}
	in.lc.plan(records.CommandSweep, schedule)
	planned, err := runner.PlannedHeader(in.lc.target)
	if err != nil {
		return err
	}
	if planned.Model == "" {
		planned.Model = in.resumed.Header.Model
	}
	if diffs := resume.HeaderDiffers(in.lc.out.Out, in.resumed.Header, planned); len(diffs) > 0 {
		return usageErrors(diffs)
	}
	return nil
}

// finish shows and saves the result of a sweep that ended with err: whole, interrupted, or
// with its records file cut short (then what ran is saved, and the resume command said).
func (in sweepInput) finish(c *cli.Context, s *runner.Session, res *result.Result, err error) error {
	lc := in.lc
	var mismatch *sweep.MismatchError
	if errors.As(err, &mismatch) {
		return usageErrors([]error{sweep.ResumeRefused(lc.out.Out, mismatch)})
	}
	if lost := sweep.RecordsLost(err); lost != nil && res != nil && len(res.Tiers) > 0 {
		// The tiers that ran are whole in memory: show and save what can be, then fail. The
		// tier the file lost has no closing line there: a resume runs it again.
		return errors.Join(lc.finish(c, s, res), lost,
			fmt.Errorf("once the disk has room, continue the sweep with: %s", resume.Command(c, lc.out.Out)))
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
	if lc.out.Out == "" {
		return fmt.Errorf("%w (without --out, nothing was kept to resume)", errInterrupted)
	}
	if _, err := os.Stat(filepath.Join(lc.out.Out, result.RecordsName)); err != nil {
		return fmt.Errorf("%w (no tier started: nothing to resume)", errInterrupted)
	}
	return fmt.Errorf("%w; continue the sweep with: %s", errInterrupted, resume.Command(c, lc.out.Out))
}
