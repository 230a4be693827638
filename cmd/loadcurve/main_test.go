package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/measure/records"
)

// runCLI runs the command line in-process and returns exit code, stdout and stderr.
//
// The longest end-to-end tests (sweeps and plans against the embedded deployment,
// which spend their time waiting on its real-time service) run in parallel with each other, three
// at a time (TestMain; go test's default -parallel is GOMAXPROCS), after the short tests.
// Each is written to hold on a busy machine, which the other makes it: the sweeps allow for a
// client made late by its neighbours (--max-schedule-lag), and the sim's own test skips when its
// steps cannot keep real time.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCLIFor(t, 2*time.Minute, args...)
}

// runCLIFor is runCLI with its own deadline.
func runCLIFor(t *testing.T, d time.Duration, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	code := runApp(ctx, append([]string{"loadcurve"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// small keeps end-to-end runs short: short prompts and outputs against the embedded sim.
var small = []string{"--random-input-len", "32", "--random-output-len", "8", "--quiet"}

// reportTo re-derives the result in dir with `loadcurve report` (and flags) into a new directory,
// which it returns.
func reportTo(t *testing.T, dir string, flags ...string) string {
	t.Helper()
	out := t.TempDir()
	if code, _, stderr := runCLI(t, append([]string{"report", dir, "--out", out, "-q"}, flags...)...); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	return out
}

// snapshot reads every file of dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(b)
	}
	return m
}

func TestRunAgainstEmbeddedSim(t *testing.T) {
	dir := t.TempDir()
	// The medium profile streams one token per chunk: 8 tokens, 7 gaps.
	code, stdout, stderr := runCLI(t, append([]string{"run", "--num-requests", "30", "--request-rate", "40", "--sim-profile", "medium", "--out", dir}, small...)...)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	if !strings.Contains(stderr, "embedded simulated deployment") {
		t.Errorf("the run did not say it started the sim: %s", stderr)
	}
	for _, want := range []string{"Successful requests:", "Mean TTFT (ms):", "P99 ITL (ms):", "Client Queue Time", "Compliant output throughput"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Records) != 30 || len(f.Tiers) != 1 || f.Header.Model != "loadcurve-sim" || f.Header.WorkloadFingerprint == "" {
		t.Fatalf("records file: %d records, %d tiers, header %+v", len(f.Records), len(f.Tiers), f.Header)
	}
	seen := map[int]bool{}
	for _, r := range f.Records {
		if r.Outcome != records.OK || r.OutputTokens != 8 || r.OutputTokensSource != records.SourceUsage {
			t.Errorf("request %d: outcome %v, %d output tokens from %q", r.ID, r.Outcome, r.OutputTokens, r.OutputTokensSource)
		}
		if r.Dispatched < r.Planned || r.Slot < r.Dispatched || r.Sent < r.Slot || r.First < r.Sent || r.Last < r.First || r.End < r.Last {
			t.Errorf("request %d: moments out of order: %+v", r.ID, r)
		}
		if len(r.ITL) != 7 {
			t.Errorf("request %d: %d ITL gaps, want 7", r.ID, len(r.ITL))
		}
		seen[r.ID] = true
	}
	if len(seen) != 30 {
		t.Errorf("ids not unique: %d distinct", len(seen))
	}
	var sum map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"completed", "request_throughput", "output_throughput", "mean_ttft_ms", "p99_itl_ms",
		"raw_output_throughput", "compliant_output_throughput", "mean_client_queue_time_ms", "run"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary.json lacks %q", k)
		}
	}
	if sum["completed"].(float64) != 30 {
		t.Errorf("completed = %v", sum["completed"])
	}
	// report re-derives the same summary from the records alone, byte for byte, and without
	// --out it writes nothing: the result it reads stays as it was.
	files := snapshot(t, dir)
	code, stdout, stderr = runCLI(t, "report", dir, "-q")
	if code != exitOK || !strings.Contains(stdout, "Successful requests:") || strings.Contains(stderr, "wrote") {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !reflect.DeepEqual(snapshot(t, dir), files) {
		t.Error("report without --out changed the result directory")
	}
	if after, _ := os.ReadFile(filepath.Join(reportTo(t, dir), "summary.json")); !bytes.Equal(b, after) {
		t.Errorf("report did not reproduce summary.json:\n%s\n---\n%s", b, after)
	}
	// report --out onto a directory holding a result refuses, unless --replace.
	if code, _, stderr := runCLI(t, "report", dir, "--out", dir, "-q"); code != exitUsage || !strings.Contains(stderr, "--replace") {
		t.Errorf("report --out onto its own result: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "report", dir, "--out", dir, "--replace", "-q"); code != exitOK {
		t.Errorf("report --out DIR --replace: exit %d: %s", code, stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "summary.json")); !bytes.Equal(b, after) {
		t.Error("report --replace onto its own directory changed summary.json")
	}
	if _, err := records.ReadFile(filepath.Join(dir, "records.jsonl")); err != nil {
		t.Errorf("report --replace onto its own directory lost the records: %v", err)
	}
	// run --out over an existing result refuses, unless --replace, which replaces all of it.
	if code, _, stderr := runCLI(t, append([]string{"run", "--num-requests", "3", "--request-rate", "inf", "--out", dir}, small...)...); code != exitUsage || !strings.Contains(stderr, "already holds a result") {
		t.Errorf("run --out over a result: exit %d: %s", code, stderr)
	}
}

func TestRunJSONAndConcurrencyCap(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCLI(t, append([]string{"run", "--num-requests", "12", "--request-rate", "inf", "--max-concurrency", "3",
		"--format", "json", "--goodput", "ttft:60000"}, small...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	// Twelve arrivals at once through three slots: most wait in the client.
	if s["max_concurrency"].(float64) != 3 || !(s["p90_client_queue_time_ms"].(float64) > 0) {
		t.Errorf("max_concurrency %v, p90 client queue %v", s["max_concurrency"], s["p90_client_queue_time_ms"])
	}
	if s["request_goodput"] == nil {
		t.Error("request_goodput missing although objectives were given")
	}
}

func TestBadInputIsAClearError(t *testing.T) {
	t.Parallel() // mostly waiting on real time (TestMain)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"negative rate", []string{"run", "--request-rate", "-1"}, exitUsage, "--request-rate"},
		{"zero rate", []string{"run", "--request-rate", "0"}, exitUsage, "--request-rate"},
		{"word rate", []string{"run", "--request-rate", "fast"}, exitUsage, "--request-rate"},
		{"zero burstiness", []string{"run", "--burstiness", "0"}, exitUsage, "--burstiness"},
		{"zero concurrency", []string{"run", "--max-concurrency", "0"}, exitUsage, "--max-concurrency"},
		{"malformed goodput", []string{"run", "--goodput", "ttft"}, exitUsage, "--goodput"},
		{"unknown goodput key", []string{"run", "--goodput", "latency:5"}, exitUsage, "--goodput"},
		{"extra body not an object", []string{"run", "--extra-body", "[1,2]"}, exitUsage, "--extra-body"},
		{"extra body not json", []string{"run", "--extra-body", "{ignore_eos:true}"}, exitUsage, "--extra-body"},
		{"bad endpoint", []string{"run", "--endpoint", "rerank"}, exitUsage, "--endpoint"},
		{"bad format", []string{"run", "--format", "xml"}, exitUsage, "--format"},
		{"zero requests", []string{"run", "--num-requests", "0"}, exitUsage, "--num-requests"},
		{"bad ramp", []string{"run", "--ramp-up-strategy", "sideways"}, exitUsage, "--ramp-up-strategy"},
		{"bad percentile", []string{"run", "--metric-percentiles", "50,101"}, exitUsage, "--metric-percentiles"},
		{"unknown percentile metric", []string{"run", "--percentile-metrics", "ttft,latency"}, exitUsage, "--percentile-metrics"},
		{"negative window", []string{"run", "--window-warmup", "-1s"}, exitUsage, "--window-warmup"},
		{"window longer than the tier", []string{"run", "--num-requests", "20", "--request-rate", "10", "--window-warmup", "1h"}, exitUsage,
			"leave nothing of a tier planned to last 2s"},
		{"window on a burst", []string{"run", "--num-requests", "20", "--request-rate", "inf", "--window-cooldown", "1s"}, exitUsage,
			"all planned at once"},
		{"target share 0", []string{"run", "--target-share", "0"}, exitUsage, "--target-share must be in (0, 1], got 0"},
		{"virtual engine users", []string{"sweep", "--sim-clock", "virtual", "--max-concurrencies", "2,4"}, exitUsage, "--sim-clock: a closed loop of users is modelled on the M/D/c queue"},
		{"virtual engine replicas", []string{"run", "--sim-clock", "virtual", "--sim-replicas", "2"}, exitUsage, "replicas of the batching engine are not modelled"},
		{"virtual at an address", []string{"run", "--sim-clock", "virtual", "--base-url", "http://127.0.0.1:9/v1"}, exitUsage,
			"--sim-clock virtual: the virtual clock serves the embedded queue"},
		{"virtual with a cap", []string{"run", "--sim-model", "mdc", "--sim-clock", "virtual", "--max-concurrency", "2"}, exitUsage,
			"--sim-clock: the client's concurrency cap is not modelled"},
		{"virtual users on replicas", []string{"sweep", "--sim-model", "mdc", "--sim-clock", "virtual", "--max-concurrencies", "2,4", "--sim-replicas", "2"},
			exitUsage, "a closed loop of users is modelled on one queue"},
		{"bad clock", []string{"run", "--sim-clock", "fast"}, exitUsage, "--sim-clock fast: want real or virtual"},
		{"absurd length spread", []string{"run", "--random-length-dist", "lognormal", "--random-range-ratio", "1e308"}, exitUsage,
			"--random-range-ratio is the coefficient of variation"},
		{"bounded with a cooldown", []string{"run", "--bounded-memory", "--window-cooldown", "1s"}, exitUsage, "--window-cooldown"},
		{"unknown sim profile", []string{"run", "--sim-profile", "gpu9000"}, exitUsage, "profile"},
		{"unknown flag", []string{"run", "--rate", "3"}, exitUsage, "rate"},
		{"unreachable base url", []string{"run", "--base-url", "http://127.0.0.1:1/v1", "--model", "m"}, exitFailure, "127.0.0.1:1"},
		{"base url not a url", []string{"run", "--base-url", "localhost:8000"}, exitUsage, "--base-url"},
		{"descending rates", []string{"sweep", "--request-rates", "4,2"}, exitUsage, "--request-rates"},
		{"no tiers", []string{"sweep", "--request-rates", ""}, exitUsage, "--request-rates"},
		{"target share above 1", []string{"sweep", "--request-rates", "1,2", "--target-share", "1.5"}, exitUsage, "--target-share"},
		{"headroom 1", []string{"sweep", "--request-rates", "1,2", "--headroom", "1"}, exitUsage, "--headroom"},
		{"cost negative", []string{"cost", "--a-cost-per-hour", "-1", "--a-raw-throughput", "1", "--a-compliant-share", "1",
			"--b-cost-per-hour", "1", "--b-raw-throughput", "1", "--b-compliant-share", "1"}, exitUsage, "--a-cost-per-hour"},
		{"cost share", []string{"cost", "--a-cost-per-hour", "1", "--a-raw-throughput", "1", "--a-compliant-share", "1.2",
			"--b-cost-per-hour", "1", "--b-raw-throughput", "0", "--b-compliant-share", "1"}, exitUsage, "--a-compliant-share"},
		{"cost missing", []string{"cost", "--a-cost-per-hour", "1"}, exitUsage, "--b-cost-per-hour"},
		{"compare missing file", []string{"compare", "/nonexistent/a", "/nonexistent/b"}, exitUsage, "/nonexistent/a"},
		{"report not a result", []string{"report", "main.go"}, exitUsage, "not a loadcurve records file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append(tc.args, "--quiet")...)
			if tc.args[0] == "cost" || tc.args[0] == "compare" || tc.args[0] == "report" {
				code, _, stderr = runCLI(t, tc.args...)
			}
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr %q should mention %q", code, tc.code, stderr, tc.want)
			}
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
				t.Errorf("panicked: %s", stderr)
			}
		})
	}
}

