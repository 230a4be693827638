package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/sim"
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
	// report --bounded-memory streams the file: the same analysis (it rests on exact counts and
	// the same trend points), the same counts per tier, percentiles within 0.5 %.
	bounded := t.TempDir()
	if code, _, stderr := runCLI(t, "report", a, "--bounded-memory", "--out", bounded, "-q"); code != exitOK {
		t.Fatalf("bounded report: exit %d: %s", code, stderr)
	}
	var bc map[string]any
	bb, _ := os.ReadFile(filepath.Join(bounded, "curve.json"))
	if err := json.Unmarshal(bb, &bc); err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, bc["analysis"]), mustJSON(t, cf["analysis"]); got != want {
		t.Errorf("bounded analysis differs:\n%s\nexact:\n%s", got, want)
	}
	for i, tier := range bc["tiers"].([]any) {
		bt, et := tier.(map[string]any), cf["tiers"].([]any)[i].(map[string]any)
		if bt["percentile_relative_error"] != 0.005 {
			t.Errorf("tier %d: percentile_relative_error %v", i, bt["percentile_relative_error"])
		}
		for _, k := range []string{"completed", "issued", "compliant_requests", "raw_output_tokens", "request_throughput", "mean_ttft_ms"} {
			if e, g := et[k].(float64), bt[k].(float64); math.Abs(g-e) > 1e-9*math.Max(1, math.Abs(e)) {
				t.Errorf("tier %d %s: %v, exact %v", i, k, g, e)
			}
		}
		for _, k := range []string{"median_ttft_ms", "p99_ttft_ms", "p99_itl_ms", "median_e2el_ms"} {
			if e, g := et[k].(float64), bt[k].(float64); math.Abs(g-e) > 0.005*math.Abs(e)+1e-9 {
				t.Errorf("tier %d %s: %v, exact %v: beyond 0.5 %%", i, k, g, e)
			}
		}
	}

	// The window and the metric selection are saved in curve.json: report without the flags
	// reproduces a report made with them.
	windowed := t.TempDir()
	recs, _ := os.ReadFile(filepath.Join(a, "records.jsonl"))
	if err := os.WriteFile(filepath.Join(windowed, "records.jsonl"), recs, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "report", windowed, "-q", "--window-warmup", "250ms", "--window-cooldown", "100ms", "--percentile-metrics", "ttft,itl"); code != exitOK {
		t.Fatalf("windowed report: exit %d: %s", code, stderr)
	}
	first, _ := os.ReadFile(filepath.Join(windowed, "curve.json"))
	if code, _, stderr := runCLI(t, "report", windowed, "-q"); code != exitOK {
		t.Fatalf("report of the windowed report: exit %d: %s", code, stderr)
	}
	second, _ := os.ReadFile(filepath.Join(windowed, "curve.json"))
	if !bytes.Equal(first, second) || !bytes.Contains(first, []byte(`"window_warmup_s": 0.25`)) || bytes.Contains(first, []byte("p99_e2el_ms")) {
		t.Errorf("curve.json does not keep the window and the metric selection:\n%s", second)
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

// TestSweepFindsTheSimCapacity sweeps the latency profile from a quarter of its theoretical peak
// to six times it and checks the curve against the figures the sim's parameters predict.
func TestSweepFindsTheSimCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end sweep")
	}
	cfg, err := sim.Profile(sim.ProfileLatency)
	if err != nil {
		t.Fatal(err)
	}
	cfg.StepBase = 25 * time.Millisecond // long steps: fewer requests per second, less CPU for the same curve
	const inWords, out = 32, 16
	peakTok := cfg.TheoreticalPeakOutput(inWords+sim.MessageOverheadTokens, out) // chat adds the per-message overhead
	peakReq := peakTok / out
	var rates []string
	for _, f := range []float64{0.25, 0.5, 0.75, 3, 6} {
		rates = append(rates, strconv.FormatFloat(f*peakReq, 'f', 2, 64))
	}
	code, stdout, stderr := runCLI(t, "sweep", "--request-rates", strings.Join(rates, ","), "--duration", "2s",
		"--drain-timeout", "3s", "--sim-profile", "latency", "--random-input-len", strconv.Itoa(inWords),
		"--random-output-len", strconv.Itoa(out), "--sim-step-base", cfg.StepBase.String(), "--goodput", "e2el:1500",
		"--format", "json", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var cf struct {
		Tiers []struct {
			NominalRate float64 `json:"nominal_request_rate"`
			Raw         float64 `json:"raw_output_throughput"`
		} `json:"tiers"`
		Analysis struct {
			Plateau  *struct{ Throughput float64 } `json:"plateau"`
			Capacity *struct{ Rate float64 }       `json:"capacity"`
		} `json:"analysis"`
		Server map[string]struct {
			StepLatenessP99 float64 `json:"step_lateness_p99_ms"`
		} `json:"server_metrics"`
	}
	if err := json.Unmarshal([]byte(stdout), &cf); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	// The model holds only while the machine runs the sim's steps on time; the sim measures how
	// late they wake. Past a fifth of a step the premise is gone (an overloaded shared box), and
	// the comparison would test the machine, not loadcurve.
	for tier, m := range cf.Server {
		if m.StepLatenessP99 > 0.2*float64(cfg.StepBase)/float64(time.Millisecond) {
			t.Skipf("tier %s: the sim's steps woke %.1f ms late (p99): this machine could not keep the model's real time", tier, m.StepLatenessP99)
		}
	}
	top := cf.Tiers[len(cf.Tiers)-1].Raw
	t.Logf("model: peak %.0f tok/s = %.1f req/s; measured: raw at 6x %.0f tok/s, plateau %+v, capacity %+v",
		peakTok, peakReq, top, cf.Analysis.Plateau, cf.Analysis.Capacity)
	// At 6x the peak the engine is busy for the whole tier and its drain (the backlog outlasts
	// the 3 s drain deadline), so raw output is the engine's peak less the final partial steps and
	// the wake-up lateness of a shared machine: allow 15 % below and 5 % above the model. The 3x
	// tier is overloaded too, so raw throughput from 3x to 6x is flat: the plateau.
	if top < 0.85*peakTok || top > 1.05*peakTok {
		t.Errorf("raw output at 6x peak = %.0f tok/s, the model predicts %.0f", top, peakTok)
	}
	if cf.Analysis.Plateau == nil {
		t.Errorf("no plateau found; tiers %+v", cf.Tiers)
	}
	// Below the peak the 1.5 s E2EL objective holds (a request lives ~16 steps of ~27 ms); past it
	// the queue grows by (rate - peak) x 2 s and the objective fails, so capacity lies between half
	// the peak and (allowing the interpolation's overshoot) 1.1x the peak.
	if c := cf.Analysis.Capacity; c == nil || c.Rate < 0.5*peakReq || c.Rate > 1.1*peakReq {
		t.Errorf("capacity %+v, the model's peak is %.1f req/s", c, peakReq)
	}
}

