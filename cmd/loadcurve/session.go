package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/time/rate"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/servermetrics"
	"github.com/loadcurve/loadcurve/shard"
	"github.com/loadcurve/loadcurve/sim"
	"github.com/loadcurve/loadcurve/workloads"
)

// maxDurationRequests bounds the request set of a duration-bound tier.
const maxDurationRequests = 2_000_000

// session is one invocation of run or sweep against one target: the client, the embedded sim
// when there is no --base-url, the output directory and the records file.
type session struct {
	stdout, stderr io.Writer
	progress       bool // draw a progress line on stderr

	target loadgen.Target
	client *loadgen.Client
	sim    *sim.Running

	seed        int64
	maxConc     int
	retries     int
	limiter     *rate.Limiter
	source      *workloadSource
	measureOpts measure.Options
	// boundedMemory summarises tiers on the fly (ApproxAccumulator) instead of keeping their
	// records: memory stays flat however long the tier runs (run --bounded-memory).
	boundedMemory bool
	format        string

	outDir string
	writer *records.Writer
	header records.Header

	scraper *servermetrics.Scraper // nil: no server metrics

	shard   shard.Spec // zero: not sharded
	startAt time.Time  // zero: start at once
}

// openSession validates every flag shared by run and sweep (reporting all problems at once),
// starts the embedded sim when needed, resolves the model and verifies the target.
func openSession(c *cli.Context, command string, extra []error) (*session, error) {
	s := &session{stdout: c.App.Writer, stderr: c.App.ErrWriter}
	errs := extra
	var tErrs, wErrs, mErrs []error
	s.target, tErrs = target(c)
	errs = append(errs, tErrs...)
	s.seed = c.Int64("seed")
	s.source, wErrs = newWorkloadSource(c)
	errs = append(errs, wErrs...)
	s.measureOpts, mErrs = measureOptions(c, 0)
	errs = append(errs, mErrs...)
	var err error
	if s.maxConc, err = maxConcurrency(c); err != nil {
		errs = append(errs, err)
	}
	if s.retries, err = retries(c); err != nil {
		errs = append(errs, err)
	}
	if s.limiter, err = rateLimiter(c); err != nil {
		errs = append(errs, err)
	}
	if s.format, err = outputFormat(c); err != nil {
		errs = append(errs, err)
	}
	var shErrs []error
	s.shard, s.startAt, shErrs = shardOptions(c)
	errs = append(errs, shErrs...)
	var simCfg sim.Config
	if s.target.BaseURL == "" {
		if simCfg, err = simConfig(c, "sim-"); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, usageErrors(errs)
	}
	s.progress = !c.Bool("quiet") && isTerminal(os.Stderr)
	if s.target.Insecure {
		fmt.Fprintln(s.stderr, "loadcurve: WARNING: --insecure: TLS certificates are NOT verified")
	}

	if s.target.BaseURL == "" {
		s.sim, err = sim.Start(simCfg, "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("start the embedded simulated deployment: %w", err)
		}
		s.target.BaseURL = s.sim.URL()
		fmt.Fprintf(s.stderr, "loadcurve: no --base-url: started the embedded simulated deployment (profile %q, a model, not a measurement) at %s\n",
			c.String("sim-profile"), s.target.BaseURL)
	}
	s.client, err = loadgen.NewClient(s.target, s.maxConc)
	if err != nil {
		s.close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(c.Context, 30*time.Second)
	defer cancel()
	if s.target.Model == "" {
		if s.target.Model, err = s.client.ResolveModel(ctx); err != nil {
			s.close()
			return nil, err
		}
		s.client, err = loadgen.NewClient(s.target, s.maxConc)
		if err != nil {
			s.close()
			return nil, err
		}
	}
	s.scraper = openScraper(ctx, c.String("server-metrics"), s.target, s.stderr)
	probe := workloads.Request{Prompt: "Say hello.", InputTokens: 2, MaxTokens: 4}
	if err := s.client.Preflight(ctx, probe); err != nil {
		s.close()
		return nil, fmt.Errorf("preflight request to %s failed: %w", loadgen.SanitizeURL(s.target.BaseURL), err)
	}

	s.header = records.Header{
		Kind: records.KindHeader, Tool: "loadcurve", MetricsVersion: records.MetricsVersion, Version: version, Command: command, Target: loadgen.SanitizeURL(s.target.BaseURL),
		Endpoint: s.target.Endpoint.String(), Model: s.target.Model, Workload: s.source.desc,
		Seed: s.seed, MaxConcurrency: s.maxConc, CachePolicy: s.source.cache.String(), ExtraBody: s.target.ExtraBody,
		TimeoutS: s.target.Timeout.Seconds(), Retries: s.retries, StartWall: time.Now(), Shard: s.shard.String(),
	}
	if s.sim != nil {
		s.header.Sim = c.String("sim-profile")
	}
	if dir := c.String("out"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			s.close()
			return nil, fmt.Errorf("--out %s: %w", dir, err)
		}
		s.outDir = dir
	}
	return s, nil
}

