package main

// Regression tests for the bugs issue 12 lists (found by trying the tool as a new user would),
// each fixed by the redesign that moved the decision layer into libraries. Every test runs the
// command line in-process against the embedded simulated deployment, with tiny tiers.

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/records"
)

// mustRun runs the command line and fails the test unless it exits 0; it returns stdout and stderr.
func mustRun(t *testing.T, args ...string) (string, string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("loadcurve %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout, stderr
}

// tinySweep sweeps two fixed 20 s tiers of the embedded queue on the virtual clock into dir (no
// confirmation tier), with extra flags. Its tests are about the files a sweep leaves: in real
// time, on a loaded machine (CI under -race), both tiers were once excluded as client-bound, and
// a sweep without a judged point draws no plot.
func tinySweep(t *testing.T, dir string, extra ...string) (string, string) {
	t.Helper()
	args := append([]string{"sweep", "--sim-model", "mdc", "--sim-clock", "virtual", "--request-rates", "4,8", "--duration", "20s",
		"--drain-timeout", "10s", "--no-confirm", "--random-input-len", "32", "--random-output-len", "8", "--out", dir}, extra...)
	return mustRun(t, args...)
}

// wideVirtualQueue is the embedded queue on the virtual clock with room for every tier of these
// tests: 64 slots of 50 ms, 1,280 req/s; a request waits for none.
var wideVirtualQueue = []string{"--sim-model", "mdc", "--sim-clock", "virtual", "--sim-queue-servers", "64", "--sim-queue-service", "50ms",
	"--sim-queue-first-token", "5ms", "--random-input-len", "32", "--random-output-len", "8"}

// goSyntax matches what fmt prints for Go values that never belong in output for people: a
// slice (brackets around space-separated items, no commas), a struct pointer, a map, a bad verb.
var goSyntax = regexp.MustCompile(`\[[^\[\]\n,"]* [^\[\]\n,"]*\]|&\{|map\[|%!`)

func noGoSyntax(t *testing.T, name, text string) {
	t.Helper()
	if m := goSyntax.FindString(text); m != "" {
		t.Errorf("%s holds a Go-syntax value %q:\n%s", name, m, text)
	}
}

func decodeJSON(t *testing.T, name, text string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(text), v); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", name, err, text)
	}
}

