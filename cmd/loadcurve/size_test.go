package main

import (
	"strings"
	"testing"
)

// TestRefusedBeforeAllocating: sizes that cannot fit in memory or time are refused (exit 2)
// with the bound, the estimate and the flag to change, before anything is made or sent. Before,
// `schedule --num-requests 1000000000` and `workload --num-requests 100000000
// --random-input-len 100000` ended in out-of-memory, and `--duration 60h --request-rate 10` was
// cut at 2,000,000 arrivals without a word after 1.4 GB and 78 s of preparation.
func TestRefusedBeforeAllocating(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		says []string
	}{
		{"schedule of a billion", []string{"schedule", "--num-requests", "1000000000"},
			[]string{"--num-requests 1000000000 is more than the 2000000 arrivals one tier may plan", "7.45 GiB", "ask for fewer"}},
		{"schedule of 60 h at 10/s", []string{"schedule", "--duration", "60h", "--request-rate", "10"},
			[]string{"--duration 60h0m0s", "about 2160000 arrivals", "shorten --duration or lower the rate"}},
		{"schedule of a duration at rate inf", []string{"schedule", "--duration", "10s", "--request-rate", "inf"},
			[]string{"give --num-requests"}},
		{"workload of 10⁸ requests of 10⁵ words", []string{"workload", "--num-requests", "100000000", "--random-input-len", "100000"},
			[]string{"100,000,000 requests is more than the 2,000,000", "24.6 GiB", "--num-requests"}},
		{"workload of 10⁵ requests of 10⁵ words", []string{"workload", "--num-requests", "100000", "--random-input-len", "100000"},
			[]string{"10,000,000,000 words", "48.0 GiB", "--random-input-len"}},
		{"run of 60 h at 10/s", []string{"run", "--duration", "60h", "--request-rate", "10"},
			[]string{"--duration", "about 2160000 arrivals, more than the 2000000", "3.16 GiB", "560 MiB with --bounded-memory", "shorten --duration"}},
		{"run of 60 h at 10/s, bounded", []string{"run", "--duration", "60h", "--request-rate", "10", "--bounded-memory"},
			[]string{"about 560 MiB of memory"}},
		{"run of 3,000,000 requests", []string{"run", "--num-requests", "3000000"},
			[]string{"--num-requests", "3000000 requests are more than the 2000000"}},
		{"run of an hour of 10⁵-word prompts", []string{"run", "--duration", "1h", "--request-rate", "100", "--random-input-len", "100000"},
			[]string{"360,000 requests of 100,000 prompt words", "--random-input-len"}},
		{"sweep of 60 h tiers", []string{"sweep", "--duration", "60h", "--request-rates", "1,10"},
			[]string{"at the highest rate, 10 req/s", "about 2160000 arrivals"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stdout %.200q\n%s", code, exitUsage, stdout, stderr)
			}
			for _, s := range tc.says {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			if strings.Contains(stderr, "started the embedded") {
				t.Errorf("the embedded deployment was started before the refusal:\n%s", stderr)
			}
		})
	}
}
