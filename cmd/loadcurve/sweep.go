package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
)

// Sweep defaults, printed with every result.
const (
	defaultSweepRates    = "auto"
	defaultTierDuration  = 4 * time.Second
	defaultDrainTimeout  = 20 * time.Second
	defaultPrecision     = 0.1
	defaultMaxTiers      = 10
	defaultSweepObjectiv = "ttft:2000 tpot:100"
)

func sweepFlags() []cli.Flag {
	load := []cli.Flag{
		&cli.StringFlag{Name: "request-rates", Category: catLoad, Value: defaultSweepRates, Usage: "tiers: a list 1,2,4,8; a range LO:HI:geom:N or LO:HI:lin:N; or auto (probe saturation, then place and refine tiers)"},
		&cli.StringFlag{Name: "burstiness", Category: catLoad, Value: "1", Usage: "Gamma shape of the inter-arrival gaps: 1 = Poisson, <1 burstier, inf = constant spacing"},
		&cli.IntFlag{Name: "max-concurrency", Category: catLoad, Usage: "cap on requests in flight in every tier (default: no cap)"},
		&cli.IntFlag{Name: "num-requests", Aliases: []string{"num-prompts"}, Category: catLoad, Usage: "requests per tier instead of --duration (vLLM's --num-prompts)"},
		&cli.DurationFlag{Name: "duration", Category: catLoad, Value: defaultTierDuration, Usage: "length of each tier: arrivals planned within it are sent"},
		&cli.DurationFlag{Name: "drain-timeout", Category: catLoad, Value: defaultDrainTimeout, Usage: "after a tier's last arrival, how long its stragglers may run before they are canceled, so no tier's tail leaks into the next"},
		&cli.DurationFlag{Name: "cooldown", Category: catLoad, Usage: "pause between tiers"},
		&cli.Int64Flag{Name: "seed", Category: catLoad, Value: defaultSeed, Usage: "seed of every tier's schedule and request set"},
		&cli.Float64Flag{Name: "rate-limit", Category: catLoad, Usage: "hard safety ceiling in requests/s (default: off)"},
		retriesFlag(),
		&cli.Float64Flag{Name: "target-share", Category: catObjective, Value: curve.DefaultTargetShare, Usage: "compliant request share a tier must reach to count as within objective, in (0,1]"},
		&cli.Float64Flag{Name: "headroom", Category: catObjective, Value: curve.DefaultHeadroom, Usage: "operating point = capacity at objective × (1 − headroom); a business choice, in [0,1)"},
		&cli.Float64Flag{Name: "precision", Category: catLoad, Value: defaultPrecision, Usage: "auto: refine the capacity until the bracketing tiers are within this relative distance"},
		&cli.IntFlag{Name: "max-tiers", Category: catLoad, Value: defaultMaxTiers, Usage: "auto: most tiers to run after the probe"},
	}
	return concat(targetFlags(), load, shardFlags(), sourceFlags(), objectiveFlags(), outputFlags(),
		[]cli.Flag{boundedMemoryFlag("summarise every tier as its records arrive and keep none in memory, for long tiers")}, simFlags("sim-"))
}

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name:      "sweep",
		Usage:     "sweep arrival-rate tiers into a load curve: plateau, knee, capacity at objective, operating point",
		ArgsUsage: " ",
		Description: "Each tier sends a seeded schedule (the same for every deployment swept with the same arguments),\n" +
			"stops starting requests at its end, waits for stragglers up to --drain-timeout, and is summarised.\n" +
			"Compliance = success AND every --goodput objective met (default " + defaultSweepObjectiv + ").",
		Flags:  sweepFlags(),
		Action: sweepAction,
	}
}

// sweepSettings are the analysis inputs echoed into curve.json.
type sweepSettings struct {
	params curve.Params
	rates  curve.Rates
}