// TestRegressionRunSettingsLiveInTheHeader: a run's objectives (and every other setting) are in
// its records header. Before the redesign they were only in summary.json, so report, cost and
// compare of a run recomputed it with no objectives: a run with almost no compliant request was
// priced as 100 % compliant. Here every request misses ttft:0.01 (1 ms).
func TestRegressionRunSettingsLiveInTheHeader(t *testing.T) {
	t.Parallel()
	a := t.TempDir()
	// On the virtual clock: in real time a loaded machine once left no output token inside the
	// 0.15 s steady-state window, and the test is about settings, not timing.
	mustRun(t, append([]string{"run", "--sim-model", "mdc", "--sim-clock", "virtual", "--goodput", "ttft:0.01", "--num-requests", "30", "--request-rate", "200", "--out", a}, small...)...)
	b := copyRecords(t, a) // a second result of the same run: its records alone
	f, err := records.ReadFile(filepath.Join(a, result.RecordsName))
	if err != nil {
		t.Fatal(err)
	}
	if h := f.Header; h.Settings == nil || h.Settings.Objectives != "ttft:0.01" || h.Settings.TargetShare != curve.DefaultTargetShare {
		t.Fatalf("the records header's settings %+v: want objectives ttft:0.01 and the default target share", f.Header.Settings)
	}

	// report, from the directory and from the records file alone (as after a merge).
	for _, dir := range []string{a, copyRecords(t, a)} {
		stdout, _ := mustRun(t, "report", dir, "--format", "json")
		var s struct {
			Objectives            string   `json:"objectives"`
			CompliantRequestShare *float64 `json:"compliant_request_share"`
			CompliantTokenShare   *float64 `json:"compliant_token_share"`
			Completed             int      `json:"completed"`
			Run                   struct {
				Settings *records.Settings `json:"settings"`
			} `json:"run"`
		}
		decodeJSON(t, "report --format json", stdout, &s)
		if s.Objectives != "ttft:0.01" || s.CompliantRequestShare == nil || *s.CompliantRequestShare != 0 ||
			s.CompliantTokenShare == nil || *s.CompliantTokenShare != 0 || s.Completed != 30 {
			t.Errorf("report %s: objectives %q, compliant request share %v, token share %v, %d completed: want ttft:0.01 and 0 of 30",
				dir, s.Objectives, ptr(s.CompliantRequestShare), ptr(s.CompliantTokenShare), s.Completed)
		}
		if s.Run.Settings == nil || s.Run.Settings.Objectives != "ttft:0.01" {
			t.Errorf("report %s: run.settings %+v", dir, s.Run.Settings)
		}
	}

	// cost --a RUN prices A with no effective output (or refuses to price it), never as compliant.
	code, stdout, stderr := runCLI(t, "cost", "--a", a, "--a-cost-per-hour", "10", "--b-cost-per-hour", "10",
		"--b-raw-throughput", "100", "--b-compliant-share", "1", "--format", "json")
	switch code {
	case exitOK:
		var l struct {
			A struct {
				CompliantShare      float64 `json:"compliant_share"`
				EffectiveThroughput float64 `json:"effective_throughput"`
			} `json:"a"`
		}
		decodeJSON(t, "cost --format json", stdout, &l)
		if l.A.CompliantShare != 0 || l.A.EffectiveThroughput != 0 {
			t.Errorf("cost priced A at compliant share %v, effective %v tok/s: every request missed ttft:0.01", l.A.CompliantShare, l.A.EffectiveThroughput)
		}
	case exitUsage:
		if !strings.Contains(stderr, "compliant share 0") {
			t.Errorf("cost refused A without saying its compliant share is 0: %s", stderr)
		}
	default:
		t.Errorf("cost --a RUN: exit %d\n%s%s", code, stdout, stderr)
	}

	// compare of two such results applies the headers' objectives to both sides.
	stdout, _ = mustRun(t, "compare", a, b, "--a-cost-per-hour", "10", "--b-cost-per-hour", "10", "--format", "json")
	var c struct {
		Comparable bool `json:"comparable"`
		Tiers      []struct {
			A, B *struct {
				Objectives            string  `json:"objectives"`
				CompliantRequestShare float64 `json:"compliant_request_share"`
			}
		} `json:"tiers"`
		Decisions []struct {
			Figures *curve.Figures `json:"figures"`
		} `json:"decisions"`
		Ledger    json.RawMessage `json:"cost"`
		CostError string          `json:"cost_error"`
	}
	decodeJSON(t, "compare --format json", stdout, &c)
	if !c.Comparable || len(c.Tiers) != 1 || c.Tiers[0].A == nil || c.Tiers[0].B == nil {
		t.Fatalf("compare of two identical runs: %s", stdout)
	}
	for i, s := range []*struct {
		Objectives            string  `json:"objectives"`
		CompliantRequestShare float64 `json:"compliant_request_share"`
	}{c.Tiers[0].A, c.Tiers[0].B} {
		if s.Objectives != "ttft:0.01" || s.CompliantRequestShare != 0 {
			t.Errorf("compare side %d: objectives %q, compliant request share %v: want ttft:0.01 and 0", i, s.Objectives, s.CompliantRequestShare)
		}
	}
	for i, d := range c.Decisions {
		if d.Figures == nil || d.Figures.CompliantOutputThroughput != 0 || !(d.Figures.RawOutputThroughput > 0) {
			t.Errorf("compare side %d prices figures %+v: want raw output and no compliant output", i, d.Figures)
		}
	}
	if c.Ledger != nil || c.CostError == "" {
		t.Errorf("compare priced two runs without effective output: cost %s, cost_error %q", c.Ledger, c.CostError)
	}
	// The table says the same: at 200 req/s, A and B compliant request shares of 0.
	stdout, _ = mustRun(t, "compare", a, b)
	row := -1
	for i, l := range strings.Split(stdout, "\n") {
		if f := strings.Fields(l); len(f) > 7 && f[0] == "200.00" {
			row = i
			if f[6] != "0.0000" || f[7] != "0.0000" {
				t.Errorf("compare's table shows compliant request shares %s and %s, want 0:\n%s", f[6], f[7], stdout)
			}
			break
		}
	}
	if row < 0 {
		t.Errorf("compare's table has no row at 200 req/s:\n%s", stdout)
	}
}

