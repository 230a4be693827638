package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/cmd/internal/flagfile"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/param"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/report"
	"github.com/loadcurve/loadcurve/shard"
	"github.com/loadcurve/loadcurve/sweep"
	"github.com/loadcurve/loadcurve/workloads"
)

// Defaults printed in --help and echoed in results.
const (
	defaultSeed    = 0
	defaultTimeout = 5 * time.Minute
)

const (
	catTarget    = "Target"
	catLoad      = "Load"
	catWorkload  = "Workload"
	catObjective = "Objectives and analysis"
	catOutput    = "Output"
	catVLLM      = "vLLM's result file"
	catClient    = "Client limits and scale-out"
	catRehearse  = "Rehearsal (--rehearse)"
	catSim       = "Embedded simulated deployment (used when --base-url is not given)"
)

// flagsOf writes a library's settings as flags of one help category, each named as fieldFlags
// names its field, of the urfave/cli type of its value, the bound value its default.
func flagsOf(category string, ps []param.Param) []cli.Flag {
	out := make([]cli.Flag, 0, len(ps))
	for _, p := range ps {
		name := strings.TrimPrefix(flagOf(p.Field), "--")
		usage, def, aliases, env := param.Render(p.Usage, flagOf), param.Render(p.DefaultText, flagOf), flagAliases[name], flagEnv[name]
		switch v := p.Current().(type) {
		case string:
			out = append(out, &cli.StringFlag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: v, DefaultText: def, Usage: usage})
		case int:
			out = append(out, &cli.IntFlag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: v, DefaultText: def, Usage: usage})
		case int64:
			out = append(out, &cli.Int64Flag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: v, DefaultText: def, Usage: usage})
		case float64:
			out = append(out, &cli.Float64Flag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: v, DefaultText: def, Usage: usage})
		case time.Duration:
			out = append(out, &cli.DurationFlag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: v, DefaultText: def, Usage: usage})
		case bool:
			out = append(out, &cli.BoolFlag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: v, DefaultText: def, Usage: usage})
		case []string:
			out = append(out, &cli.GenericFlag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: &listValue{}, DefaultText: def, Usage: usage})
		}
	}
	return out
}

// applyFlags sets every setting from its flag, given or at the command's default, and marks
// those the user gave (param.Apply); with onlyGiven, a setting whose flag was not given keeps
// its value.
func applyFlags(c *cli.Context, ps []param.Param, onlyGiven bool) []error {
	byName := flagfile.ByName(c.Command)
	return param.Apply(ps, func(name string) ([]string, bool) {
		flag := strings.TrimPrefix(flagOf(name), "--")
		f, ok := byName[flag]
		if !ok || onlyGiven && !c.IsSet(flag) {
			return nil, false
		}
		return flagfile.Values(c, f), c.IsSet(flag)
	})
}

