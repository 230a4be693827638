package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Names of the files of a result directory.
const (
	// RecordsName is the raw truth: the header line, the tier lines and one line per request.
	RecordsName = "records.jsonl"
	// CurveName is a sweep's derived result.
	CurveName = "curve.json"
	// SummaryName is a run's derived result (vLLM's --save-result keys and ours).
	SummaryName = "summary.json"
	// ScenarioName is the resolved scenario a run, sweep or comparison writes with its result:
	// every flag it ran with, as YAML that --config reads back.
	ScenarioName = "scenario.yaml"
	// MergeName is merge's report on the shards it joined.
	MergeName = "merge.json"
	// CompareName is a comparison of two results.
	CompareName = "compare.json"
	// PlanName is a capacity plan.
	PlanName = "plan.json"
	// PageName is the rendered report.
	PageName = "report.html"
	// CurveCSVName is the load curve, one row per tier.
	CurveCSVName = "curve.csv"
)

// Files are the names a result directory may hold besides the patterns of IsFile (the records,
// the derived files, the rendered ones): what a replace clears, and what marks a directory as
// holding a result.
var Files = []string{RecordsName, CurveName, SummaryName, CurveCSVName, PageName, MergeName, ScenarioName}

// patterns are the names of the per-tier and rendered files; those ending in '*' only with a
// plot's or a table's extension.
var patterns = []string{"summary_tier*.json", "throughput.*", "latency_*.*", "share.*", "compare.*", "timeseries*", "interrupted_tier*.jsonl"}

// IsFile reports whether a file of this name in a result directory belongs to the result (one of
// Files, a tier summary, a plot, a time series, an interrupted tier's records): what a run writes
// there and what a replace clears.
func IsFile(name string) bool {
	for _, f := range Files {
		if name == f {
			return true
		}
	}
	for _, pattern := range patterns {
		if m, _ := filepath.Match(pattern, name); m && (pattern[len(pattern)-1] != '*' || plotExt(name)) {
			return true
		}
	}
	return false
}

func plotExt(name string) bool {
	switch filepath.Ext(name) {
	case ".svg", ".png", ".json", ".csv":
		return true
	}
	return false
}

// Holds reports whether dir holds a loadcurve result (any file IsFile accepts). A directory that
// does not exist holds none.
func Holds(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if IsFile(e.Name()) {
			return true, nil
		}
	}
	return false, nil
}

// Clear removes every file of a result from dir (and nothing else), so that a new result written
// there is not mixed with pieces of an old one; keep names a file to leave in place (the records
// file a report derives from), "" for none.
func Clear(dir, keep string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if keep != "" && sameFile(filepath.Join(dir, e.Name()), keep) {
			continue
		}
		if !e.IsDir() && IsFile(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteJSON writes v as indented JSON to dir/name (WriteFile).
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return WriteFile(filepath.Join(dir, name), append(b, '\n'))
}

// WriteFile writes data to path whole or not at all: through a temporary file beside it
// (.NAME.tmp), renamed into place once complete, and removed when anything fails (a full disk,
// a file-size limit), so that a result directory never holds a cut file, nor a temporary one.
// An existing file at path is replaced only by a complete one.
func WriteFile(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	err := os.WriteFile(tmp, data, 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		var pe *fs.PathError
		var le *os.LinkError
		switch { // the temporary file's name tells the reader nothing
		case errors.As(err, &pe):
			err = pe.Err
		case errors.As(err, &le):
			err = le.Err
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
