package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/internal/racedetector"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
)

// sweepArgs is a short fixed-rate sweep against the embedded sim (fixed 1 s tiers: these tests
// are about files, reproduction and comparison, not verdicts).
func sweepArgs(dir, profile string, seed string) []string {
	return append([]string{"sweep", "--request-rates", "4,8,16", "--duration", "1s", "--drain-timeout", "10s", "--no-confirm",
		"--sim-profile", profile, "--seed", seed, "--out", dir}, small...)
}

func readCurve(t *testing.T, dir string) result.CurveFile {
	t.Helper()
	cf, err := result.ReadCurve(filepath.Join(dir, result.CurveName))
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

func TestSweepReportAndCompare(t *testing.T) {
	t.Parallel() // long, and mostly waiting on real time (see runCLI)
	if testing.Short() {
		t.Skip("end-to-end sweep")
	}
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	code, stdout, stderr := runCLI(t, append(sweepArgs(a, "latency", "1"), "--plot-formats", "svg,png")...)
	if code != exitOK {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "Capacity") || !strings.Contains(stderr, "judging by ttft:1000 tpot:10") {
		t.Errorf("sweep output lacks the answer, the table or the printed default objectives:\n%s\n%s", stdout, stderr)
	}
	for _, f := range []string{"records.jsonl", "curve.json", "curve.csv", "report.html", "throughput.png", "throughput.svg", "summary_tier00.json"} {
		if _, err := os.Stat(filepath.Join(a, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	fh, err := os.Open(filepath.Join(a, "throughput.png"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(fh); err != nil {
		t.Errorf("throughput.png does not decode: %v", err)
	}
	fh.Close()
	orig, _ := os.ReadFile(filepath.Join(a, "curve.json"))
	cf := readCurve(t, a)
	if len(cf.Tiers) != 3 || cf.Run.Settings == nil || cf.Run.Settings.Objectives != "ttft:1000 tpot:10" {
		t.Fatalf("curve.json: %d tiers, settings %+v", len(cf.Tiers), cf.Run.Settings)
	}
	// The records header holds the settings: report reproduces curve.json byte for byte from the
	// records alone, also from a directory holding nothing else (as after a merge).
	if again, _ := os.ReadFile(filepath.Join(reportTo(t, a), "curve.json")); !bytes.Equal(orig, again) {
		t.Errorf("report did not reproduce curve.json byte for byte")
	}
	alone := t.TempDir()
	recs, _ := os.ReadFile(filepath.Join(a, "records.jsonl"))
	if err := os.WriteFile(filepath.Join(alone, "records.jsonl"), recs, 0o644); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(reportTo(t, alone), "curve.json")); !bytes.Equal(orig, again) {
		t.Errorf("report of records.jsonl alone did not reproduce curve.json (the settings must travel in the header)")
	}
	// report --bounded-memory streams the file: the same analysis (it rests on exact counts and
	// the steady-state observations), the same counts per tier, percentiles within 0.5 %.
	// (A client-bound reason quotes the schedule lag's p99, which is the sketch's there.)
	bc := readCurve(t, reportTo(t, a, "--bounded-memory"))
	if got, want := withoutLagP99(t, bc.Analysis), withoutLagP99(t, cf.Analysis); got != want {
		t.Errorf("bounded analysis differs:\n%s\nexact:\n%s", got, want)
	}
	for i, bt := range bc.Tiers {
		et := cf.Tiers[i]
		if bt.PercentileError != 0.005 || bt.Completed != et.Completed || bt.Issued != et.Issued ||
			bt.CompliantRequests != et.CompliantRequests || math.Abs(bt.RequestThroughput-et.RequestThroughput) > 1e-9 {
			t.Errorf("tier %d: bounded %+v\nexact %+v", i, bt, et)
		}
		for _, k := range []string{"p50", "p99"} {
			if e, g := et.TTFT.Percentiles[k], bt.TTFT.Percentiles[k]; math.Abs(g-e) > 0.005*math.Abs(e)+1e-9 {
				t.Errorf("tier %d ttft %s: %v, exact %v: beyond 0.5 %%", i, k, g, e)
			}
		}
	}
	// Options given to report land in the result's header, and the metric selection is applied.
	windowed := readCurve(t, reportTo(t, a, "--window-warmup", "250ms", "--window-cooldown", "100ms", "--percentile-metrics", "ttft,itl"))
	if s := windowed.Run.Settings; s.WindowWarmupS != 0.25 || s.WindowCooldownS != 0.1 || len(s.PercentileMetrics) != 2 {
		t.Errorf("report options are not in the header: %+v", s)
	}
	// Stricter objectives can only lower compliance.
	strict := readCurve(t, reportTo(t, a, "--goodput", "ttft:1"))
	for i, tier := range strict.Tiers {
		if tight, loose := tier.CompliantRequestShare, cf.Tiers[i].CompliantRequestShare; tight > loose {
			t.Errorf("tier %d: share %v under ttft:1 ms > %v under the defaults", i, tight, loose)
		}
	}

	// Same arguments, another profile, judged by A's objectives (each profile has its own
	// default): comparable.
	if code, _, stderr := runCLI(t, append(sweepArgs(b, "throughput", "1"), "--goodput", "ttft:1000 tpot:10")...); code != exitOK {
		t.Fatalf("sweep B: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "compare", a, b, "--a-cost-per-hour", "100", "--b-cost-per-hour", "80")
	if code != exitOK {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"A vs B at equal rate", "Paired differences", "ttft_ms", "per million effective tokens"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare output lacks %q:\n%s", want, stdout)
		}
	}
	// Another seed: not comparable, exit 2 naming the seed; --force prints, stamped.
	if code, _, stderr := runCLI(t, sweepArgs(c, "latency", "2")...); code != exitOK {
		t.Fatalf("sweep C: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "compare", a, c)
	if code != exitUsage || !strings.Contains(stderr, "seed") {
		t.Errorf("compare with another seed: exit %d, stderr %s", code, stderr)
	}
	code, stdout, _ = runCLI(t, "compare", a, c, "--force")
	if code != exitOK || !strings.Contains(stdout, "NOT COMPARABLE") {
		t.Errorf("compare --force: exit %d\n%s", code, stdout)
	}
	// The request body is part of what is compared: a sweep with --ignore-eos sends other requests.
	d := t.TempDir()
	if code, _, stderr := runCLI(t, append(sweepArgs(d, "latency", "1"), "--ignore-eos")...); code != exitOK {
		t.Fatalf("sweep D: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "compare", a, d); code != exitUsage || !strings.Contains(stderr, "request body") {
		t.Errorf("compare with and without ignore_eos: exit %d, stderr %s", code, stderr)
	}
}

// TestSweepFindsTheSimCapacity sweeps the latency profile from a quarter of its theoretical peak
// to six times it and checks the curve against the figures the sim's parameters predict.
func TestSweepFindsTheSimCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end sweep")
	}
	if racedetector.Enabled {
		// Under -race, beside the other packages, the engine woke too late to keep its model in the
		// CI runs measured (the premise checked below): it runs without -race, go test ./cmd/loadcurve.
		t.Skip("the race detector slows the in-process engine past its model's real time; run without -race")
	}
	cfg, err := sim.Profile(sim.ProfileLatency)
	if err != nil {
		t.Fatal(err)
	}
	cfg.StepBase = 25 * time.Millisecond // long steps: fewer requests per second, less CPU for the same curve
	const inWords, out = 32, 16
	peakTok := cfg.TheoreticalPeakOutput(inWords+sim.MessageOverheadTokens, out) // chat adds the per-message overhead
	peakReq := peakTok / out
	var rates []string
	for _, f := range []float64{0.25, 0.5, 0.75, 3, 6} {
		rates = append(rates, strconv.FormatFloat(f*peakReq, 'f', 2, 64))
	}
	code, stdout, stderr := runCLI(t, "sweep", "--request-rates", strings.Join(rates, ","), "--duration", "3s", "--no-confirm",
		"--drain-timeout", "3s", "--sim-profile", "latency", "--random-input-len", strconv.Itoa(inWords),
		"--random-output-len", strconv.Itoa(out), "--sim-step-base", cfg.StepBase.String(), "--goodput", "e2el:1500",
		// A 1.5 s objective does not notice a client tens of milliseconds late; a loaded -race
		// run would otherwise exclude tiers as client-bound at the default 5 ms.
		"--max-schedule-lag", "50ms",
		"--format", "json", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var cf result.CurveFile
	if err := json.Unmarshal([]byte(stdout), &cf); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	// The model holds only while the machine runs the sim's steps on time; the sim measures how
	// late they wake. Past a fifth of a step the premise is gone (an overloaded shared box), and
	// the comparison would test the machine, not loadcurve.
	for tier, raw := range cf.ServerMetrics {
		var m struct {
			StepLatenessP99 float64 `json:"step_lateness_p99_ms"`
		}
		if json.Unmarshal(raw, &m) == nil && m.StepLatenessP99 > 0.2*float64(cfg.StepBase)/float64(time.Millisecond) {
			t.Skipf("tier %d: the sim's steps woke %.1f ms late (p99): this machine could not keep the model's real time", tier, m.StepLatenessP99)
		}
	}
	top := cf.Tiers[len(cf.Tiers)-1].Steady.RawOutputThroughput
	a := cf.Analysis
	t.Logf("model: peak %.0f tok/s = %.1f req/s; measured: steady raw at 6x %.0f tok/s, plateau %+v, capacity %+v",
		peakTok, peakReq, top, a.Plateau, a.Capacity)
	// At 6x the peak the engine is busy for the whole window: its steady raw output is the
	// engine's peak less the wake-up lateness of a shared machine: allow 15 % below and 5 % above
	// the model. The 3x tier is overloaded too, so raw throughput from 3x to 6x is flat: the
	// plateau, and both never settle.
	if top < 0.85*peakTok || top > 1.05*peakTok {
		t.Errorf("steady raw output at 6x peak = %.0f tok/s, the model predicts %.0f", top, peakTok)
	}
	if a.Plateau == nil {
		t.Errorf("no plateau found; points %+v", a.Points)
	}
	for _, v := range a.Points {
		if v.NominalRate > 2*peakReq && v.Stable {
			t.Errorf("tier %d at %.1f req/s (above the peak %.1f) is judged stable", v.Tier, v.NominalRate, peakReq)
		}
	}
	// Below the peak the 1.5 s E2EL objective holds (a request lives ~16 steps of ~27 ms); past it
	// the queue grows and the objective fails, so capacity lies between half the peak and 1.1x it.
	// When a loaded machine makes the 0.75x tier client-bound (excluded), the capacity is the
	// 0.5x tier's realised rate, which Poisson arrivals over 3 s put some 10 % either side of
	// 0.5x (seen: 0.49x): hence 0.4x.
	if c := a.Capacity; c == nil || c.Rate < 0.4*peakReq || c.Rate > 1.1*peakReq {
		t.Errorf("capacity %+v, the model's peak is %.1f req/s", c, peakReq)
	}
}

// TestBoundedMemorySweep: sweep --bounded-memory keeps no records; its curve.json has the
// analysis and counts an exact report of its records.jsonl computes, and percentiles within 0.5 %.
func TestBoundedMemorySweep(t *testing.T) {
	t.Parallel() // mostly waiting on real time (TestMain)
	if testing.Short() {
		t.Skip("end-to-end sweep")
	}
	dir := t.TempDir()
	code, _, stderr := runCLI(t, append(sweepArgs(dir, "latency", "3"), "--bounded-memory")...)
	if code != exitOK {
		t.Fatalf("sweep --bounded-memory: exit %d\n%s", code, stderr)
	}
	bc, ec := readCurve(t, dir), readCurve(t, reportTo(t, dir))
	if got, want := withoutLagP99(t, bc.Analysis), withoutLagP99(t, ec.Analysis); got != want {
		t.Errorf("bounded analysis differs from the exact report's:\n%s\n%s", got, want)
	}
	if len(bc.Tiers) != 3 || len(ec.Tiers) != 3 {
		t.Fatalf("%d and %d tiers", len(bc.Tiers), len(ec.Tiers))
	}
	for i, b := range bc.Tiers {
		e := ec.Tiers[i]
		if b.PercentileError != 0.005 || e.PercentileError != 0 {
			t.Errorf("tier %d: percentile_relative_error %v (bounded), %v (exact)", i, b.PercentileError, e.PercentileError)
		}
		if b.Issued != e.Issued || b.Completed != e.Completed || b.CompliantRequests != e.CompliantRequests || b.RawOutputTokens != e.RawOutputTokens ||
			b.RealisedRate != e.RealisedRate || math.Abs(b.TTFT.Mean-e.TTFT.Mean) > 1e-9*e.TTFT.Mean {
			t.Errorf("tier %d: bounded %+v\nexact %+v", i, b, e)
		}
		for _, k := range []string{"p50", "p99"} {
			if bv, ev := b.TTFT.Percentiles[k], e.TTFT.Percentiles[k]; math.Abs(bv-ev) > 0.005*math.Abs(ev)+1e-9 {
				t.Errorf("tier %d ttft %s: %v, exact %v: beyond 0.5 %%", i, k, bv, ev)
			}
		}
	}
}

// TestSweepOnTheEmbeddedQueue runs the automatic sweep end to end, with its default settings,
// on the embedded M/D/c queue served on the virtual clock (--sim-clock virtual), whose capacity
// at the objective is known exactly (queueing.MDCCapacity), and then rehearses the plan it makes
// there. The decisions' accuracy over many seeds is held in package sweep; here three seeds
// check that the command reaches the same answer through its files: a capacity within the
// ±10 % that 250 of 250 of those runs met, an interval holding the truth, an operating point
// below the truth and verified by its confirmation. On the virtual clock the run is exact and
// deterministic for a seed: no loopback time, no scheduling delay, nothing to skip. (Over HTTP
// and the real clock, TestSweepFindsTheSimCapacity.)
func TestSweepOnTheEmbeddedQueue(t *testing.T) {
	t.Parallel()
	q := sim.QueueConfig{ModelName: sim.DefaultQueueModelName, Servers: 8, Service: 100 * time.Millisecond,
		FirstToken: 5 * time.Millisecond, OutputTokens: 4}
	// TTFT objective 80 ms: a request meets it when it waits at most 75 ms.
	truth, err := queueing.MDCCapacity(q.Service, q.Servers, 75*time.Millisecond, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	queue := []string{"--sim-model", "mdc", "--sim-clock", "virtual", "--sim-queue-servers", "8", "--sim-queue-service", "100ms",
		"--sim-queue-first-token", "5ms", "--sim-queue-output-tokens", "4",
		"--random-input-len", "8", "--random-output-len", "4"} // the queue reads no prompt: short ones cost less to build
	for _, seed := range []string{"1", "2", "3"} {
		t.Run("seed "+seed, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			code, stdout, stderr := runCLIFor(t, 4*time.Minute, append([]string{"sweep", "--goodput", "ttft:80", "--seed", seed, "--out", dir, "--quiet"}, queue...)...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			cf := readCurve(t, dir)
			a := cf.Analysis
			if a.Capacity == nil || a.OperatingPoint == nil {
				t.Fatalf("no capacity or operating point:\n%s", stdout)
			}
			c, op := a.Capacity, a.OperatingPoint
			t.Logf("truth %.3f req/s; capacity %s, operating point %.3f, confirmation %+v; %.0f s of virtual load", truth, c, op.Rate, op.Confirmation, cf.TargetSeconds)
			if math.Abs(c.Rate/truth-1) > 0.10 {
				t.Errorf("capacity %.3f req/s, the queue's truth is %.3f: beyond ±10 %%", c.Rate, truth)
			}
			if c.Low > truth || c.High == nil || *c.High < truth {
				t.Errorf("the capacity's interval %s misses the truth %.3f", c, truth)
			}
			if op.Rate > truth {
				t.Errorf("operating point %.3f req/s above the true capacity %.3f", op.Rate, truth)
			}
			if cf := op.Confirmation; !op.Verified() {
				t.Errorf("the operating point was not verified: %+v", cf)
			}
			f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if f.Header.Target != result.VirtualTarget {
				t.Errorf("the header names the target %q, want the virtual clock", f.Header.Target)
			}
			if !strings.Contains(stdout, "of virtual load") || strings.Contains(stdout, "of load on the target") {
				t.Errorf("the answer does not say that its load was virtual:\n%s", stdout)
			}
			for _, tier := range f.Tiers {
				if tier.End == nil {
					t.Errorf("tier %d has no closing line", tier.Tier)
				}
			}
			if seed != "1" {
				return
			}
			// The plan from this sweep, rehearsed on the virtual clock (where the sweep measured)
			// on replicas of the queue behind a random balancer, where each replica sees a Poisson
			// stream at peak/N: the plan's assumption, exactly, so the truth is the M/D/c queue's.
			// The peak is the largest that plans two replicas: each then runs at the operating
			// point, below the true capacity, and must not fail; one replica alone gets twice the
			// operating point, where the true share is far below the target, and must fail.
			peak := 2 * op.Rate
			code, stdout, stderr = runCLIFor(t, 3*time.Minute, "plan", dir, "--peak", strconv.FormatFloat(peak, 'g', -1, 64), "--a-cost-per-hour", "1",
				"--rehearse", "--balance", "random", "--seed", seed, "--random-input-len", "8", "--random-output-len", "4", "--format", "json")
			if code != exitOK {
				t.Fatalf("plan --rehearse: exit %d\n%s\n%s", code, stdout, stderr)
			}
			var doc rehearsedPlan
			decodeJSON(t, "plan --rehearse", stdout, &doc)
			if len(doc.Plans) != 1 || doc.Plans[0].PeakReplicas != 2 || len(doc.Rehearsals) < 2 {
				t.Fatalf("a plan for %.3f req/s at %.3f a replica: %s", peak, op.Rate, stdout)
			}
			at, below := doc.Rehearsals[0], doc.Rehearsals[len(doc.Rehearsals)-1]
			truthBelow, err := queueing.MDCWaitCDF(peak, q.Service, q.Servers, 75*time.Millisecond)
			if err != nil {
				truthBelow = 0 // no steady state: the wait grows without bound
			}
			t.Logf("rehearsal at %.3f req/s: 2 replicas %s (%.4f); 1 replica %s (%.4f, true share %.4f)", peak, at.Verdict, at.Share, below.Verdict, below.Share, truthBelow)
			if at.Replicas != 2 || strings.HasPrefix(at.Verdict, "fails") {
				t.Errorf("the plan's 2 replicas, each at the operating point %.3f req/s (true capacity %.3f), failed: %+v", op.Rate, truth, at)
			}
			if below.Replicas != 1 || truthBelow >= 0.97 || !strings.HasPrefix(below.Verdict, "fails") {
				t.Errorf("1 replica at %.3f req/s, where the true share is %.4f, did not fail: %+v", peak, truthBelow, below)
			}
		})
	}
}
