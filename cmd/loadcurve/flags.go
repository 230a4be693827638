package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/time/rate"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/shard"
	"github.com/loadcurve/loadcurve/workloads"
)

// Defaults printed in --help and echoed in results.
const (
	defaultSeed           = 0
	defaultInputLen       = workloads.DefaultInputLen
	defaultOutputLen      = workloads.DefaultOutputLen
	defaultTimeout        = 5 * time.Minute
	defaultEndpoint       = "chat"
	defaultMaxScheduleLag = 5 * time.Millisecond
)

const (
	catTarget    = "Target"
	catLoad      = "Load"
	catWorkload  = "Workload"
	catObjective = "Objectives"
	catOutput    = "Output"
	catSim       = "Embedded simulated deployment (used when --base-url is not given)"
)

func targetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "base-url", Category: catTarget, Usage: "OpenAI-style base URL of the target, e.g. http://host:8000/v1 (default: start the embedded simulated deployment)"},
		&cli.StringFlag{Name: "api-key", Category: catTarget, EnvVars: []string{"OPENAI_API_KEY"}, Usage: "API key sent as a Bearer token (never written to any output)"},
		&cli.StringFlag{Name: "model", Category: catTarget, Usage: "model name (default: the first of GET /models)"},
		&cli.StringFlag{Name: "endpoint", Category: catTarget, Value: defaultEndpoint, Usage: "chat (/chat/completions) or completions (/completions)"},
		&cli.StringFlag{Name: "extra-body", Category: catTarget, Usage: "JSON object merged into every request body, e.g. '{\"ignore_eos\":true}'"},
		&cli.BoolFlag{Name: "ignore-eos", Category: catTarget, Usage: "ask the server to generate max_tokens tokens whatever it samples (vLLM's flag: adds \"ignore_eos\":true to the body)"},
		&cli.StringSliceFlag{Name: "header", Category: catTarget, Usage: "extra request header 'Name: value' (repeatable; values never written to any output)"},
		&cli.DurationFlag{Name: "timeout", Category: catTarget, Value: defaultTimeout, Usage: "per-request deadline from send to the end of the stream (0 = none)"},
		&cli.BoolFlag{Name: "insecure", Category: catTarget, Usage: "skip TLS certificate verification (loudly reported)"},
		&cli.StringFlag{Name: "server-metrics", Category: catTarget, Usage: "Prometheus metrics URL of the target, scraped every second of every tier, or off (default: the target's /metrics when it answers)"},
	}
}

func loadFlags(defaultRate string, defaultN int) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "request-rate", Category: catLoad, Value: defaultRate, Usage: "arrival rate in requests/s, or inf to send everything at once"},
		&cli.StringFlag{Name: "burstiness", Category: catLoad, Value: "1", Usage: "Gamma shape of the inter-arrival gaps: 1 = Poisson, <1 burstier, inf = constant spacing"},
		&cli.IntFlag{Name: "max-concurrency", Category: catLoad, Usage: "cap on requests in flight; excess arrivals wait in the client (measured as client_queue_time) (default: no cap)"},
		&cli.IntFlag{Name: "num-requests", Aliases: []string{"num-prompts"}, Category: catLoad, Value: defaultN, Usage: "requests per tier (vLLM's --num-prompts)"},
		&cli.DurationFlag{Name: "duration", Category: catLoad, Usage: "tier length instead of --num-requests: arrivals planned within it are sent"},
		&cli.Int64Flag{Name: "seed", Category: catLoad, Value: defaultSeed, Usage: "seed of the schedule and the request set"},
		&cli.StringFlag{Name: "ramp-up-strategy", Category: catLoad, Usage: "linear or exponential ramp of the rate from --ramp-up-start-rps to --ramp-up-end-rps"},
		&cli.Float64Flag{Name: "ramp-up-start-rps", Category: catLoad, Usage: "ramp start rate (requests/s)"},
		&cli.Float64Flag{Name: "ramp-up-end-rps", Category: catLoad, Usage: "ramp end rate (requests/s)"},
		&cli.Float64Flag{Name: "rate-limit", Category: catLoad, Usage: "hard safety ceiling in requests/s guarding shared endpoints; holding requests back shows as schedule lag (default: off)"},
		retriesFlag(),
	}
}

func objectiveFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "goodput", Category: catObjective, Usage: "latency objectives KEY:MS (vLLM syntax), keys ttft, tpot, e2el, client_queue_time, e2el_including_client_queue, e.g. --goodput ttft:500 tpot:50"},
		&cli.StringFlag{Name: "metric-percentiles", Category: catObjective, Value: measure.DefaultPercentiles, Usage: "percentiles to report"},
		&cli.StringFlag{Name: "percentile-metrics", Category: catObjective,
			Usage: "metrics to report statistics for, comma-separated among " + strings.Join(measure.MetricNames(), ",") + " (default: all; vLLM's is ttft,tpot,itl)"},
		&cli.DurationFlag{Name: "window-warmup", Category: catObjective, Usage: "steady-state window: leave out of the metrics the requests planned in the tier's first DURATION (default: none)"},
		&cli.DurationFlag{Name: "window-cooldown", Category: catObjective, Usage: "steady-state window: leave out of the metrics the requests planned in the tier's last DURATION (default: none)"},
		&cli.DurationFlag{Name: "max-schedule-lag", Category: catObjective, Value: defaultMaxScheduleLag, Usage: "schedule-lag p99 above which the run is marked client_bound"},
	}
}

// boundedMemoryFlag is --bounded-memory for a command whose summaries are computed as records
// arrive (run, sweep) or are read (report).
func boundedMemoryFlag(what string) cli.Flag {
	return &cli.BoolFlag{Name: "bounded-memory", Category: catOutput,
		Usage: what + ": counts, throughputs, means exact; medians and percentiles within ±0.5 % (records.jsonl keeps everything; `report` on it is exact)"}
}

// boundedMemory reads --bounded-memory, which cannot apply a cooldown window.
func boundedMemory(c *cli.Context, opts measure.Options) (bool, error) {
	if !c.Bool("bounded-memory") {
		return false, nil
	}
	if opts.Cooldown > 0 {
		return true, usagef("--bounded-memory cannot apply --window-cooldown: the window's end depends on the tier's length, known only at its end (run without it, then `loadcurve report --window-cooldown` on the records)")
	}
	return true, nil
}

func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "out", Category: catOutput, Usage: "directory for records.jsonl, summaries and plots"},
		&cli.StringFlag{Name: "format", Category: catOutput, Value: "table", Usage: "stdout format: table, json or csv"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Category: catOutput, Usage: "no progress display"},
	}
}

// parseRate parses a number > 0 or "inf".
func parseRate(flag, s string) (float64, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "inf") {
		return math.Inf(1), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return 0, fmt.Errorf("--%s must be a number > 0 or inf, got %q", flag, s)
	}
	return v, nil
}

// arrivalSpec reads the load flags into a validated arrival spec.
func arrivalSpec(c *cli.Context) (arrival.Spec, []error) {
	var errs []error
	r, err := parseRate("request-rate", c.String("request-rate"))
	if err != nil {
		errs = append(errs, err)
	}
	b, err := parseRate("burstiness", c.String("burstiness"))
	if err != nil {
		errs = append(errs, err)
	}
	ramp, err := arrival.ParseRampStrategy(c.String("ramp-up-strategy"))
	if err != nil {
		errs = append(errs, fmt.Errorf("--ramp-up-strategy: %w", err))
	}
	spec := arrival.Spec{Rate: r, Burstiness: b, Ramp: ramp,
		RampStart: c.Float64("ramp-up-start-rps"), RampEnd: c.Float64("ramp-up-end-rps")}
	if len(errs) == 0 {
		errs = append(errs, spec.Validate()...)
	}
	return spec, errs
}

