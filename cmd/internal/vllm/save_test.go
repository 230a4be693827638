package vllm_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/curve/result"
)

// TestReadSave: no file unless asked (--save-detailed alone says so), and the flags that would
// write a file nobody can use are refused.
func TestReadSave(t *testing.T) {
	s := result.DefaultSettings()
	for _, tc := range []struct {
		line     []string
		none     bool
		wantErr  string
		wantNote string
	}{
		{line: nil, none: true},
		{line: []string{"--save-detailed"}, none: true, wantNote: "--save-detailed: no effect without --save-result"},
		{line: []string{"--save-result"}},
		{line: []string{"--result-dir", "d"}},
		{line: []string{"--append-result"}},
		{line: []string{"--result-filename", "dir/"}, wantErr: `--result-filename must name a file, got "dir/"`},
		{line: []string{"--result-filename", ""}, wantErr: `--result-filename must name a file, got ""`},
	} {
		var notes strings.Builder
		vr, err := vllm.ReadSave(parse(tc.line...), &notes, arrival.Spec{}, s)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: %v, want %q", tc.line, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%v: %v", tc.line, err)
		case (vr == nil) != tc.none:
			t.Errorf("%v: a file asked for: %v, want %v", tc.line, vr != nil, !tc.none)
		}
		if !strings.Contains(notes.String(), tc.wantNote) {
			t.Errorf("%v: notes %q, want %q", tc.line, notes.String(), tc.wantNote)
		}
	}
}

// TestCheckPath: a named file is refused before the run when it would overwrite one of the
// run's own result files in --out, an input of the run, a directory, or (without --replace or
// --append-result) any existing file.
func TestCheckPath(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	existing := filepath.Join(dir, "old.json")
	workload := filepath.Join(dir, "w.jsonl")
	for _, f := range []string{existing, workload} {
		if err := os.WriteFile(f, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		line    []string
		replace bool
		wantErr string
	}{
		{line: []string{"--save-result"}}, // vLLM's default name: checked when written
		{line: []string{"--result-filename", filepath.Join(dir, "new.json")}},
		{line: []string{"--result-dir", dir, "--result-filename", "new.json"}},
		{line: []string{"--result-dir", out, "--result-filename", "summary.json"}, wantErr: "is a file of the run's own result in --out"},
		{line: []string{"--result-dir", out, "--result-filename", "records.jsonl"}, replace: true, wantErr: "is a file of the run's own result in --out"},
		{line: []string{"--result-filename", workload, "--workload", "jsonl:" + workload}, replace: true, wantErr: "is the run's input"},
		{line: []string{"--result-filename", dir}, replace: true, wantErr: "is a directory: name a file"},
		{line: []string{"--result-filename", existing}, wantErr: "already exists: choose another name, or pass --replace"},
		{line: []string{"--result-filename", existing}, replace: true},
		{line: []string{"--result-filename", existing, "--append-result"}},
		// An absolute name stands alone, as in vLLM: --result-dir does not apply to it.
		{line: []string{"--result-dir", out, "--result-filename", existing}, wantErr: existing + " already exists"},
	} {
		a := parse(tc.line...)
		vr, err := vllm.ReadSave(a, io.Discard, arrival.Spec{}, result.DefaultSettings())
		if err != nil {
			t.Fatalf("%v: %v", tc.line, err)
		}
		err = vr.CheckPath(a, out, tc.replace)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%v (replace %v): %v, want %q", tc.line, tc.replace, err, tc.wantErr)
		}
	}
	var none *vllm.Save
	if err := none.CheckPath(parse(), out, false); err != nil {
		t.Errorf("no file asked for: %v", err)
	}
}
