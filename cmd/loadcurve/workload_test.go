package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

type policyRun struct {
	TTFT float64 `json:"mean_ttft_ms"`
	Run  struct {
		CachePolicy string `json:"cache_policy"`
	} `json:"run"`
	Server struct {
		HitRate *float64 `json:"prefix_cache_hit_rate"`
	} `json:"server_metrics"`
}

// TestCachePoliciesOnASharedPrefixWorkload runs one shared-prefix workload three ways against one
// simulated deployment whose prefix cache outlives the runs.
func TestCachePoliciesOnASharedPrefixWorkload(t *testing.T) {
	t.Parallel() // long, and mostly waiting on real time (see runCLI)
	stalls := startStallProbe(t)
	srv, err := sim.Start(mustProfile(t, sim.ProfileMedium), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	run := func(policy string) policyRun {
		t.Helper()
		dir := t.TempDir()
		code, _, stderr := runCLI(t, "run", "--base-url", srv.URL(), "--workload", "shared-prefix", "--shared-prefix-groups", "4",
			"--shared-prefix-len", "1600", "--shared-suffix-len", "16", "--random-output-len", "4",
			"--num-requests", "24", "--request-rate", "12", "--cache", policy, "--out", dir, "--quiet")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", policy, code, stderr)
		}
		var r policyRun
		b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if r.Run.CachePolicy != policy {
			t.Errorf("summary says cache policy %q, ran %q", r.Run.CachePolicy, policy)
		}
		if r.Server.HitRate == nil {
			t.Fatalf("%s: no server-side prefix hit rate", policy)
		}
		return r
	}
	first := run("replay") // a fresh server: only hits within the run (20 of 24 requests reuse a group prefix)
	cold := run("cold")    // a nonce per run: the server's cache from the first run does not help
	again := run("replay") // the same prompts again: every prefix is cached
	warm := run("warm")    // a fresh nonce, then an unmeasured pass: cached before measuring
	t.Logf("hit rate / mean TTFT: first replay %.3f / %.1f ms, cold %.3f / %.1f, replay again %.3f / %.1f, warm %.3f / %.1f; stall probe %v",
		*first.Server.HitRate, first.TTFT, *cold.Server.HitRate, cold.TTFT, *again.Server.HitRate, again.TTFT, *warm.Server.HitRate, warm.TTFT, stalls())
	if !(*again.Server.HitRate > *cold.Server.HitRate) {
		t.Errorf("replaying cached prompts should hit more than cold")
	}
	if !(*warm.Server.HitRate > *cold.Server.HitRate) {
		t.Errorf("warm should hit more than cold")
	}
	if d := *cold.Server.HitRate - *first.Server.HitRate; d > 0.05 || d < -0.05 {
		t.Errorf("cold (%.3f) should see only within-run hits, like the first run on a fresh server (%.3f)", *cold.Server.HitRate, *first.Server.HitRate)
	}
	// Prefill of 1600 tokens at the default profile's 40,000 tokens/s takes 40 ms; a hit skips it.
	// Cold misses at least once per group (4 of 24 requests), so its mean TTFT is 7 to 11 ms
	// longer: a margin of about 200 ms summed over the run's requests, which one stall of the
	// process can take from the one or two requests in flight. On a machine that stalled
	// goroutines for more than 50 ms, a failed comparison is not judged.
	var slower []string
	if !(again.TTFT < cold.TTFT) {
		slower = append(slower, "replaying cached prompts should start faster than cold")
	}
	if !(warm.TTFT < cold.TTFT) {
		slower = append(slower, "warm should start faster than cold")
	}
	if s := stalls(); len(slower) > 0 && s > 50*time.Millisecond {
		t.Skipf("this machine stalled goroutines for %v, so the mean TTFTs may be the machine's: %s", s, strings.Join(slower, "; "))
	}
	for _, msg := range slower {
		t.Error(msg)
	}
}