func concat(groups ...[]cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// --- target ---

func targetFlags() []cli.Flag {
	t := loadgen.DefaultTargetSettings(defaultTimeout)
	return flagsOf(catTarget, t.Params())
}

// runInfoFlags name a run and carry data along with it: --label and --metadata.
func runInfoFlags() []cli.Flag {
	var r sweep.RunNaming
	return flagsOf(catOutput, r.Params())
}

// listValue is a repeatable flag whose values are kept whole: a StringSliceFlag would split
// them at commas, and a header's or a metadata value may hold one.
type listValue struct{ vals []string }

func (l *listValue) Set(s string) error { l.vals = append(l.vals, s); return nil }
func (l *listValue) String() string     { return "" } // no default to show in --help

// List is the values given (flagfile.Lister).
func (l *listValue) List() []string { return l.vals }

// listOf returns the values of a listValue flag.
func listOf(c *cli.Context, name string) []string {
	if l, ok := c.Generic(name).(*listValue); ok {
		return l.vals
	}
	return nil
}

// multiValueFlags take several values after one flag, as vLLM's nargs="*" options do
// ("--metadata tp=1 pp=2"): flagsFirst repeats the flag before each further KEY=VALUE.
var multiValueFlags = map[string]bool{"header": true, "metadata": true}

// runInfo is what a run is called and carries along: --label and --metadata.
type runInfo struct {
	label    string
	metadata records.Metadata
}

// readRunInfo reads --label and --metadata (sweep.RunNaming.Check).
func readRunInfo(c *cli.Context) (runInfo, []error) {
	var r sweep.RunNaming
	errs := applyFlags(c, r.Params(), false)
	md, bad := r.Check()
	return runInfo{label: r.Label, metadata: md}, append(errs, bad...)
}

// readTarget reads the target flags (the base URL may be empty: the session starts the sim).
func readTarget(c *cli.Context) (loadgen.Target, []error) {
	s := loadgen.DefaultTargetSettings(defaultTimeout)
	errs := applyFlags(c, s.Params(), false)
	t, e := s.Target()
	errs = append(errs, e...)
	headers, bad := loadgen.ParseHeaders(s.Headers)
	errs = append(errs, bad...)
	t.Headers = headers
	errs = append(errs, vllmTarget(c, &t)...) // vLLM's --host/--port/--endpoint PATH, --backend, sampling flags
	if t.BaseURL != "" {
		v := t
		if err := checkBaseURL(t.BaseURL); err != nil {
			// Say what is wrong with the URL and what was meant, once; Validate checks the rest.
			errs = append(errs, err)
			v.BaseURL = "http://localhost/v1"
		}
		errs = append(errs, v.Validate()...)
	} else {
		errs = append(errs, t.ValidateLocal()...)
	}
	if _, err := s.ReadyCheck(); err != nil {
		errs = append(errs, err)
	}
	return t, errs
}

// --- load (the fragment run, sweep and schedule share) ---

// loadFlags are the arrival process of one tier (run, schedule): rate, burstiness, ramps, count
// or duration, seed.
func loadFlags(defaultRate string, defaultN int) []cli.Flag {
	spec := arrival.Spec{Burstiness: arrival.DefaultBurstiness}
	rate := spec.Params()
	_ = rate[0].Set(defaultRate) // a literal of the command's
	length := arrival.Length{Requests: defaultN}
	return concat(flagsOf(catLoad, rate[:2]), flagsOf(catLoad, length.Params()), []cli.Flag{seedFlag()}, flagsOf(catLoad, rate[2:]))
}

func burstinessFlag() cli.Flag {
	spec := arrival.Spec{Burstiness: arrival.DefaultBurstiness}
	return flagsOf(catLoad, spec.Params()[1:2])[0]
}

func seedFlag() cli.Flag {
	return &cli.Int64Flag{Name: "seed", Category: catLoad, Value: defaultSeed, Usage: "seed of the schedules and request sets"}
}

// clientFlags govern how the client sends: concurrency cap, safety ceiling, retries.
func clientFlags() []cli.Flag {
	var s loadgen.ClientSettings
	ps := s.Params()
	return concat(flagsOf(catLoad, ps[:1]), flagsOf(catClient, ps[1:]))
}

// clientOptions reads clientFlags.
type clientOptions struct {
	maxConc   int
	rateLimit float64
	retries   int
}

func readClient(c *cli.Context) (clientOptions, []error) {
	var s loadgen.ClientSettings
	ps := s.Params()
	errs := applyFlags(c, ps, false)
	errs = append(errs, s.Validate(ps)...)
	o := clientOptions{maxConc: s.MaxConcurrency, rateLimit: s.RateLimit, retries: s.Retries}
	warning, err := loadgen.CheckStreams(loadgen.OpenFileLimit(), o.maxConc, c.String("base-url") == "")
	if err != nil {
		errs = append(errs, err)
	} else if warning != "" {
		fmt.Fprintf(c.App.ErrWriter, "loadcurve: %s\n", param.Render(warning, flagOf))
	}
	return o, errs
}

// arrivalSpec reads the load flags into a validated arrival spec.
func arrivalSpec(c *cli.Context) (arrival.Spec, []error) {
	var spec arrival.Spec
	if errs := applyFlags(c, spec.Params(), false); len(errs) > 0 {
		return spec, errs
	}
	return spec, spec.Validate()
}

// loadCount reads --num-requests / --duration.
func loadCount(c *cli.Context) (n int, d time.Duration, errs []error) {
	var l arrival.Length
	ps := l.Params()
	errs = applyFlags(c, ps, false)
	l, e := l.Resolve(ps)
	return l.Requests, l.Duration, append(errs, flagErrors(e)...)
}

// --- workload ---

func sourceFlags() []cli.Flag {
	w := workloads.DefaultSettings()
	return flagsOf(catWorkload, w.Params())
}

// readSource validates the workload flags (reading a file whole: nothing is sent before the
// workload is known good).
func readSource(c *cli.Context) (*workloads.Source, []error) {
	w := workloads.DefaultSettings()
	if errs := applyFlags(c, w.Params(), false); len(errs) > 0 {
		return nil, flagErrors(errs)
	}
	opts := w.LoadOptions()
	opts.Seed = c.Int64("seed")
	spec, vErrs := vllmDataset(c, &opts) // vLLM's --dataset-name and length flags
	if len(vErrs) > 0 {
		return nil, vErrs
	}
	src, errs := workloads.NewSource(spec, opts, w.Cache)
	errs = flagErrors(errs)
	if len(errs) == 0 {
		errs = vllmSource(c, src)
	}
	return src, errs
}

// --- objectives and analysis ---

func objectiveFlags() []cli.Flag {
	s := sweep.DefaultSettings()
	return append([]cli.Flag{&cli.StringSliceFlag{Name: "goodput", Category: catObjective, Usage: "latency objectives KEY:MS (vLLM syntax), keys " + strings.Join(measure.ObjectiveKeys(), ", ") + " (ttfa: time to the first answer token; answer_itl: mean gap between answer chunks), e.g. --goodput ttft:500 tpot:50"}},
		flagsOf(catObjective, s.Inputs())...)
}

// objectives reads --goodput, including vLLM's space-separated form in which further KEY:MS
// pairs arrive as positional arguments (the command's own positionals, `skip` of them, come first).
func objectives(c *cli.Context, skip int) (measure.Objectives, error) {
	args := c.StringSlice("goodput")
	pos := c.Args().Slice()
	pos = pos[min(skip, len(pos)):]
	if len(args) > 0 {
		for _, a := range pos {
			if !strings.Contains(a, ":") {
				return measure.Objectives{}, usagef("unexpected argument %q (objectives look like KEY:MS)", a)
			}
			args = append(args, a)
		}
	} else if len(pos) > 0 {
		return measure.Objectives{}, usagef("unexpected argument %q", pos[0])
	}
	if len(args) == 0 {
		return measure.Objectives{}, nil
	}
	return measure.ParseGoodput(args)
}

// readSettings reads the objective and analysis flags; a flag the user did not set keeps the
// value of base (a result's own settings, for report; the defaults otherwise). The command takes
// `positional` arguments of its own.
func readSettings(c *cli.Context, positional int, base sweep.Settings) (sweep.Settings, []error) {
	var errs []error
	s := base.OrDefaults()
	obj, err := objectives(c, positional)
	if err != nil {
		errs = append(errs, err)
	}
	if c.IsSet("goodput") {
		s.Measure.Objectives = obj
	}
	ps := s.Inputs()
	errs = append(errs, applyFlags(c, ps, true)...)
	s, e := s.Check(ps)
	return s, append(errs, flagErrors(e)...)
}

// --- output ---

// outputFlags are how a result is shown and where its files go (report.Output).
func outputFlags() []cli.Flag {
	o := report.DefaultOutput()
	return flagsOf(catOutput, o.Params())
}

// boundedMemoryFlag is --bounded-memory for a command whose summaries are computed as records
// arrive (run, sweep) or are read (report).
func boundedMemoryFlag(what string) cli.Flag {
	return &cli.BoolFlag{Name: "bounded-memory", Category: catOutput,
		Usage: what + ": counts, throughputs, means exact; medians and percentiles within ±0.5 % (records.jsonl keeps everything; 'loadcurve report' on it is exact)"}
}

// boundedMemory reads --bounded-memory (sweep.CheckBounded).
func boundedMemory(c *cli.Context, opts measure.Options) (bool, error) {
	if !c.Bool("bounded-memory") {
		return false, nil
	}
	if err := sweep.CheckBounded(opts); err != nil {
		return true, usageError{flagError(err)}
	}
	return true, nil
}

// --- shards ---

func shardFlags() []cli.Flag {
	var s shard.Settings
	return flagsOf(catClient, s.Params(time.Now))
}

// shardOptions reads --shard and --start-at.
func shardOptions(c *cli.Context) (shard.Spec, time.Time, []error) {
	var s shard.Settings
	errs := applyFlags(c, s.Params(time.Now), false)
	return s.Spec, s.StartAt, append(errs, s.Check()...)
}
