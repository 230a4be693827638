package result_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loadcurve/loadcurve/curve/result"
)

// TestIsFile: the files of a result (named, per tier, plots, series, interrupted tiers) belong
// to it; anything else a user keeps beside them does not.
func TestIsFile(t *testing.T) {
	for name, want := range map[string]bool{
		"records.jsonl": true, "curve.json": true, "summary.json": true, "curve.csv": true, "report.html": true,
		"merge.json": true, "scenario.yaml": true, "summary_tier03.json": true, "throughput.svg": true,
		"latency_ttft.png": true, "share.csv": true, "compare.svg": true, "timeseries_tier00.csv": true,
		"interrupted_tier02.jsonl": true,
		"notes.txt":                false, "throughput.txt": false, "records.jsonl.bak": false, "compare.json.orig": false,
		"my.json": false, "plan.json": false, "chat.json": false,
	} {
		if got := result.IsFile(name); got != want {
			t.Errorf("IsFile(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestPrepare: each kind is refused where a result of its kind is, with nothing changed; a
// replace of a measured result removes every file of the old result and nothing else; a derived
// one keeps the records it reads; a comparison or a plan is written over, nothing removed.
func TestPrepare(t *testing.T) {
	old := []string{"records.jsonl", "curve.json", "throughput.svg", "summary_tier00.json", "notes.txt", "compare.json", "plan.json"}
	for _, tc := range []struct {
		name    string
		kind    result.Kind
		files   []string // in the directory before
		replace bool
		keep    string
		refused bool
		left    []string // after, sorted
	}{
		{"empty measured", result.Measured, nil, false, "", false, nil},
		{"measured over a result", result.Measured, old, false, "", true, old},
		{"measured over notes only", result.Measured, []string{"notes.txt", "plan.json"}, false, "", false, []string{"notes.txt", "plan.json"}},
		{"measured replaced", result.Measured, old, true, "", false, []string{"notes.txt", "plan.json"}},
		{"derived over a result", result.Derived, old, false, "records.jsonl", true, old},
		{"derived replaced keeps its records", result.Derived, old, true, "records.jsonl", false, []string{"notes.txt", "plan.json", "records.jsonl"}},
		{"comparison over a result without one", result.Comparison, []string{"records.jsonl"}, false, "", false, []string{"records.jsonl"}},
		{"comparison over a comparison", result.Comparison, old, false, "", true, old},
		{"comparison replaced removes nothing", result.Comparison, old, true, "", false, old},
		{"plan over a plan", result.Plan, []string{"plan.json"}, false, "", true, []string{"plan.json"}},
		{"plan replaced", result.Plan, []string{"plan.json"}, true, "", false, []string{"plan.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if tc.files != nil {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			keep := ""
			if tc.keep != "" {
				keep = filepath.Join(dir, tc.keep)
			}
			lock, err := result.Prepare(result.Out{Dir: dir, Kind: tc.kind, Replace: tc.replace, Keep: keep})
			var taken *result.TakenError
			if got := errors.As(err, &taken); got != tc.refused {
				t.Fatalf("Prepare: %v, refused %v, want refused %v", err, got, tc.refused)
			}
			if !tc.refused && err != nil {
				t.Fatal(err)
			}
			if (lock != nil) == tc.refused {
				t.Fatalf("Prepare refused %v, lock %v: the lock is held exactly when it prepared the directory", tc.refused, lock)
			}
			if lock != nil {
				// Held: a second writer is refused, and nothing of the directory changes.
				_, err := result.Prepare(result.Out{Dir: dir, Kind: tc.kind, Replace: true})
				var busy *result.BusyError
				if !errors.As(err, &busy) || busy.Dir != dir {
					t.Errorf("a second Prepare while the first holds the directory: %v, want a BusyError", err)
				}
				if err := lock.Release(); err != nil {
					t.Fatal(err)
				}
			}
			if taken != nil && (taken.Dir != dir || taken.Kind != tc.kind) {
				t.Errorf("refusal %+v", taken)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err) // created when not refused, there before when refused
			}
			var left []string
			for _, e := range entries {
				left = append(left, e.Name())
			}
			want := slices.Clone(tc.left)
			slices.Sort(want)
			if !slices.Equal(left, want) {
				t.Errorf("left %v, want %v", left, want)
			}
		})
	}
}
