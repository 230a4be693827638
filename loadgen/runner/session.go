// Package runner runs tiers against one deployment over HTTP: it opens the target (or starts
// the embedded simulated deployment), resolves the model, sends a preflight request, and then,
// for each tier a sweep plans, builds its request set, sends it with loadgen, writes its lines
// to records.jsonl, samples the target's Prometheus metrics and, when asked, tallies each tier's
// time series as its records pass. The records header it writes is built once, in Open
// (result.NewHeader). A Session is the sweep package's Runner against a real (or simulated)
// server. (The package was called target, a name that also meant the deployment, the
// --target-share and, to many tools, a build-output directory.)
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/redact"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/measure/servermetrics"
	"github.com/loadcurve/loadcurve/measure/timeseries"
	"github.com/loadcurve/loadcurve/workloads"
)

// Options configure a Session. They are validated by the command that builds them.
type Options struct {
	// Target is the deployment; with an empty BaseURL the embedded simulated deployment is
	// started on a loopback port (Sim, or a queue when Queue is set) and the target points at it.
	Target loadgen.Target
	Sim    sim.Config
	Queue  *sim.QueueConfig
	// SimLabel names the embedded deployment in results (its profile, or "mdc(...)").
	SimLabel string
	// SimReplicas, when > 1, serves Sim (or Queue) as that many replicas behind an in-process
	// balancer (SimBalance: sim.BalancePolicies; "" is round-robin) on one address.
	SimReplicas int
	SimBalance  string
	// Workload builds each tier's requests.
	Workload *workloads.Source
	// MaxConcurrency sizes the connection pool (the cap itself is per tier).
	MaxConcurrency int
	Retries        int
	// RateLimit is a hard ceiling in requests/s (0: none).
	RateLimit float64
	// ServerMetrics is the metrics URL, "off", or "" for the target's /metrics when it answers.
	ServerMetrics string
	// Shard sends only this shard's share of every tier; Seed and StartAt derive the shared
	// cold-cache nonce of a sharded run.
	Shard   shard.Spec
	StartAt time.Time
	Seed    int64
	// OutDir receives records.jsonl; "" keeps no file.
	OutDir string
	// AppendRecords appends the tiers to the records.jsonl already in OutDir (a resumed sweep's,
	// its header and finished tiers kept) instead of creating it.
	AppendRecords bool
	// Progress, when set, is called as a tier starts and returns the function that ends its
	// progress display (the counters are updated while the tier runs).
	Progress func(label string, p *loadgen.Progress) (stop func())
	// Warmups, when > 0, sends that many copies of the first tier's first request before it,
	// unmeasured and not recorded (vLLM's --num-warmups), within the tier's concurrency cap.
	Warmups int
	// Log receives messages for the user (warnings, notes); nil drops them.
	Log func(format string, a ...any)
	// Name is how the user gives the input a message refers to, by its field name
	// (loadgen.FieldBaseURL: "--base-url" on the command line); nil writes the field's own name.
	Name func(field string) string
	// Version is the tool's version, for the header.
	Version string

	// What the header says besides the target: the command, its schedule (parsed values: its
	// String is written), the analysis settings, and the user's label and metadata (cleaned of
	// secrets and control characters on the way in).
	Command  records.Command
	Schedule fmt.Stringer
	Settings *records.Settings
	Label    string
	Metadata records.Metadata

	// Virtual serves Queue on the virtual clock (virtual.go) instead of starting it: no HTTP,
	// no wall-clock wait; the session writes the same files.
	Virtual bool

	// Tally follows every record as it passes: each tier's per-second time series and, for a
	// run, vLLM's peak figures (TimeSeries, Peaks), so that nothing reads the records file
	// again to learn them. They hold a few numbers per request and its ITL gaps: leave it off
	// in bounded memory.
	Tally bool
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Session is one target opened for a run or sweep.
type Session struct {
	opts    Options
	Header  records.Header
	client  *loadgen.Client
	sim     io.Closer
	scraper *servermetrics.Scraper
	limiter *rate.Limiter
	writer  *records.Writer

	// warmedUp: the --num-warmups requests were sent (before the first tier).
	warmedUp bool

	mu     sync.Mutex
	server map[int]json.RawMessage
	// series and peaks are each tier's tallies (Options.Tally), keyed by tier.
	series map[int]*timeseries.Builder
	peaks  map[int]*result.PeakAccumulator
}

// FieldWarmups names the warm-up requests sent before a run (Options.Warmups) in its errors.
const FieldWarmups = "warm-up requests"

var _ sweep.Runner = (*Session)(nil)

// Open starts the embedded deployment when there is no base URL, builds the client, resolves
// the model (the first of GET /models when none is given), finds the metrics endpoint and sends
// one preflight request, failing fast with a clear message when the target is unreachable,
// unauthorised or does not serve the model. The records header is built here, once, from the
// options (result.NewHeader); a run's workload fingerprint is its first tier's.
func Open(ctx context.Context, opts Options) (*Session, error) {
	s := &Session{opts: opts, server: map[int]json.RawMessage{}}
	if opts.RateLimit > 0 {
		s.limiter = rate.NewLimiter(rate.Limit(opts.RateLimit), 1)
	}
	t := opts.Target
	if opts.Virtual {
		return s.openVirtual()
	}
	if t.BaseURL == "" {
		var url string
		if opts.Queue != nil && opts.SimReplicas > 1 {
			// The random policy's draws come from the run's seed: the queue has none of its own.
			q, err := sim.StartQueueCluster(*opts.Queue, opts.SimReplicas, opts.SimBalance, opts.Seed, "127.0.0.1:0")
			if err != nil {
				return nil, fmt.Errorf("start the embedded queue: %w", err)
			}
			s.sim, url = q, q.URL()
		} else if opts.Queue != nil {
			q, err := sim.StartQueue(*opts.Queue, "127.0.0.1:0")
			if err != nil {
				return nil, fmt.Errorf("start the embedded queue: %w", err)
			}
			s.sim, url = q, q.URL()
		} else if opts.SimReplicas > 1 {
			r, err := sim.StartCluster(opts.Sim, opts.SimReplicas, opts.SimBalance, "127.0.0.1:0")
			if err != nil {
				return nil, fmt.Errorf("start the embedded simulated deployment: %w", err)
			}
			s.sim, url = r, r.URL()
		} else {
			r, err := sim.Start(opts.Sim, "127.0.0.1:0")
			if err != nil {
				return nil, fmt.Errorf("start the embedded simulated deployment: %w", err)
			}
			s.sim, url = r, r.URL()
		}
		t.BaseURL = url
		what := opts.SimLabel
		if opts.SimReplicas > 1 {
			what = fmt.Sprintf("%d replicas of %s behind a %s balancer", opts.SimReplicas, opts.SimLabel, cmpOr(opts.SimBalance, sim.BalanceRoundRobin))
		}
		s.logf("no %s: started the embedded simulated deployment (%s, a model, not a measurement) at %s", s.name(loadgen.FieldBaseURL), what, url)
	}
	if t.Insecure {
		s.logf("WARNING: %s: TLS certificates are NOT verified", s.name(loadgen.FieldInsecure))
	}
	var err error
	if s.client, err = loadgen.NewClient(t, opts.MaxConcurrency); err != nil {
		s.Close()
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if t.Model == "" {
		if t.Model, err = s.client.ResolveModel(pctx); err != nil {
			s.Close()
			return nil, err
		}
		if s.client, err = loadgen.NewClient(t, opts.MaxConcurrency); err != nil {
			s.Close()
			return nil, err
		}
	}
	s.opts.Target = t
	s.scraper = s.openScraper(pctx)
	err = s.client.PreflightRetrying(pctx, loadgen.PreflightRequest(), opts.Retries)
	if errors.Is(err, loadgen.ErrNoOutput) {
		s.logf("WARNING: %v", err)
		err = nil
	}
	if err != nil {
		s.Close()
		return nil, err // loadgen's preflight errors name the request and the target
	}
	s.Header, err = s.header(loadgen.SanitizeURL(t.BaseURL), s.sim != nil)
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// PlannedHeader is the records header Open would build from opts, as far as it is known before
// anything starts: the embedded deployment's address is not known yet (it is not what a
// header's comparison looks at), nor, when opts names no model, the model GET /models will name
// (the header's Model is then empty). A resumed sweep is checked against it before the target
// is opened.
func PlannedHeader(opts Options) (records.Header, error) {
	s := &Session{opts: opts}
	if opts.Virtual {
		target, model := virtualTarget(opts)
		s.opts.Target.Model = model
		return s.header(target, true)
	}
	return s.header(loadgen.SanitizeURL(opts.Target.BaseURL), opts.Target.BaseURL == "")
}

// virtualTarget is the target a session on the virtual clock names in its header, and its model:
// the one given, or the queue's or engine's own.
func virtualTarget(opts Options) (target, model string) {
	model = opts.Target.Model
	if q := opts.Queue; q != nil {
		if model == "" {
			model = q.ModelName
		}
		return result.VirtualTarget, model
	}
	if model == "" {
		model = opts.Sim.ModelName
	}
	return result.VirtualEngineTarget, model
}

// openVirtual opens a session on the virtual clock: nothing started, nothing sent.
func (s *Session) openVirtual() (*Session, error) {
	if errs := CheckVirtual(s.opts); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	what := "batching engine"
	if s.opts.Queue != nil {
		what = "M/D/c queue"
	}
	var target string
	target, s.opts.Target.Model = virtualTarget(s.opts)
	s.logf("no %s: serving the embedded %s (%s) on the virtual clock: a model of its steady state, not a measurement", s.name(loadgen.FieldBaseURL), what, s.opts.SimLabel)
	var err error
	s.Header, err = s.header(target, true)
	return s, err
}

// header builds the records header of the session, whose target is named target; embedded: the
// target is the embedded deployment (started, or on the virtual clock).
func (s *Session) header(target string, embedded bool) (records.Header, error) {
	opts, t := s.opts, s.opts.Target
	src := opts.Workload
	run := result.Run{
		Version: opts.Version, Command: opts.Command, Target: target, Endpoint: t.Endpoint.String(),
		Unit: t.Endpoint.Unit(), Model: t.Model, Workload: src.Desc, Tokenizer: src.TokenizerIdentity(), CachePolicy: src.Cache.String(), Schedule: opts.Schedule, Seed: opts.Seed,
		MaxConcurrency: opts.MaxConcurrency, ExtraBody: s.cleanJSON(t.ExtraBody), Timeout: t.Timeout, Retries: opts.Retries,
		Shard: opts.Shard.String(), RequestIDPrefix: t.RequestIDPrefix, Label: opts.Label, Metadata: opts.Metadata,
		Settings: opts.Settings, Started: time.Now(), Clean: s.Clean,
	}
	var err error
	if embedded {
		run.Sim = &result.Sim{Name: opts.SimLabel}
		if opts.SimReplicas > 1 {
			run.Sim.Replicas, run.Sim.Balance = opts.SimReplicas, cmpOr(opts.SimBalance, sim.BalanceRoundRobin)
			run.Sim.Name = opts.SimLabel + clusterSuffix(run.Sim.Replicas, run.Sim.Balance)
		}
		if opts.Queue != nil {
			run.Sim.QueueConfig, err = json.Marshal(opts.Queue)
		} else {
			run.Sim.Config, err = json.Marshal(opts.Sim)
		}
		if err != nil {
			return records.Header{}, fmt.Errorf("record the embedded deployment's configuration: %w", err)
		}
	}
	return result.NewHeader(run), nil
}

// maxNameLen bounds a name the session writes into the header (the model, a label).
const maxNameLen = 1024

// Secrets is the set of every secret of the target: the API key, header values, the base URL's
// credentials and query values, credentials in the extra body.
func (s *Session) Secrets() *redact.Secrets {
	if s.client == nil {
		return s.opts.Target.Secrets() // on the virtual clock
	}
	return s.client.Secrets()
}

// Clean is the sanitiser for a name or value the caller writes into the header (a label, a
// metadata value): secrets hidden, control characters removed, at most maxNameLen bytes.
func (s *Session) Clean(v string) string { return s.Secrets().Clean(v, maxNameLen) }

// cleanJSON redacts a JSON text (the extra body). Masks keep a JSON string valid unless a secret
// sat across an escape; then the redacted text is kept as one JSON string.
func (s *Session) cleanJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	red := s.Secrets().Redact(string(raw))
	if red == string(raw) {
		return raw
	}
	if json.Valid([]byte(red)) {
		return json.RawMessage(red)
	}
	b, err := json.Marshal(red)
	if err != nil {
		return json.RawMessage(`"[REDACTED]"`)
	}
	return b
}

// clusterSuffix is what the header's sim name adds for replicas behind a balancer.
func clusterSuffix(replicas int, balance string) string {
	return fmt.Sprintf(" ×%d (%s)", replicas, balance)
}

// Measured is the embedded deployment a records header says was measured, as Options rebuild
// it: the engine's configuration (Sim), or the M/D/c queue's (Queue set); the name of one replica
// (Label, without the replicas and balancer Open adds for a cluster); and how many sim replicas
// made up what was measured (PerReplica: a sweep of a cluster counts clusters); Virtual when
// the queue was served on the virtual clock (result.VirtualTarget), where it is rehearsed too.
type Measured struct {
	Sim        sim.Config
	Queue      *sim.QueueConfig
	Label      string
	PerReplica int
	Virtual    bool
}

// MeasuredSim reads the deployment from the header's sim_config or sim_queue_config, which Open
// writes; a header written before they were kept names a profile, which is rebuilt (and anything
// else is an error that says what was found).
func MeasuredSim(h records.Header) (Measured, error) {
	m := Measured{Label: h.Sim, PerReplica: max(1, h.SimReplicas), Virtual: result.IsVirtual(h)}
	if h.SimReplicas > 1 {
		m.Label = strings.TrimSuffix(h.Sim, clusterSuffix(h.SimReplicas, h.SimBalance))
	}
	switch {
	case len(h.SimQueueConfig) > 0:
		var q sim.QueueConfig
		if err := json.Unmarshal(h.SimQueueConfig, &q); err != nil {
			return m, fmt.Errorf("the records header's sim_queue_config: %w", err)
		}
		if err := q.Validate(); err != nil {
			return m, fmt.Errorf("the records header's sim_queue_config: %w", err)
		}
		m.Queue = &q
	case len(h.SimConfig) > 0:
		if err := json.Unmarshal(h.SimConfig, &m.Sim); err != nil {
			return m, fmt.Errorf("the records header's sim_config: %w", err)
		}
		if err := m.Sim.Validate(); err != nil {
			return m, fmt.Errorf("the records header's sim_config: %w", err)
		}
	default:
		var err error
		if m.Sim, err = sim.Profile(h.Sim); err != nil {
			return m, fmt.Errorf("it measured the embedded deployment %q, whose configuration its header does not keep, and which names no profile that can be rebuilt (%s)", h.Sim, strings.Join(sim.ProfileNames(), ", "))
		}
		m.PerReplica = 1
	}
	return m, nil
}

// name is how the user gives the input called field (Options.Name).
func (s *Session) name(field string) string {
	if s.opts.Name == nil {
		return field
	}
	return s.opts.Name(field)
}

func (s *Session) logf(format string, a ...any) {
	if s.opts.Log != nil {
		s.opts.Log(format, a...)
	}
}

// openScraper returns the scraper of the target's metrics endpoint: the one given, none for
// "off", or the target's /metrics when it answers a first scrape.
func (s *Session) openScraper(ctx context.Context) *servermetrics.Scraper {
	flag := s.opts.ServerMetrics
	if flag == "off" {
		return nil
	}
	t := s.opts.Target
	url := flag
	if url == "" {
		url = servermetrics.DefaultURL(t.BaseURL)
	}
	sc := servermetrics.NewScraper(url, nil, t.Model)
	sc.Hide(s.Secrets())
	if _, err := sc.Scrape(ctx); err != nil {
		if flag != "" {
			s.logf("WARNING: %s %s: %v; continuing without server-side metrics", s.name(loadgen.FieldServerMetrics), loadgen.SanitizeURL(url), err)
		} else {
			s.logf("the target exposes no Prometheus metrics at %s (%v): no server-side metrics (give their URL with %s)", loadgen.SanitizeURL(url), err, s.name(loadgen.FieldServerMetrics))
		}
		return nil
	}
	s.logf("scraping server-side metrics from %s every second of every tier", loadgen.SanitizeURL(url))
	return sc
}

// ServerMetrics returns what the target's metrics endpoint reported over a tier, nil when it
// was not scraped.
func (s *Session) ServerMetrics(tier int) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.server[tier]
}

// ReleaseConnections closes the client's idle connections once the load is over, so that the
// file descriptors they hold are free for writing the results (a run that exhausted them could
// not write its summary). The session stays usable: later requests open new connections.
func (s *Session) ReleaseConnections() {
	if s.client != nil {
		s.client.Close()
	}
}

// Close closes the records file (flushing it), the client's idle connections and the embedded
// deployment. It is safe to call more than once; the error is the records file's.
func (s *Session) Close() error {
	var err error
	if s.writer != nil {
		err = s.writer.Close()
		s.writer = nil
	}
	if s.client != nil {
		s.client.Close()
	}
	if s.sim != nil {
		s.sim.Close()
		s.sim = nil
	}
	return err
}

// openRecords creates records.jsonl with the header, at the first tier (when the header is
// complete).
func (s *Session) openRecords() error {
	if s.opts.OutDir == "" || s.writer != nil {
		return nil
	}
	path := filepath.Join(s.opts.OutDir, result.RecordsName)
	if s.opts.AppendRecords {
		w, err := records.Append(path) // its tiers sealed under the header the file holds
		if err != nil {
			return err
		}
		s.writer = w
		return nil
	}
	w, err := records.Create(path, s.Header)
	if err != nil {
		return err
	}
	s.writer = w
	return nil
}

// Fingerprint is the workload fingerprint of a planned tier's request set, as RunTier computes
// it before sending (records.Tier.WorkloadFingerprint): what a resumed sweep checks each tier it
// keeps against (sweep.Executor.Fingerprint).
func (o Options) Fingerprint(p sweep.Plan) (string, error) {
	set, _, err := o.Workload.TierSet(p.Requests(), p.Tier.Seed)
	if err != nil {
		return "", err
	}
	return set.Fingerprint, nil
}

// RunTier implements sweep.Runner: it builds the tier's request set from the plan's seed (cold
// cache: a fresh nonce per tier; warm: one unmeasured pass first), writes the tier line, runs
// the tier with loadgen (records to the file and to sink), samples the server's metrics, and
// writes the closing line.
func (s *Session) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	id := p.Tier
	closed := !curve.AxisOfTier(id).Open()
	offsets, reqs, err := s.tierRequests(&id, p, closed)
	if err != nil {
		return id, err
	}
	if err := s.prepareTier(ctx, id, p, reqs); err != nil {
		return id, err
	}
	var sampler *servermetrics.Sampler
	if s.scraper != nil {
		sampler = servermetrics.StartSampler(ctx, s.scraper, time.Now(), time.Second)
		select { // the baseline scrape comes before the first request
		case <-sampler.Ready():
		case <-time.After(servermetrics.DefaultTimeout):
		}
	}
	id.StartWall = time.Now() // T0 (loadgen takes it within microseconds of this)
	cpu0 := loadgen.SampleCPU()
	if s.writer != nil {
		if err := s.writer.WriteTier(id); err != nil {
			return id, err
		}
	}
	tee := &teeSink{w: s.writer, sink: sink}
	if s.opts.Tally {
		tee.series, tee.peaks = s.tally(id.Tier)
	}
	prog := loadgen.Progress{Status: p.Status}
	done := func() {}
	if s.opts.Progress != nil {
		done = s.opts.Progress(p.Label, &prog)
	}
	if s.opts.Virtual {
		done()
		end, err := s.runVirtual(ctx, id, p, reqs, tee, stop)
		if err != nil {
			return id, err
		}
		return s.closeTier(id, end, tee)
	}
	res, err := loadgen.Run(ctx, s.client, loadgen.Tier{
		Index: id.Tier, Shard: s.opts.Shard.Index, Offsets: offsets, Requests: reqs, MaxConcurrency: id.MaxConcurrency,
		Limiter: s.limiter, Grace: p.Grace, Retries: s.opts.Retries, Stop: stop,
		Users: id.Users, Think: time.Duration(id.ThinkS * float64(time.Second)), StopAfter: p.StopAfter,
	}, tee, &prog)
	done()
	cpu := loadgen.SampleCPU().Since(cpu0, s.sim != nil)
	if sampler != nil {
		if merr := s.keepServerMetrics(id.Tier, sampler, tee); merr != nil {
			return id, merr
		}
	}
	if err != nil {
		return id, err
	}
	if res.SinkErr != nil {
		return id, fmt.Errorf("writing records: %w", res.SinkErr)
	}
	return s.closeTier(id, tierEnd(ctx, id, p, res, cpu, closed), tee)
}

