package workloads_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/workloads"
)

// TestSizeRefusedBeforeAllocating: `workload --num-requests 100000000 --random-input-len
// 100000` ended in out-of-memory (24 GiB of recipes, then 10¹³ words to generate); such sets
// are refused before anything is made, saying which bound, the estimate and what to lower.
func TestSizeRefusedBeforeAllocating(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "two.jsonl")
	if err := os.WriteFile(file, []byte(`{"prompt":"one two three","input_tokens":3,"max_tokens":4}`+"\n"+`{"prompt":"four five","input_tokens":2,"max_tokens":4}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	syn := func(in int) workloads.LoadOptions {
		return workloads.LoadOptions{Synthetic: workloads.Synthetic{InputLen: in, OutputLen: 8}}
	}
	sessions := syn(100)
	sessions.Sessions = workloads.SyntheticSessions{Turns: 4}
	for _, tc := range []struct {
		name    string
		spec    string
		opts    workloads.LoadOptions
		n       int
		refused string // what the refusal says; "": accepted
	}{
		{"10⁸ requests of 10⁵ words", workloads.KindSynthetic, syn(100_000), 100_000_000, "100,000,000 requests is more than the 2,000,000"},
		{"10⁵ requests of 10⁵ words", workloads.KindSynthetic, syn(100_000), 100_000, "10,000,000,000 words of prompts, more than the 2,147,483,648"},
		{"shared prefix and suffix count", workloads.KindSharedPrefix, workloads.LoadOptions{SharedPrefix: workloads.SharedPrefix{Groups: 2, PrefixLen: 100_000, SuffixLen: 100_000, OutputLen: 8}}, 20_000, "of 200,000 prompt words"},
		{"sessions count turns", workloads.KindSessions, sessions, 600_000, "2,400,000 turns"},
		{"a file reused beyond the bound", file, workloads.LoadOptions{}, 3_000_000, "3,000,000 requests"},
		{"at the bounds", workloads.KindSynthetic, syn(1024), workloads.MaxRequests, ""},
		{"a file reused within the bounds", file, workloads.LoadOptions{}, 10, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.TimeScale = 1
			src, errs := workloads.NewSource(tc.spec, tc.opts, "")
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			err := src.CheckSize(tc.n)
			if tc.refused == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *workloads.SizeError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.refused) {
				t.Fatalf("%v, want a *SizeError saying %q", err, tc.refused)
			}
			// TierSet refuses it the same way, before making anything.
			if _, _, err := src.TierSet(tc.n, 1); !errors.As(err, &se) {
				t.Errorf("TierSet: %v, want the same refusal", err)
			}
		})
	}
}