// TestBoundedMemorySweep: sweep --bounded-memory keeps no records; its curve.json has the
// analysis and counts an exact report of its records.jsonl computes, and percentiles within 0.5 %.
func TestBoundedMemorySweep(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end sweep")
	}
	dir, exact := t.TempDir(), t.TempDir()
	code, _, stderr := runCLI(t, append(sweepArgs(dir, "latency", "3"), "--bounded-memory")...)
	if code != exitOK {
		t.Fatalf("sweep --bounded-memory: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "report", dir, "--out", exact, "-q"); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	load := func(d string) map[string]any {
		var m map[string]any
		b, err := os.ReadFile(filepath.Join(d, "curve.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	bc, ec := load(dir), load(exact)
	if got, want := mustJSON(t, bc["analysis"]), mustJSON(t, ec["analysis"]); got != want {
		t.Errorf("bounded analysis differs from the exact report's:\n%s\n%s", got, want)
	}
	bt, et := bc["tiers"].([]any), ec["tiers"].([]any)
	if len(bt) != 3 || len(et) != 3 {
		t.Fatalf("%d and %d tiers", len(bt), len(et))
	}
	for i := range bt {
		b, e := bt[i].(map[string]any), et[i].(map[string]any)
		if b["percentile_relative_error"] != 0.005 || e["percentile_relative_error"] != nil {
			t.Errorf("tier %d: percentile_relative_error %v (bounded), %v (exact)", i, b["percentile_relative_error"], e["percentile_relative_error"])
		}
		for _, k := range []string{"issued", "completed", "compliant_requests", "raw_output_tokens", "realised_request_rate", "mean_ttft_ms"} {
			if bv, ev := b[k].(float64), e[k].(float64); math.Abs(bv-ev) > 1e-9*math.Max(1, math.Abs(ev)) {
				t.Errorf("tier %d %s: %v, exact %v", i, k, bv, ev)
			}
		}
		for _, k := range []string{"median_ttft_ms", "p99_ttft_ms", "p99_itl_ms", "p90_e2el_ms"} {
			if bv, ev := b[k].(float64), e[k].(float64); math.Abs(bv-ev) > 0.005*math.Abs(ev)+1e-9 {
				t.Errorf("tier %d %s: %v, exact %v: beyond 0.5 %%", i, k, bv, ev)
			}
		}
	}
}