// tierRequests builds the tier's request set from its seed (with the cache's nonce) and the
// offsets this process sends: a closed loop's users draw from a pool, sessions plan every turn,
// a shard sends its share. It sets id's fingerprint and planned requests.
func (s *Session) tierRequests(id *records.Tier, p sweep.Plan, closed bool) ([]time.Duration, []workloads.Request, error) {
	src := s.opts.Workload
	arrivals := len(p.Offsets)
	if closed {
		if src.Sessions() {
			return nil, nil, field.Errorf(sweep.FieldUsers, "a closed loop of users sends independent requests, not sessions")
		}
		arrivals = p.Pool // the users draw from a pool of requests
	}
	set, notes, err := src.TierSet(arrivals, id.Seed)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range notes {
		s.logf("workload: %s", n)
	}
	id.WorkloadFingerprint = set.Fingerprint // of the requests before any cache nonce: comparable across runs
	if result.ShapeOf(s.Header).OneTier() && s.writer == nil {
		s.Header.WorkloadFingerprint = set.Fingerprint // a run's request set is its tier's
	}
	if set, err = src.ApplyCache(set, s.nonce(*id)); err != nil {
		return nil, nil, err
	}
	offsets, reqs := p.Offsets, set.Requests
	if workloads.Sessions(reqs) != nil {
		// The schedule's arrivals start sessions; the tier plans every one of their turns.
		if s.opts.Shard.Sharded() {
			return nil, nil, field.Errorf(shard.FieldShard, "a workload of sessions cannot be sharded yet (each shard would need whole sessions); run it from one process")
		}
		id.Planned = len(reqs)
	}
	if s.opts.Shard.Sharded() {
		// Every shard built the same global schedule and set; this one sends its share, under the
		// global ids, and its tier line plans that share (merge adds them up).
		offsets, reqs = s.opts.Shard.Filter(offsets, reqs)
		id.Planned = len(offsets)
	}
	return offsets, reqs, nil
}

