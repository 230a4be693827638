package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// server is the embedded M/D/c queue behind a handler that can slow down its metrics endpoint
// and notes, once armed, when each completion request arrives and when the first metrics scrape
// was answered.
type server struct {
	queue        *sim.Queue
	metricsDelay time.Duration

	mu          sync.Mutex
	armed       bool
	completions []time.Time // arrival of each completion request since armed
	baseline    time.Time   // when the first metrics scrape since armed was answered
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/metrics":
		if s.metricsDelay > 0 {
			select {
			case <-time.After(s.metricsDelay):
			case <-r.Context().Done():
				return
			}
		}
		s.mu.Lock()
		if s.armed && s.baseline.IsZero() {
			s.baseline = time.Now() // before the answer is written: the client reads it later
		}
		s.mu.Unlock()
	case "/v1/chat/completions":
		now := time.Now()
		s.mu.Lock()
		if s.armed {
			s.completions = append(s.completions, now)
		}
		s.mu.Unlock()
	}
	s.queue.ServeHTTP(w, r)
}

// arm starts noting arrivals: what Open sent (the preflight, the first scrape) is not the tier's.
func (s *server) arm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = true
}

func (s *server) seen() (completions []time.Time, baseline time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.completions...), s.baseline
}

// startServer serves a fast queue (8 slots, 20 ms of service, 2 tokens) behind the handler.
func startServer(t *testing.T, metricsDelay time.Duration) (*server, string) {
	t.Helper()
	q, err := sim.NewQueue(sim.QueueConfig{ModelName: "m", Servers: 8, Service: 20 * time.Millisecond,
		FirstToken: 5 * time.Millisecond, OutputTokens: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := &server{queue: q, metricsDelay: metricsDelay}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); q.Close() })
	return s, hs.URL + "/v1"
}

// open opens a session on the server for a run whose records go to outDir ("" for none); more
// changes the options first.
func open(t *testing.T, baseURL, serverMetrics, outDir string, more ...func(*runner.Options)) *runner.Session {
	t.Helper()
	src, errs := workloads.NewSource(workloads.KindSynthetic, workloads.LoadOptions{Seed: 1, TimeScale: 1,
		Synthetic: workloads.Synthetic{InputLen: 8, OutputLen: 2}}, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	o := runner.Options{
		Target:   loadgen.Target{BaseURL: baseURL, Model: "m", Endpoint: loadgen.Chat, Timeout: 30 * time.Second},
		Workload: src, ServerMetrics: serverMetrics, OutDir: outDir, Seed: 1, Version: "test",
		Log:     func(format string, a ...any) { t.Logf(format, a...) },
		Command: records.CommandRun, Schedule: schedule("constant(rate=10)"), Settings: result.DefaultSettings().Record(),
	}
	for _, m := range more {
		m(&o)
	}
	s, err := runner.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// schedule is a schedule's name for the header.
type schedule string

func (s schedule) String() string { return string(s) }

// plan is one count-bound tier of n arrivals every gap from T0.
func plan(n int, gap time.Duration) sweep.Plan {
	offsets := make([]time.Duration, n)
	for i := range offsets {
		offsets[i] = time.Duration(i) * gap
	}
	rate := float64(time.Second) / float64(gap)
	return sweep.Plan{
		Tier: records.Tier{Kind: records.KindTier, Tier: 0, Role: records.RoleTier, Arrival: fmt.Sprintf("constant(rate=%g)", rate),
			RequestRate: records.Rate(rate), Burstiness: records.Rate(1), Seed: 7, Planned: n},
		Offsets: offsets, ArrivalsEnd: offsets[n-1], Grace: 10 * time.Second, Label: "tier 0",
	}
}

// TestTallyIsWhatTheFileHolds: with Tally, the session's time series and a run's peak figures
// are exactly what report and sweep make of the records file it wrote, so that nothing reads
// the file again after a run (cmd read it once or twice more); a sweep tallies no peaks, and
// without Tally (bounded memory) the session keeps neither.
func TestTallyIsWhatTheFileHolds(t *testing.T) {
	_, url := startServer(t, 0)
	for _, tc := range []struct {
		name  string
		cmd   records.Command
		tally bool
	}{
		{"run", records.CommandRun, true},
		{"sweep", records.CommandSweep, true},
		{"bounded run", records.CommandRun, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, url, "off", dir, func(o *runner.Options) { o.Command, o.Tally = tc.cmd, tc.tally })
			if _, err := s.RunTier(context.Background(), plan(40, 10*time.Millisecond), nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, result.RecordsName)
			series, peaks := s.TimeSeries(), s.Peaks()
			if !tc.tally {
				if series != nil || peaks != nil {
					t.Errorf("without Tally: series %v, peaks %v", series, peaks)
				}
				return
			}
			fromFile, err := report.ReadTimeSeries(path)
			if err != nil {
				t.Fatal(err)
			}
			// Printed, since a series holds NaN where a slice has nothing to describe.
			if len(series) != 1 || len(series[0].Slices) == 0 || fmt.Sprint(series) != fmt.Sprint(fromFile) {
				t.Errorf("tallied series\n%v\nthe file's\n%v", series, fromFile)
			}
			peaksOfFile, err := result.PeaksOfFile(path)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.cmd == records.CommandSweep && peaks != nil:
				t.Errorf("a sweep tallied peaks %v", peaks)
			case tc.cmd == records.CommandRun && (len(peaks) != 1 || peaks[0] != peaksOfFile[0] || peaks[0].MaxConcurrentRequests == 0):
				t.Errorf("tallied peaks %v, the file's %v", peaks, peaksOfFile)
			}
		})
	}
}

