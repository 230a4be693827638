package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchErrorsNameTheirFlags: package bench names its inputs in its own words; the command
// line's messages name each by its flag, once, and the other inputs it mentions too.
func TestBenchErrorsNameTheirFlags(t *testing.T) {
	code, _, stderr := runCLI(t, "bench", "--repeats", "0", "--chunks", "0", "--spin", "-1ms", "--streams", "-1")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr)
	}
	for _, want := range []string{"--repeats must be >= 1, got 0", "--chunks must be >= 1 and --chunk-gap >= 0",
		"--spin must be >= 0, got -1ms", "--streams must be >= 0 and --stream-open-rate > 0"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "benchmark repeats") || strings.Contains(stderr, "\x00") {
		t.Errorf("a domain name or a reference marker reached the user:\n%s", stderr)
	}
}

// TestThinkTimeOnASessionFileIsRefused: a file's sessions carry their own think times, which a run
// follows; --think-time with such a file would be ignored (issue 26 found it silently was), so it
// is refused before anything starts, saying what the run follows instead.
func TestThinkTimeOnASessionFileIsRefused(t *testing.T) {
	file := filepath.Join("..", "..", "workloads", "testdata", "sessions.jsonl")
	code, _, stderr := runCLI(t, "run", "--workload", file, "--think-time", "2s", "--num-requests", "2", "--quiet")
	if code != exitUsage || !strings.Contains(stderr, "--think-time: the sessions of") || !strings.Contains(stderr, "think_ms") {
		t.Errorf("exit %d, want %d with the reason:\n%s", code, exitUsage, stderr)
	}
	// Without the flag the file's sessions run as they are.
	if code, _, stderr := runCLI(t, "run", "--workload", file, "--num-requests", "1", "--quiet", "--out", t.TempDir()); code != exitOK {
		t.Errorf("the file without --think-time: exit %d: %s", code, stderr)
	}
}