// prepareTier does what comes before the tier's first request: the cache's warm-up pass, the
// session's first warm-up requests, the records file, and a shard's wait for its start time.
func (s *Session) prepareTier(ctx context.Context, id records.Tier, p sweep.Plan, reqs []workloads.Request) error {
	if s.opts.Workload.Cache == workloads.CacheWarm {
		if err := s.warmUp(ctx, id.Tier, reqs, id.MaxConcurrency); err != nil {
			return err
		}
	}
	if s.opts.Warmups > 0 && !s.warmedUp && len(reqs) > 0 {
		s.warmedUp = true
		if err := s.warmUpFirst(ctx, id.Tier, reqs[0], id.MaxConcurrency); err != nil {
			return err
		}
	}
	if err := s.openRecords(); err != nil {
		return err
	}
	if !p.StartAt.IsZero() {
		late, err := shard.StartAt(ctx, p.StartAt)
		if err != nil {
			return field.Errorf(shard.FieldStartAt, "%w", err)
		}
		if late > 10*time.Millisecond {
			s.logf("WARNING: tier %d started %v after its %s", id.Tier, late.Round(time.Millisecond), s.name(shard.FieldStartAt))
		}
	}
	return nil
}

// keepServerMetrics keeps what the target's metrics said over the tier, and writes it to the
// records file.
func (s *Session) keepServerMetrics(tier int, sampler *servermetrics.Sampler, tee *teeSink) error {
	b, err := json.Marshal(sampler.Stop())
	if err != nil {
		return fmt.Errorf("encode server metrics: %w", err)
	}
	raw := json.RawMessage(b) // written as it is, not as bytes
	s.mu.Lock()
	s.server[tier] = raw
	s.mu.Unlock()
	if s.writer != nil && tee.fileErr == nil {
		if err := s.writer.WriteServerMetrics(tier, raw); err != nil {
			tee.fileErr = err
		}
	}
	return nil
}

