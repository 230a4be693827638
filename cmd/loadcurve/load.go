package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// loadCommand is what run and sweep share: the validated options of the target, the client,
// the workload, the settings and the output, from which the command builds its sweep.Config.
type loadCommand struct {
	target   runner.Options
	settings result.Settings
	source   *workloads.Source
	bounded  bool
	out      report.Output
	progress bool
	// readyCheck is --ready-check-timeout-sec: how long to wait for the target before the preflight.
	readyCheck time.Duration
	// recordsLost: the records file is not whole, so finish must not read it back.
	recordsLost bool
	// scenarioWritten: the scenario was written beside the records when the first tier started
	// (scenarioFirst), so finish need not write it again.
	scenarioWritten bool
}

// scenarioFirst has the executor write the scenario the command runs with into --out when its
// first tier starts, beside the records file: what a resume reads its flags from, and there
// before a disk that fills up during the run has no room left for it.
func (lc *loadCommand) scenarioFirst(c *cli.Context) func(*sweep.Executor) {
	return func(x *sweep.Executor) {
		x.Runner = sweep.BeforeFirstTier(x.Runner, func() error {
			if lc.out.Out == "" {
				return nil
			}
			if err := writeScenario(lc.out.Out, c); err != nil {
				return err
			}
			lc.scenarioWritten = true
			return nil
		})
	}
}

// readLoadCommand reads every flag run and sweep share, returning every problem at once.
func readLoadCommand(c *cli.Context, base result.Settings) (*loadCommand, []error) {
	lc := &loadCommand{out: report.DefaultOutput()}
	errs := bind.Apply(c, lc.out.Params(), false)
	if c.Args().Present() {
		errs = append(errs, fmt.Errorf("unexpected argument %q", c.Args().First()))
	}
	errs = append(errs, lc.out.Validate()...)
	var e []error
	var err error
	t, e := readTarget(c)
	errs = append(errs, e...)
	lc.source, e = readSource(c)
	errs = append(errs, e...)
	lc.settings, e = readSettings(c, base)
	errs = append(errs, e...)
	client, e := readClient(c)
	errs = append(errs, e...)
	var naming sweep.RunNaming // --label and --metadata
	errs = append(errs, bind.Apply(c, naming.Params(), false)...)
	metadata, e := naming.Check()
	errs = append(errs, e...)
	lc.readyCheck = time.Duration(c.Int("ready-check-timeout-sec")) * time.Second
	spec, startAt, e := shardOptions(c)
	errs = append(errs, e...)
	// A secret typed into --label or --metadata is hidden by the session, so in every output.
	lc.target = runner.Options{Target: t, Workload: lc.source, MaxConcurrency: client.MaxConcurrency, Retries: client.Retries,
		RateLimit: client.RateLimit, Label: naming.Label, Metadata: metadata, ServerMetrics: c.String("server-metrics"), Shard: spec, StartAt: startAt,
		Seed: c.Int64("seed"), Version: version, Name: bind.Flag}
	if t.BaseURL == "" {
		if err := simOptions(c, "sim-", &lc.target); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		if lc.bounded, err = boundedMemory(c, lc.settings.Measure); err != nil {
			errs = append(errs, err)
		}
	}
	lc.progress = !lc.out.Quiet && isTerminal(os.Stderr)
	vr, e := vllm.ReadRun(vllm.ArgsOf(c), c.Command.Name, c.App.ErrWriter) // vLLM's flags: refusals, no-effect notes, --num-warmups
	errs = append(errs, e...)
	if vr.WarmupsGiven {
		lc.target.Warmups = vr.Warmups
	}
	lc.progress = lc.progress && !vr.Quiet
	lc.settings.Measure.Unit = lc.target.Target.Endpoint.Unit() // what throughputs count: the endpoint kind's
	// ShareGPT's multi-turn sessions take --think-time; a file's own sessions carry theirs.
	thinkStated := c.IsSet("think-time") && !c.Bool("sharegpt-multi-turn")
	return lc, append(errs, lc.target.Check(thinkStated, c.String("sim-clock"))...)
}

// prepareOut checks --out before any load is sent: a directory holding a result is refused
// unless --replace, which clears it (all of the old result, nothing else).
func (lc *loadCommand) prepareOut(c *cli.Context) error {
	if lc.out.Out == "" {
		return nil
	}
	lc.target.OutDir = lc.out.Out
	return prepareOut(c, result.Out{Dir: lc.out.Out, Kind: result.Measured, Replace: lc.out.Replace})
}

// prepareOut makes --out ready for a result (result.Prepare), for every command that writes
// one, and holds it locked until the command ends: a directory another loadcurve process is
// writing into is refused (exit 2, naming it), and one already holding a result of the kind
// (exit 2, saying what --replace would do) unless --replace.
func prepareOut(c *cli.Context, o result.Out) error {
	lock, err := result.Prepare(o)
	var taken *result.TakenError
	var busy *result.BusyError
	switch {
	case errors.As(err, &busy):
		return busyRefusal("out", o.Dir, busy)
	case errors.As(err, &taken):
		return usagef("--out %s already holds %s: choose another directory, or pass --replace to %s", o.Dir, o.Kind.What(), o.Kind.Replaces())
	case err != nil:
		return fmt.Errorf("--out: %w", err)
	}
	holdLock(c, lock)
	return nil
}