// copyRecords copies dir's records.jsonl, and nothing else, into a new directory it returns.
func copyRecords(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, result.RecordsName))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, result.RecordsName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func ptr(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestRegressionReportAndOutKeepResultsWhole runs one sweep into a directory, then:
//
//   - report DIR without --out prints and writes nothing. Before the redesign it overwrote DIR's
//     curve.json, summaries and plots (the README's own example destroyed the original), and said
//     it wrote records.jsonl, which it did not.
//   - run/sweep --out DIR over that result refuse without --replace, and with it replace all of
//     it. Before the redesign run --out replaced records.jsonl and left the old sweep's
//     curve.json, report.html and plots beside it (report then applied the old objectives).
//     Files that are not a result's are kept.
func TestRegressionReportAndOutKeepResultsWhole(t *testing.T) {
	t.Parallel() // mostly waiting on real time (TestMain)
	dir := t.TempDir()
	tinySweep(t, dir, "--quiet", "--plot-formats", "svg,png")
	for _, f := range []string{result.CurveName, "curve.csv", "report.html", "throughput.png", "throughput.svg", "summary_tier00.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			cj, _ := os.ReadFile(filepath.Join(dir, result.CurveName))
			t.Fatalf("the sweep did not write %s: %v\n%s", f, err, cj)
		}
	}
	const notes = "my notes on this deployment\n"
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)

	t.Run("report without --out writes nothing", func(t *testing.T) {
		for _, flags := range [][]string{
			nil,
			{"--goodput", "ttft:1"}, // other objectives: another result, still only printed
			{"--bounded-memory"},
			{"--format", "json"},
		} {
			stdout, stderr := mustRun(t, append([]string{"report", dir}, flags...)...)
			if stdout == "" {
				t.Errorf("report %v printed nothing", flags)
			}
			if strings.Contains(stderr, "wrote") {
				t.Errorf("report %v without --out claims to have written something: %s", flags, stderr)
			}
			if !reflect.DeepEqual(snapshot(t, dir), before) {
				t.Fatalf("report %v without --out changed the result directory", flags)
			}
		}
	})

	t.Run("--out over a result refuses without --replace", func(t *testing.T) {
		for _, args := range [][]string{
			append([]string{"run", "--num-requests", "5", "--request-rate", "inf", "--out", dir}, small...),
			append([]string{"sweep", "--request-rates", "20,40", "--duration", "1s", "--no-confirm", "--out", dir}, small...),
		} {
			code, _, stderr := runCLI(t, args...)
			if code != exitUsage || !strings.Contains(stderr, "--replace") {
				t.Errorf("%s --out over a result: exit %d (want %d), stderr should name --replace: %s", args[0], code, exitUsage, stderr)
			}
			if !reflect.DeepEqual(snapshot(t, dir), before) {
				t.Fatalf("%s refused but changed the directory", args[0])
			}
		}
	})

	t.Run("--replace replaces all of it", func(t *testing.T) {
		// What a run writes into an empty directory is all the directory may hold after the replace.
		fresh := t.TempDir()
		mustRun(t, append([]string{"run", "--num-requests", "5", "--request-rate", "inf", "--out", fresh}, small...)...)
		mustRun(t, append([]string{"run", "--num-requests", "5", "--request-rate", "inf", "--out", dir, "--replace"}, small...)...)
		after := snapshot(t, dir)
		if after["notes.txt"] != notes {
			t.Errorf("notes.txt, not part of a result, was not kept: %q", after["notes.txt"])
		}
		delete(after, "notes.txt")
		if got, want := names(after), names(snapshot(t, fresh)); !slices.Equal(got, want) {
			t.Errorf("after run --out --replace the directory holds %v; a run writes %v", got, want)
		}
		for _, gone := range []string{result.CurveName, "curve.csv", "throughput.png", "summary_tier00.json", "summary_tier01.json"} {
			if _, ok := after[gone]; ok {
				t.Errorf("%s of the old sweep is still there", gone)
			}
		}
		if f, err := records.ReadFile(filepath.Join(dir, result.RecordsName)); err != nil || f.Header.Command != records.CommandRun {
			t.Errorf("records.jsonl is not the new run's (%v)", err)
		}
	})
}

