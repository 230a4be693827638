package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/measure/records"
)

// TestRunJudgesByTheSweepsDefaultObjectives: without --goodput, run judges by the objectives a
// sweep of the same target would (the embedded deployment's own, here the queue's), says so
// before it starts, and keeps them in its records, so that its verdict and goodput mean what a
// sweep's do. Before, a run without --goodput judged against no objective at all and still
// stated a capacity. Given objectives are kept as given.
func TestRunJudgesByTheSweepsDefaultObjectives(t *testing.T) {
	t.Parallel()
	queue := []string{"--sim-model", "mdc", "--sim-clock", "virtual", "--quiet"}
	tests := []struct {
		name string
		args []string
		want string // the objectives the records header keeps
		says string // on stderr
	}{
		{"run", []string{"run", "--request-rate", "2", "--num-requests", "100"}, "ttft:420", "judging by ttft:420 (the embedded queue's: its service time plus its first token; --goodput) for 99 % of requests at 95 % confidence\n"},
		{"sweep", []string{"sweep", "--request-rates", "2", "--num-requests", "100", "--no-confirm"}, "ttft:420", "judging by ttft:420 (the embedded queue's"},
		{"run, given", []string{"run", "--request-rate", "2", "--num-requests", "100", "--goodput", "ttft:900"}, "ttft:900", "judging by ttft:900 for 99 %"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := runCLI(t, append(append(tt.args, queue...), "--out", out)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stderr, tt.says) {
				t.Errorf("stderr does not say %q:\n%s", tt.says, stderr)
			}
			h, err := records.ReadHeader(filepath.Join(out, "records.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if h.Settings == nil || h.Settings.Objectives != tt.want {
				t.Errorf("the records keep the objectives %+v, want %q", h.Settings, tt.want)
			}
		})
	}
}
