package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareBurstinessSpelledTwoWays: two sweeps that differ only in how --burstiness was
// written (1 and 1.0: the same value) have the same schedule, so compare accepts them. The
// header's schedule was the flag's text, and compare refused them (exit 2, "schedule differs").
func TestCompareBurstinessSpelledTwoWays(t *testing.T) {
	t.Parallel()
	var dirs []string
	for _, b := range []string{"1", "1.0"} {
		dir := filepath.Join(t.TempDir(), "b"+b)
		if code, _, stderr := runCLI(t, "sweep", "--sim-model", "mdc", "--sim-clock", "virtual", "--sim-queue-servers", "4", "--sim-queue-service", "5ms",
			"--sim-queue-first-token", "1ms", "--goodput", "ttft:1000", "--request-rates", "40", "--num-requests", "12", "--no-confirm",
			"--burstiness", b, "--max-schedule-lag", "1s", "--quiet", "--out", dir); code != exitOK {
			t.Fatalf("sweep --burstiness %s: exit %d: %s", b, code, stderr)
		}
		dirs = append(dirs, dir)
	}
	// The sweep's time series were tallied as its records passed, not read back from the file:
	// they are what report makes of the file.
	again := reportTo(t, dirs[0])
	series, _ := filepath.Glob(filepath.Join(dirs[0], "timeseries_tier*.csv"))
	if len(series) == 0 {
		t.Fatalf("the sweep wrote no time series")
	}
	for _, f := range series {
		a, errA := os.ReadFile(f)
		b, errB := os.ReadFile(filepath.Join(again, filepath.Base(f)))
		if errA != nil || errB != nil || string(a) != string(b) {
			t.Errorf("%s is not report's (%v, %v)", filepath.Base(f), errA, errB)
		}
	}

	code, _, stderr := runCLI(t, "compare", dirs[0], dirs[1])
	if code != exitOK || strings.Contains(stderr, "schedule differs") {
		t.Fatalf("compare of --burstiness 1 and 1.0: exit %d: %s", code, stderr)
	}

	// Every command that writes into --out refuses a directory holding its kind of result
	// unless --replace, through one rule (result.Prepare), saying what --replace would do.
	out := filepath.Join(t.TempDir(), "cmp")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compare", dirs[0], dirs[1], "--out", out}, exitOK, ""},
		{[]string{"compare", dirs[0], dirs[1], "--out", out}, exitUsage, "already holds a comparison: choose another directory, or pass --replace to write over it"},
		{[]string{"compare", dirs[0], dirs[1], "--out", out, "--replace"}, exitOK, ""},
		{[]string{"report", dirs[0], "--out", dirs[1]}, exitUsage, "already holds a result (records.jsonl, curve.json, …): choose another directory, or pass --replace to replace its derived files"},
		{[]string{"report", dirs[0], "--out", dirs[0], "--replace"}, exitOK, ""},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", tc.args, code, tc.code, tc.want, stderr)
		}
	}
}