func TestScheduleCommandIsDeterministicAndMatchesArrival(t *testing.T) {
	t.Parallel()
	code, out1, stderr := runCLI(t, "schedule", "--request-rate", "5", "--burstiness", "0.5", "--num-requests", "50", "--seed", "9")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, out2, _ := runCLI(t, "schedule", "--request-rate", "5", "--burstiness", "0.5", "--num-requests", "50", "--seed", "9")
	if out1 != out2 {
		t.Error("same seed printed different schedules")
	}
	want, err := arrival.Spec{Rate: 5, Burstiness: 0.5}.Offsets(50, 9)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(out1))
	i := 0
	for sc.Scan() {
		v, err := strconv.ParseFloat(sc.Text(), 64)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if time.Duration(math.Round(v*1e9)) != want[i] {
			t.Errorf("line %d: %s, want %v", i+1, sc.Text(), want[i])
		}
		i++
	}
	if i != 50 {
		t.Errorf("%d lines, want 50", i)
	}
}

func TestCostSeedExample(t *testing.T) {
	t.Parallel()
	args := []string{"cost", "--a-cost-per-hour", "100", "--a-raw-throughput", "10000", "--a-compliant-share", "0.95",
		"--b-cost-per-hour", "80", "--b-raw-throughput", "12000", "--b-compliant-share", "0.60"}
	code, out, stderr := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"2.92", "3.09", "5.6 %", "63.3 %", "7,600"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, append(args, "--format", "json")...)
	var j map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &j) != nil {
		t.Fatalf("json: exit %d\n%s", code, out)
	}
	if be := j["break_even_compliant_share"].(float64); math.Abs(be-0.6333) > 0.0001 {
		t.Errorf("break-even share %v", be)
	}
	if j["payback_periods"] != nil {
		t.Errorf("payback without a one-time investment or with negative savings: %v", j["payback_periods"])
	}
}