// startStallProbe measures, until t ends, how late this test process gets to run a goroutine: one
// goroutine naps 1 ms at a time and keeps its largest overshoot, which the returned function
// reports.
func startStallProbe(t *testing.T) func() time.Duration {
	var worst atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		const nap = time.Millisecond
		for {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(nap)
			if late := time.Since(t0) - nap; int64(late) > worst.Load() {
				worst.Store(int64(late))
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return func() time.Duration { return time.Duration(worst.Load()) }
}

func mustProfile(t *testing.T, name string) sim.Config {
	t.Helper()
	cfg, err := sim.Profile(name)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestWorkloadFilesAndBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "set.jsonl")
	code, stdout, stderr := runCLI(t, "workload", "--workload", "../../workloads/testdata/requests.jsonl", "--out", out)
	if code != exitOK || !strings.HasPrefix(stdout, "sha256:") {
		t.Fatalf("workload: exit %d\n%s%s", code, stdout, stderr)
	}
	// The saved set loads back with the same fingerprint.
	_, again, _ := runCLI(t, "workload", "--workload", out)
	if strings.Fields(again)[0] != strings.Fields(stdout)[0] {
		t.Errorf("fingerprint changed on reload: %s vs %s", again, stdout)
	}
	// A run with a file sends every request once and reports quality failures separately.
	code, sum, stderr := runCLI(t, "run", "--workload", out, "--request-rate", "inf", "--format", "json", "--quiet")
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(sum), &s); err != nil {
		t.Fatal(err)
	}
	if s["planned"].(float64) != float64(strings.Count(readFile(t, out), "\n")) {
		t.Errorf("planned %v, the file has %d requests", s["planned"], strings.Count(readFile(t, out), "\n"))
	}
	// The sim answers with filler words, so the expectations fail: quality, not latency.
	if s["quality_failures"].(float64) == 0 {
		t.Errorf("no quality failure reported: %v", s["quality_failures"])
	}
	bad := []struct {
		name, spec, want string
	}{
		{"malformed line", "../../workloads/testdata/requests_bad.jsonl", "requests_bad.jsonl:"},
		{"bad trace", "azure:../../workloads/testdata/azure_bad.csv", "azure_bad.csv:"},
		{"missing file", "nothere.jsonl", "nothere.jsonl"},
		{"unknown kind", "dataset.parquet", "unknown kind"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "run", "--workload", tc.spec, "--quiet")
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q should name %q", code, stderr, tc.want)
			}
			if strings.Contains(stderr, "started the embedded") {
				t.Error("load was prepared before the workload validated")
			}
		})
	}
}

func TestTraceReplayIsTheSchedule(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "run", "--workload", "mooncake:../../workloads/testdata/mooncake.jsonl", "--trace-time-scale", "0.5",
		"--out", dir, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b := readFile(t, filepath.Join(dir, "records.jsonl"))
	if !strings.Contains(b, `"arrival":"trace(`) {
		t.Errorf("records do not name the trace as the arrival process:\n%.400s", b)
	}
	tr, err := workloads.LoadTrace("../../workloads/testdata/mooncake.jsonl", workloads.TraceMooncake, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Records) != tr.Len() {
		t.Fatalf("%d records for a trace of %d arrivals", len(f.Records), tr.Len())
	}
	var lags []float64
	for _, r := range f.Records {
		if r.Planned != tr.Offsets[r.ID] {
			t.Errorf("request %d planned at %v, the trace (x0.5) says %v", r.ID, r.Planned, tr.Offsets[r.ID])
		}
		lag := r.Dispatched - r.Planned
		if lag < 0 {
			t.Errorf("request %d dispatched %v before its planned time", r.ID, -lag)
		}
		lags = append(lags, float64(lag)/1e6)
	}
	// The dispatcher follows the scaled trace, not the unscaled one: each request leaves within
	// 100 ms of its planned time (ignoring the scale would make the later ones 750 ms and more
	// late). The bound is loose on purpose: the trace has five arrivals, two at T0 when the
	// client starts, so a race-instrumented client's startup or one scheduling hiccup on a busy
	// machine moves its median by milliseconds (the tool measures and flags each run's lag).
	sort.Float64s(lags)
	if worst := lags[len(lags)-1]; worst > 100 {
		t.Errorf("a request left %.2f ms after its planned time; lags %v ms", worst, lags)
	}
	if code, _, stderr := runCLI(t, "sweep", "--workload", "mooncake:../../workloads/testdata/mooncake.jsonl", "--quiet"); code != exitUsage ||
		!strings.Contains(stderr, "trace") {
		t.Errorf("sweep of a trace: exit %d: %s", code, stderr)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
