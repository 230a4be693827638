package sweep_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestFiguresAt: a named tier gives that tier's steady-state figures; none gives the priced
// figures, which a sweep without an operating point does not have.
func TestFiguresAt(t *testing.T) {
	r := &result.Result{Header: records.Header{Command: records.CommandSweep}}
	r.Analysis.Points = []curve.PointVerdict{{Tier: 2, Rate: 5, RawOutputThroughput: 100, CompliantOutputThroughput: 80}}
	for _, tc := range []struct {
		tier   int
		source string // of the figures; "" refused
		err    string
	}{
		{2, "tier 2, steady state", ""},
		{3, "", "no curve tier 3"},
		{-1, "", "no operating point"},
	} {
		f, err := r.FiguresAt(tc.tier)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("tier %d: error %v, want %q", tc.tier, err, tc.err)
		case tc.err == "" && (err != nil || f.Source != tc.source || f.RawOutputThroughput != 100):
			t.Errorf("tier %d: %+v, %v; want %q", tc.tier, f, err, tc.source)
		}
	}
}

// writeRun writes a records file of one tier of command cmd, with n successful requests a
// second apart, and returns its bytes.
func writeRun(t *testing.T, path string, cmd records.Command, n int) []byte {
	t.Helper()
	w, err := records.Create(path, records.Header{Kind: records.KindHeader, Tool: "loadcurve", MetricsVersion: records.MetricsVersion, Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTier(records.Tier{Kind: records.KindTier, Tier: 0, Arrival: "test", RequestRate: 1, Burstiness: 1, Planned: n}); err != nil {
		t.Fatal(err)
	}
	for id := range n {
		r := okRecord(id, float64(id), float64(id)+0.05, 0.02, 0.02, 0.02)
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadReadsTheFileOnce: a result is loaded from one opening of its records file, in one
// pass: a run's peak figures (summary.json's) come with it, exact or in bounded memory, and a
// sweep has none. The file may be a pipe, which can be read only once: exactly, everything
// loads; in bounded memory the run's peaks, which need a second pass, are left out with a
// warning (report once opened the file two to four times).
func TestLoadReadsTheFileOnce(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run.jsonl")
	body := writeRun(t, run, records.CommandRun, 40)
	want := result.PeaksOf(mustRead(t, run))
	for _, bounded := range []bool{false, true} {
		l, err := result.Load(run, nil, bounded)
		if err != nil {
			t.Fatalf("bounded %v: %v", bounded, err)
		}
		if len(l.Result.Peaks) != 1 || l.Result.Peaks[0] != want[0] || want[0].MaxConcurrentRequests != 1 {
			t.Errorf("bounded %v: peaks %+v, want %+v", bounded, l.Result.Peaks, want)
		}
	}
	sw := filepath.Join(dir, "sweep.jsonl")
	writeRun(t, sw, records.CommandSweep, 40)
	if l, err := result.Load(sw, nil, false); err != nil || l.Result.Peaks != nil {
		t.Errorf("sweep: peaks %v, error %v; want none", l.Result.Peaks, err)
	}
	for _, bounded := range []bool{false, true} {
		pipe := filepath.Join(dir, fmt.Sprintf("pipe-%v", bounded))
		if err := syscall.Mkfifo(pipe, 0o600); err != nil {
			t.Skipf("no named pipe here: %v", err)
		}
		done := make(chan error, 1)
		go func() {
			f, err := os.OpenFile(pipe, os.O_WRONLY, 0)
			if err == nil {
				_, err = f.Write(body)
				err = errors.Join(err, f.Close())
			}
			done <- err
		}()
		l, err := result.Load(pipe, nil, bounded)
		if werr := <-done; werr != nil {
			t.Fatalf("writing the pipe: %v", werr)
		}
		switch {
		case err != nil:
			t.Errorf("bounded %v: a pipe: %v", bounded, err)
		case len(l.Result.Tiers) != 1 || l.Result.Tiers[0].Summary.Completed != 40:
			t.Errorf("bounded %v: a pipe: %+v", bounded, l.Result.Tiers)
		case !bounded && (len(l.Result.Peaks) != 1 || l.Result.Peaks[0] != want[0]):
			t.Errorf("a pipe, exactly: peaks %+v, want %+v", l.Result.Peaks, want)
		case bounded && (l.Result.Peaks != nil || !strings.Contains(strings.Join(l.Warnings, "\n"), "cannot be read again")):
			t.Errorf("a pipe in bounded memory: peaks %+v, warnings %q; want none, and a warning", l.Result.Peaks, l.Warnings)
		}
	}
}

func mustRead(t *testing.T, path string) *records.File {
	t.Helper()
	f, err := records.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
