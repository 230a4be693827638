package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/param"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/runner"
	"github.com/loadcurve/loadcurve/sweep"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "send one tier of load to a target and summarise it",
		ArgsUsage: " ",
		Description: "Sends --num-requests requests (or those planned within --duration) on a seeded arrival schedule,\n" +
			"streams every response and prints TTFT, TPOT, ITL, E2EL, client queue time, goodput and compliant\n" +
			"throughput, and the tier's steady state judged against --target-share. Without --base-url it starts\n" +
			"the embedded simulated deployment.",
		Flags: withVLLMFlags("run", concat(targetFlags(), loadFlags("4", 200), clientFlags(), shardFlags(), sourceFlags(), objectiveFlags(), outputFlags(), runInfoFlags(),
			[]cli.Flag{boundedMemoryFlag("summarise on the fly and keep no records in memory, for long runs")},
			vllmResultFlags(), simFlags("sim-"), []cli.Flag{scenarioFlag()})),
		Before: applyScenario,
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	spec, errs := arrivalSpec(c)
	n, d, e := loadCount(c)
	errs = append(errs, e...)
	lc, e := readLoadCommand(c, sweep.DefaultSettings())
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
		fmt.Fprintln(c.App.ErrWriter, "loadcurve: "+param.Render(runner.ReplayNote, flagOf))
	}
	n = runner.RunRequests(src, n, c.IsSet("num-requests"), d) // a trace whole, a file's requests once
	cfg := sweep.Config{Schedule: sch, Requests: n, Duration: d, MaxConcurrency: lc.client.maxConc, Seed: c.Int64("seed"),
		Settings: lc.settings, Bounded: lc.bounded, StartAt: lc.startAt, Drain: sweep.RunDrain(lc.target.Target.Timeout, src.Sessions())}
	if errs := flagErrors(cfg.Validate()); len(errs) > 0 {
		return usageErrors(errs)
	}
	if k := arrival.SetSize(sch, n, d); k > 0 {
		if err := src.CheckSize(k); err != nil {
			return usageError{err} // the request set would be too large to hold or to generate
		}
	}
	// vLLM's --save-result: its flags are checked, and a named file's path, before any load.
	vr, err := vllm.ReadSave(vllmArgs{c}, c.App.ErrWriter, spec, lc.settings)
	if err != nil {
		return usageError{err}
	}
	if err := vr.CheckPath(vllmArgs{c}, lc.out.Out, lc.out.Replace); err != nil {
		return usageError{err}
	}
	if err := lc.prepareOut(); err != nil {
		return err
	}
	s, err := lc.open(c, records.CommandRun, sch)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := runExecutor(c.Context, c, s, cfg, vr.Tap())
	if lost := sweep.RecordsLost(err); lost != nil && res != nil && len(res.Tiers) > 0 {
		// The tiers that ran are whole in memory: show and save what can be, then fail.
		lc.recordsLost = true
		return errors.Join(lc.finish(c, s, res), lost)
	}
	if err != nil {
		return err
	}
	for _, w := range res.ClientBoundWarnings() {
		fmt.Fprintf(c.App.ErrWriter, "loadcurve: WARNING: %s\n", w)
	}
	if err := lc.finish(c, s, res); err != nil {
		return err
	}
	if c.Context.Err() == nil {
		if err := res.CutShort(); err != nil {
			if vr != nil {
				fmt.Fprintln(c.App.ErrWriter, "loadcurve: --save-result: no vLLM result file written: the run did not run to its end (summary.json says so; vLLM's layout cannot)")
			}
			return err
		}
	}
	if c.Context.Err() != nil {
		if vr != nil {
			fmt.Fprintln(c.App.ErrWriter, "loadcurve: --save-result: no vLLM result file written: the run was interrupted (summary.json says so; vLLM's layout cannot)")
		}
		return errInterrupted
	}
	return vr.Write(res, vllmArgs{c}, c.App.ErrWriter)
}

// --- vLLM's result file ---

func vllmResultFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "save-result", Category: catVLLM, Usage: "also write the result in the layout of vLLM's --save-result file (vLLM's keys only, its default statistics: ttft, tpot, itl at p99 unless --percentile-metrics or --metric-percentiles say otherwise), for tools that read vLLM's results"},
		&cli.StringFlag{Name: "result-dir", Category: catVLLM, DefaultText: "the current directory, as vLLM", Usage: "directory of the --save-result file (implies --save-result)"},
		&cli.StringFlag{Name: "result-filename", Category: catVLLM, DefaultText: "vLLM's, {label}-{rate}qps[-concurrency{N}]-{model}-{date}.json", Usage: "name of the --save-result file (implies --save-result); an existing file is replaced only with --replace, and never one of the run's own result in --out"},
	}
}
