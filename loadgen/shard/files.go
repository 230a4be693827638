package shard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Locate turns merge arguments into records files: a directory stands for DIR/records.jsonl, a
// file for itself, and an argument that does not exist but holds a glob pattern (*, ? or [) is
// expanded, sorted, so that "/results/shard-*" works where no shell expands it (for example in
// a container without one). A pattern that matches nothing is an error.
func Locate(args []string) ([]string, error) {
	var paths []string
	for _, a := range args {
		if _, err := os.Stat(a); errors.Is(err, fs.ErrNotExist) && strings.ContainsAny(a, "*?[") {
			matches, gerr := filepath.Glob(a)
			if gerr != nil {
				return nil, fmt.Errorf("%s: bad pattern: %w", a, gerr)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("%s: no file or directory matches", a)
			}
			for _, mt := range matches {
				p, err := recordsPath(mt)
				if err != nil {
					return nil, err
				}
				paths = append(paths, p)
			}
			continue
		}
		p, err := recordsPath(a)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func recordsPath(arg string) (string, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return "", fmt.Errorf("shard records: %w", err)
	}
	if fi.IsDir() {
		return filepath.Join(arg, result.RecordsName), nil
	}
	return arg, nil
}

// ReadInputs reads the records files of Locate(args), each named by its path.
func ReadInputs(args []string) ([]Input, error) {
	paths, err := Locate(args)
	if err != nil {
		return nil, err
	}
	in := make([]Input, 0, len(paths))
	for _, p := range paths {
		f, err := records.ReadFile(p)
		if err != nil {
			return nil, err
		}
		in = append(in, Input{Name: p, File: f})
	}
	return in, nil
}

// CheckOut refuses an output directory whose records.jsonl is one of the inputs.
func CheckOut(dir string, in []Input) error {
	target := filepath.Join(dir, result.RecordsName)
	for _, x := range in {
		if samePath(x.Name, target) {
			return field.Errorf(FieldOut, "%s would overwrite the shard file %s: choose another directory", dir, x.Name)
		}
	}
	return nil
}

// WriteResult writes a merged run into dir: records.jsonl and merge.json (the report). It
// refuses what CheckOut refuses.
func WriteResult(dir string, in []Input, merged *records.File, rep MergeReport) error {
	if err := CheckOut(dir, in); err != nil {
		return err
	}
	target := filepath.Join(dir, result.RecordsName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return field.Errorf(FieldOut, "%s: %w", dir, err)
	}
	if err := WriteFile(target, merged); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode merge.json: %w", err)
	}
	return result.WriteFile(filepath.Join(dir, result.MergeName), append(b, '\n'))
}

// samePath reports whether a and b name the same file (b need not exist).
func samePath(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == ab
}

// WriteFile writes f as a records.jsonl at path (records.WriteFile: through a temporary file
// renamed into place, so an existing file is replaced only by a complete one).
func WriteFile(path string, f *records.File) error {
	if err := records.WriteFile(path, f); err != nil {
		return fmt.Errorf("write merged records: %w", err)
	}
	return nil
}

// WriteText prints the report: the shards and their files, one table per tier (records, failures,
// 429s, median TTFT, schedule-lag p99 and anchor offset per shard) and the warnings.
func (r MergeReport) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("merged %d shards:\n", r.Count)
	for _, s := range r.Shards {
		ew.printf("  shard %-6s %s\n", s.Shard, s.Name)
	}
	for _, t := range r.Tiers {
		spread := "unknown"
		if t.AnchorSpreadMs.Known() {
			spread = fmt.Sprintf("%.3g ms", float64(t.AnchorSpreadMs))
		}
		ew.printf("\ntier %d  %s  %d records of %d planned  anchor spread %s\n", t.Tier, t.Arrival, t.Records, t.Planned, spread)
		tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "shard\tplanned\trecords\tok\tfailed\t429\tTTFT p50 ms\tlag p99 ms\tanchor +ms\t\n")
		for _, s := range t.Shards {
			flags := ""
			if s.ClientBound {
				flags += " CLIENT-BOUND"
			}
			if s.FailureOutlier {
				flags += " FAILURE-OUTLIER"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", s.Shard, s.Planned, s.Records, s.OK, s.Failed,
				s.HTTP429, fmtMs(s.MedianTTFTMs), fmtMs(s.ScheduleLagP99Ms), fmtMs(s.AnchorOffsetMs), flags)
		}
		tw.Flush() // its errors are ew's, kept in ew.err
	}
	if len(r.Warnings) > 0 {
		ew.printf("\nwarnings:\n")
		for _, s := range r.Warnings {
			ew.printf("  - %s\n", s)
		}
	}
	return ew.err
}

func fmtMs(v Millis) string {
	if !v.Known() {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(v))
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { _, _ = fmt.Fprintf(e, format, args...) }
