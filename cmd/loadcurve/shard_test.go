package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
)

func TestShardedRunMergesIntoTheSingleRun(t *testing.T) {
	t.Parallel() // long, and mostly waiting on real time (see runCLI)
	srv, err := sim.Start(mustProfile(t, sim.ProfileMedium), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	common := []string{"--base-url", srv.URL(), "--num-requests", "45", "--request-rate", "15", "--seed", "7",
		"--random-input-len", "32", "--random-output-len", "8", "--quiet"}
	start := time.Now().Add(2 * time.Second)
	at := start.UTC().Format(time.RFC3339Nano)
	// Three shard processes, as on three machines (one urfave/cli app per process).
	dirs := make([]string, 3)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	type child struct {
		out    fmt.Stringer
		err    error
		exited time.Time
	}
	kids := make([]child, len(dirs))
	var wg sync.WaitGroup
	for i := range dirs {
		cmd, out := startCLI(t, append([]string{"run", "--shard", fmt.Sprintf("%d/3", i), "--start-at", at, "--out", dirs[i]}, common...)...)
		kids[i].out = out
		wg.Go(func() { kids[i].err, kids[i].exited = cmd.Wait(), time.Now() })
	}
	wg.Wait()
	for i, k := range kids {
		// A shard refuses a start more than MaxStartLate past: on a starved machine, three
		// processes of a -race test binary can take that long to start. A refusal before then
		// is a defect.
		if k.err != nil && strings.Contains(k.out.String(), shard.ErrStartPassed.Error()) && k.exited.After(start.Add(shard.MaxStartLate)) {
			t.Skipf("shard %d started more than %v after the shared start (this machine was too slow to start three processes in 2 s): %s", i, shard.MaxStartLate, k.out)
		}
	}
	for i, k := range kids {
		if k.err != nil {
			t.Fatalf("shard %d: %v\n%s", i, k.err, k.out)
		}
	}
	single := t.TempDir()
	if code, _, stderr := runCLI(t, append([]string{"run", "--out", single}, common...)...); code != exitOK {
		t.Fatalf("single: exit %d: %s", code, stderr)
	}
	merged := t.TempDir()
	if code, stdout, stderr := runCLI(t, "merge", dirs[0], dirs[1], dirs[2], "--out", merged); code != exitOK {
		t.Fatalf("merge: exit %d: %s%s", code, stdout, stderr)
	}
	m, err := records.ReadFile(filepath.Join(merged, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := records.ReadFile(filepath.Join(single, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	planned := map[int]time.Duration{}
	for _, r := range s.Records {
		planned[r.ID] = r.Planned
	}
	if len(m.Records) != len(s.Records) {
		t.Fatalf("merged %d records, single run %d", len(m.Records), len(s.Records))
	}
	okM := 0
	for _, r := range m.Records {
		if p, found := planned[r.ID]; !found || p != r.Planned {
			t.Errorf("request %d: planned %v in the merge, %v (found %v) in the single run", r.ID, r.Planned, p, found)
		}
		if r.Shard != r.ID%3 {
			t.Errorf("request %d came from shard %d", r.ID, r.Shard)
		}
		if r.Outcome == records.OK {
			okM++
		}
	}
	if okM != len(m.Records) {
		t.Errorf("%d of %d merged requests ok", okM, len(m.Records))
	}
	if m.Header.WorkloadFingerprint != s.Header.WorkloadFingerprint {
		t.Errorf("fingerprints differ: %s vs %s", m.Header.WorkloadFingerprint, s.Header.WorkloadFingerprint)
	}
	if code, _, stderr := runCLI(t, "report", merged, "-q"); code != exitOK {
		t.Errorf("report of the merge: exit %d: %s", code, stderr)
	}
	// A missing shard is refused, and named.
	code, _, stderr := runCLI(t, "merge", dirs[0], dirs[2], "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "1/3") {
		t.Errorf("merge without shard 1: exit %d: %s", code, stderr)
	}
}