// tierEnd is the closing line of tier id as loadgen ran it: why it ended (its schedule, its
// cap, decided, interrupted) and where its arrivals ended.
func tierEnd(ctx context.Context, id records.Tier, p sweep.Plan, res loadgen.Result, cpu *records.TierCPU, closed bool) records.TierEnd {
	end := records.TierEnd{Kind: records.KindTierEnd, Tier: id.Tier, Planned: id.Planned, Reason: records.EndedSchedule,
		ArrivalsEndS: p.ArrivalsEnd.Seconds(), RateLimited: res.RateLimited, CPU: cpu}
	if closed {
		// A closed loop planned what its users sent, until the last of it (or the stop time).
		end.Planned, end.ArrivalsEndS = res.Planned, res.ArrivalsEnd.Seconds()
	}
	switch {
	case ctx.Err() != nil:
		end.Reason, end.ArrivalsEndS = records.EndedInterrupted, res.ArrivalsEnd.Seconds()
	case res.StoppedEarly:
		end.Reason, end.ArrivalsEndS, end.Planned = records.EndedDecided, res.ArrivalsEnd.Seconds(), res.Planned
	case id.MaxDurationS > 0 && (!closed || res.Stopped != ""):
		end.Reason = records.EndedCap
	}
	return end
}

// closeTier writes the tier's closing line and returns the tier, ended.
func (s *Session) closeTier(id records.Tier, end records.TierEnd, tee *teeSink) (records.Tier, error) {
	if s.writer != nil && tee.fileErr == nil {
		if err := s.writer.WriteTierEnd(end); err != nil {
			tee.fileErr = err
		}
	}
	id.End = &end
	if tee.fileErr != nil {
		return id, &sweep.RecordsLostError{Err: tee.fileErr}
	}
	return id, nil
}