func names(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestRegressionCompareWithoutCapacityKeepsItsOutput: when a side has no capacity and costs are
// given, compare still prints the tables and the paired differences and says why there is no
// cost ledger, with exit 0. Before the redesign it exited 1, printed nothing and dumped a Go
// slice. Nobody meets a TTFT of 1 µs.
func TestRegressionCompareWithoutCapacityKeepsItsOutput(t *testing.T) {
	t.Parallel() // mostly waiting on real time (TestMain)
	a := t.TempDir()
	tinySweep(t, a, "--goodput", "ttft:0.001", "--quiet")
	cf, err := result.ReadCurve(filepath.Join(a, result.CurveName))
	if err != nil {
		t.Fatal(err)
	}
	if cf.Analysis.Capacity != nil {
		t.Fatalf("the sweep found a capacity %s at ttft:0.001", cf.Analysis.Capacity)
	}
	b := copyRecords(t, a) // the same result in another directory
	costs := []string{"--a-cost-per-hour", "10", "--b-cost-per-hour", "8"}

	code, stdout, stderr := runCLI(t, append([]string{"compare", a, b}, costs...)...)
	if code != exitOK {
		t.Fatalf("compare: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"A: capacity none", "A vs B at equal rate", "Paired differences", "ttft_ms", "No cost ledger at the operating points: A: no operating point"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare output lacks %q:\n%s", want, stdout)
		}
	}
	noGoSyntax(t, "compare's stdout", stdout)
	noGoSyntax(t, "compare's stderr", stderr)

	code, stdout, stderr = runCLI(t, append([]string{"compare", a, b, "--format", "json"}, costs...)...)
	if code != exitOK {
		t.Fatalf("compare --format json: exit %d\n%s%s", code, stdout, stderr)
	}
	var c struct {
		Tiers     []json.RawMessage `json:"tiers"`
		Paired    []json.RawMessage `json:"paired"`
		Ledger    json.RawMessage   `json:"cost"`
		CostError string            `json:"cost_error"`
		Decisions []struct {
			FiguresError string `json:"figures_error"`
		} `json:"decisions"`
	}
	decodeJSON(t, "compare --format json", stdout, &c)
	if len(c.Tiers) != 2 || len(c.Paired) == 0 || c.Ledger != nil || !strings.Contains(c.CostError, "no operating point") ||
		len(c.Decisions) != 2 || c.Decisions[0].FiguresError == "" {
		t.Errorf("compare.json: %d tiers, %d paired rows, cost %s, cost_error %q, decisions %+v", len(c.Tiers), len(c.Paired), c.Ledger, c.CostError, c.Decisions)
	}
	noGoSyntax(t, "compare --format json's stdout", stdout)
	noGoSyntax(t, "compare --format json's stderr", stderr)
}

