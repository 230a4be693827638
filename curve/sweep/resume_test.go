package sweep_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/curve/sweep/sweeptest"
	"github.com/loadcurve/loadcurve/internal/racedetector"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure/records"
)

// fileRunner runs tiers on a virtual queue and writes them to a records file as runner.Session
// does (tier line, records in the order the sink gets them, closing line). With cancel set, it
// cancels the sweep's context once tier cancelTier has handed cancelAfter records to its sink:
// an interrupt in the middle of that tier.
type fileRunner struct {
	virtual.QueueRunner
	w           *records.Writer
	cancel      context.CancelFunc
	cancelTier  int
	cancelAfter int
	// perTier counts the records of every tier run.
	perTier map[int]int
}

type sinkFunc func(*records.Record) error

func (f sinkFunc) Write(r *records.Record) error { return f(r) }

func (f *fileRunner) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	id := p.Tier
	id.WorkloadFingerprint, id.StartWall = "virtual-mdc", time.Unix(0, 0).UTC() // what QueueRunner states
	if err := f.w.WriteTier(id); err != nil {
		return id, err
	}
	if f.perTier == nil {
		f.perTier = map[int]int{}
	}
	tee := sinkFunc(func(r *records.Record) error {
		if err := f.w.Write(r); err != nil {
			return err
		}
		f.perTier[id.Tier]++
		if f.cancel != nil && id.Tier == f.cancelTier && f.perTier[id.Tier] == f.cancelAfter {
			f.cancel()
		}
		return sink.Write(r)
	})
	ran, err := f.QueueRunner.RunTier(ctx, p, tee, stop)
	if ran.End != nil {
		if werr := f.w.WriteTierEnd(*ran.End); werr != nil && err == nil {
			err = werr
		}
	}
	return ran, err
}