// tally starts the tallies of a tier: its time series and, for a run, its peak figures.
func (s *Session) tally(tier int) (*timeseries.Builder, *result.PeakAccumulator) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.series == nil {
		s.series, s.peaks = map[int]*timeseries.Builder{}, map[int]*result.PeakAccumulator{}
	}
	b := timeseries.NewBuilder(timeseries.DefaultSlice)
	s.series[tier] = b
	var a *result.PeakAccumulator
	if result.ShapeOf(s.Header).OneTier() {
		a = &result.PeakAccumulator{}
		s.peaks[tier] = a
	}
	return b, a
}

// TimeSeries returns the per-second time series of every tier the session ran with
// Options.Tally, as report.ReadTimeSeries makes them from the records file; nil without Tally.
// A resumed sweep's kept tiers did not run here: they have none.
func (s *Session) TimeSeries() map[int]timeseries.Series {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.series == nil {
		return nil
	}
	out := make(map[int]timeseries.Series, len(s.series))
	for tier, b := range s.series {
		out[tier] = b.Series()
	}
	return out
}

// Peaks returns vLLM's peak figures of every tier a run ran with Options.Tally, as
// result.PeaksOfFile finds them in the records file; nil for a sweep or without Tally.
func (s *Session) Peaks() map[int]result.Peak {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.peaks) == 0 {
		return nil
	}
	out := make(map[int]result.Peak, len(s.peaks))
	for tier, a := range s.peaks {
		out[tier] = a.Peak()
	}
	return out
}