// TestRegressionErrorsNameTheFlagOnce: an error names its flag once. Before the redesign
// libraries put flag names into their errors and the command prefixed them again
// ("--endpoint: --endpoint: …", 69 such strings). One bad input gives one error line, with
// exit code 2 and no Go-syntax value.
func TestRegressionErrorsNameTheFlagOnce(t *testing.T) {
	t.Parallel() // mostly waiting on real time (TestMain)
	result := t.TempDir()
	mustRun(t, append([]string{"run", "--num-requests", "5", "--request-rate", "inf", "--out", result}, small...)...)
	other := copyRecords(t, result)
	costOK := []string{"--a-raw-throughput", "1", "--a-compliant-share", "1", "--b-cost-per-hour", "1", "--b-raw-throughput", "1", "--b-compliant-share", "1"}
	tests := []struct {
		flag string
		args []string
	}{
		{"endpoint", []string{"run", "--endpoint", "rerank"}},
		{"extra-body", []string{"run", "--extra-body", "[1]"}},
		{"extra-body", []string{"run", "--extra-body", "{x"}},
		{"header", []string{"run", "--header", "bad"}},
		{"ramp-up-strategy", []string{"run", "--ramp-up-strategy", "sideways"}},
		{"ramp-up-strategy", []string{"schedule", "--ramp-up-strategy", "up"}},
		{"start-at", []string{"run", "--start-at", "yesterday"}},
		{"request-rates", []string{"sweep", "--request-rates", "4,2"}},
		{"timeout", []string{"run", "--timeout", "-1s"}},
		{"sim-queue-servers", []string{"run", "--sim-model", "mdc", "--sim-queue-servers", "0"}},
		{"sim-profile", []string{"run", "--sim-profile", "gpu9000"}},
		{"session-turns", []string{"run", "--workload", "sessions", "--session-turns", "0"}},
		{"think-time", []string{"run", "--workload", "sessions", "--think-time", "-1s"}},
		{"think-time-dist", []string{"sweep", "--workload", "sessions", "--think-time-dist", "gaussian"}},
		{"shard", []string{"run", "--workload", "sessions", "--shard", "0/2", "--start-at", time.Now().Add(30 * time.Minute).UTC().Format(time.RFC3339)}},
		{"sim-max-num-seqs", []string{"run", "--sim-max-num-seqs", "0"}},
		{"sim-replicas", []string{"run", "--sim-replicas", "0"}},
		{"sim-balance", []string{"sweep", "--sim-balance", "least-loaded"}},
		{"max-concurrencies", []string{"sweep", "--max-concurrencies", "4,2"}},
		{"max-concurrencies", []string{"sweep", "--max-concurrencies", "many"}},
		{"sim-reasoning-share", []string{"run", "--sim-reasoning-share", "1"}},
		{"hours-per-period", append([]string{"cost", "--a-cost-per-hour", "1", "--hours-per-period", "-1"}, costOK...)},

		{"target-share", []string{"sweep", "--target-share", "0"}},
		{"target-share", []string{"run", "--target-share", "1.5"}},
		{"headroom", []string{"sweep", "--headroom", "1"}},
		{"target-share", []string{"sweep", "--target-share", "1.5"}},
		{"confidence", []string{"sweep", "--confidence", "1"}},
		{"headroom", []string{"run", "--headroom", "1"}},
		{"confidence", []string{"run", "--confidence", "1"}},
		{"max-tiers", []string{"sweep", "--max-tiers", "0"}},
		{"max-tiers", []string{"sweep", "--max-tiers", "1"}},
		{"precision", []string{"sweep", "--precision", "2"}},
		{"precision", []string{"sweep", "--precision", "0"}},
		{"tier-requests", []string{"sweep", "--tier-requests", "5"}},
		{"min-tier-duration", []string{"sweep", "--min-tier-duration", "100ms"}},
		{"repeat", []string{"sweep", "--repeat", "200"}},
		{"cooldown", []string{"sweep", "--cooldown", "-1s"}},
		{"drain-timeout", []string{"sweep", "--drain-timeout", "0s"}},
		{"burstiness", []string{"run", "--burstiness", "0"}},
		{"burstiness", []string{"sweep", "--burstiness", "0"}},
		{"request-rate", []string{"run", "--request-rate", "0"}},
		{"request-rate", []string{"schedule", "--request-rate", "0"}},
		{"num-requests", []string{"run", "--num-requests", "0"}},
		{"max-concurrency", []string{"run", "--max-concurrency", "0"}},
		{"retries", []string{"run", "--retries", "-1"}},
		{"rate-limit", []string{"run", "--rate-limit", "-1"}},
		{"workload", []string{"run", "--workload", "nosuch.jsonl"}},
		{"random-input-len", []string{"run", "--random-input-len", "0"}},
		{"cache", []string{"run", "--cache", "tepid"}},
		{"shard", []string{"run", "--shard", "3/2"}},
		{"goodput", []string{"run", "--goodput", "latency:5"}},
		{"metric-percentiles", []string{"run", "--metric-percentiles", "50,101"}},
		{"percentile-metrics", []string{"run", "--percentile-metrics", "ttft,latency"}},
		{"window-warmup", []string{"run", "--window-warmup", "-1s"}},
		{"max-schedule-lag", []string{"run", "--max-schedule-lag", "0s"}},
		{"format", []string{"run", "--format", "xml"}},
		{"target-share", []string{"report", result, "--target-share", "0"}},
		{"headroom", []string{"report", result, "--headroom", "1"}},
		{"target-share", []string{"compare", result, other, "--target-share", "2"}},
		{"paired-confidence", []string{"compare", result, other, "--paired-confidence", "2"}},
		{"a-cost-per-hour", []string{"compare", result, other, "--a-cost-per-hour", "-1", "--b-cost-per-hour", "1"}},
		{"a-cost-per-hour", append([]string{"cost", "--a-cost-per-hour", "-1"}, costOK...)},
		{"a-compliant-share", []string{"cost", "--a-cost-per-hour", "1", "--a-raw-throughput", "1", "--a-compliant-share", "1.5",
			"--b-cost-per-hour", "1", "--b-raw-throughput", "1", "--b-compliant-share", "1"}},
		{"a-raw-throughput", []string{"cost", "--a-cost-per-hour", "1", "--a-raw-throughput", "-5", "--a-compliant-share", "1",
			"--b-cost-per-hour", "1", "--b-raw-throughput", "1", "--b-compliant-share", "1"}},
	}
	for _, tc := range tests {
		name := strings.NewReplacer(result, "RESULT", other, "OTHER").Replace(strings.Join(tc.args, " "))
		t.Run(name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d: %s", code, exitUsage, stderr)
			}
			var lines []string
			for _, l := range strings.Split(stderr, "\n") {
				if strings.TrimSpace(l) != "" {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "loadcurve: ") {
				t.Fatalf("want one error line \"loadcurve: …\" for one bad input, got %q", lines)
			}
			if n := countFlag(lines[0], tc.flag); n != 1 {
				t.Errorf("the error names --%s %d times, want once: %s", tc.flag, n, lines[0])
			}
			noGoSyntax(t, "stderr", stderr)
		})
	}
}

