// Command loadcurve measures what an OpenAI-compatible LLM deployment can really carry: it sends
// a seeded, reproducible arrival schedule of requests through a max-concurrency gate, streams
// every response, records schedule-relative timings for every request, and turns them into
// latency statistics, compliant (effective) throughput, load curves, operating points and costs.
//
// Without --base-url, run and sweep start an embedded simulated deployment on a loopback port, so
// the tool works out of the box.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
	"github.com/loadcurve/loadcurve/cmd/internal/stopsignal"
	"github.com/loadcurve/loadcurve/internal/param"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit codes.
const (
	exitOK       = 0
	exitFailure  = 1 // the run could not be done (unreachable target, I/O error, ...)
	exitUsage    = 2 // bad input, or results that are not comparable
	exitSignaled = 130
)

// usageError marks an error caused by the user's input: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// usageErrors joins several input problems into one usage error, one per line, each once (the
// command and a library may both check one setting).
func usageErrors(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	var out []error
	seen := map[string]bool{}
	for _, e := range bind.Errors(errs) {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	return usageError{errors.Join(out...)}
}

// say writes each line that is not empty to the command's stderr after "loadcurve: " and kind
// ("WARNING: ", "workload: ", or none), trimmed, every input it refers to written as its flag.
func say(c *cli.Context, kind string, lines ...string) {
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			fmt.Fprintf(c.App.ErrWriter, "loadcurve: %s%s\n", kind, param.Render(l, bind.Flag))
		}
	}
}

var errInterrupted = errors.New("interrupted: results are incomplete")

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run executes the CLI and returns the exit code. A stop request (SIGINT, SIGTERM; see package
// stopsignal) cancels the context: dispatch stops, in-flight requests are canceled, everything
// recorded is written. Only a second Ctrl-C, later than stopsignal.ForceAfter, exits at once.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer stopsignal.Watch(func() {
		fmt.Fprintln(stderr, "\nloadcurve: interrupted: stopping dispatch, canceling in-flight requests, writing what was recorded (press Ctrl-C again to exit at once)")
		cancel()
	}, func() {
		fmt.Fprintln(stderr, "loadcurve: second interrupt: exiting now")
		os.Exit(exitSignaled)
	})()
	return runApp(ctx, args, stdout, stderr)
}

func runApp(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, release := withHeldDirs(ctx) // the result directories the command writes, locked until it returns
	defer release()
	app := newApp(stdout, stderr)
	err := app.RunContext(ctx, clihelp.FlagsFirst(app, args, multiValueFlags))
	if err == nil {
		if ctx.Err() != nil {
			return exitSignaled
		}
		return exitOK
	}
	fmt.Fprintf(stderr, "loadcurve: %v\n", bind.Error(err))
	var ue usageError
	var ee cli.ExitCoder
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ee):
		return ee.ExitCode()
	case ctx.Err() != nil:
		return exitSignaled
	}
	return exitFailure
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:    "loadcurve",
		Usage:   "measure the effective capacity of an OpenAI-compatible LLM deployment",
		Version: version,
		Description: "Start with `loadcurve sweep` (capacity and a verified operating point) or `loadcurve run` (one tier);\n" +
			"`loadcurve COMMAND --help` lists a command's flags: target, load, objectives and output first (run and sweep:\n" +
			"the common ones; --help-all lists every one).\n" +
			"Without --base-url, run and sweep start an embedded simulated deployment (its flags: `loadcurve run --help-sim`).\n" +
			"Metric definitions: README.md#metrics (they match vLLM's `vllm bench serve` where it defines a metric);\n" +
			"how a sweep decides: docs/DECISIONS.md.\n" +
			"Exit codes: 0 done, 1 the run could not be done, 2 bad input or results that are not comparable, 130 interrupted.",
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {}, // errors are printed once, by runApp
		Action:          func(c *cli.Context) error { return clihelp.Root(c, func(err error) error { return usageError{err} }) },
		Commands: []*cli.Command{
			runCommand(),
			sweepCommand(),
			compareCommand(),
			costCommand(),
			planCommand(),
			reportCommand(),
			scheduleCommand(),
			workloadCommand(),
			simCommand(),
			mergeCommand(),
			benchCommand(),
		},
	}
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return usageError{clihelp.ExplainRoot(app, err)} }
	for _, cmd := range app.Commands {
		cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return usageError{clihelp.Explain(cmd.Flags, err)} }
		cmd.Flags = clihelp.Fast(cmd.Flags) // first: what follows asks every flag its names
		helpOptions.AnswerLast(cmd)
		helpOptions.AnswerAll(cmd)
		helpOptions.SetHelp(cmd, clihelp.Width(stdout))
		// No `loadcurve run help`: urfave/cli would add its one shared help command to every
		// command, and write to it as each runs, a data race when apps run at once (tests).
		cmd.HideHelpCommand = true
	}
	return app
}
