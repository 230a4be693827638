package shard_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// memSink keeps a tier's records.
type memSink struct {
	mu   sync.Mutex
	recs []records.Record
}

func (s *memSink) Write(r *records.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, *r)
	return nil
}

// e2eRun is one client process: it sends its shard of the tier (all of it for the zero Spec),
// starting at the wall-clock time at when it is set, and writes dir/records.jsonl.
type e2eRun struct {
	target  loadgen.Target
	header  records.Header
	tier    records.Tier
	offsets []time.Duration
	reqs    []workloads.Request
}

func (e e2eRun) run(ctx context.Context, sp shard.Spec, at time.Time, dir string) error {
	client, err := loadgen.NewClient(e.target, 0)
	if err != nil {
		return err
	}
	offs, reqs := sp.Filter(e.offsets, e.reqs)
	if !at.IsZero() {
		if _, err := shard.StartAt(ctx, at); err != nil {
			return err
		}
	}
	sink := &memSink{}
	res, err := loadgen.Run(ctx, client, loadgen.Tier{Index: e.tier.Tier, Shard: sp.Index, Offsets: offs, Requests: reqs}, sink, nil)
	if err != nil {
		return err
	}
	f := &records.File{Header: e.header, Tiers: []records.Tier{e.tier}, Records: sink.recs}
	f.Header.Shard = sp.String()
	f.Header.StartWall = res.StartWall
	f.Tiers[0].Planned = len(offs)
	f.Tiers[0].StartWall = res.StartWall
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return shard.WriteFile(filepath.Join(dir, result.RecordsName), f)
}