// nonce is the cold-cache nonce of a tier: random, except in a sharded run, where every shard
// must put the same nonce in front of the same prompts (derived from the seed, the shared start
// and the tier) so that prefixes shared within the workload stay shared across shards.
func (s *Session) nonce(t records.Tier) string {
	if !s.opts.Shard.Sharded() {
		return workloads.NewNonce()
	}
	return fmt.Sprintf("[run:%016x]", uint64(sweep.TierSeed(s.opts.Seed^s.opts.StartAt.UnixNano(), float64(t.Tier), 0)))
}

// warmUp sends a tier's requests once, unmeasured, all at once through the concurrency gate
// (64 when uncapped), so that the measured pass meets a warm prefix cache.
func (s *Session) warmUp(ctx context.Context, tier int, reqs []workloads.Request, maxConc int) error {
	conc := maxConc
	if conc == 0 {
		conc = 64
	}
	var prog loadgen.Progress
	done := func() {}
	if s.opts.Progress != nil {
		done = s.opts.Progress(fmt.Sprintf("warm-up of tier %d", tier), &prog)
	}
	arrivals := len(reqs)
	if sessions := workloads.Sessions(reqs); sessions != nil {
		// Every session at once, its turns back to back: the warm-up is about the cache, not
		// the users' pace.
		arrivals = len(sessions)
		reqs = slices.Clone(reqs)
		for i := range reqs {
			reqs[i].ThinkMS = 0
		}
	}
	res, err := loadgen.Run(ctx, s.client, loadgen.Tier{Index: tier, Offsets: make([]time.Duration, arrivals),
		Requests: reqs, MaxConcurrency: conc}, discard{}, &prog)
	done()
	if err != nil {
		return fmt.Errorf("warm-up of tier %d: %w", tier, err)
	}
	s.logf("warm-up: sent tier %d's %d requests once, unmeasured (%d failed)", tier, res.Planned, prog.Errors.Load())
	return nil
}

