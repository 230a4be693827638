package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveResultNeverOverwritesTheRun: `--result-dir o3 --result-filename records.jsonl` with
// `--out o3` once wrote vLLM's file over the run's own records and exited 0, and any existing
// file was overwritten without notice. Such a name is refused before any load is sent (exit 2,
// both paths named), whatever --replace says; an existing file is replaced only with --replace.
func TestSaveResultNeverOverwritesTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "o3")
	old := filepath.Join(dir, "old.json")
	workload := filepath.Join(dir, "prompts.jsonl")
	const keep = `{"prompt": "the file that was there", "max_tokens": 4}` + "\n"
	for _, f := range []string{old, workload} {
		if err := os.WriteFile(f, []byte(keep), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		says []string
		kept string // a file that must still hold keep
	}{
		{name: "the run's own records", args: []string{"--out", out, "--result-dir", out, "--result-filename", "records.jsonl"},
			says: []string{filepath.Join(out, "records.jsonl"), "--out " + out, "own result"}},
		{name: "the run's own records, --replace", args: []string{"--out", out, "--result-dir", out, "--result-filename", "records.jsonl", "--replace"},
			says: []string{filepath.Join(out, "records.jsonl"), "own result"}},
		{name: "the run's summary by a relative dir", args: []string{"--out", out, "--result-dir", filepath.Join(out, "..", "o3"), "--result-filename", "summary.json"},
			says: []string{"summary.json", "own result"}},
		{name: "a tier's plot, by an absolute name", args: []string{"--out", out, "--result-filename", filepath.Join(out, "throughput.svg")},
			says: []string{"throughput.svg", "own result"}},
		{name: "an existing file", args: []string{"--result-dir", dir, "--result-filename", "old.json"},
			says: []string{old + " already exists", "--replace"}, kept: old},
		{name: "the workload file, even with --replace", args: []string{"--workload", workload, "--result-filename", workload, "--replace"},
			says: []string{"the run's input " + workload}, kept: workload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--num-requests", "2"}, small...)
			code, _, stderr := runCLI(t, append(args, tc.args...)...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr)
			}
			for _, s := range tc.says {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("--out %s was created: the refusal came after the run started", out)
			}
			if tc.kept != "" {
				if b, _ := os.ReadFile(tc.kept); string(b) != keep {
					t.Errorf("%s was overwritten", tc.kept)
				}
			}
		})
	}
	// With --replace, an existing file (not one of the run's own) is replaced.
	args := append([]string{"run", "--num-requests", "2"}, small...)
	if code, _, stderr := runCLI(t, append(args, "--result-dir", dir, "--result-filename", "old.json", "--replace")...); code != exitOK {
		t.Fatalf("--replace: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(old); !strings.Contains(string(b), `"request_throughput"`) {
		t.Errorf("--replace did not replace %s with vLLM's result:\n%.200s", old, b)
	}
}
