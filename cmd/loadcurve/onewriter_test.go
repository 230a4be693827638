package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/records"
)

// oneWriterRun is a run of about a second against the embedded deployment: long enough that a
// second writer started with it finds the first still writing.
var oneWriterRun = append([]string{"run", "--num-requests", "40", "--request-rate", "40"}, small...)

// wholeRun checks that dir holds one run's result, whole: a records file whose one tier holds
// its 40 records and is sealed whole, a summary, and no lock left behind.
func wholeRun(t *testing.T, dir string) {
	t.Helper()
	fh, err := os.Open(filepath.Join(dir, result.RecordsName))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	seals := records.NewSeals()
	tiers, recs, headers := 0, 0, 0
	if _, err := records.Scan(fh, records.Visitor{Seals: seals, Header: func(records.Header) error { headers++; return nil },
		Tier: func(records.Tier) error { tiers++; return nil }, Record: func(*records.Record) error { recs++; return nil }}); err != nil {
		t.Fatalf("records.jsonl does not read: %v", err)
	}
	if st, e := seals.State(0); headers != 1 || tiers != 1 || recs != 40 || st != records.Whole {
		t.Errorf("records.jsonl: %d headers, %d tiers, %d records, seal %v (%v): want one run's 40 records, sealed whole", headers, tiers, recs, st, e)
	}
	if _, err := os.Stat(filepath.Join(dir, result.SummaryName)); err != nil {
		t.Errorf("no summary: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, result.LockName)); !os.IsNotExist(err) {
		t.Errorf("the lock file is left behind: %v", err)
	}
}

// refusedBusy checks a second writer's refusal: exit 2, one line naming the directory and that
// another loadcurve process writes it (by its pid when pid > 0).
func refusedBusy(t *testing.T, code int, stderr, flag, dir string, pid int) {
	t.Helper()
	want := fmt.Sprintf("loadcurve: --%s %s: another loadcurve ", flag, dir)
	if code != exitUsage || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "is writing a result there") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("the second writer: exit %d, stderr %q: want exit %d and one line starting %q", code, stderr, exitUsage, want)
	}
	if pid > 0 && !strings.Contains(stderr, fmt.Sprintf("(pid %d)", pid)) {
		t.Errorf("the refusal %q does not name the writer's pid %d", stderr, pid)
	}
}

// TestTwoRunsAtOnceOnOneOut starts two runs on one new --out at once, three times in-process
// and once as two processes (issue 39: both exited 0, 3 of 3 pairs, and records.jsonl held
// both runs' lines): every time one writes its result whole and the other is refused at once,
// in one line, before it sends anything.
func TestTwoRunsAtOnceOnOneOut(t *testing.T) {
	t.Parallel() // mostly waiting on real time (see runCLI)
	for pair := range 3 {
		dir := filepath.Join(t.TempDir(), "out")
		args := slices.Concat(oneWriterRun, []string{"--out", dir})
		var codes [2]int
		var stderrs [2]string
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				codes[i], _, stderrs[i] = runCLI(t, args...)
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		if codes[1] == exitOK {
			won = 1
		}
		if codes[won] != exitOK || codes[1-won] == exitOK {
			t.Fatalf("in-process pair %d: exits %v: want one 0 and one refusal\n%s\n%s", pair, codes, stderrs[0], stderrs[1])
		}
		refusedBusy(t, codes[1-won], stderrs[1-won], "out", dir, 0)
		wholeRun(t, dir)
	}
	// Two processes: the refusal names the writer's pid.
	dir := filepath.Join(t.TempDir(), "out")
	args := slices.Concat(oneWriterRun, []string{"--out", dir})
	a, outA := startCLI(t, args...)
	b, outB := startCLI(t, args...)
	errA, errB := a.Wait(), b.Wait()
	codes := [2]int{exitCode(errA), exitCode(errB)}
	outs := [2]string{outA.String(), outB.String()}
	pids := [2]int{a.Process.Pid, b.Process.Pid}
	won := 0
	if codes[1] == exitOK {
		won = 1
	}
	if codes[won] != exitOK || codes[1-won] == exitOK {
		t.Fatalf("two processes: exits %v: want one 0 and one refusal\n%s\n%s", codes, outs[0], outs[1])
	}
	refusedBusy(t, codes[1-won], outs[1-won], "out", dir, pids[won])
	wholeRun(t, dir)
}