// warmUpFirst sends Warmups copies of the first request at once, within the concurrency cap,
// unmeasured and not recorded, as vLLM's --num-warmups does before its run.
func (s *Session) warmUpFirst(ctx context.Context, tier int, first workloads.Request, maxConc int) error {
	n := s.opts.Warmups
	reqs := make([]workloads.Request, n)
	for i := range reqs {
		reqs[i] = first
		reqs[i].ID = i
		reqs[i].Session, reqs[i].Turn, reqs[i].ThinkMS = 0, 0, 0
	}
	var prog loadgen.Progress
	res, err := loadgen.Run(ctx, s.client, loadgen.Tier{Index: tier, Offsets: make([]time.Duration, n),
		Requests: reqs, MaxConcurrency: maxConc}, discard{}, &prog)
	if err != nil {
		return field.Errorf(FieldWarmups, "%w", err)
	}
	s.logf("warm-up: sent %d copies of the first request before the run, unmeasured (%d failed)", res.Planned, prog.Errors.Load())
	return nil
}

// teeSink writes every record to the records file and hands it to the sweep's sink. When the
// file fails (a full disk), the tier goes on: the sink still gets every record, so the summary
// is whole, and RunTier reports the loss (sweep.RecordsLostError).
type teeSink struct {
	w       *records.Writer
	sink    sweep.Sink
	fileErr error // the records file's first error; nothing more is written to it after
	// series and peaks, when set, tally every record (Options.Tally).
	series *timeseries.Builder
	peaks  *result.PeakAccumulator
}

func (t *teeSink) Write(r *records.Record) error {
	if t.w != nil && t.fileErr == nil {
		t.fileErr = t.w.Write(r)
	}
	if t.series != nil {
		t.series.Add(r)
	}
	if t.peaks != nil {
		t.peaks.Add(r)
	}
	if t.sink != nil {
		return t.sink.Write(r)
	}
	return nil
}

// discard is a sink that keeps nothing.
type discard struct{}

func (discard) Write(*records.Record) error { return nil }
