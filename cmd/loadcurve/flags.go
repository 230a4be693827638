package main

import (
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/measure"
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

// --- target ---

func targetFlags() []cli.Flag {
	t := loadgen.DefaultTargetSettings(defaultTimeout)
	return bind.Flags(catTarget, t.Params())
}

// runInfoFlags name a run and carry data along with it: --label and --metadata.
func runInfoFlags() []cli.Flag {
	var r sweep.RunNaming
	return bind.Flags(catOutput, r.Params())
}

// multiValueFlags take several values after one flag, as vLLM's nargs="*" options do
// ("--metadata tp=1 pp=2", "--goodput ttft:500 tpot:50"): clihelp.FlagsFirst repeats the flag
// before each further value, a KEY=VALUE or a KEY:MS token.
var multiValueFlags = map[string]func(string) bool{"header": keyValue, "metadata": keyValue, "goodput": objectivePair}

func keyValue(arg string) bool { return strings.Contains(arg, "=") }

// objectivePair is a KEY:MS token whose key is a word (e2el), not a path that holds a colon.
func objectivePair(arg string) bool {
	key, _, ok := strings.Cut(arg, ":")
	return ok && key != "" && strings.Trim(key, "abcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// readTarget reads the target flags (the base URL may be empty: the session starts the sim).
func readTarget(c *cli.Context) (loadgen.Target, []error) {
	s := loadgen.DefaultTargetSettings(defaultTimeout)
	errs := bind.Apply(c, s.Params(), false)
	t, e := s.Target()
	errs = append(errs, e...)
	headers, bad := loadgen.ParseHeaders(s.Headers)
	errs = append(errs, bad...)
	t.Headers = headers
	errs = append(errs, vllm.Target(vllm.ArgsOf(c), &t, c.App.ErrWriter)...) // vLLM's --host/--port/--endpoint PATH, --backend, sampling flags
	if t.BaseURL != "" {
		errs = append(errs, t.Validate()...)
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
	return cliparam.Concat(bind.Flags(catLoad, rate[:2]), bind.Flags(catLoad, length.Params()), []cli.Flag{seedFlag()}, bind.Flags(catLoad, rate[2:]))
}

func burstinessFlag() cli.Flag {
	spec := arrival.Spec{Burstiness: arrival.DefaultBurstiness}
	return bind.Flags(catLoad, spec.Params()[1:2])[0]
}

func seedFlag() cli.Flag {
	return &cli.Int64Flag{Name: "seed", Category: catLoad, Value: defaultSeed, Usage: "seed of the schedules and request sets"}
}

// clientFlags govern how the client sends: concurrency cap, safety ceiling, retries.
func clientFlags() []cli.Flag {
	var s loadgen.ClientSettings
	ps := s.Params()
	return cliparam.Concat(bind.Flags(catLoad, ps[:1]), bind.Flags(catClient, ps[1:]))
}

// readClient reads clientFlags, and warns when the concurrency cap needs more files than this
// process may open.
func readClient(c *cli.Context) (loadgen.ClientSettings, []error) {
	var s loadgen.ClientSettings
	ps := s.Params()
	errs := append(bind.Apply(c, ps, false), s.Validate(ps)...)
	warning, err := loadgen.CheckStreams(loadgen.OpenFileLimit(), s.MaxConcurrency, c.String("base-url") == "")
	if err != nil {
		errs = append(errs, err)
	}
	say(c, "", warning)
	return s, errs
}

// arrivalSpec reads the load flags into a validated arrival spec.
func arrivalSpec(c *cli.Context) (arrival.Spec, []error) {
	var spec arrival.Spec
	if errs := bind.Apply(c, spec.Params(), false); len(errs) > 0 {
		return spec, errs
	}
	return spec, spec.Validate()
}

// loadCount reads --num-requests / --duration.
func loadCount(c *cli.Context) (n int, d time.Duration, errs []error) {
	var l arrival.Length
	ps := l.Params()
	errs = bind.Apply(c, ps, false)
	l, e := l.Resolve(ps)
	return l.Requests, l.Duration, append(errs, bind.Errors(e)...)
}

// --- workload ---

func sourceFlags() []cli.Flag {
	w := workloads.DefaultSettings()
	return bind.Flags(catWorkload, w.Params())
}

// readSource validates the workload flags (reading a file whole: nothing is sent before the
// workload is known good).
func readSource(c *cli.Context) (*workloads.Source, []error) {
	w := workloads.DefaultSettings()
	if errs := bind.Apply(c, w.Params(), false); len(errs) > 0 {
		return nil, bind.Errors(errs)
	}
	opts := w.LoadOptions()
	opts.Seed = c.Int64("seed")
	spec, vErrs := vllm.Dataset(vllm.ArgsOf(c), &opts, c.App.ErrWriter) // vLLM's --dataset-name, length flags, tokenizer
	if len(vErrs) > 0 {
		return nil, vErrs
	}
	src, errs := workloads.NewSource(spec, opts, w.Cache)
	errs = bind.Errors(errs)
	if len(errs) == 0 {
		errs = vllm.Source(vllm.ArgsOf(c), src) // vLLM's output-length flags, --tokenizer's counts
	}
	return src, errs
}

// --- objectives and analysis ---

func objectiveFlags() []cli.Flag {
	s := result.DefaultSettings()
	return append([]cli.Flag{&cli.StringSliceFlag{Name: "goodput", Category: catObjective, Usage: "latency objectives KEY:MS (vLLM syntax), keys " + strings.Join(measure.ObjectiveKeys(), ", ") + " (ttfa: time to the first answer token; answer_itl: mean gap between answer chunks), e.g. --goodput ttft:500 tpot:50"}},
		bind.Flags(catObjective, s.Inputs())...)
}

// readSettings reads the objective and analysis flags; a flag the user did not set keeps the
// value of base (a result's own settings, for report; the defaults otherwise).
func readSettings(c *cli.Context, base result.Settings) (result.Settings, []error) {
	var errs []error
	s := base.OrDefaults()
	if c.IsSet("goodput") {
		obj, err := measure.ParseGoodput(c.StringSlice("goodput"))
		if err != nil {
			errs = append(errs, err)
		}
		s.Measure.Objectives = obj
	}
	ps := s.Inputs()
	errs = append(errs, bind.Apply(c, ps, true)...)
	s, e := s.Check(ps)
	return s, append(errs, bind.Errors(e)...)
}

// --- output ---

// outputFlags are how a result is shown and where its files go (report.Output).
func outputFlags() []cli.Flag {
	o := report.DefaultOutput()
	return bind.Flags(catOutput, o.Params())
}

// boundedMemoryFlag is --bounded-memory for a command whose summaries are computed as records
// arrive (run, sweep) or are read (report).
func boundedMemoryFlag(what string) cli.Flag {
	return &cli.BoolFlag{Name: "bounded-memory", Category: catOutput,
		Usage: what + ": counts, throughputs, means exact; medians and percentiles within ±0.5 % (records.jsonl keeps everything; 'loadcurve report' on it is exact)"}
}

// boundedMemory reads --bounded-memory (result.CheckBounded).
func boundedMemory(c *cli.Context, opts measure.Options) (bool, error) {
	if !c.Bool("bounded-memory") {
		return false, nil
	}
	if err := result.CheckBounded(opts); err != nil {
		return true, usageError{bind.Error(err)}
	}
	return true, nil
}

// --- shards ---

func shardFlags() []cli.Flag {
	var s shard.Settings
	return bind.Flags(catClient, s.Params(time.Now))
}

// shardOptions reads --shard and --start-at.
func shardOptions(c *cli.Context) (shard.Spec, time.Time, []error) {
	var s shard.Settings
	errs := bind.Apply(c, s.Params(time.Now), false)
	return s.Spec, s.StartAt, append(errs, s.Check()...)
}