func TestInterruptedRunWritesEverythingMarkedIncomplete(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	// What the first SIGINT does, a second after the run started sending (on a busy machine the
	// embedded deployment and the preflight can take longer than a fixed delay).
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := os.Stat(filepath.Join(dir, "records.jsonl")); err == nil {
				time.AfterFunc(time.Second, cancel)
				return
			}
		}
	}()
	var out, errb bytes.Buffer
	args := append([]string{"loadcurve", "run", "--num-requests", "200", "--request-rate", "20", "--out", dir}, small...)
	code := runApp(ctx, args, &out, &errb)
	cancel()
	if code != exitSignaled {
		t.Fatalf("exit %d, want %d\n%s", code, exitSignaled, errb.String())
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// Every planned request has exactly one line, whether it finished, was cut or never started.
	ids := map[int]int{}
	counts := map[records.Outcome]int{}
	for _, r := range f.Records {
		ids[r.ID]++
		counts[r.Outcome]++
	}
	if len(f.Records) != 200 || len(ids) != 200 {
		t.Fatalf("%d records for %d distinct ids, want 200", len(f.Records), len(ids))
	}
	if counts[records.OK] == 0 || counts[records.Canceled] == 0 {
		t.Errorf("outcomes %v: want some ok before the interrupt and the rest canceled", counts)
	}
	var sum map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum["complete"] != false {
		t.Errorf("summary complete = %v, want false", sum["complete"])
	}
	// The summary accounts for every planned request, as the records do.
	outcomes, _ := sum["outcomes"].(map[string]any)
	total := 0.0
	for _, o := range records.Outcomes() {
		n, _ := outcomes[o.String()].(float64)
		total += n
		if int(n) != counts[o] {
			t.Errorf("summary outcome %s = %v, the records hold %d", o, n, counts[o])
		}
	}
	if total != 200 || sum["planned"] != 200.0 {
		t.Errorf("summary outcomes add up to %v of %v planned: %v", total, sum["planned"], outcomes)
	}
	if !strings.Contains(out.String(), "INCOMPLETE") {
		t.Errorf("the table does not say it is incomplete:\n%s", out.String())
	}
}

