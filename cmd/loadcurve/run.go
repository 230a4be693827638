package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/measure/records"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "send one tier of load to a target and summarise it",
		ArgsUsage: " ",
		Description: "Sends --num-requests requests (or those planned within --duration) on a seeded arrival schedule,\n" +
			"streams every response and prints TTFT, TPOT, ITL, E2EL, client queue time, goodput and compliant\n" +
			"throughput, and the tier's steady state judged against --target-share. Compliance = success AND every\n" +
			"--goodput objective met (default, as for sweep: " + sweep.DefaultObjectives.String() + " for a real target, the embedded\n" +
			"deployment's own without --base-url). Without --base-url it starts the embedded simulated deployment.",
		Flags: vllm.WithFlags("run", cliparam.Concat([]cli.Flag{helpAll()}, targetFlags(), loadFlags("4", 200), clientFlags(), shardFlags(), sourceFlags(), objectiveFlags(), outputFlags(), runInfoFlags(),
			[]cli.Flag{boundedMemoryFlag("summarise on the fly and keep no records in memory, for long runs")},
			vllm.SaveFlags(catVLLM), simFlags("sim-"), []cli.Flag{scenarioFlag()})),
		Before: applyScenario,
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	spec, errs := arrivalSpec(c)
	n, d, e := loadCount(c)
	errs = append(errs, e...)
	// The objectives a sweep of this target would judge by, when none are given.
	base, whose := loadSettings(c)
	lc, e := readLoadCommand(c, base)
	errs = append(errs, e...)
	if err := spec.CheckWithin(d); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	src := lc.source
	sch, replay, err := runner.RunSchedule(spec, src, d)
	if err != nil {
		return usageErrors([]error{err})
	}
	if replay {
		say(c, "", runner.ReplayNote)
	}
	n = runner.RunRequests(src, n, c.IsSet("num-requests"), d) // a trace whole, a file's requests once
	cfg := sweep.Config{Schedule: sch, Requests: n, Duration: d, MaxConcurrency: lc.target.MaxConcurrency, Seed: c.Int64("seed"),
		Settings: lc.settings, Bounded: lc.bounded, StartAt: lc.target.StartAt, Drain: sweep.RunDrain(lc.target.Target.Timeout, src.Sessions())}
	if errs := bind.Errors(cfg.Validate()); len(errs) > 0 {
		return usageErrors(errs)
	}
	if k := arrival.SetSize(sch, n, d); k > 0 {
		if err := src.CheckSize(k); err != nil {
			return usageError{err} // the request set would be too large to hold or to generate
		}
	}
	// vLLM's --save-result: its flags are checked, and a named file's path, before any load.
	vr, err := vllm.ReadSave(vllm.ArgsOf(c), c.App.ErrWriter, spec, lc.settings)
	if err != nil {
		return usageError{err}
	}
	if err := vr.CheckPath(vllm.ArgsOf(c), lc.out.Out, lc.out.Replace); err != nil {
		return usageError{err}
	}
	if err := lc.prepareOut(c); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "loadcurve: %s\n", lc.settings.JudgingTier(whose, bind.Flag))
	s, err := lc.open(c, records.CommandRun, sch)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := runExecutor(c.Context, c, s, cfg, lc.scenarioFirst(c), vr.Tap())
	if lost := sweep.RecordsLost(err); lost != nil && res != nil && len(res.Tiers) > 0 {
		// The tiers that ran are whole in memory: show and save what can be, then fail.
		lc.recordsLost = true
		return errors.Join(lc.finish(c, s, res), lost)
	}
	if err != nil {
		return err
	}
	say(c, "WARNING: ", res.ClientBoundWarnings()...)
	if err := lc.finish(c, s, res); err != nil {
		return err
	}
	if c.Context.Err() == nil {
		if err := res.CutShort(); err != nil {
			vr.NotWritten(c.App.ErrWriter, vllm.CutShort)
			return err
		}
	}
	if c.Context.Err() != nil {
		vr.NotWritten(c.App.ErrWriter, vllm.Interrupted)
		return errInterrupted
	}
	return vr.Write(res, vllm.ArgsOf(c), c.App.ErrWriter)
}
