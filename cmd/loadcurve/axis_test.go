package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClosedLoopOfSessionsRefusedUpFront: a sweep of concurrency levels over a workload of
// sessions is refused as a usage error naming --max-concurrencies, before the embedded
// deployment starts or a preflight is sent, and nothing is written (it was caught at tier 0,
// after both, with exit 1).
func TestClosedLoopOfSessionsRefusedUpFront(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, "sweep", "--workload", "sessions", "--max-concurrencies", "1,2", "--num-requests", "20",
		"--no-confirm", "--out", dir)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitUsage, stdout, stderr)
	}
	if !strings.Contains(stderr, "--max-concurrencies") || !strings.Contains(stderr, "not sessions") {
		t.Errorf("the refusal does not name the flag and why:\n%s", stderr)
	}
	for _, started := range []string{"started the embedded", "preflight", "tier 0"} {
		if strings.Contains(stderr, started) {
			t.Errorf("refused only after something started (%q):\n%s", started, stderr)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("--out %s exists (%v): the refusal wrote something", dir, err)
	}
}