// TestShardedRunMatchesSingleRun is the acceptance test in one process: k = 3 shard
// clients with one start time against the embedded sim, merged, against one client sending the
// whole schedule with the same seed. The planned schedule and ids must be identical, token counts
// exact, and latencies within a bound derived from the sim's engine model (below).
func TestShardedRunMatchesSingleRun(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 120 requests to the embedded sim (about 5 s)")
	}
	// Bound the test in time even if something ignores its context: crash with every
	// goroutine's stack rather than hang until the test binary's timeout.
	watchdog := time.AfterFunc(2*time.Minute, func() {
		buf := make([]byte, 1<<20)
		panic(fmt.Sprintf("TestShardedRunMatchesSingleRun still running after 2m; goroutines:\n%s", buf[:runtime.Stack(buf, true)]))
	})
	t.Cleanup(func() { watchdog.Stop() })

	cfg, err := sim.Profile(sim.ProfileMedium)
	if err != nil {
		t.Fatal(err)
	}
	cfg.EOSProbability = 0 // every request generates exactly its max tokens
	// Two identical deployments, one for the single client and one for the shards, driven at the
	// same time from the same start: whatever else loads this machine slows both alike.
	srvSingle, err := sim.Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srvSingle.Close()
	srvShards, err := sim.Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srvShards.Close()

	const (
		n, k          = 60, 3
		rate          = 30.0 // light load: the sim's 64 slots never fill (mean batch ≈ 30/s × 0.22 s ≈ 7)
		inLen, outLen = 32, 16
		seed          = 11
	)
	spec := arrival.Spec{Rate: rate, Burstiness: 1}
	offsets, err := spec.Offsets(n, seed)
	if err != nil {
		t.Fatal(err)
	}
	set, err := workloads.Synthetic{InputLen: inLen, OutputLen: outLen, Seed: seed}.Generate(n)
	if err != nil {
		t.Fatal(err)
	}
	e := e2eRun{
		target: loadgen.Target{Model: cfg.ModelName, Endpoint: loadgen.Chat, Timeout: 30 * time.Second},
		header: records.Header{Version: "test", MetricsVersion: records.MetricsVersion, Command: "run", Target: "sim",
			Endpoint: "chat", Model: cfg.ModelName, Workload: set.Source, WorkloadFingerprint: set.Fingerprint,
			Arrival: spec.String(), Seed: seed, CachePolicy: "replay", TimeoutS: 30},
		tier: records.Tier{Tier: 0, Arrival: spec.String(), RequestRate: rate, Burstiness: 1, Seed: seed,
			Planned: n, WorkloadFingerprint: set.Fingerprint},
		offsets: offsets, reqs: set.Requests,
	}
	single, shards := e, e
	single.target.BaseURL, shards.target.BaseURL = srvSingle.URL(), srvShards.URL()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()

	at := time.Now().Add(300 * time.Millisecond).Round(0) // what --start-at would carry
	errs := make([]error, k+1)
	var wg sync.WaitGroup
	for i := range k {
		wg.Go(func() {
			errs[i] = shards.run(ctx, shard.Spec{Index: i, Count: k}, at, filepath.Join(dir, fmt.Sprintf("shard-%d", i)))
		})
	}
	wg.Go(func() { errs[k] = single.run(ctx, shard.Spec{}, at, filepath.Join(dir, "single")) })
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	sf, err := records.ReadFile(filepath.Join(dir, "single", result.RecordsName))
	if err != nil {
		t.Fatal(err)
	}
	in, err := shard.ReadInputs([]string{filepath.Join(dir, "shard-*")})
	if err != nil {
		t.Fatal(err)
	}
	merged, rep, err := shard.MergeInputs(in, shard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("anchor spread of the shards: %v ms (one machine, one clock: start-timer jitter only)", rep.Tiers[0].AnchorSpreadMs)

	// Identical planned schedule and request ids.
	sortRecords(sf.Records)
	if len(merged.Records) != n || len(sf.Records) != n || merged.Tiers[0].Planned != n {
		t.Fatalf("merged %d records (tier plans %d), single %d; want %d", len(merged.Records), merged.Tiers[0].Planned, len(sf.Records), n)
	}
	for j := range n {
		m, s := merged.Records[j], sf.Records[j]
		if m.ID != s.ID || m.Planned != s.Planned || m.Planned != offsets[m.ID] || m.Shard != m.ID%k {
			t.Fatalf("record %d: merged id %d planned %v shard %d, single id %d planned %v; want equal, at the schedule's %v, shard id mod %d",
				j, m.ID, m.Planned, m.Shard, s.ID, s.Planned, offsets[m.ID], k)
		}
		if m.Outcome != records.OK || s.Outcome != records.OK || m.OutputTokens != outLen || s.OutputTokens != outLen {
			t.Fatalf("id %d: outcomes %v/%v, output tokens %d/%d; want ok and %d in both", m.ID, m.Outcome, s.Outcome, m.OutputTokens, s.OutputTokens, outLen)
		}
	}

	// Latencies. At this load a request never queues: its TTFT is the wait for the engine's next
	// step boundary (in [0, τ)) plus its prefill step (τ), plus loopback transport, where τ is
	// the step duration; so every TTFT lies in [τ, 2τ) + transport in both runs, and the two mean
	// TTFTs differ by less than τ. (By the uniform wait alone the difference of two means of 60
	// has a standard deviation of τ·√(2/(12·60)) ≈ 0.05τ: the bound is loose, not tuned.)
	// E2EL adds outLen−1 decode steps whose durations can differ between the runs only through
	// batch membership at step boundaries: at most one sequence (StepPerSeq) and one prefill
	// chunk (inLen/PrefillRate) per step. τ is bounded with a batch of 20 sequences, which the
	// Poisson(≈7) batch at this load exceeds with probability below 1e-4.
	//
	// This holds while the engines run on their step clocks and the clients on their schedules.
	// A starved machine breaks that premise (the engine hands tokens out late; the sim reports
	// it as step lateness, which delays tokens without accumulating): the lateness p99 of both
	// engines widens each bound twice over, and beyond premiseLateness, or with a client-bound
	// run, the comparison is not made (the exact checks above still were).
	const premiseLateness = 5 * time.Millisecond
	prefill := time.Duration(float64(inLen) / cfg.PrefillRate * float64(time.Second))
	tau := cfg.StepBase + 20*cfg.StepPerSeq + 20*(inLen+outLen)*cfg.StepPerKVToken + prefill
	info := records.Tier{Tier: 0, Arrival: spec.String(), RequestRate: records.Rate(rate), Burstiness: 1, Planned: n}
	sm := measure.Summarize(merged.TierRecords(0), info, measure.Options{})
	ss := measure.Summarize(sf.TierRecords(0), info, measure.Options{})
	if sm.Completed != n || ss.Completed != n || sm.TotalOutputTokens != ss.TotalOutputTokens {
		t.Errorf("completed %d / %d, output tokens %d / %d; want %d each and equal tokens", sm.Completed, ss.Completed, sm.TotalOutputTokens, ss.TotalOutputTokens, n)
	}
	st1, st2 := srvSingle.Server().Stats(), srvShards.Server().Stats()
	late := max(st1.StepLatenessP99, st2.StepLatenessP99)
	if late > premiseLateness || st1.ScheduleResets+st2.ScheduleResets > 0 || sm.ClientBound || ss.ClientBound {
		t.Logf("machine too busy for the latency comparison: engine lateness p99 %v / %v (premise <= %v), schedule resets %d / %d, client-bound %v / %v",
			st1.StepLatenessP99, st2.StepLatenessP99, premiseLateness, st1.ScheduleResets, st2.ScheduleResets, ss.ClientBound, sm.ClientBound)
		return
	}
	tolTTFT := ms(tau + 2*late)
	tolE2EL := ms(tau + (outLen-1)*(cfg.StepPerSeq+prefill) + 2*late)
	if d := math.Abs(sm.TTFT.Mean - ss.TTFT.Mean); d > tolTTFT {
		t.Errorf("mean TTFT merged %.2f ms, single %.2f ms: differ by %.2f > %.2f ms", sm.TTFT.Mean, ss.TTFT.Mean, d, tolTTFT)
	}
	if d := math.Abs(sm.E2EL.Mean - ss.E2EL.Mean); d > tolE2EL {
		t.Errorf("mean E2EL merged %.2f ms, single %.2f ms: differ by %.2f > %.2f ms", sm.E2EL.Mean, ss.E2EL.Mean, d, tolE2EL)
	}
	t.Logf("mean TTFT %.2f vs %.2f ms (bound %.2f), mean E2EL %.2f vs %.2f ms (bound %.2f), engine lateness p99 %v",
		sm.TTFT.Mean, ss.TTFT.Mean, tolTTFT, sm.E2EL.Mean, ss.E2EL.Mean, tolE2EL, late)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
