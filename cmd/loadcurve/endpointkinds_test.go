package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/measure/records"
)

// TestEndpointKindsEndToEnd: `run --endpoint responses` and `run --endpoint embeddings` work
// against the embedded deployment: every request ok, the records header names the kind and
// (for embeddings) its unit, the text says what its throughputs count, and `report` re-derives
// the same unit from records.jsonl alone; `sweep --endpoint embeddings --goodput e2el:MS`
// judges tiers by E2EL and counts input tokens in curve.json.
func TestEndpointKindsEndToEnd(t *testing.T) {
	t.Parallel() // mostly waiting on real time (TestMain)
	for _, tc := range []struct {
		kind      string
		unit      records.Unit
		has, hasn []string
	}{
		{"responses", "", []string{"Raw output throughput (tok/s):", "Total generated tokens:"}, []string{"input throughput"}},
		{"embeddings", records.UnitInputTokens, []string{"Raw input throughput (tok/s):", "Compliant input throughput (tok/s):"},
			[]string{"WARNING: none of the", "Raw output throughput"}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runCLI(t, append([]string{"run", "--endpoint", tc.kind, "--request-rate", "40", "--num-requests", "30",
				"--goodput", "e2el:2000", "--max-schedule-lag", "1s", "--out", dir}, small...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, s := range tc.has {
				if !strings.Contains(stdout, s) {
					t.Errorf("the text lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range tc.hasn {
				if strings.Contains(stdout+stderr, s) {
					t.Errorf("the output says %q:\n%s\n%s", s, stdout, stderr)
				}
			}
			f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if f.Header.Endpoint != tc.kind || f.Header.Unit != tc.unit {
				t.Errorf("header endpoint %q unit %q", f.Header.Endpoint, f.Header.Unit)
			}
			ok := 0
			for _, r := range f.Records {
				if r.Outcome == records.OK {
					ok++
				}
				if tc.unit == records.UnitInputTokens && (r.InputTokensSource != records.SourceUsage || r.Chunks != 0 || r.First != records.Unset) {
					t.Fatalf("an embeddings record: %+v", r)
				}
			}
			if ok != 30 {
				t.Errorf("%d of 30 requests ok", ok)
			}
			again := reportTo(t, dir)
			for _, d := range []string{dir, again} {
				var sum struct {
					Unit string  `json:"unit"`
					Raw  float64 `json:"raw_output_throughput"`
				}
				b, err := os.ReadFile(filepath.Join(d, "summary.json"))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &sum); err != nil || sum.Unit != string(tc.unit) || !(sum.Raw > 0) {
					t.Errorf("%s: summary.json unit %q raw %v (%v)", d, sum.Unit, sum.Raw, err)
				}
			}
		})
	}
	t.Run("sweep embeddings", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "sweep")
		code, _, stderr := runCLI(t, "sweep", "--endpoint", "embeddings", "--goodput", "e2el:500", "--request-rates", "20,40",
			"--duration", "1s", "--max-schedule-lag", "1s", "--random-input-len", "32", "--quiet", "--out", dir)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var cj struct {
			Run struct {
				Endpoint string `json:"endpoint"`
				Unit     string `json:"unit"`
				Settings struct {
					Objectives string `json:"objectives"`
				} `json:"settings"`
			} `json:"run"`
			Tiers []struct {
				Unit   string `json:"unit"`
				Raw    int    `json:"raw_output_tokens"`
				Output int    `json:"total_output_tokens"`
			} `json:"tiers"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "curve.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &cj); err != nil {
			t.Fatal(err)
		}
		if cj.Run.Endpoint != "embeddings" || cj.Run.Unit != string(records.UnitInputTokens) || cj.Run.Settings.Objectives != "e2el:500" || len(cj.Tiers) < 2 {
			t.Fatalf("curve.json run %+v, %d tiers", cj.Run, len(cj.Tiers))
		}
		for i, tier := range cj.Tiers {
			if tier.Unit != string(records.UnitInputTokens) || tier.Raw <= 0 || tier.Output != 0 {
				t.Errorf("tier %d: %+v", i, tier)
			}
		}
	})
}

// TestEmbeddingsRefuseSessions: a workload of sessions with --endpoint embeddings is refused
// before anything starts (exit 2, naming both flags): a session's turns carry the answers'
// text, and an embedding has none.
func TestEmbeddingsRefuseSessions(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(t, "run", "--endpoint", "embeddings", "--workload", "sessions", "--session-turns", "2", "--out", dir, "--quiet")
	if code != exitUsage || !strings.Contains(stderr, "--endpoint embeddings with a --workload of sessions") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("--out was created: %v", err)
	}
}