func TestSecretsNeverReachAnyOutput(t *testing.T) {
	t.Parallel()
	const key, hdr = "sk-CANARY-7f3a9c", "hdr-CANARY-0b1e"
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, append([]string{"run", "--num-requests", "5", "--request-rate", "inf",
		"--api-key", key, "--header", "X-Team-Token: " + hdr, "--out", dir}, small...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "report", dir, "-q"); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	// A malformed header or body must not echo its value either.
	_, o2, e2 := runCLI(t, "run", "--header", "Bad Name: "+hdr, "--extra-body", `{"k":"`+key+`"`, "-q")
	texts := map[string]string{"stdout": stdout, "stderr": stderr, "error stdout": o2, "error stderr": e2}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		texts[e.Name()] = string(b)
	}
	for name, text := range texts {
		for _, secret := range []string{key, hdr} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains the secret %q", name, secret)
			}
		}
	}
	if len(entries) < 2 {
		t.Errorf("only %d output files were checked", len(entries))
	}
}

func TestCompareAndCostOfTwoBurstRuns(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		// An objective every request meets: the wiring is under test, and a run without
		// --goodput judges by the sim's own (ttft:100), which a burst on a loaded machine misses,
		// leaving cost no effective output to price.
		if code, _, stderr := runCLI(t, append([]string{"run", "--num-requests", "12", "--request-rate", "inf", "--goodput", "e2el:60000", "--out", dir}, small...)...); code != exitOK {
			t.Fatalf("run: exit %d: %s", code, stderr)
		}
	}
	// A run at rate inf is a tier, not a sweep's probe: it must appear in the comparison.
	code, stdout, stderr := runCLI(t, "compare", a, b)
	if code != exitOK || !strings.Contains(stdout, "\n       inf ") {
		t.Errorf("compare of two burst runs: exit %d, no inf row:\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "cost", "--a", a, "--b", b, "--a-cost-per-hour", "10", "--b-cost-per-hour", "8")
	if code != exitOK || !strings.Contains(stdout, "cost per million effective tokens") {
		t.Errorf("cost from two burst runs: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestBoundedMemoryRunAgreesWithTheExactReport: run --bounded-memory summarises on the fly; the
// report of its records.jsonl (exact) has the same counts, throughputs and means, and medians and
// percentiles within the stated relative error.
func TestBoundedMemoryRunAgreesWithTheExactReport(t *testing.T) {
	t.Parallel() // mostly waiting on real time (TestMain)
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, append([]string{"run", "--num-requests", "120", "--request-rate", "60", "--bounded-memory",
		"--goodput", "ttft:500", "--out", dir}, small...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "--bounded-memory: medians and percentiles are within ±0.5 %") {
		t.Errorf("the table does not say its percentiles are approximate:\n%s", stdout)
	}
	load := func() map[string]any {
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "run")
		return m
	}
	approx := load()
	// report --bounded-memory streams the same records into the same sketches: the same summary.
	before, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if after, _ := os.ReadFile(filepath.Join(reportTo(t, dir, "--bounded-memory"), "summary.json")); !bytes.Equal(before, after) {
		t.Errorf("report --bounded-memory did not reproduce the run's bounded summary:\n%s\n---\n%s", before, after)
	}
	dir = reportTo(t, dir)
	exact := load()
	if approx["percentile_relative_error"] != 0.005 {
		t.Errorf("percentile_relative_error = %v, want 0.005", approx["percentile_relative_error"])
	}
	if _, ok := exact["percentile_relative_error"]; ok {
		t.Error("the exact report claims a percentile error")
	}
	delete(approx, "percentile_relative_error")
	if len(approx) != len(exact) {
		t.Errorf("%d keys, exact report %d", len(approx), len(exact))
	}
	compared := 0
	for k, e := range exact {
		a := approx[k]
		ef, eok := e.(float64)
		af, aok := a.(float64)
		switch {
		case k == "client_bound_reason" || k == "verdict" || k == "schedule_lag_note":
			// All quote the schedule lag's p99, which is the sketch's in the bounded summary.
			if ab, eb := withoutLagP99(t, a), withoutLagP99(t, e); ab != eb {
				t.Errorf("%s: %s, exact %s", k, ab, eb)
			}
		case !eok || !aok:
			if ab, _ := json.Marshal(a); string(ab) != mustJSON(t, e) {
				t.Errorf("%s: %s, exact %s", k, ab, mustJSON(t, e))
			}
		case strings.HasSuffix(k, "_ms") && !strings.HasPrefix(k, "mean_") && !strings.HasPrefix(k, "std_") && k != "client_bound_threshold_ms":
			compared++ // a median or percentile: within 0.5 %
			if math.Abs(af-ef) > 0.005*math.Abs(ef)+1e-9 {
				t.Errorf("%s: %v, exact %v: beyond 0.5 %%", k, af, ef)
			}
		default: // counts, throughputs, means and standard deviations: exact up to rounding
			if math.Abs(af-ef) > 1e-9*math.Max(1, math.Abs(ef)) {
				t.Errorf("%s: %v, exact %v", k, af, ef)
			}
		}
	}
	if compared < 20 {
		t.Errorf("only %d percentiles compared", compared)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPercentileMetricsWindowAndCSV: vLLM's --percentile-metrics selects the metrics reported,
// the steady-state window leaves out the warm-up's requests and says so, --format csv prints the
// summary's keys and values, and report re-derives the same summary under the same flags.
func TestPercentileMetricsWindowAndCSV(t *testing.T) {
	dir := t.TempDir()
	flags := []string{"--percentile-metrics", "ttft,tpot,itl,e2el", "--window-warmup", "300ms"}
	code, stdout, stderr := runCLI(t, append(append([]string{"run", "--num-requests", "40", "--request-rate", "40", "--format", "csv",
		"--out", dir}, flags...), small...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || len(rows) != 2 || len(rows[0]) != len(rows[1]) {
		t.Fatalf("stdout is not a two-row CSV (%v):\n%s", err, stdout)
	}
	row := map[string]string{}
	for i, k := range rows[0] {
		row[k] = rows[1][i]
	}
	for _, k := range []string{"count_ttft", "p99_tpot_ms", "mean_itl_ms", "median_e2el_ms", "outcomes_ok", "planned", "window"} {
		if _, ok := row[k]; !ok {
			t.Errorf("CSV lacks %q", k)
		}
	}
	for _, k := range []string{"count_client_queue_time", "mean_schedule_lag_ms", "p99_e2el_including_client_queue_ms"} {
		if _, ok := row[k]; ok {
			t.Errorf("CSV has %q although --percentile-metrics did not select it", k)
		}
	}
	issued, _ := strconv.Atoi(row["issued"])
	if row["planned"] != "40" || issued >= 40 || issued == 0 || !strings.Contains(row["window"], "warmup 0.300 s") {
		t.Errorf("the window did not leave out the warm-up: planned %s, issued %s, window %q", row["planned"], row["issued"], row["window"])
	}
	if row["metric_percentiles"] != "50 90 95 99" {
		t.Errorf("metric_percentiles cell %q", row["metric_percentiles"])
	}
	before, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	// The window is in the records header: report reproduces it without the flags.
	if after, _ := os.ReadFile(filepath.Join(reportTo(t, dir), "summary.json")); !bytes.Equal(before, after) {
		t.Errorf("report changed summary.json:\n%s\n---\n%s", before, after)
	}
	// The table says what the window did and shows only the selected metrics.
	code, stdout, _ = runCLI(t, append([]string{"report", dir, "-q"}, flags...)...)
	if code != exitOK || !strings.Contains(stdout, "Note: steady-state window") || strings.Contains(stdout, "Schedule Lag") || !strings.Contains(stdout, "P99 ITL") {
		t.Errorf("report table:\n%s", stdout)
	}
}

func TestWithIgnoreEOS(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want, errHas string
	}{
		{in: "", want: `{"ignore_eos":true}`},
		{in: `{}`, want: `{"ignore_eos":true}`},
		{in: `{"top_k": 5}`, want: `{"ignore_eos":true,"top_k":5}`},
		{in: `{"ignore_eos":true,"top_k":5}`, want: `{"ignore_eos":true,"top_k":5}`},
		{in: `{"ignore_eos":false}`, errHas: "contradicts"},
	}
	for _, tc := range tests {
		var body []byte
		if tc.in != "" {
			var err error
			if body, err = loadgen.ParseExtraBody(tc.in); err != nil {
				t.Fatal(err)
			}
		}
		got, err := loadgen.WithIgnoreEOS(body)
		switch {
		case tc.errHas != "":
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%s: err %v, want it to say %q", tc.in, err, tc.errHas)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.in, err)
		default:
			var g, w any
			if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(tc.want), &w) != nil || !reflect.DeepEqual(g, w) {
				t.Errorf("%s: %s, want %s", tc.in, got, tc.want)
			}
		}
	}
	// The command names the flag of a contradiction.
	if code, _, stderr := runCLI(t, "run", "--ignore-eos", "--extra-body", `{"ignore_eos":false}`, "-q"); code != exitUsage ||
		strings.Count(stderr, "--ignore-eos") != 1 {
		t.Errorf("contradicting --ignore-eos: exit %d: %s", code, stderr)
	}
	// vLLM's --num-prompts is --num-requests.
	code, stdout, stderr := runCLI(t, append([]string{"run", "--num-prompts", "3", "--request-rate", "inf", "--ignore-eos", "--format", "json"}, small...)...)
	if code != exitOK || !strings.Contains(stdout, `"planned": 3`) {
		t.Errorf("--num-prompts 3: exit %d, %s\n%s", code, stderr, stdout)
	}
}

// lagP99 matches the schedule lag's p99 as a client-bound reason quotes it.
var lagP99 = regexp.MustCompile(`p99 is [0-9.]+ ms`)

// withoutLagP99 is v as JSON with the quoted schedule-lag p99 blanked out: the one number of a
// verdict that a bounded-memory run takes from its sketch.
func withoutLagP99(t *testing.T, v any) string {
	return lagP99.ReplaceAllString(mustJSON(t, v), "p99 is _ ms")
}

// TestUsageTextsHaveNoBackquotes: urfave/cli renders a backquoted word in a flag's usage as the
// flag's value placeholder ("--shard loadcurve merge"), so usage texts quote with '…'.
func TestUsageTextsHaveNoBackquotes(t *testing.T) {
	t.Parallel()
	app := newApp(io.Discard, io.Discard)
	checked := 0
	for _, cmd := range app.Commands {
		for _, f := range cmd.Flags {
			df, ok := f.(cli.DocGenerationFlag)
			if !ok {
				continue
			}
			checked++
			if strings.Contains(df.GetUsage(), "`") {
				t.Errorf("%s --%s: usage %q has a backquote", cmd.Name, f.Names()[0], df.GetUsage())
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d flags checked", checked)
	}
}