// loadCount reads --num-requests / --duration.
func loadCount(c *cli.Context) (n int, d time.Duration, errs []error) {
	n, d = c.Int("num-requests"), c.Duration("duration")
	if c.IsSet("duration") {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("--duration must be > 0, got %v", d))
		}
		if c.IsSet("num-requests") {
			errs = append(errs, errors.New("give --num-requests or --duration, not both"))
		}
		return 0, d, errs
	}
	if n < 1 {
		errs = append(errs, fmt.Errorf("--num-requests must be >= 1, got %d", n))
	}
	return n, 0, errs
}

// maxConcurrency reads --max-concurrency: unset means no cap; an explicit value must be >= 1.
func maxConcurrency(c *cli.Context) (int, error) {
	if !c.IsSet("max-concurrency") {
		return 0, nil
	}
	if v := c.Int("max-concurrency"); v >= 1 {
		return v, nil
	}
	return 0, fmt.Errorf("--max-concurrency must be >= 1 (omit it for no cap), got %d", c.Int("max-concurrency"))
}

func rateLimiter(c *cli.Context) (*rate.Limiter, error) {
	if !c.IsSet("rate-limit") {
		return nil, nil
	}
	v := c.Float64("rate-limit")
	if !(v > 0) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("--rate-limit must be a finite number of requests/s > 0, got %v", v)
	}
	return rate.NewLimiter(rate.Limit(v), 1), nil
}

// target reads the target flags (the base URL may be empty: the caller starts the sim).
func target(c *cli.Context) (loadgen.Target, []error) {
	var errs []error
	ep, err := loadgen.ParseEndpoint(c.String("endpoint"))
	if err != nil {
		errs = append(errs, fmt.Errorf("--endpoint: %w", err))
	}
	t := loadgen.Target{BaseURL: c.String("base-url"), APIKey: c.String("api-key"), Model: c.String("model"),
		Endpoint: ep, Timeout: c.Duration("timeout"), Insecure: c.Bool("insecure")}
	if s := c.String("extra-body"); s != "" {
		body, err := loadgen.ParseExtraBody(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("--extra-body: %w", err))
		}
		t.ExtraBody = body
	}
	if c.Bool("ignore-eos") {
		body, err := withIgnoreEOS(t.ExtraBody)
		if err != nil {
			errs = append(errs, err)
		}
		t.ExtraBody = body
	}
	for i, h := range c.StringSlice("header") {
		name, value, err := loadgen.ParseHeader(h)
		if err != nil {
			errs = append(errs, fmt.Errorf("--header #%d: %w", i+1, err))
			continue
		}
		if t.Headers == nil {
			t.Headers = http.Header{}
		}
		t.Headers.Add(name, value)
	}
	if t.BaseURL != "" {
		errs = append(errs, t.Validate()...)
	}
	return t, errs
}

// objectives reads --goodput, including vLLM's space-separated form in which further KEY:MS
// pairs arrive as positional arguments (the command's own positionals, `skip` of them, come first).
func objectives(c *cli.Context, skip int) (measure.Objectives, error) {
	args := c.StringSlice("goodput")
	pos := c.Args().Slice()
	pos = pos[min(skip, len(pos)):]
	if len(args) > 0 {
		for _, a := range pos {
			if strings.Contains(a, ":") {
				args = append(args, a)
			} else {
				return measure.Objectives{}, usagef("unexpected argument %q (objectives look like KEY:MS)", a)
			}
		}
	} else if len(pos) > 0 {
		return measure.Objectives{}, usagef("unexpected argument %q", pos[0])
	}
	if len(args) == 0 {
		return measure.Objectives{}, nil
	}
	return measure.ParseGoodput(args)
}