// openScraper returns the scraper of the target's metrics endpoint: the one given, none for
// "off", or the target's /metrics when it answers a first scrape.
func openScraper(ctx context.Context, flag string, t loadgen.Target, stderr io.Writer) *servermetrics.Scraper {
	if flag == "off" {
		return nil
	}
	url := flag
	if url == "" {
		url = servermetrics.DefaultURL(t.BaseURL)
	}
	sc := servermetrics.NewScraper(url, nil, t.Model)
	if _, err := sc.Scrape(ctx); err != nil {
		if flag != "" {
			fmt.Fprintf(stderr, "loadcurve: WARNING: --server-metrics %s: %v; continuing without server-side metrics\n", loadgen.SanitizeURL(url), err)
		} else {
			fmt.Fprintf(stderr, "loadcurve: the target exposes no Prometheus metrics at %s (%v): no server-side metrics (set --server-metrics URL)\n", loadgen.SanitizeURL(url), err)
		}
		return nil
	}
	fmt.Fprintf(stderr, "loadcurve: scraping server-side metrics from %s every second of every tier\n", loadgen.SanitizeURL(url))
	return sc
}

// openRecords creates records.jsonl with the header (once the header is complete).
func (s *session) openRecords() error {
	if s.outDir == "" {
		return nil
	}
	w, err := records.Create(filepath.Join(s.outDir, "records.jsonl"), s.header)
	if err != nil {
		return err
	}
	s.writer = w
	return nil
}

func (s *session) close() error {
	var err error
	if s.writer != nil {
		err = s.writer.Close()
		s.writer = nil
	}
	if s.sim != nil {
		s.sim.Close()
		s.sim = nil
	}
	return err
}

// tierPlan is what one tier sends.
type tierPlan struct {
	index    int
	spec     arrival.Spec
	n        int           // request count, or 0 with duration
	duration time.Duration // tier length for duration-bound tiers
	seed     int64         // seed of this tier's schedule and request set
	grace    time.Duration // how long stragglers may run after the last arrival (0 = until done)
	startAt  time.Time     // wall-clock T0 shared by every shard (zero: at once)
}

// tierSeed derives a tier's seed from the run's seed and the tier's rate, so that two deployments
// swept with the same arguments receive identical traffic at equal offered rates, and different
// tiers do not repeat each other's prompts (which would warm prefix caches across tiers).
func tierSeed(seed int64, rate float64) int64 {
	h := fnv.New64a()
	var b [16]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(uint64(seed) >> (8 * i))
		b[8+i] = byte(math.Float64bits(rate) >> (8 * i))
	}
	h.Write(b[:])
	return int64(h.Sum64() >> 1)
}

// tierOutcome is one measured tier.
type tierOutcome struct {
	plan    tierPlan
	summary measure.Summary
	records []records.Record
	// With --bounded-memory: no records, but the tier's streaming summary and trend points.
	approx         *measure.ApproxAccumulator
	trendX, trendY []float64
	result         loadgen.Result
	server         json.RawMessage // server-side metrics of the tier, nil when not scraped
}

// collector is the tier's record sink: it appends every record to records.jsonl and either keeps
// it for the exact summary or, with --bounded-memory, adds it to a streaming summary and keeps
// nothing. loadgen calls it from one goroutine.
type collector struct {
	mu             sync.Mutex
	recs           []records.Record
	approx         *measure.ApproxAccumulator // nil: keep the records
	trend          bool                       // with approx: keep the trend test's points (a sweep's tiers)
	trendX, trendY []float64
	w              *records.Writer
}

