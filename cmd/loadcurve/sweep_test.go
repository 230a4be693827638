package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sweepArgs is a short fixed-rate sweep against the embedded sim (about 1.5 s of load per tier).
func sweepArgs(dir, profile string, seed string) []string {
	return append([]string{"sweep", "--request-rates", "4,8,16", "--duration", "1s", "--drain-timeout", "10s",
		"--sim-profile", profile, "--seed", seed, "--out", dir}, small...)
}

func TestSweepReportAndCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end sweep")
	}
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	code, stdout, stderr := runCLI(t, sweepArgs(a, "latency", "1")...)
	if code != exitOK {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "offered req/s") || !strings.Contains(stderr, "objectives: ttft:2000 tpot:100") {
		t.Errorf("sweep output lacks the table or the printed default objectives:\n%s\n%s", stdout, stderr)
	}
	for _, f := range []string{"records.jsonl", "curve.json", "curve.csv", "report.html", "throughput.png", "throughput.svg", "summary_tier00.json"} {
		if _, err := os.Stat(filepath.Join(a, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	fh, err := os.Open(filepath.Join(a, "throughput.png"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(fh); err != nil {
		t.Errorf("throughput.png does not decode: %v", err)
	}
	fh.Close()
	var cf map[string]any
	orig, _ := os.ReadFile(filepath.Join(a, "curve.json"))
	if err := json.Unmarshal(orig, &cf); err != nil {
		t.Fatal(err)
	}
	if n := len(cf["tiers"].([]any)); n != 3 {
		t.Errorf("%d tiers in curve.json, want 3", n)
	}

	// report reproduces curve.json exactly from the records.
	if code, _, stderr := runCLI(t, "report", a, "-q"); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	again, _ := os.ReadFile(filepath.Join(a, "curve.json"))
	if !bytes.Equal(orig, again) {
		t.Error("report did not reproduce curve.json byte for byte")
	}
	// Stricter objectives can only lower compliance.
	strict := t.TempDir()
	if code, _, stderr := runCLI(t, "report", a, "--out", strict, "--goodput", "ttft:1", "-q"); code != exitOK {
		t.Fatalf("strict report: exit %d: %s", code, stderr)
	}
	var sc map[string]any
	sb, _ := os.ReadFile(filepath.Join(strict, "curve.json"))
	json.Unmarshal(sb, &sc)
	for i, tier := range sc["tiers"].([]any) {
		loose := cf["tiers"].([]any)[i].(map[string]any)["compliant_request_share"].(float64)
		tight := tier.(map[string]any)["compliant_request_share"].(float64)
		if tight > loose {
			t.Errorf("tier %d: share %v under ttft:1 ms > %v under the defaults", i, tight, loose)
		}
	}

	// Same arguments, another profile: comparable.
	if code, _, stderr := runCLI(t, sweepArgs(b, "throughput", "1")...); code != exitOK {
		t.Fatalf("sweep B: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "compare", a, b, "--a-cost-per-hour", "100", "--b-cost-per-hour", "80")
	if code != exitOK {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"A vs B at equal offered rate", "Paired differences", "ttft_ms", "per million effective tokens"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare output lacks %q:\n%s", want, stdout)
		}
	}
	// Another seed: not comparable, exit 2 naming the seed; --force prints, stamped.
	if code, _, stderr := runCLI(t, sweepArgs(c, "latency", "2")...); code != exitOK {
		t.Fatalf("sweep C: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "compare", a, c)
	if code != exitUsage || !strings.Contains(stderr, "seed") {
		t.Errorf("compare with another seed: exit %d, stderr %s", code, stderr)
	}
	code, stdout, _ = runCLI(t, "compare", a, c, "--force")
	if code != exitOK || !strings.Contains(stdout, "NOT COMPARABLE") {
		t.Errorf("compare --force: exit %d\n%s", code, stdout)
	}
}