// measureOptions reads the objective and percentile flags; the command takes `positional`
// arguments of its own.
func measureOptions(c *cli.Context, positional int) (measure.Options, []error) {
	var errs []error
	obj, err := objectives(c, positional)
	if err != nil {
		errs = append(errs, err)
	}
	ps, err := measure.ParsePercentiles(c.String("metric-percentiles"))
	if err != nil {
		errs = append(errs, err)
	}
	lag := c.Duration("max-schedule-lag")
	if lag <= 0 {
		errs = append(errs, fmt.Errorf("--max-schedule-lag must be > 0, got %v", lag))
	}
	opts := measure.Options{Objectives: obj, Percentiles: ps, MaxScheduleLag: lag,
		Warmup: c.Duration("window-warmup"), Cooldown: c.Duration("window-cooldown")}
	if c.IsSet("percentile-metrics") {
		if opts.Metrics, err = measure.ParsePercentileMetrics(c.String("percentile-metrics")); err != nil {
			errs = append(errs, err)
		}
	}
	for _, w := range []struct {
		flag string
		d    time.Duration
	}{{"window-warmup", opts.Warmup}, {"window-cooldown", opts.Cooldown}} {
		if w.d < 0 {
			errs = append(errs, fmt.Errorf("--%s must be >= 0, got %v", w.flag, w.d))
		}
	}
	return opts, errs
}

func outputFormat(c *cli.Context) (string, error) {
	switch f := c.String("format"); f {
	case "table", "json", "csv":
		return f, nil
	default:
		return "", fmt.Errorf("--format must be table, json or csv, got %q", f)
	}
}

// retriesFlag: retries distort the offered load, so there are none unless asked for.
func retriesFlag() cli.Flag {
	return &cli.IntFlag{Name: "retries", Category: catLoad, Usage: "re-send a request that got 429/5xx or lost its connection before any output, up to N times (attempts are recorded; retries distort the load) (default: 0)"}
}

func retries(c *cli.Context) (int, error) {
	if n := c.Int("retries"); n >= 0 {
		return n, nil
	}
	return 0, fmt.Errorf("--retries must be >= 0, got %d", c.Int("retries"))
}

func shardFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "shard", Category: catLoad, Usage: "send only shard i of k of the run: i/k, or auto/k to take i from JOB_COMPLETION_INDEX (Kubernetes Indexed Job); merge the shards' results with `loadcurve merge`"},
		&cli.StringFlag{Name: "start-at", Category: catLoad, Usage: "RFC 3339 wall-clock time at which every shard starts (its T0), e.g. 2026-05-01T12:00:00Z"},
	}
}

// shardOptions reads --shard and --start-at.
func shardOptions(c *cli.Context) (shard.Spec, time.Time, []error) {
	var errs []error
	var sp shard.Spec
	var at time.Time
	if v := c.String("shard"); v != "" {
		var err error
		if sp, err = shard.Parse(v); err != nil {
			errs = append(errs, err)
		}
	}
	if v := c.String("start-at"); v != "" {
		var err error
		if at, err = shard.ParseStartAt(v, time.Now()); err != nil {
			errs = append(errs, fmt.Errorf("--start-at: %w", err))
		}
	}
	if sp.Sharded() && at.IsZero() && sp.Count > 1 {
		errs = append(errs, errors.New("--shard needs --start-at: the shards must share one T0 for their union to be the planned schedule"))
	}
	return sp, at, errs
}

// withIgnoreEOS adds "ignore_eos":true to an extra body (nil: none yet).
func withIgnoreEOS(body []byte) ([]byte, error) {
	if len(body) == 0 {
		return []byte(`{"ignore_eos":true}`), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return body, fmt.Errorf("--ignore-eos: %w", err)
	}
	if v, ok := m["ignore_eos"]; ok {
		if string(v) != "true" {
			return body, fmt.Errorf("--ignore-eos contradicts --extra-body's \"ignore_eos\":%s", v)
		}
		return body, nil
	}
	merged := []byte(`{"ignore_eos":true`)
	if len(m) > 0 {
		merged = append(merged, ',')
	}
	merged = append(merged, bytes.TrimSpace(body)[1:]...) // the members after '{', and '}'
	out, err := loadgen.ParseExtraBody(string(merged))
	if err != nil {
		return body, fmt.Errorf("--ignore-eos: %w", err)
	}
	return out, nil
}
