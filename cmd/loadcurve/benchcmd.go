package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/internal/bench"
)

// benchCommand is `loadcurve bench`: the client-fidelity benchmark of docs/PERFORMANCE.md. It
// re-executes this binary as `loadcurve bench ROLE JOB` for its child processes (the server,
// the probe and the loadcurve client); those roles are internal and not listed in --help.
func benchCommand() *cli.Command {
	return &cli.Command{
		Name:      "bench",
		Usage:     "measure whether this machine's client can carry a load: loadcurve against a minimal probe client, both against a fast local SSE server",
		UsageText: "loadcurve bench [--quick] [--rates 250,500,1000] [--duration 10s] [--streams 10000] [--repeats 3] [--json FILE]",
		Description: "Starts a minimal streaming server, a minimal Go probe client (the physical limit: it only counts SSE lines)\n" +
			"and loadcurve's real client path (records to a file, summary), each in its own process, and reports per rate:\n" +
			"offered vs delivered rate (server's count), schedule lag, CPU µs per streamed chunk (rusage), with ratios to the\n" +
			"probe; RSS per open stream (stalled streams); TTFT overhead against the server's clock at light load.\n" +
			"Nothing is sent anywhere but 127.0.0.1. Goals and figures: docs/PERFORMANCE.md.",
		Flags:  benchFlags(),
		Action: benchAction,
	}
}

func benchAction(c *cli.Context) error {
	// Child roles: `loadcurve bench ROLE JOB`, started by the runner below.
	if args := c.Args(); args.Len() > 0 {
		if args.Len() != 2 {
			return usagef("bench: unexpected arguments %q (the benchmark takes flags only)", args.Slice())
		}
		return bench.RunChild(c.Context, args.Get(0), []byte(args.Get(1)), c.App.Writer)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench: find this binary to start the child processes: %w", err)
	}
	s := bench.NewSettings(c.Bool("quick"))
	errs := bind.Apply(c, s.Params(), true)
	o, bad := s.Options()
	o.Exec = []string{exe, "bench"}
	errs = append(append(errs, bad...), o.Validate()...)
	if err := s.CheckFormat(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	if !c.Bool("quiet") {
		o.Progress = c.App.ErrWriter
	}
	return bind.Error(s.Write(c.Context, o, c.App.Writer))
}

func benchFlags() []cli.Flag {
	s := bench.NewSettings(false)
	return append(bind.Flags("", s.Params()), &cli.BoolFlag{Name: "quiet", Usage: "no progress lines on stderr"})
}