// countFlag counts the mentions of --flag in s (not of a longer flag it begins).
func countFlag(s, flag string) int {
	return len(regexp.MustCompile(`--`+regexp.QuoteMeta(flag)+`(?:[^a-z0-9-]|$)`).FindAllStringIndex(s, -1))
}

// TestRegressionScheduleRefusesClientFlags: schedule prints arrivals; the client's flags do not
// apply to it. Before the redesign it accepted and ignored load flags.
func TestRegressionScheduleRefusesClientFlags(t *testing.T) {
	t.Parallel()
	mustRun(t, "schedule", "--num-requests", "3", "--request-rate", "5")
	for _, f := range [][]string{{"--max-concurrency", "3"}, {"--retries", "2"}, {"--rate-limit", "5"}} {
		code, stdout, stderr := runCLI(t, append([]string{"schedule", "--num-requests", "3", "--request-rate", "5"}, f...)...)
		if code != exitUsage || !strings.Contains(stderr, strings.TrimLeft(f[0], "-")) || stdout != "" {
			t.Errorf("schedule %s: exit %d (want %d), stdout %q, stderr %q", f[0], code, exitUsage, stdout, stderr)
		}
	}
}

// TestRegressionLowerBoundSweep runs one sweep in which every tier meets its objectives (no
// request waits for a slot), so its capacity is only a lower bound, without --quiet (stderr is
// not a terminal here: the tier log lines are printed).
//
//   - "at least": before the redesign the final line and compare's decision lines lost it.
//   - tier numbers: before the redesign tables numbered tiers from 0 and progress lines from 1.
func TestRegressionLowerBoundSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// On the virtual clock (in real time, beside three neighbours under -race, its one-second
	// tiers were set aside as sent short of their schedule): a queue of 64 slots of 50 ms serves
	// both tiers with no wait.
	stdout, stderr := mustRun(t, append([]string{"sweep", "--verbose", "--request-rates", "30,60", "--duration", "20s", "--no-confirm",
		"--goodput", "ttft:100", "--out", dir}, wideVirtualQueue...)...)
	cf, err := result.ReadCurve(filepath.Join(dir, result.CurveName))
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Analysis.Capacity
	if c == nil || !c.LowerBoundOnly() {
		t.Fatalf("capacity %s: the test needs a lower bound (every tier meeting its TTFT); notes %q", c, cf.Analysis.Notes)
	}

	t.Run("at least", func(t *testing.T) {
		if !strings.Contains(stdout, "Capacity: at least ") {
			t.Errorf("the sweep's answer does not say \"at least\":\n%s", stdout)
		}
		if out, _ := mustRun(t, "report", dir); !strings.Contains(out, "Capacity: at least ") {
			t.Errorf("report's answer does not say \"at least\":\n%s", out)
		}
		out, _ := mustRun(t, "compare", dir, dir)
		for _, s := range []string{"A", "B"} {
			if !strings.Contains(out, s+": capacity at least ") {
				t.Errorf("compare's decision line for %s does not say \"at least\":\n%s", s, out)
			}
		}
		out, _ = mustRun(t, "compare", dir, dir, "--format", "json")
		var res struct {
			Decisions []struct {
				CapacityText string `json:"capacity_text"`
			} `json:"decisions"`
		}
		decodeJSON(t, "compare --format json", out, &res)
		for i, d := range res.Decisions {
			if !strings.HasPrefix(d.CapacityText, "at least ") {
				t.Errorf("compare.json decision %d: capacity_text %q", i, d.CapacityText)
			}
		}
	})

	t.Run("tier numbers", func(t *testing.T) {
		logged := map[int]float64{} // tier → nominal rate, from "loadcurve: tier N at R req/s: …"
		logLine := regexp.MustCompile(`^loadcurve: tier (\d+) at ([0-9.]+) req/s`)
		for _, l := range strings.FieldsFunc(stderr, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if m := logLine.FindStringSubmatch(l); m != nil {
				logged[atoi(t, m[1])] = atof(t, m[2])
			}
		}
		tabled := map[int]float64{} // tier → rate, from the table's rows
		inTable := false
		for _, l := range strings.Split(stdout, "\n") {
			f := strings.Fields(l)
			switch {
			case len(f) > 2 && f[0] == "tier" && f[1] == "role":
				inTable = true
			case inTable && len(f) > 2 && f[0] != "----":
				if _, err := strconv.Atoi(f[0]); err != nil {
					inTable = false
					continue
				}
				tabled[atoi(t, f[0])] = atof(t, f[2])
			}
		}
		fromFile := map[int]float64{}
		for _, s := range cf.Tiers {
			fromFile[s.Tier] = s.NominalRate
		}
		want := map[int]float64{0: 30, 1: 60}
		for name, got := range map[string]map[int]float64{"stderr's tier lines": logged, "the table": tabled, "curve.json": fromFile} {
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s number the tiers %v (tier → rate), want %v\nstdout:\n%s\nstderr:\n%s", name, got, want, stdout, stderr)
			}
		}
	})
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		t.Fatalf("%q is not a rate", s)
	}
	return v
}