func sweepAction(c *cli.Context) error {
	var errs []error
	rates, err := curve.ParseRates(c.String("request-rates"))
	if err != nil {
		errs = append(errs, err)
	}
	burst, err := parseRate("burstiness", c.String("burstiness"))
	if err != nil {
		errs = append(errs, err)
	} else if !(burst > 0) {
		errs = append(errs, fmt.Errorf("--burstiness must be > 0 or inf, got %v", burst))
	}
	n, d := c.Int("num-requests"), c.Duration("duration")
	if c.IsSet("num-requests") {
		if n < 1 {
			errs = append(errs, fmt.Errorf("--num-requests must be >= 1, got %d", n))
		}
		d = 0
	} else if d <= 0 {
		errs = append(errs, fmt.Errorf("--duration must be > 0, got %v", d))
	}
	drain := c.Duration("drain-timeout")
	if drain <= 0 {
		errs = append(errs, fmt.Errorf("--drain-timeout must be > 0, got %v", drain))
	}
	params := curve.Params{TargetShare: c.Float64("target-share"), Headroom: c.Float64("headroom")}
	errs = append(errs, params.Validate()...)
	prec, maxTiers := c.Float64("precision"), c.Int("max-tiers")
	if !(prec > 0 && prec < 1) {
		errs = append(errs, fmt.Errorf("--precision must be in (0,1), got %v", prec))
	}
	if rates.Auto && maxTiers < len(curve.AutoFractions()) {
		errs = append(errs, fmt.Errorf("--max-tiers must be >= %d with --request-rates auto (its first pass alone places %d tiers), got %d",
			len(curve.AutoFractions()), len(curve.AutoFractions()), maxTiers))
	}
	if !c.IsSet("goodput") {
		// A sweep without objectives cannot place a knee: use printed defaults.
		if err := c.Set("goodput", defaultSweepObjectiv); err != nil {
			errs = append(errs, err)
		}
	}
	if c.String("shard") != "" && rates.Auto {
		errs = append(errs, errors.New("--shard needs explicit --request-rates: auto tiers follow each shard's own results, so shards would diverge"))
	}
	if c.String("shard") != "" && c.IsSet("num-requests") {
		errs = append(errs, errors.New("--shard needs duration-bound tiers (--duration), so that every shard starts each tier at the same time"))
	}
	s, err := openSession(c, "sweep", errs)
	if err != nil {
		return err
	}
	defer s.close()
	if s.boundedMemory, err = boundedMemory(c, s.measureOpts); err != nil {
		return err
	}
	if s.source.trace != nil {
		return usagef("--workload %s is a trace: a trace is its own schedule, one tier; replay it with `loadcurve run` (and --trace-time-scale)", s.source.spec)
	}
	if !c.IsSet("goodput") || c.StringSlice("goodput")[0] == defaultSweepObjectiv {
		fmt.Fprintf(s.stderr, "loadcurve: objectives: %s (default; set --goodput)\n", s.measureOpts.Objectives)
	}
	fmt.Fprintf(s.stderr, "loadcurve: target share %.3g, headroom %.3g (set --target-share, --headroom)\n", params.TargetShare, params.Headroom)
	s.header.Arrival = fmt.Sprintf("sweep(%s, burstiness=%s)", c.String("request-rates"), c.String("burstiness"))

	sw := &sweeper{s: s, burst: burst, n: n, d: d, drain: drain, cooldown: c.Duration("cooldown")}
	ctx := c.Context
	if rates.Auto {
		err = sw.auto(ctx, params, prec, maxTiers)
	} else {
		for i, r := range rates.List {
			if ctx.Err() != nil {
				break
			}
			if _, err = sw.tier(ctx, r, fmt.Sprintf("tier %d/%d", i+1, len(rates.List))); err != nil {
				break
			}
		}
	}
	if err != nil && ctx.Err() == nil {
		return err
	}
	if len(sw.tiers) == 0 {
		return errInterrupted
	}
	cf := buildCurve(s.header, sw.tiers, optionsOf(s.measureOpts, params), s.measureOpts)
	cf.Complete = ctx.Err() == nil && cf.Complete
	if err := s.close(); err != nil {
		return err
	}
	if err := emitCurve(s.stdout, s.stderr, s.format, s.outDir, cf); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sweeper runs the tiers of one sweep, in order, keeping what each measured.
type sweeper struct {
	s        *session
	burst    float64
	n        int
	d        time.Duration
	drain    time.Duration
	cooldown time.Duration
	tiers    []tierData
}

// tier runs one tier at rate r (+Inf for the saturation probe).
func (sw *sweeper) tier(ctx context.Context, r float64, label string) (*tierOutcome, error) {
	if len(sw.tiers) > 0 && sw.cooldown > 0 && sw.s.startAt.IsZero() {
		select {
		case <-time.After(sw.cooldown):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	spec := arrival.Spec{Rate: r, Burstiness: sw.burst}
	p := tierPlan{index: len(sw.tiers), spec: spec, n: sw.n, duration: sw.d, seed: tierSeed(sw.s.seed, r), grace: sw.drain}
	if !sw.s.startAt.IsZero() {
		// Fixed slots: every shard starts tier k at the same wall-clock time, whatever its own
		// drain took. A tier ends by duration + drain; the cooldown follows.
		slot := sw.d + sw.drain + sw.cooldown + time.Second
		p.startAt = sw.s.startAt.Add(time.Duration(p.index) * slot)
	}
	if math.IsInf(r, 1) {
		p.duration, p.n = 0, probeRequests(sw.s.maxConc)
	}
	out, err := sw.s.runTier(ctx, p, fmt.Sprintf("%s  rate %s/s", label, rateString(r)))
	var none errNoArrivals
	if errors.As(err, &none) {
		fmt.Fprintf(sw.s.stderr, "loadcurve: WARNING: %v; the tier is skipped\n", err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sw.s.warnClientBound(out.summary)
	sw.tiers = append(sw.tiers, tierData{info: out.tierInfo(), recs: out.records, server: out.server,
		approx: out.approx, trendX: out.trendX, trendY: out.trendY})
	if !sw.s.progress {
		sum := out.summary
		fmt.Fprintf(sw.s.stderr, "loadcurve: %s rate %s/s: %d ok of %d, %.0f tok/s raw, %.0f tok/s compliant, compliant share %.3f\n",
			label, rateString(r), sum.Completed, sum.Planned, sum.RawOutputThroughput, sum.CompliantOutputThroughput, sum.CompliantRequestShare)
	}
	return out, nil
}

// probeRequests sizes the saturation probe: enough simultaneous requests to fill the deployment.
func probeRequests(maxConc int) int {
	if maxConc > 0 {
		return max(4*maxConc, 32)
	}
	return 128
}

// auto probes the saturation throughput with a burst, then lets the planner place and refine
// tiers around the capacity at objective.
func (sw *sweeper) auto(ctx context.Context, params curve.Params, prec float64, maxTiers int) error {
	probe, err := sw.tier(ctx, math.Inf(1), "probe (burst at rate inf)")
	if err != nil || probe == nil {
		return err
	}
	sat := probe.summary.RequestThroughput
	if !(sat > 0) {
		return fmt.Errorf("the saturation probe completed no request (%d planned): nothing to sweep; check the target", probe.summary.Planned)
	}
	fmt.Fprintf(sw.s.stderr, "loadcurve: probe: saturation throughput ≈ %.2f req/s (%.0f output tok/s); placing tiers around it\n",
		sat, probe.summary.OutputThroughput)
	pl := curve.NewPlanner(sat, params, prec, maxTiers)
	for i := 1; ctx.Err() == nil; i++ {
		r, ok := pl.Next(sw.points(sw.s))
		if !ok {
			return nil
		}
		if _, err := sw.tier(ctx, r, fmt.Sprintf("tier %d", i)); err != nil {
			return err
		}
	}
	return nil
}

// points are the finite-rate tiers measured so far, as the planner sees them.
func (sw *sweeper) points(s *session) []curve.Point {
	var pts []curve.Point
	var probe *measure.Summary
	for _, t := range sw.tiers {
		if math.IsInf(t.info.rate, 1) {
			p := summarize(t, s.measureOpts)
			probe = &p
			continue
		}
		pts = append(pts, pointOf(t, s.measureOpts))
	}
	boundByService(pts, probe)
	return pts
}

func msDuration(v float64) time.Duration {
	return time.Duration(math.Round(v * float64(time.Millisecond)))
}