// createRecords starts a sweep's records file in dir.
func createRecords(t *testing.T, dir string) *records.Writer {
	t.Helper()
	w, err := records.Create(filepath.Join(dir, result.RecordsName), records.Header{Command: records.CommandSweep, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// appendRecords opens a records file to append the resumed sweep's tiers (the session's --resume).
func appendRecords(t *testing.T, dir string) (*records.Writer, func()) {
	t.Helper()
	w, err := records.Append(filepath.Join(dir, result.RecordsName))
	if err != nil {
		t.Fatal(err)
	}
	return w, func() {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// decision is what a sweep decided, as curve.json writes it (capacity with its interval, the
// operating point and its verification, every tier's summary).
func decision(t *testing.T, res *result.Result) string {
	t.Helper()
	b, err := json.Marshal(res.Curve())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// opRate is the operating point's rate, 0 without one.
func opRate(res *result.Result) float64 {
	if op := res.Analysis.OperatingPoint; op != nil {
		return op.Rate
	}
	return 0
}

// TestResumeReachesTheSameDecision interrupts sweeps of M/D/c queues in the middle of their
// tier k, for every k (under -race for the first, a middle and the last), resumes each from its records file, and holds the resumed sweep to the
// uninterrupted one of the same seed (on the virtual clock, where a tier's records are a
// function of its plan): the same tiers (the kept ones not run again, the interrupted one run
// again whole), the same decision (capacity and interval, operating point and its
// confirmation, every tier's summary), and a records file identical byte for byte to the
// uninterrupted sweep's: no tier twice, no record of the interrupted attempt left in it, which
// is kept beside it instead.
func TestResumeReachesTheSameDecision(t *testing.T) {
	cases := []struct {
		q    sweeptest.DecisionQueue
		seed int64
	}{{fourSlots, 1}, {queues[0], 2}}
	if testing.Short() || racedetector.Enabled {
		cases = cases[:1]
	}
	for _, tc := range cases {
		// Tiers a quarter of the usual size: the same planning, at a quarter of the cost (the
		// test runs about 2n sweeps' worth of tiers for a sweep of n).
		cfg := sweepFor(tc.q, tc.seed)
		cfg.TierRequests, cfg.MaxTierDuration = 500, 90*time.Second
		whole := t.TempDir()
		w := createRecords(t, whole)
		full := &fileRunner{QueueRunner: virtual.QueueRunner{Config: tc.q.Queue}, w: w}
		want, err := (&sweep.Executor{Config: cfg, Runner: full}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		wantFile, err := os.ReadFile(filepath.Join(whole, result.RecordsName))
		if err != nil {
			t.Fatal(err)
		}
		n := len(want.Tiers)
		if n < 4 || want.Analysis.Capacity == nil || want.Analysis.OperatingPoint == nil {
			t.Fatalf("%s: the uninterrupted sweep ran %d tiers, capacity %v: want a decision of several tiers", tc.q.Name, n, want.Analysis.Capacity)
		}
		t.Logf("%s seed %d: %d tiers, capacity %s", tc.q.Name, tc.seed, n, want.Analysis.Capacity)
		cuts := make([]int, n) // every tier
		for k := range cuts {
			cuts[k] = k
		}
		if testing.Short() || racedetector.Enabled {
			cuts = []int{0, n / 2, n - 1} // the first, one of the middle, the last: the code paths
		}
		for _, k := range cuts {
			dir := t.TempDir()
			w := createRecords(t, dir)
			ctx, cancel := context.WithCancel(context.Background())
			cut := &fileRunner{QueueRunner: virtual.QueueRunner{Config: tc.q.Queue}, w: w, cancel: cancel, cancelTier: k,
				cancelAfter: max(1, full.perTier[k]/2)}
			part, err := (&sweep.Executor{Config: cfg, Runner: cut}).Run(ctx)
			cancel()
			if !errors.Is(err, context.Canceled) || part.Complete || len(part.Tiers) != k+1 {
				t.Fatalf("%s, interrupted in tier %d: error %v, complete %v, %d tiers: want canceled in tier %d", tc.q.Name, k, err, part.Complete, len(part.Tiers), k)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}

			r, err := sweep.OpenResume(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Kept) != k || len(r.Dropped) != 1 || r.Dropped[0].Tier != k || r.DroppedRecords != cut.perTier[k] {
				t.Fatalf("interrupted in tier %d: keeps %d tiers, drops %v (%d records): want %d kept and tier %d's %d records dropped",
					k, len(r.Kept), r.Dropped, r.DroppedRecords, k, k, cut.perTier[k])
			}
			w, done := appendRecords(t, dir)
			again := &fileRunner{QueueRunner: virtual.QueueRunner{Config: tc.q.Queue}, w: w}
			var log []string
			got, err := (&sweep.Executor{Config: cfg, Runner: again, Resume: r,
				Log: func(f string, a ...any) { log = append(log, f) }}).Run(context.Background())
			done()
			if err != nil {
				t.Fatalf("resumed from tier %d: %v", k, err)
			}
			if again.Tiers != n-k {
				t.Errorf("resumed from tier %d: ran %d tiers, want the %d from the interrupted one on", k, again.Tiers, n-k)
			}
			if g, w := decision(t, got), decision(t, want); g != w {
				at := 0
				for at < min(len(g), len(w)) && g[at] == w[at] {
					at++
				}
				t.Errorf("%s, resumed from tier %d: the decision differs from the uninterrupted sweep's (capacity %s, operating point %v; want %s, %v): from byte %d of curve.json,\n got …%.200s\nwant …%.200s",
					tc.q.Name, k, got.Analysis.Capacity, opRate(got), want.Analysis.Capacity, opRate(want), at, g[at:], w[at:])
			}
			gotFile, err := os.ReadFile(filepath.Join(dir, result.RecordsName))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gotFile, wantFile) {
				t.Errorf("%s, resumed from tier %d: records.jsonl (%d bytes) is not the uninterrupted sweep's (%d bytes)", tc.q.Name, k, len(gotFile), len(wantFile))
			}
			aside, err := records.ReadFile(filepath.Join(dir, sweep.DiscardedName(k)))
			if err != nil || len(aside.Tiers) != 1 || aside.Tiers[0].Tier != k || len(aside.Records) != cut.perTier[k] {
				t.Errorf("resumed from tier %d: the interrupted attempt is not kept aside whole: %v", k, err)
			}
			if kept := strings.Count(strings.Join(log, "\n"), "(kept)"); kept != k {
				t.Errorf("resumed from tier %d: %d tiers logged as kept, want %d", k, kept, k)
			}
		}
	}
}

// TestResumeRefusesAnotherSweep: a resumed sweep whose settings plan another tier where a kept
// one ran (here another seed) stops at that tier with a MismatchError naming what differs, and
// leaves the records file as it was.
func TestResumeRefusesAnotherSweep(t *testing.T) {
	cfg := sweepFor(fourSlots, 1)
	dir := t.TempDir()
	w := createRecords(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	cut := &fileRunner{QueueRunner: virtual.QueueRunner{Config: fourSlots.Queue}, w: w, cancel: cancel, cancelTier: 2, cancelAfter: 10}
	if _, err := (&sweep.Executor{Config: cfg, Runner: cut}).Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want canceled", err)
	}
	cancel()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, result.RecordsName))
	r, err := sweep.OpenResume(dir)
	if err != nil {
		t.Fatal(err)
	}
	other := cfg
	other.Seed = 2
	again := &fileRunner{QueueRunner: virtual.QueueRunner{Config: fourSlots.Queue}, w: records.NewWriter(&bytes.Buffer{}, time.Hour)}
	_, err = (&sweep.Executor{Config: other, Runner: again, Resume: r}).Run(context.Background())
	var mm *sweep.MismatchError
	if !errors.As(err, &mm) || mm.Tier != 0 || !strings.Contains(err.Error(), "seed") {
		t.Fatalf("error %v, want a mismatch at tier 0 naming the seed", err)
	}
	if again.Tiers != 0 {
		t.Errorf("%d tiers ran after the mismatch", again.Tiers)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, result.RecordsName)); !bytes.Equal(before, after) {
		t.Errorf("the refused resume changed records.jsonl")
	}
}

// TestOpenResumeSaysWhatCannotBeResumed: a directory without records, the records of a run, a
// sharded sweep's, and a file cut by a kill in the middle of a tier (that tier, with no closing
// line, is discarded; the cut line is never kept).
func TestOpenResumeSaysWhatCannotBeResumed(t *testing.T) {
	write := func(lines ...string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, result.RecordsName), []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	header := func(cmd, shard string) string {
		h := `{"kind":"header","tool":"loadcurve","metrics_version":"` + records.MetricsVersion + `","command":"` + cmd + `"`
		if shard != "" {
			h += `,"shard":"` + shard + `"`
		}
		return h + "}\n"
	}
	tier := func(n int) string {
		return `{"kind":"tier","tier":` + string(rune('0'+n)) + `,"role":"probe","arrival":"poisson","request_rate":"inf","burstiness":1,"seed":5,"planned":2}` + "\n"
	}
	rec := func(n, id int) string {
		return `{"id":` + string(rune('0'+id)) + `,"tier":` + string(rune('0'+n)) + `,"outcome":"ok","planned_s":0.1}` + "\n"
	}
	end := func(n int) string {
		return `{"kind":"tier_end","tier":` + string(rune('0'+n)) + `,"planned":2,"arrivals_end_s":0.2,"reason":"schedule"}` + "\n"
	}
	for _, c := range []struct {
		name, dir, want string
	}{
		{"empty directory", t.TempDir(), "holds no records.jsonl"},
		{"a run", write(header("run", "")), "records of a run, not of a sweep"},
		{"a shard", write(header("sweep", "1/2")), "cannot be resumed"},
	} {
		_, err := sweep.OpenResume(c.dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	kept := header("sweep", "") + tier(0) + rec(0, 0) + rec(0, 1) + end(0)
	dir := write(kept, tier(1), rec(1, 0), `{"id":1,"tier":1,"outc`)
	r, err := sweep.OpenResume(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kept) != 1 || len(r.Dropped) != 1 || r.DroppedRecords != 1 || !strings.Contains(r.Describe(), "killed") {
		t.Fatalf("kept %d, dropped %d (%d records): %s", len(r.Kept), len(r.Dropped), r.DroppedRecords, r.Describe())
	}
	if err := r.Discard(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, result.RecordsName)); string(b) != kept {
		t.Errorf("records.jsonl after the discard:\n%s\nwant:\n%s", b, kept)
	}
	aside, err := records.ReadFile(filepath.Join(dir, sweep.DiscardedName(1)))
	if err != nil || len(aside.Records) != 1 || len(aside.Warnings) == 0 {
		t.Errorf("the discarded part: %v, %+v", err, aside)
	}

	// A file cut short by a full disk (records.Writer's last line says so), in a tier or between
	// two: the cut tier is discarded as a killed one is, said to be the disk's, and the cut line
	// is never kept.
	for _, c := range []struct {
		name, rest string
		dropped    int
		says       string
	}{
		{"in a tier", tier(1) + rec(1, 0) + `{"kind":"cut","tier":1,"error":"write records: no space left on device"}` + "\n", 1, "cut short by a failed write"},
		{"between tiers", `{"kind":"cut","error":"write records: no space left on device"}` + "\n", 0, "no tier was interrupted"},
	} {
		dir := write(kept, c.rest)
		r, err := sweep.OpenResume(dir)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(r.Kept) != 1 || len(r.Dropped) != c.dropped || r.Cut == nil || !strings.Contains(r.Describe(), c.says) {
			t.Errorf("%s: kept %d, dropped %d, cut %+v: %s", c.name, len(r.Kept), len(r.Dropped), r.Cut, r.Describe())
		}
		if err := r.Discard(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, result.RecordsName)); string(b) != kept {
			t.Errorf("%s: records.jsonl after the discard:\n%s\nwant:\n%s", c.name, b, kept)
		}
	}
}

// TestResumeObjectives: the objectives a resumed sweep measures against are the ones its records
// header states whole; none when it states none.
func TestResumeObjectives(t *testing.T) {
	for _, c := range []struct{ settings, want string }{
		{`,"settings":{"objectives":"ttft:500 tpot:50"}`, "ttft:500 tpot:50"},
		{`,"settings":{"objectives":""}`, ""},
		{"", ""},
	} {
		dir := t.TempDir()
		h := `{"kind":"header","tool":"loadcurve","metrics_version":"` + records.MetricsVersion + `","command":"sweep"` + c.settings + "}\n"
		if err := os.WriteFile(filepath.Join(dir, result.RecordsName), []byte(h), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := sweep.OpenResume(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Objectives(); got != c.want {
			t.Errorf("header%s: Objectives() = %q, want %q", c.settings, got, c.want)
		}
	}
}
