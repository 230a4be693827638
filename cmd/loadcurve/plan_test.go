package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPlanFromSweeps: plan reads the operating point of a short sweep of the embedded M/D/c
// queue (4 slots of 100 ms; unverified: no confirmation, to keep the test short), twice, and
// states the replicas each needs for a forecast, ⌈peak / operating rate⌉, their monthly cost,
// and which is cheaper. (The arithmetic itself is held to hand-computed cases in package plan.)
func TestPlanFromSweeps(t *testing.T) {
	t.Parallel()
	// One sweep, planned as two deployments that differ only in price: the wiring is under test.
	var dirs [2]string
	for i, servers := range []string{"4"} {
		dirs[i] = filepath.Join(t.TempDir(), "mdc"+servers)
		code, _, stderr := runCLIFor(t, 4*time.Minute, "sweep", "--sim-model", "mdc", "--sim-clock", "virtual", "--sim-queue-servers", servers, "--sim-queue-service", "100ms",
			"--sim-queue-first-token", "10ms", "--sim-queue-output-tokens", "4", "--goodput", "ttft:150", "--target-share", "0.95",
			"--request-rates", "20,40,80", "--num-requests", "80", "--no-confirm", "--max-schedule-lag", "1s", "--quiet", "--out", dirs[i])
		if code != exitOK {
			t.Fatalf("sweep %s: exit %d: %s", servers, code, stderr)
		}
	}
	dirs[1] = dirs[0]
	out := filepath.Join(t.TempDir(), "plan")
	code, stdout, stderr := runCLI(t, "plan", dirs[0], dirs[1], "--peak", "300", "--a-cost-per-hour", "10", "--b-cost-per-hour", "15",
		"--allow-unverified", "--format", "json", "--out", out)
	if code != exitOK {
		t.Fatalf("plan: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var doc struct {
		Plans []struct {
			PeakReplicas int `json:"peak_replicas"`
			Deployment   struct {
				OperatingRate float64 `json:"operating_rate"`
				Verified      bool    `json:"verified"`
				Verification  string  `json:"verification"`
			} `json:"deployment"`
			Static struct {
				CostPerMonth float64 `json:"cost_per_month"`
			} `json:"static"`
		} `json:"plans"`
		Comparison *struct {
			Following struct {
				Summary string `json:"summary"`
			} `json:"following"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(doc.Plans) != 2 || doc.Comparison == nil {
		t.Fatalf("plan.json: %s", stdout)
	}
	for i, p := range doc.Plans {
		op := p.Deployment.OperatingRate
		if want := int(math.Ceil(300 / op)); p.PeakReplicas != want || op <= 0 {
			t.Errorf("plan %d: %d replicas for 300 req/s at %.3g req/s each, want %d", i, p.PeakReplicas, op, want)
		}
		if want := float64(p.PeakReplicas) * []float64{10, 15}[i] * 730; math.Abs(p.Static.CostPerMonth-want) > 1e-6*want {
			t.Errorf("plan %d: static cost %v a month, want %v", i, p.Static.CostPerMonth, want)
		}
	}
	if s := doc.Comparison.Following.Summary; !strings.Contains(s, "A") {
		t.Errorf("the same deployment at two thirds of the price is not cheaper: %q", s)
	}
	// The sweep ran no confirmation: plan.json, the page and the terminal say the plan rests
	// on an unverified operating point, and why (it showed 71 replicas without a word of it).
	for i, p := range doc.Plans {
		if p.Deployment.Verified || p.Deployment.Verification != "not verified: no confirmation tier ran at it" {
			t.Errorf("plan %d: verified %v, %q", i, p.Deployment.Verified, p.Deployment.Verification)
		}
	}
	if page, err := os.ReadFile(filepath.Join(out, "report.html")); err != nil || !strings.Contains(string(page), "NOT verified") ||
		!strings.Contains(string(page), "planned from an unverified operating point") {
		t.Errorf("report.html does not say the operating point is not verified (%v)", err)
	}
	if code, text, _ := runCLI(t, "plan", dirs[0], "--peak", "300", "--a-cost-per-hour", "10", "--allow-unverified"); code != exitOK ||
		!strings.Contains(text, "A: planned from an unverified operating point (not verified: no confirmation tier ran at it)") || !strings.Contains(text, "NOT verified") {
		t.Errorf("the plan's text (exit %d) does not say the operating point is not verified:\n%s", code, text)
	}
	for _, name := range []string{"plan.json", "report.html", "scenario.yaml"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}

	// A forecast from a trace's arrivals: one step a bucket, the peak the busiest bucket.
	code, stdout, stderr = runCLI(t, "plan", dirs[0], "--profile-trace", filepath.Join("..", "..", "workloads", "testdata", "azure.csv"),
		"--profile-bucket", "1s", "--a-cost-per-hour", "10", "--allow-unverified", "--format", "json")
	if code != exitOK {
		t.Fatalf("plan --profile-trace: exit %d\n%s", code, stderr)
	}
	var traced struct {
		Plans []struct {
			PeakRate float64           `json:"peak_rate"`
			Timeline []json.RawMessage `json:"timeline"`
		} `json:"plans"`
	}
	if err := json.Unmarshal([]byte(stdout), &traced); err != nil || len(traced.Plans) != 1 || !(traced.Plans[0].PeakRate > 0) || len(traced.Plans[0].Timeline) == 0 {
		t.Errorf("plan --profile-trace: %v\n%s", err, stdout)
	}
}

// TestPlanRefuses: a plan needs a forecast, costs, and results it can plan from; each problem
// is said with its flag or file.
func TestPlanRefuses(t *testing.T) {
	t.Parallel() // its sweeps run on the virtual clock: no real time to be slowed
	sweepDir := filepath.Join(t.TempDir(), "conc")
	if code, _, stderr := runCLI(t, "sweep", "--sim-model", "mdc", "--sim-clock", "virtual", "--sim-queue-servers", "2", "--sim-queue-service", "20ms",
		"--sim-queue-first-token", "2ms", "--goodput", "ttft:1000", "--max-concurrencies", "1,2", "--num-requests", "60", "--no-confirm",
		"--max-schedule-lag", "1s", "--quiet", "--out", sweepDir); code != exitOK {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	// Two rate sweeps of the queue with no confirmation (their operating points are not
	// verified), under different objectives. The objectives are loose (50 times the service
	// time) so that a busy machine, whose in-process sim answers late, still finds a capacity.
	rateDir, otherDir := filepath.Join(t.TempDir(), "rate"), filepath.Join(t.TempDir(), "other")
	for _, sw := range []struct{ dir, goodput string }{{rateDir, "ttft:1000"}, {otherDir, "ttft:2000"}} {
		if code, _, stderr := runCLI(t, "sweep", "--sim-model", "mdc", "--sim-clock", "virtual", "--sim-queue-servers", "4", "--sim-queue-service", "20ms",
			"--sim-queue-first-token", "2ms", "--goodput", sw.goodput, "--request-rates", "20,40", "--num-requests", "60", "--no-confirm",
			"--max-schedule-lag", "1s", "--quiet", "--out", sw.dir); code != exitOK {
			t.Fatalf("sweep: exit %d: %s", code, stderr)
		}
	}
	profile := filepath.Join(t.TempDir(), "day.csv")
	if err := os.WriteFile(profile, []byte("time,rate\n00:00,10\n06:00,-3\n12:00,abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", sweepDir, "--a-cost-per-hour", "1"}, "--peak RATE, --profile FILE.csv or --profile-trace"},
		{[]string{"plan", sweepDir, "--peak", "1", "--profile-trace", "x.csv", "--a-cost-per-hour", "1"}, "give one forecast"},
		{[]string{"plan", sweepDir, "--peak", "10"}, "--a-cost-per-hour"},
		{[]string{"plan", sweepDir, "--peak", "10", "--a-cost-per-hour", "1"}, "concurrent users"},
		{[]string{"plan", sweepDir, "--profile", profile, "--a-cost-per-hour", "1"}, profile + ":3:"},
		{[]string{"plan", sweepDir, "--profile", profile, "--a-cost-per-hour", "1"}, profile + ":4:"},
		{[]string{"plan", "--peak", "10"}, "want one or two result directories"},
		{[]string{"plan", rateDir, "--peak", "10", "--a-cost-per-hour", "1"}, "its operating point was not verified: no confirmation tier ran at it; run the sweep with its confirmation"},
		{[]string{"plan", rateDir, "--peak", "10", "--a-cost-per-hour", "1", "--goodput", "ttft:0.001"}, "no capacity, so there is no operating point"},
		{[]string{"plan", rateDir, otherDir, "--peak", "10", "--a-cost-per-hour", "1", "--b-cost-per-hour", "1", "--allow-unverified"}, "different objectives"},
		{[]string{"plan", rateDir, "--peak", "10", "--a-cost-per-hour", "-2", "--allow-unverified"}, "cost-per-hour"},
		{[]string{"plan", filepath.Join(t.TempDir(), "none"), "--peak", "10", "--a-cost-per-hour", "1"}, "no such file"},
		// Neither result read: each says so, nothing is compared (this once dereferenced nil).
		{[]string{"plan", filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b"), "--peak", "10", "--a-cost-per-hour", "1", "--b-cost-per-hour", "1"}, "B: "},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr lacks %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
	// --goodput judges both alike (vLLM's form: pairs after one flag), and the plan goes on.
	stdout, _ := mustRun(t, "plan", rateDir, otherDir, "--peak", "10", "--a-cost-per-hour", "1", "--b-cost-per-hour", "1",
		"--allow-unverified", "--goodput", "ttft:150", "e2el:5000", "--format", "json")
	var doc struct {
		Plans []json.RawMessage `json:"plans"`
	}
	decodeJSON(t, "plan --goodput", stdout, &doc)
	if len(doc.Plans) != 2 {
		t.Errorf("plan of two results judged alike: %s", stdout)
	}
}

// rehearsedPlan is what the tests read of `plan --rehearse --format json`.
type rehearsedPlan struct {
	Plans []struct {
		PeakReplicas int `json:"peak_replicas"`
	} `json:"plans"`
	Rehearsals []struct {
		Replicas     int     `json:"replicas"`
		Planned      bool    `json:"planned"`
		PeakRate     float64 `json:"peak_rate"`
		RealisedRate float64 `json:"realised_rate"`
		Verdict      string  `json:"verdict"`
		Share        float64 `json:"compliant_request_share"`
		Reason       string  `json:"reason"`
	} `json:"rehearsals"`
	Conclusions []string `json:"rehearsal_conclusions"`
}

// TestPlanRehearses: plan --rehearse rebuilds the deployment a sweep measured (with the sweep's
// --sim-* overrides, from the records header) and runs the forecast's peak on the planned
// replicas and on one fewer. The tiers are short here (the verdicts are uncertain or meet): the
// rule's decisions against a known steady state are held in package plan
// (TestRehearsalHoldsAtThePlanAndFailsBelow), on the virtual clock.
func TestPlanRehearses(t *testing.T) {
	// Not in parallel: its one-second tiers over HTTP found no capacity beside neighbours under
	// -race (the rehearsal over the virtual clock is TestSweepOnTheEmbeddedQueue's).
	dir := filepath.Join(t.TempDir(), "sweep")
	mustRun(t, "sweep", "--request-rates", "20,40", "--duration", "1s", "--no-confirm", "--random-input-len", "32", "--random-output-len", "8",
		"--goodput", "ttft:500", "--max-schedule-lag", "1s", "--sim-max-num-seqs", "64", "--quiet", "--out", dir)
	stdout, stderr := mustRun(t, "plan", dir, "--peak", "60", "--a-cost-per-hour", "2", "--allow-unverified", "--rehearse",
		"--random-input-len", "32", "--random-output-len", "8", "--tier-requests", "80", "--max-tier-duration", "2s", "--format", "json")
	var doc rehearsedPlan
	decodeJSON(t, "plan --rehearse --format json", stdout, &doc)
	if len(doc.Conclusions) != 1 || !strings.HasPrefix(doc.Conclusions[0], "A: the ") {
		t.Errorf("rehearsal conclusions %q: want one, for A", doc.Conclusions)
	}
	if len(doc.Plans) != 1 || doc.Plans[0].PeakReplicas < 2 {
		t.Fatalf("plan: %s", stdout)
	}
	n := doc.Plans[0].PeakReplicas
	if len(doc.Rehearsals) < 2 || doc.Rehearsals[0].Replicas != n || !doc.Rehearsals[0].Planned || doc.Rehearsals[len(doc.Rehearsals)-1].Replicas != n-1 {
		t.Fatalf("rehearsals of a %d-replica plan: %+v", n, doc.Rehearsals)
	}
	for _, r := range doc.Rehearsals {
		if r.PeakRate != 60 || !(r.RealisedRate > 30) || r.Verdict == "" || r.Verdict == "no verdict" {
			t.Errorf("rehearsal %+v: want 60 req/s sent, a verdict", r)
		}
	}
	if want := fmt.Sprintf("%d replicas of default behind a round-robin balancer", n); !strings.Contains(stderr, want) {
		t.Errorf("the rehearsal did not start %q:\n%s", want, stderr)
	}
	if !strings.Contains(stderr, "WARNING: A") || !strings.Contains(stderr, "--allow-unverified") {
		t.Errorf("planning from an unverified operating point is not said:\n%s", stderr)
	}
}