func (c *collector) Write(r *records.Record) error {
	c.mu.Lock()
	if c.approx != nil {
		c.approx.Add(r)
		if c.trend {
			c.trendX, c.trendY = appendTrendPoint(c.trendX, c.trendY, r)
		}
	} else {
		c.recs = append(c.recs, *r)
	}
	c.mu.Unlock()
	if c.w != nil {
		return c.w.Write(r)
	}
	return nil
}

// runTier materialises a tier's schedule and requests, sends them, and summarises the records.
func (s *session) runTier(ctx context.Context, p tierPlan, label string) (*tierOutcome, error) {
	var offsets []time.Duration
	var err error
	switch {
	case s.source.trace != nil:
		offsets = s.source.traceOffsets(p.n)
	case p.duration > 0:
		offsets, err = p.spec.OffsetsWithin(p.duration, p.seed, maxDurationRequests)
	default:
		offsets, err = p.spec.Offsets(p.n, p.seed)
	}
	if err != nil {
		return nil, usageError{err}
	}
	if len(offsets) == 0 {
		return nil, errNoArrivals{usagef("tier %d (%s) plans no request within --duration %v: raise the duration or the rate", p.index, p.spec, p.duration)}
	}
	set, notes, err := s.source.tierSet(len(offsets), p.seed)
	if err != nil {
		return nil, usageError{err}
	}
	printNotes(s.stderr, notes)
	fingerprint := set.Fingerprint // of the requests before any cache nonce: comparable across runs
	if set, err = s.source.applyCache(set, s.nonce(p)); err != nil {
		return nil, err
	}
	reqs := set.Requests
	if s.shard.Sharded() {
		// Every shard built the same global schedule and set; this one sends its share, under the
		// global ids.
		offsets, reqs = s.shard.Filter(offsets, reqs)
	}
	if s.source.cache == workloads.CacheWarm {
		if err := s.warmUp(ctx, p.index, reqs); err != nil {
			return nil, err
		}
	}
	rateVal, burst := p.spec.Rate, p.spec.Burstiness
	arrivalDesc := p.spec.String()
	if s.source.trace != nil {
		arrivalDesc = "trace(" + s.source.trace.Source + ")"
	}
	if s.header.Command == "run" {
		s.header.WorkloadFingerprint, s.header.Arrival = fingerprint, arrivalDesc
	}
	printNotes(s.stderr, s.source.notes)
	s.source.notes = nil
	if s.outDir != "" && s.writer == nil {
		if err := s.openRecords(); err != nil {
			return nil, err
		}
	}
	if !p.startAt.IsZero() {
		late, err := shard.StartAt(ctx, p.startAt)
		if err != nil {
			return nil, fmt.Errorf("tier %d: --start-at: %w", p.index, err)
		}
		if late > 10*time.Millisecond {
			fmt.Fprintf(s.stderr, "loadcurve: WARNING: tier %d started %v after its --start-at time\n", p.index, late.Round(time.Millisecond))
		}
	}
	if s.writer != nil {
		if err := s.writer.WriteTier(records.Tier{Tier: p.index, Arrival: arrivalDesc, RequestRate: records.Rate(rateVal),
			Burstiness: records.Rate(burst), Seed: p.seed, Planned: len(offsets), DurationS: p.duration.Seconds(),
			WorkloadFingerprint: fingerprint, StartWall: time.Now()}); err != nil {
			return nil, err
		}
	}
	col := &collector{w: s.writer}
	if s.boundedMemory {
		if col.approx, err = measure.NewApproxAccumulator(s.measureOpts, 0); err != nil {
			return nil, usagef("--bounded-memory: %v", err)
		}
		col.trend = s.header.Command == "sweep" // a run has no trend test: it keeps nothing per request
	} else {
		col.recs = make([]records.Record, 0, len(offsets))
	}
	var sampler *servermetrics.Sampler
	if s.scraper != nil {
		sampler = servermetrics.StartSampler(ctx, s.scraper, time.Now(), time.Second)
		select { // the baseline scrape comes before the first request
		case <-sampler.Ready():
		case <-time.After(servermetrics.DefaultTimeout):
		}
	}
	var prog loadgen.Progress
	stop := s.startProgress(&prog, label, len(offsets))
	res, err := loadgen.Run(ctx, s.client, loadgen.Tier{
		Index: p.index, Shard: s.shard.Index, Offsets: offsets, Requests: reqs, MaxConcurrency: s.maxConc,
		Limiter: s.limiter, Grace: p.grace, Retries: s.retries,
	}, col, &prog)
	stop()
	var server json.RawMessage
	if sampler != nil {
		var merr error
		if server, merr = json.Marshal(sampler.Stop()); merr != nil {
			return nil, fmt.Errorf("tier %d: encode server metrics: %w", p.index, merr)
		}
		if s.writer != nil {
			if err := s.writer.WriteServerMetrics(p.index, server); err != nil {
				return nil, err
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("tier %d: %w", p.index, err)
	}
	if res.SinkErr != nil {
		return nil, fmt.Errorf("tier %d: writing records: %w", p.index, res.SinkErr)
	}
	info := measure.TierInfo{Tier: p.index, Arrival: arrivalDesc, NominalRate: rateVal,
		Burstiness: burst, MaxConcurrency: s.maxConc, Planned: len(offsets)}
	sum := summaryOf(col.approx, col.recs, info, s.measureOpts)
	sum.Complete = sum.Complete && ctx.Err() == nil
	checkDelivered(&sum, s.maxConc)
	if res.RateLimited {
		sum.ClientBound = true
		sum.ClientBoundReason = joinReason(sum.ClientBoundReason, "the --rate-limit safety ceiling held requests back: it, not the schedule, shaped the load")
	}
	return &tierOutcome{plan: p, summary: sum, records: col.recs, approx: col.approx, trendX: col.trendX, trendY: col.trendY,
		result: res, server: server}, nil
}

// nonce is the cold-cache nonce of a tier: random, except in a sharded run, where every shard
// must put the same nonce in front of the same prompts (derived from the seed, the shared start
// and the tier) so that prefixes shared within the workload stay shared across shards.
func (s *session) nonce(p tierPlan) string {
	if !s.shard.Sharded() {
		return workloads.NewNonce()
	}
	return fmt.Sprintf("[run:%016x]", uint64(tierSeed(s.seed^s.startAt.UnixNano(), float64(p.index))))
}

// warmUp sends a tier's requests once, unmeasured, all at once through the concurrency gate
// (64 when uncapped), so that the measured pass meets a warm prefix cache.
func (s *session) warmUp(ctx context.Context, tier int, reqs []workloads.Request) error {
	conc := s.maxConc
	if conc == 0 {
		conc = 64
	}
	var prog loadgen.Progress
	stop := s.startProgress(&prog, fmt.Sprintf("warm-up of tier %d", tier), len(reqs))
	res, err := loadgen.Run(ctx, s.client, loadgen.Tier{Index: tier, Offsets: make([]time.Duration, len(reqs)),
		Requests: reqs, MaxConcurrency: conc}, discard{}, &prog)
	stop()
	if err != nil {
		return fmt.Errorf("warm-up of tier %d: %w", tier, err)
	}
	fmt.Fprintf(s.stderr, "loadcurve: warm-up: sent tier %d's %d requests once, unmeasured (%d failed)\n", tier, res.Planned, prog.Errors.Load())
	return nil
}

// discard is a sink that keeps nothing.
type discard struct{}

func (discard) Write(*records.Record) error { return nil }

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// warnClientBound says loudly that the client shaped the load.
func (s *session) warnClientBound(sum measure.Summary) {
	if sum.ClientBound {
		fmt.Fprintf(s.stderr, "loadcurve: WARNING: tier %d is CLIENT-BOUND: %s. Its latencies describe this client as much as the server.\n",
			sum.Tier, sum.ClientBoundReason)
	}
}

// writeJSON writes v as indented JSON to dir/name.
func writeJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// startProgress draws "label done/planned, in flight, errors" on stderr until stop is called.
func (s *session) startProgress(p *loadgen.Progress, label string, planned int) (stop func()) {
	if !s.progress {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	start := time.Now()
	draw := func() {
		fmt.Fprintf(s.stderr, "\r%s  %d/%d done  %d in flight  %d errors  %.1fs ",
			label, p.Done.Load(), planned, p.InFlight.Load(), p.Errors.Load(), time.Since(start).Seconds())
	}
	go func() {
		defer wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				draw()
			case <-done:
				draw()
				fmt.Fprintln(s.stderr)
				return
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// errNoArrivals: a duration-bound tier whose schedule plans nothing inside the duration.
type errNoArrivals struct{ error }

func (e errNoArrivals) Unwrap() error { return e.error }

var errInterrupted = errors.New("interrupted: results are incomplete")
