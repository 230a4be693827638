package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/bench"
	"github.com/loadcurve/loadcurve/field"
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
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "quick", Usage: "a run of a few seconds for CI (rates 100,200, 1 s, 1 repeat, 200 stalled streams); other flags override it"},
			&cli.StringFlag{Name: "rates", Value: "250,500,1000", Usage: "comma-separated request rates (req/s, Poisson)"},
			&cli.StringFlag{Name: "max-concurrency", Value: "0", Usage: "comma-separated concurrency caps to run each rate at (0 = no cap)"},
			&cli.DurationFlag{Name: "duration", Value: bench.DefaultOptions().Duration, Usage: "length of each schedule"},
			&cli.IntFlag{Name: "repeats", Value: bench.DefaultOptions().Repeats, Usage: "runs of each rate and role; the tables show medians"},
			&cli.IntFlag{Name: "streams", Value: bench.DefaultOptions().Streams, Usage: "stalled streams to hold open for the memory figure (0 = skip)"},
			&cli.Float64Flag{Name: "stream-open-rate", Value: bench.DefaultOptions().StreamOpenRate, Usage: "rate at which the stalled streams are opened (req/s)"},
			&cli.Float64Flag{Name: "light-rate", Value: bench.DefaultOptions().LightRate, Usage: "rate of the TTFT-overhead phase (0 = skip)"},
			&cli.DurationFlag{Name: "light-duration", Value: bench.DefaultOptions().LightDuration, Usage: "length of the TTFT-overhead phase"},
			&cli.IntFlag{Name: "chunks", Value: bench.DefaultChunks, Usage: "one-token content chunks per stream"},
			&cli.DurationFlag{Name: "chunk-gap", Value: bench.DefaultChunkGap, Usage: "pause between chunks of a stream (0 = as fast as possible)"},
			&cli.DurationFlag{Name: "spin", Usage: "also run, at every rate, loadcurve with its sleep-then-spin pacer and the probe busy-waiting, this long before each arrival (e.g. 1ms)"},
			&cli.Int64Flag{Name: "seed", Value: bench.DefaultOptions().Seed, Usage: "schedule seed"},
			&cli.StringFlag{Name: "profile", Usage: "directory for a CPU profile (pprof) of every probe and client run, and a heap profile of each stalled-stream run"},
			&cli.StringFlag{Name: "json", Usage: "also write the full report as JSON to this file"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "stdout format: table or json"},
			&cli.BoolFlag{Name: "quiet", Usage: "no progress lines on stderr"},
		},
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
	o, err := benchOptions(c, []string{exe, "bench"})
	if err != nil {
		return err
	}
	format := c.String("format")
	if format != "table" && format != "json" {
		return usagef("--format: want table or json, got %q", format)
	}
	if dir := o.ProfileDir; dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("--profile %s: %w", dir, err)
		}
	}
	if !c.Bool("quiet") {
		o.Progress = c.App.ErrWriter
	}
	rep, err := bench.Run(c.Context, o)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if path := c.String("json"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("--json: %w", err)
		}
		werr := rep.WriteJSON(f)
		if cerr := f.Close(); werr == nil && cerr != nil {
			werr = fmt.Errorf("--json: %w", cerr)
		}
		if werr != nil {
			return werr
		}
	}
	if format == "json" {
		return rep.WriteJSON(c.App.Writer)
	}
	return rep.WriteTable(c.App.Writer)
}

// benchOptions builds the benchmark's options: the full or quick defaults, then every flag the
// user set; exec starts a child.
func benchOptions(c *cli.Context, exec []string) (bench.Options, error) {
	quick := c.Bool("quick")
	o := bench.BaseOptions(quick)
	o.Exec = exec
	var errs []error
	// A list's problem names the flag with its text, as a flag that cannot be read does.
	listError := func(name string, err error) error {
		return fmt.Errorf("--%s %s: %s", name, c.String(name), field.Of(err).Msg)
	}
	if c.IsSet("rates") || !quick {
		rates, err := bench.ParseRates(c.String("rates"))
		if err != nil {
			errs = append(errs, listError("rates", err))
		}
		o.Rates = rates
	}
	if c.IsSet("max-concurrency") || !quick {
		concs, bad := bench.ParseConcurrencies(c.String("max-concurrency"))
		for _, err := range bad {
			errs = append(errs, listError("max-concurrency", err))
		}
		o.Concurrencies = concs
	}
	setFrom(c, "duration", &o.Duration, c.Duration)
	setFrom(c, "repeats", &o.Repeats, c.Int)
	setFrom(c, "streams", &o.Streams, c.Int)
	setFrom(c, "stream-open-rate", &o.StreamOpenRate, c.Float64)
	setFrom(c, "light-rate", &o.LightRate, c.Float64)
	setFrom(c, "light-duration", &o.LightDuration, c.Duration)
	setFrom(c, "chunks", &o.Chunks, c.Int)
	setFrom(c, "chunk-gap", &o.ChunkGap, c.Duration)
	setFrom(c, "seed", &o.Seed, c.Int64)
	o.Spin = c.Duration("spin")
	o.ProfileDir = c.String("profile")
	errs = append(errs, flagErrors(o.Validate())...)
	if len(errs) > 0 {
		return o, usageErrors(errs)
	}
	return o, nil
}

// setFrom sets *dst to the flag's value when the user gave the flag; otherwise *dst keeps its
// default.
func setFrom[T any](c *cli.Context, name string, dst *T, get func(string) T) {
	if c.IsSet(name) {
		*dst = get(name)
	}
}