// TestRegressionSweepAnswersFirst (issue 22): without --verbose a sweep's stdout is its answer,
// first line the capacity, in a few lines, then a compact table of its tiers (issue 40); stderr
// says one short line per tier, no test statistics; --verbose adds the reasoning and the full
// table.
func TestRegressionSweepAnswersFirst(t *testing.T) {
	t.Parallel()
	args := append([]string{"sweep", "--request-rates", "30,60", "--duration", "20s", "--goodput", "ttft:100"}, wideVirtualQueue...)
	stdout, stderr := mustRun(t, append(args, "--out", t.TempDir())...)
	answer, tiers, _ := strings.Cut(strings.TrimSpace(stdout), "\n\n")
	lines := strings.Split(answer, "\n")
	if !strings.HasPrefix(lines[0], "Capacity: ") || len(lines) > 8 {
		t.Errorf("stdout does not start with the answer in a few lines (%d):\n%s", len(lines), stdout)
	}
	if !strings.HasPrefix(tiers, "Tiers (") || strings.Count(tiers, " meets the target") != 3 {
		t.Errorf("the answer is not followed by the table of its three tiers:\n%s", stdout)
	}
	if !strings.HasPrefix(lines[1], "Operating point: ") {
		t.Errorf("the second line is not the operating point:\n%s", stdout)
	}
	for _, l := range strings.Split(stderr, "\n") {
		for _, statistic := range []string{"Theil", "Mann", "Hamed", "variance ×", "steady state from"} {
			if strings.Contains(l, statistic) {
				t.Errorf("a progress line holds test statistics without --verbose: %q", l)
			}
		}
		if len(l) > 220 && !strings.Contains(l, "NOT JUDGED") {
			t.Errorf("a progress line of %d characters: %q", len(l), l)
		}
	}
	if n := strings.Count(stderr, "loadcurve: tier "); n != 2 {
		t.Errorf("%d tier lines, want one per tier (2):\n%s", n, stderr)
	}
	vout, verr := mustRun(t, append(args, "--verbose", "--out", t.TempDir())...)
	if !strings.Contains(vout, "compl. req. share") || !strings.Contains(vout, "How each judgement was made") || !strings.Contains(verr, "steady state from") {
		t.Errorf("--verbose lacks the table, the reasoning or the tiers' statistics:\n%s\n%s", vout, verr)
	}
}