// writeOut makes the directory of o ready for a result (prepareOut), writes the result into it
// (write), and the scenario the command ran with beside it; nothing without a directory.
func writeOut(c *cli.Context, o result.Out, write func(dir string) error) error {
	if o.Dir == "" {
		return nil
	}
	if err := prepareOut(c, o); err != nil {
		return err
	}
	if err := write(o.Dir); err != nil {
		return err
	}
	return writeScenario(o.Dir, c)
}

// open opens the target (starting the embedded deployment when there is no --base-url); the
// session builds the records header from the command, its schedule and the options.
func (lc *loadCommand) open(c *cli.Context, cmd records.Command, schedule fmt.Stringer) (*runner.Session, error) {
	stderr := c.App.ErrWriter
	lc.target.Log = func(format string, a ...any) { fmt.Fprintf(stderr, "loadcurve: "+format+"\n", a...) }
	if lc.progress {
		lc.target.Progress = loadgen.ProgressLine(stderr, clihelp.Width(stderr))
	}
	say(c, "workload: ", lc.source.Notes...)
	// vLLM's ready check, before runner.Open sends the preflight.
	if err := runner.WaitReady(c.Context, lc.target.Target, lc.readyCheck, lc.target.Log, bind.Flag); err != nil {
		return nil, err
	}
	lc.plan(cmd, schedule)
	return runner.Open(c.Context, lc.target)
}

// plan completes the target's options with what the records header holds of the command: its
// kind, schedule and settings (open does it; a resumed sweep checks the header they make before
// it opens the target).
func (lc *loadCommand) plan(cmd records.Command, schedule fmt.Stringer) {
	lc.target.Command, lc.target.Schedule, lc.target.Settings = cmd, schedule, lc.settings.Record()
	lc.target.Tally = !lc.bounded // the time series and a run's peak figures, as the records pass
}

// finish closes the session (the records file is complete: runner.Session.Finish), writes the
// result files, and prints the result.
func (lc *loadCommand) finish(c *cli.Context, s *runner.Session, res *result.Result) error {
	stderr := c.App.ErrWriter
	series, warnings, closeErr := s.Finish(res, lc.recordsLost, report.ReadTimeSeries)
	say(c, "warning: ", warnings...)
	var writeErr error
	if lc.out.Out != "" {
		if lc.bounded && closeErr == nil && !lc.recordsLost {
			fmt.Fprintln(stderr, "loadcurve: --bounded-memory: no per-second time series (they hold a tier's records); `loadcurve report DIR --out OTHER` writes them")
		}
		writeErr = report.WriteResultSeries(lc.out.Out, res, series, lc.out.Plots)
		if !lc.scenarioWritten {
			writeErr = errors.Join(writeErr, writeScenario(lc.out.Out, c))
		}
		if writeErr != nil {
			writeErr = fmt.Errorf("write the result to %s: %w (the result printed is whole: it comes from the records in memory)", lc.out.Out, writeErr)
		} else if closeErr == nil {
			fmt.Fprintf(stderr, "loadcurve: wrote the result to %s (records.jsonl, report.html and the rest)\n", lc.out.Out)
		}
	}
	// Printed whatever happened to the files: the measurements are in memory.
	return errors.Join(report.Print(c.App.Writer, lc.out.Format, res, lc.out.Verbose), closeErr, writeErr)
}

// simOptions reads the embedded deployment's flags (prefix "sim-" on run and sweep).
func simOptions(c *cli.Context, prefix string, o *runner.Options) error {
	s, d, err := simDeployment(c, prefix)
	if err != nil {
		return err
	}
	o.Embed(s, d)
	return nil
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// runExecutor runs cfg's executor in the session (runner.Session.Execute), logging to stderr,
// and returns its result (incomplete and without an error when interrupted); tune, when given,
// completes the executor first (a resumed sweep's).
func runExecutor(ctx context.Context, c *cli.Context, s *runner.Session, cfg sweep.Config, tune ...func(*sweep.Executor)) (*result.Result, error) {
	stderr := c.App.ErrWriter
	var detail func(string, ...any)
	if c.Bool("verbose") {
		detail = func(format string, a ...any) { fmt.Fprintf(stderr, "loadcurve:   "+format+"\n", a...) }
	}
	x := s.Executor(cfg, func(format string, a ...any) { fmt.Fprintf(stderr, "loadcurve: "+format+"\n", a...) }, detail)
	for _, t := range tune {
		t(x)
	}
	res, err := s.Execute(ctx, x)
	return res, bind.Error(err)
}
