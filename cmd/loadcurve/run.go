package main

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/records"
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
		Flags: concat(targetFlags(), loadFlags("4", 200), clientFlags(), shardFlags(), sourceFlags(), objectiveFlags(), outputFlags(),
			[]cli.Flag{boundedMemoryFlag("summarise on the fly and keep no records in memory, for long runs")},
			simFlags("sim-")),
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	spec, errs := arrivalSpec(c)
	n, d, e := loadCount(c)
	errs = append(errs, e...)
	lc, e := readLoadCommand(c, sweep.DefaultSettings())
	errs = append(errs, e...)
	if d > 0 && math.IsInf(spec.Rate, 1) && spec.Ramp == arrival.RampNone {
		errs = append(errs, fmt.Errorf("--duration needs a finite --request-rate (with inf every request is planned at once): use --num-requests"))
	}
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	var sch arrival.Schedule = spec
	src := lc.source
	switch {
	case src.Trace != nil && d > 0:
		return usagef("--duration does not apply to a trace replay: the trace is the schedule (cut it with --num-requests, stretch it with --trace-time-scale)")
	case src.Trace != nil:
		replay, err := arrival.NewReplay(src.TraceOffsets(), src.Trace.Source)
		if err != nil {
			return usagef("--workload %s: %v", src.Spec, err)
		}
		sch = replay
		if !c.IsSet("num-requests") {
			n = 0 // the whole trace
		}
		fmt.Fprintln(c.App.ErrWriter, "loadcurve: the trace is the schedule: --request-rate and --burstiness do not apply")
	case !src.Generated() && !c.IsSet("num-requests") && d == 0:
		n = src.Size() // every request of the file, once
	}
	cfg := sweep.Config{Schedule: sch, Requests: n, Duration: d, MaxConcurrency: lc.client.maxConc, Seed: c.Int64("seed"),
		Settings: lc.settings, Bounded: lc.bounded, StartAt: lc.startAt, Drain: runDrain(lc.target.Target.Timeout)}
	if errs := flagErrors(cfg.Validate()); len(errs) > 0 {
		return usageErrors(errs)
	}
	if err := lc.prepareOut(); err != nil {
		return err
	}
	s, err := lc.open(c, records.CommandRun, sch.String())
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := runExecutor(c.Context, c, s, cfg)
	if lost := recordsLost(err); lost != nil && res != nil && len(res.Tiers) > 0 {
		// The tiers that ran are whole in memory: show and save what can be, then fail.
		return errors.Join(lc.finish(c, s, res), lost)
	}
	if err != nil {
		return err
	}
	for _, t := range res.Tiers {
		if t.Summary.ClientBound {
			fmt.Fprintf(c.App.ErrWriter, "loadcurve: WARNING: tier %d is CLIENT-BOUND: %s. Its latencies describe this client as much as the server.\n",
				t.Tier.Tier, t.Summary.ClientBoundReason)
		}
	}
	if err := lc.finish(c, s, res); err != nil {
		return err
	}
	if c.Context.Err() != nil {
		return errInterrupted
	}
	return nil
}

// runDrain: a run has no next tier to protect, so its stragglers may run until their own
// --timeout (a day when there is none).
func runDrain(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return 24 * time.Hour
	}
	return timeout + time.Second
}
