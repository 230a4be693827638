package main

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// keptRecords runs tiers on a virtual runner and keeps every record.
type keptRecords struct {
	sweep.Runner
	mu   sync.Mutex
	recs []records.Record
}

type keptSink struct {
	sweep.Sink
	k *keptRecords
}

func (s keptSink) Write(r *records.Record) error {
	s.k.mu.Lock()
	s.k.recs = append(s.k.recs, *r)
	s.k.mu.Unlock()
	return s.Sink.Write(r)
}

func (k *keptRecords) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	return k.Runner.RunTier(ctx, p, keptSink{Sink: sink, k: k}, stop)
}

// virtualSweepDir writes the result of a sweep (with its confirmation) of a virtual M/D/c queue
// whose every response is tokens long, as the sweep command writes its records, into a new
// directory: no HTTP, no wall clock.
func virtualSweepDir(t *testing.T, tokens int) string {
	t.Helper()
	q := sim.QueueConfig{ModelName: "m", Servers: 4, Service: 400 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: tokens}
	k := &keptRecords{Runner: &virtual.QueueRunner{Config: q}}
	s := result.Settings{Measure: measure.Options{Objectives: measure.Objectives{TTFT: 500 * time.Millisecond}, Percentiles: []float64{50, 99}}, Params: curve.DefaultParams()}
	res, err := (&sweep.Executor{Config: sweep.Config{Rates: sweep.Rates{List: []float64{2, 4, 6, 8}}, Seed: 1, Confirm: true, Settings: s}, Runner: k}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h := records.Header{Kind: records.KindHeader, Tool: "loadcurve", Version: "test", MetricsVersion: records.MetricsVersion,
		Command: records.CommandSweep, Target: "virtual M/D/c queue", Endpoint: "chat", Model: "m",
		Workload: "random(input=1024, output=" + strconv.Itoa(tokens) + ", range=0, seed=0)", Arrival: "sweep(2,4,6,8, burstiness=1)", Seed: 1,
		CachePolicy: "cold", StartWall: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Settings: s.Record()}
	f := &records.File{Header: h, Records: k.recs}
	for _, tr := range res.Tiers {
		f.Tiers = append(f.Tiers, tr.Tier)
	}
	dir := t.TempDir()
	if err := records.WriteFile(filepath.Join(dir, result.RecordsName), f); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPlanAppliesComparesCheck (issue 26): plan A B applies compare's comparability check. A
// result of 16-token responses against one of 8-token responses is refused (exit 2, each
// difference named), as compare refuses it; --allow-different plans them anyway, stamped NOT
// COMPARABLE with what differs, and no note says they serve the same requests. Two results
// measured alike are planned, and the notes say the check found them alike. The tokens per
// request are counted in the records: exactly 16 and 8 (short responses: every record's
// inter-token gaps are read by each plan and compare, so their files stay small).
func TestPlanAppliesComparesCheck(t *testing.T) {
	t.Parallel() // mostly waiting on real time (TestMain)
	a, b, a2 := virtualSweepDir(t, 16), virtualSweepDir(t, 8), virtualSweepDir(t, 16)
	base := []string{"plan", a, b, "--peak", "20", "--a-cost-per-hour", "4", "--b-cost-per-hour", "2.5", "--allow-unverified"}

	code, stdout, stderr := runCLI(t, base...)
	if code != exitUsage || !strings.Contains(stderr, "request-set fingerprint differs: A=random(input=1024, output=16") ||
		!strings.Contains(stderr, "not comparable (1 differences above") || !strings.Contains(stderr, "--allow-different") {
		t.Errorf("different results: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "compare", a, b); code != exitUsage {
		t.Errorf("compare accepts the pair plan refuses: exit %d\n%s", code, stderr)
	}

	code, stdout, stderr = runCLI(t, append(base, "--allow-different", "--format", "json")...)
	if code != exitOK {
		t.Fatalf("--allow-different: exit %d\n%s", code, stderr)
	}
	var doc struct {
		Plans []struct {
			Deployment struct {
				Compliant float64 `json:"compliant_tokens_per_request"`
				Raw       float64 `json:"raw_tokens_per_request"`
				Tokens    *struct {
					Requests  int   `json:"requests"`
					Compliant int   `json:"compliant"`
					Output    int64 `json:"compliant_output_tokens"`
				} `json:"tokens_counted"`
			} `json:"deployment"`
		} `json:"plans"`
		Comparison struct {
			Stamp       string   `json:"stamp"`
			Differences []string `json:"differences"`
			Notes       []string `json:"notes"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Plans) != 2 {
		t.Fatalf("%v\n%s", err, stdout)
	}
	for i, want := range []float64{16, 8} {
		d := doc.Plans[i].Deployment
		if d.Raw != want || d.Tokens == nil || float64(d.Tokens.Output)/float64(d.Tokens.Compliant) != want ||
			math.Abs(d.Compliant-want*float64(d.Tokens.Compliant)/float64(d.Tokens.Requests)) > 1e-9 {
			t.Errorf("plan %d: tokens per request %+v, want %v counted", i, d, want)
		}
	}
	notes := strings.Join(doc.Comparison.Notes, "\n")
	if doc.Comparison.Stamp != "NOT COMPARABLE (1 differences)" || len(doc.Comparison.Differences) != 1 ||
		strings.Contains(notes, "same requests") || strings.Contains(notes, "measured alike") || !strings.Contains(notes, "measured differently") {
		t.Errorf("stamp %q, differences %q, notes:\n%s", doc.Comparison.Stamp, doc.Comparison.Differences, notes)
	}
	if !strings.Contains(stderr, "WARNING: NOT COMPARABLE") {
		t.Errorf("no warning on stderr:\n%s", stderr)
	}

	code, stdout, stderr = runCLI(t, "plan", a, a2, "--peak", "20", "--a-cost-per-hour", "4", "--b-cost-per-hour", "2.5", "--allow-unverified")
	if code != exitOK || !strings.Contains(stdout, "A: 16 output tokens per compliant request") || strings.Contains(stdout, "NOT COMPARABLE") {
		t.Errorf("results measured alike: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