// counter is a sink that keeps nothing but counts, and calls at once after the n-th record.
type counter struct {
	mu   sync.Mutex
	n    int
	at   int
	once func()
}

func (c *counter) Write(*records.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.n == c.at && c.once != nil {
		c.once()
	}
	return nil
}

func (c *counter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// tierLine is the tier line of tier 0 in the records file of dir, with its closing line.
func tierLine(t *testing.T, dir string) (records.Tier, []records.Record) {
	t.Helper()
	f, err := records.ReadFile(filepath.Join(dir, result.RecordsName))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tiers) != 1 {
		t.Fatalf("%d tier lines, want 1", len(f.Tiers))
	}
	// A closing line seals the tier's lines (records.Seal), which the tier RunTier returns does
	// not carry: checked here, then left out of the comparisons.
	recs := f.TierRecords(0)
	if e := f.Tiers[0].End; e != nil {
		if e.Seal == nil || e.Seal.Records != len(recs) || e.Seal.Header == "" {
			t.Errorf("closing line's seal %+v: want the tier's %d records and the header sealed", e.Seal, len(recs))
		}
		e.Seal = nil
	}
	return f.Tiers[0], recs
}

// TestStartWallIsT0AfterTheBaselineScrape: a tier's start_wall is its T0, the moment from which
// its planned offsets count, taken after the baseline scrape of the target's metrics. Before the
// redesign it was taken before that scrape: with a /metrics that answers in 300 ms, start_wall
// was 300 ms early, and merge put shards started 300 ms apart 0.85 ms apart. Here start_wall must
// come after the baseline scrape was answered and before the first request (planned at 0) arrived.
func TestStartWallIsT0AfterTheBaselineScrape(t *testing.T) {
	const delay = 300 * time.Millisecond
	srv, url := startServer(t, delay)
	dir := t.TempDir()
	s := open(t, url, "", dir)
	srv.arm()
	p := plan(4, 20*time.Millisecond)
	id, err := s.RunTier(context.Background(), p, &counter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	completions, baseline := srv.seen()
	if len(completions) != len(p.Offsets) || baseline.IsZero() {
		t.Fatalf("the server saw %d completion requests (want %d) and baseline scrape %v", len(completions), len(p.Offsets), baseline)
	}
	first := completions[0]
	for _, c := range completions {
		if c.Before(first) {
			first = c
		}
	}
	// The first arrival is planned at offset 0: T0 = start_wall precedes it and follows the
	// baseline scrape (two orderings, no bound on how fast this machine is; the bug put
	// start_wall a whole scrape, 300 ms, before the scrape's answer).
	t.Logf("start_wall is %v after the baseline scrape was answered and %v before the first request arrived",
		id.StartWall.Sub(baseline), first.Sub(id.StartWall))
	if id.StartWall.Before(baseline) {
		t.Errorf("start_wall is %v before the baseline scrape was answered: taken before the scrape, not at T0",
			baseline.Sub(id.StartWall))
	}
	if first.Before(id.StartWall) {
		t.Errorf("the request planned at T0 arrived %v before start_wall", id.StartWall.Sub(first))
	}
	// The records file says the same, and closes the tier.
	line, recs := tierLine(t, dir)
	if !line.StartWall.Equal(id.StartWall) {
		t.Errorf("records.jsonl's tier line has start_wall %v, RunTier returned %v", line.StartWall, id.StartWall)
	}
	if line.End == nil || id.End == nil || !reflect.DeepEqual(*line.End, *id.End) {
		t.Errorf("closing line %+v, RunTier's %+v", line.End, id.End)
	} else if line.End.Reason != records.EndedSchedule || line.End.Planned != len(p.Offsets) {
		t.Errorf("closing line %+v: want the schedule's end with %d planned", *line.End, len(p.Offsets))
	}
	if len(recs) != len(p.Offsets) {
		t.Errorf("%d records in the file, want %d", len(recs), len(p.Offsets))
	}
}

// TestStopEndsTheTierAsDecided: a tier whose stop channel closes (its verdict was decided) ends
// its arrival phase there: its closing line says "decided", plans the requests it dispatched
// (every one of which has a record), and its arrival phase ends where it stopped, not at the end
// of the schedule.
func TestStopEndsTheTierAsDecided(t *testing.T) {
	_, url := startServer(t, 0)
	dir := t.TempDir()
	s := open(t, url, "off", dir)
	p := plan(40, 50*time.Millisecond) // 1.95 s of arrivals; the stop comes after the third record
	stop := make(chan struct{})
	sink := &counter{at: 3, once: func() { close(stop) }}
	id, err := s.RunTier(context.Background(), p, sink, stop)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	line, recs := tierLine(t, dir)
	end := line.End
	if end == nil || id.End == nil || !reflect.DeepEqual(*end, *id.End) {
		t.Fatalf("closing line %+v, RunTier's %+v", end, id.End)
	}
	if end.Reason != records.EndedDecided {
		t.Errorf("closing line reason %q, want %q", end.Reason, records.EndedDecided)
	}
	// The closing line states the CPU spent from T0 to it: wall time at least the arrivals'
	// (the drain follows), the process's CPU (this test's whole process, the server included,
	// which the session does not know runs here), the machine's CPUs where /proc/stat is read.
	if c := end.CPU; c == nil {
		t.Errorf("closing line has no CPU")
	} else {
		if c.WallS < end.ArrivalsEndS || c.WallS > 60 {
			t.Errorf("cpu wall_s %g, want at least the arrivals' %g s", c.WallS, end.ArrivalsEndS)
		}
		if c.ProcessS <= 0 || c.InProcessTarget {
			t.Errorf("cpu process_cpu_s %g (want > 0: the client parsed 3+ streams), in_process_target %v (want false: a base URL was given)", c.ProcessS, c.InProcessTarget)
		}
		if _, err := os.Stat("/proc/stat"); err == nil && (c.MachineCPUs < 1 || c.MachineBusy < 0 || c.MachineBusy > 1) {
			t.Errorf("machine_cpus %d, machine_busy %g: want the machine's CPUs and a share in [0, 1] (a tenth of a second can fall between two clock ticks)", c.MachineCPUs, c.MachineBusy)
		}
	}
	if end.Planned != len(recs) || end.Planned != sink.count() {
		t.Errorf("closing line plans %d requests; the file holds %d records, the sink got %d", end.Planned, len(recs), sink.count())
	}
	if end.Planned < 3 || end.Planned >= len(p.Offsets) {
		t.Errorf("closing line plans %d of the schedule's %d: want the ones dispatched before the stop", end.Planned, len(p.Offsets))
	}
	if line.Planned != len(p.Offsets) || line.PlannedRequests() != end.Planned {
		t.Errorf("tier line plans %d (want the schedule's %d), PlannedRequests %d (want the closing line's %d)",
			line.Planned, len(p.Offsets), line.PlannedRequests(), end.Planned)
	}
	// Where it stopped: after every dispatched request's planned arrival, before the schedule's end.
	stoppedAt := time.Duration(end.ArrivalsEndS * float64(time.Second))
	var lastPlanned time.Duration
	for _, r := range recs {
		lastPlanned = max(lastPlanned, r.Planned)
	}
	if stoppedAt < lastPlanned || stoppedAt >= p.ArrivalsEnd {
		t.Errorf("arrivals_end_s %v: want it where dispatching stopped, in [%v, %v) (last dispatched arrival, the schedule's end)",
			stoppedAt, lastPlanned, p.ArrivalsEnd)
	}
}

// TestHeaderKeepsTheSimsConfiguration: a run on the embedded deployment writes its whole
// configuration into the header (with the replicas and the balancer), so that a rehearsal
// rebuilds what was measured, overrides included; a queue model keeps its own.
func TestHeaderKeepsTheSimsConfiguration(t *testing.T) {
	cfg, err := sim.Profile("default")
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxNumSeqs, cfg.StepPerKVToken, cfg.ReasoningShare = 7, 3*time.Nanosecond, 0.25
	src, errs := workloads.NewSource(workloads.KindSynthetic, workloads.LoadOptions{Seed: 1, TimeScale: 1,
		Synthetic: workloads.Synthetic{InputLen: 8, OutputLen: 2}}, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, tc := range []struct {
		replicas int
		balance  string
	}{{1, ""}, {2, sim.BalanceRandom}} {
		s, err := runner.Open(context.Background(), runner.Options{
			Target: loadgen.Target{Endpoint: loadgen.Chat, Timeout: 30 * time.Second},
			Sim:    cfg, SimLabel: "default", SimReplicas: tc.replicas, SimBalance: tc.balance,
			Workload: src, Seed: 1, Version: "test",
		})
		if err != nil {
			t.Fatal(err)
		}
		h := s.Header
		s.Close()
		var got sim.Config
		if err := json.Unmarshal(h.SimConfig, &got); err != nil || got != cfg {
			t.Errorf("%d replicas: sim_config %s reads back as %+v (%v), want %+v", tc.replicas, h.SimConfig, got, err, cfg)
		}
		wantReplicas := 0
		if tc.replicas > 1 {
			wantReplicas = tc.replicas
		}
		if m, err := runner.MeasuredSim(h); err != nil || m.Sim != cfg || m.Label != "default" || m.PerReplica != tc.replicas {
			t.Errorf("%d replicas: the header rebuilds %+v as %q ×%d (%v); want %+v as \"default\" ×%d", tc.replicas, m.Sim, m.Label, m.PerReplica, err, cfg, tc.replicas)
		}
		if h.SimReplicas != wantReplicas || h.SimBalance != tc.balance {
			t.Errorf("%d replicas: header says %d replicas, balance %q; want %d, %q", tc.replicas, h.SimReplicas, h.SimBalance, wantReplicas, tc.balance)
		}
	}
	q := sim.QueueConfig{ModelName: "m", Servers: 2, Service: 10 * time.Millisecond, FirstToken: time.Millisecond, OutputTokens: 2}
	for _, replicas := range []int{1, 3} {
		s, err := runner.Open(context.Background(), runner.Options{Target: loadgen.Target{Endpoint: loadgen.Chat, Timeout: 30 * time.Second},
			Queue: &q, SimLabel: q.String(), SimReplicas: replicas, SimBalance: sim.BalanceRandom, Workload: src, Seed: 1, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		h := s.Header
		s.Close()
		var got sim.QueueConfig
		if err := json.Unmarshal(h.SimQueueConfig, &got); err != nil || got != q || h.SimConfig != nil {
			t.Errorf("a queue's header: sim_queue_config %s reads back as %+v (%v), sim_config %s; want %+v and no engine configuration",
				h.SimQueueConfig, got, err, h.SimConfig, q)
		}
		if replicas > 1 && (h.SimReplicas != replicas || h.SimBalance != sim.BalanceRandom) {
			t.Errorf("a queue cluster's header says %d replicas behind %q", h.SimReplicas, h.SimBalance)
		}
	}
}

// TestMeasuredSim: a rehearsal rebuilds the header's sim_config or sim_queue_config (overrides
// and all; a sweep of N replicas plans in units of N), else, for results written before they
// were kept, the profile the header names; anything else is refused with what was found.
func TestMeasuredSim(t *testing.T) {
	def, err := sim.Profile("default")
	if err != nil {
		t.Fatal(err)
	}
	custom := def
	custom.MaxNumSeqs, custom.PrefixCacheBlocks = 9, 0
	raw, err := json.Marshal(custom)
	if err != nil {
		t.Fatal(err)
	}
	bad := custom
	bad.MaxNumSeqs = 0
	rawBad, _ := json.Marshal(bad)
	q := sim.QueueConfig{ModelName: "q", Servers: 3, Service: 50 * time.Millisecond, FirstToken: 5 * time.Millisecond, OutputTokens: 4}
	rawQ, _ := json.Marshal(q)
	for _, tc := range []struct {
		name    string
		h       records.Header
		engine  sim.Config
		queue   *sim.QueueConfig
		label   string
		perUnit int
		err     string
	}{
		{"config kept", records.Header{Sim: "default", SimConfig: raw}, custom, nil, "default", 1, ""},
		{"a cluster", records.Header{Sim: "default ×3 (random)", SimConfig: raw, SimReplicas: 3, SimBalance: sim.BalanceRandom}, custom, nil, "default", 3, ""},
		{"a queue", records.Header{Sim: q.String(), SimQueueConfig: rawQ}, sim.Config{}, &q, q.String(), 1, ""},
		{"a queue cluster", records.Header{Sim: q.String() + " ×2 (round-robin)", SimQueueConfig: rawQ, SimReplicas: 2, SimBalance: sim.BalanceRoundRobin}, sim.Config{}, &q, q.String(), 2, ""},
		{"an older result", records.Header{Sim: "default"}, def, nil, "default", 1, ""},
		{"an older queue", records.Header{Sim: "mdc(servers=4)"}, sim.Config{}, nil, "", 0, `"mdc(servers=4)", whose configuration its header does not keep`},
		{"a broken config", records.Header{Sim: "default", SimConfig: rawBad}, sim.Config{}, nil, "", 0, "sim_config: max-num-seqs"},
		{"not JSON", records.Header{Sim: "default", SimConfig: json.RawMessage(`{"max_num_seqs":"x"}`)}, sim.Config{}, nil, "", 0, "sim_config"},
		{"a broken queue", records.Header{Sim: "mdc", SimQueueConfig: json.RawMessage(`{"servers":0}`)}, sim.Config{}, nil, "", 0, "sim_queue_config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := runner.MeasuredSim(tc.h)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || m.Sim != tc.engine || (m.Queue == nil) != (tc.queue == nil) || (m.Queue != nil && *m.Queue != *tc.queue) || m.Label != tc.label || m.PerReplica != tc.perUnit {
				t.Errorf("got %+v, queue %+v, %q ×%d (%v); want %+v, queue %+v, %q ×%d", m.Sim, m.Queue, m.Label, m.PerReplica, err, tc.engine, tc.queue, tc.label, tc.perUnit)
			}
		})
	}
}

// TestFingerprintIsTheTiersBeforeSending: Options.Fingerprint, which a resumed sweep checks its
// kept tiers against, is the fingerprint RunTier gives the tier it sends, and another seed's
// request set has another.
func TestFingerprintIsTheTiersBeforeSending(t *testing.T) {
	_, url := startServer(t, 0)
	var opts runner.Options
	s := open(t, url, "off", "", func(o *runner.Options) { o.Command = records.CommandSweep; opts = *o })
	p := plan(8, 5*time.Millisecond)
	want, err := opts.Fingerprint(p)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.RunTier(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want == "" || id.WorkloadFingerprint != want {
		t.Errorf("Fingerprint %q, the tier sent %q", want, id.WorkloadFingerprint)
	}
	p.Tier.Seed++
	if other, err := opts.Fingerprint(p); err != nil || other == want {
		t.Errorf("another seed: %q (%v), want another fingerprint than %q", other, err, want)
	}
}

// TestMessagesNameInputsAsTheUserGivesThem: the session's notes name an input by its field
// (loadgen.FieldInsecure, FieldServerMetrics) and leave the spelling to Options.Name, so the
// command line's user reads its flags and a library's caller the fields' own words.
func TestMessagesNameInputsAsTheUserGivesThem(t *testing.T) {
	_, url := startServer(t, 0)
	for _, tc := range []struct {
		name func(string) string
		want []string
	}{
		{nil, []string{"WARNING: insecure TLS: TLS certificates are NOT verified", "WARNING: server metrics http://"}},
		{func(f string) string {
			return map[string]string{loadgen.FieldInsecure: "--insecure", loadgen.FieldServerMetrics: "--server-metrics"}[f]
		},
			[]string{"WARNING: --insecure: TLS certificates are NOT verified", "WARNING: --server-metrics http://"}},
	} {
		var said []string
		open(t, url, url+"/no-metrics-here", "", func(o *runner.Options) {
			o.Target.Insecure, o.Name = true, tc.name
			o.Log = func(format string, a ...any) { said = append(said, fmt.Sprintf(format, a...)) }
		})
		for _, w := range tc.want {
			found := false
			for _, s := range said {
				found = found || strings.HasPrefix(s, w)
			}
			if !found {
				t.Errorf("no note begins %q; the session said:\n%s", w, strings.Join(said, "\n"))
			}
		}
	}
}
