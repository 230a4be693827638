package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestSweepResumesAfterAnInterrupt interrupts a sweep of the embedded deployment in the middle of
// its second tier (as the first SIGINT does: the context is canceled), checks that its last
// message names the resume command, that resuming with other settings or from a directory
// without a sweep is refused (exit 2, naming why) and changes nothing, then resumes it: the
// first tier is kept as it was (its lines in records.jsonl untouched, not run again), the
// interrupted one runs again whole, its first attempt is kept aside, and the result is a
// decision that report reproduces from records.jsonl. Two resumes started at once: one is
// refused.
func TestSweepResumesAfterAnInterrupt(t *testing.T) {
	t.Parallel() // long, and mostly waiting on real time (see runCLI)
	if testing.Short() {
		t.Skip("end-to-end sweep")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, result.RecordsName)
	args := append([]string{"sweep", "--request-rates", "20,30", "--duration", "3s", "--drain-timeout", "10s", "--no-confirm",
		"--max-schedule-lag", "1s", "--seed", "4", "--out", dir}, small...)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // cancel once the second tier's records reach the file
		for ctx.Err() == nil {
			if f, err := records.ReadFile(path); err == nil && len(f.TierRecords(1)) >= 5 {
				cancel()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	var out, errb bytes.Buffer
	if code := runApp(ctx, append([]string{"loadcurve"}, args...), &out, &errb); code != exitSignaled {
		t.Fatalf("interrupted sweep: exit %d, want %d\n%s", code, exitSignaled, errb.String())
	}
	if want := "continue the sweep with: loadcurve sweep --resume " + dir; !strings.Contains(errb.String(), want) {
		t.Errorf("the interrupted sweep's last message does not name the resume command %q:\n%s", want, errb.String())
	}
	before, err := records.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Tiers) != 2 || before.Tiers[0].End == nil || before.Tiers[0].End.Reason == records.EndedInterrupted ||
		before.Tiers[1].End == nil || before.Tiers[1].End.Reason != records.EndedInterrupted {
		t.Fatalf("the interrupted sweep's records hold %d tiers: want tier 0 finished and tier 1 interrupted", len(before.Tiers))
	}
	interrupted := len(before.TierRecords(1))
	raw, _ := os.ReadFile(path)
	tier1 := bytes.Index(raw, []byte(`{"kind":"tier","tier":1,`))
	if tier1 < 0 {
		t.Fatal("no tier line of tier 1")
	}
	kept := raw[:tier1] // the header and tier 0, as they were written

	// The same sweep with one of tier 0's records deleted, and with the header's objectives
	// edited: a resume keeps finished tiers only as they were written.
	edited := func(edit func([]byte) []byte) string {
		d := t.TempDir()
		scen, err := os.ReadFile(filepath.Join(dir, result.ScenarioName))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, result.ScenarioName), scen, 0o644)
		os.WriteFile(filepath.Join(d, result.RecordsName), edit(bytes.Clone(raw)), 0o644)
		return d
	}
	deleted := edited(func(b []byte) []byte {
		i := bytes.Index(b, []byte(`{"id":`))
		j := i + bytes.IndexByte(b[i:], '\n') + 1
		return append(b[:i], b[j:]...)
	})
	objective := edited(func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"objectives":"`), []byte(`"objectives":"ttft:99999 `), 1)
	})
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"sweep", "--resume", deleted}, []string{"tier 0 was changed after it finished: its closing line counts"}},
		{[]string{"sweep", "--resume", objective}, []string{"tier 0 was changed after it finished: the header (line 1) is not the one it was written under"}},
		{[]string{"sweep", "--resume", dir, "--seed", "5", "--request-rates", "20,40"}, []string{"--seed \"5\"", "--request-rates \"20,40\"", "ran with \"20,30\""}},
		{[]string{"sweep", "--resume", dir, "--out", t.TempDir()}, []string{"leave --out out"}},
		{[]string{"sweep", "--resume", t.TempDir()}, []string{"no sweep to resume", "holds no records.jsonl"}},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", c.args, code, exitUsage, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: the refusal does not say %q:\n%s", c.args, w, stderr)
			}
		}
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, raw) {
		t.Fatal("a refused resume changed records.jsonl")
	}

	// Two resumes at once (issue 39: one panicked on r.Dropped[0] and cut the other's tier
	// line): one resumes, the other is refused in one line and changes nothing.
	var codes [2]int
	var stdouts, stderrs [2]string
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i], stdouts[i], stderrs[i] = runCLI(t, "sweep", "--resume", dir)
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	if codes[1] == exitOK {
		won = 1
	}
	if codes[won] != exitOK || codes[1-won] == exitOK {
		t.Fatalf("two resumes at once: exits %v, want one 0 and one refusal\n%s\n%s", codes, stderrs[0], stderrs[1])
	}
	refusedBusy(t, codes[1-won], stderrs[1-won], "resume", dir, 0)
	stdout, stderr := stdouts[won], stderrs[won]
	if n := strings.Count(stderr, "(kept)"); n != 1 {
		t.Errorf("%d tiers kept, want tier 0 alone:\n%s", n, stderr)
	}
	if !strings.Contains(stderr, "removed the interrupted tier 1's") || !strings.Contains(stdout, "Capacity") {
		t.Errorf("the resumed sweep does not say what it discarded, or gives no decision:\n%s\n%s", stdout, stderr)
	}
	after, err := records.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	now, _ := os.ReadFile(path)
	if !bytes.HasPrefix(now, kept) {
		t.Errorf("the kept tier's lines changed in records.jsonl")
	}
	if len(after.Tiers) != 2 || after.Tiers[1].Tier != 1 || after.Tiers[1].End == nil || after.Tiers[1].End.Reason == records.EndedInterrupted {
		t.Fatalf("records.jsonl after the resume holds %d tiers: want tier 0 and tier 1 run again to its end", len(after.Tiers))
	}
	if s := after.Tiers[1].StartWall; !s.After(before.Tiers[1].StartWall) {
		t.Errorf("tier 1 started at %v, the interrupted attempt at %v: it was not run again", s, before.Tiers[1].StartWall)
	}
	aside, err := records.ReadFile(filepath.Join(dir, sweep.DiscardedName(1)))
	if err != nil || len(aside.Records) != interrupted {
		t.Errorf("the interrupted attempt kept aside: %v, want its %d records", err, interrupted)
	}
	cf := readCurve(t, dir)
	if len(cf.Tiers) != 2 || !cf.Complete || len(cf.Analysis.Points) == 0 {
		t.Errorf("curve.json: %d tiers, complete %v, %d points: want the two tiers, complete, on the curve", len(cf.Tiers), cf.Complete, len(cf.Analysis.Points))
	}
	orig, _ := os.ReadFile(filepath.Join(dir, result.CurveName))
	if again, _ := os.ReadFile(filepath.Join(reportTo(t, dir), result.CurveName)); !bytes.Equal(orig, again) {
		t.Errorf("report of the resumed sweep's records did not reproduce its curve.json")
	}
}
