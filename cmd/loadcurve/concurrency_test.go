package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestConcurrencySweepOnTheEmbeddedQueue: a sweep of two concurrency levels against the
// embedded M/D/c queue (4 slots, 50 ms of service) on the virtual clock. 4 users never wait, so
// they meet a TTFT objective of 10 + 50 ms; 12 users wait two rounds (100 ms) and miss it. Each
// user sends its next request when its last one ended, and the users produce what the slots can
// serve. (The exact capacity search is held in sweep's TestConcurrencySearchFindsTheTruth; here
// the command's wiring and words.)
func TestConcurrencySweepOnTheEmbeddedQueue(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "conc")
	code, stdout, stderr := runCLI(t, "sweep", "--sim-model", "mdc", "--sim-clock", "virtual", "--sim-queue-servers", "4", "--sim-queue-service", "50ms",
		"--sim-queue-first-token", "10ms", "--max-concurrencies", "4,12", "--num-requests", "160", "--goodput", "ttft:60", "--target-share", "0.9",
		"--no-confirm", "--max-schedule-lag", "1s", "--out", dir, "--verbose")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "rate users") || !strings.Contains(stdout, "req/s produced") {
		t.Errorf("the curve table does not speak of users:\n%s", stdout)
	}
	// The answer speaks of users too, and of the request rate they produce in req/s (it once
	// said "at least 4 users, producing 219 users").
	if !regexp.MustCompile(`Capacity: [^\n]*users \(producing [0-9.]+ req/s\)`).MatchString(stdout) || strings.Contains(stdout, "producing 0") ||
		regexp.MustCompile(`producing [0-9.]+ users`).MatchString(stdout) {
		t.Errorf("the answer does not state the capacity in users producing a request rate:\n%s", stdout)
	}
	var c struct {
		Analysis curve.Analysis `json:"analysis"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "curve.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	a := c.Analysis
	if a.Axis != curve.AxisConcurrency || len(a.Points) != 2 || a.Points[0].Rate != 4 || a.Points[1].Rate != 12 {
		t.Fatalf("axis %q, points %+v", a.Axis, a.Points)
	}
	if a.Points[0].Share < 0.95 || a.Points[1].Share > 0.5 {
		t.Errorf("shares %v at 4 users and %v at 12, want all and few compliant", a.Points[0].Share, a.Points[1].Share)
	}
	if a.Capacity == nil || a.Capacity.Rate < 4 || a.Capacity.Rate >= 12 || a.Capacity.Unit != "users" {
		t.Errorf("capacity %+v", a.Capacity)
	}
	// 4 slots of 50 ms serve 80 req/s: what 12 users produce (4 users, never waiting, too).
	if r := a.Points[1].RequestThroughput; r < 68 || r > 84 {
		t.Errorf("12 users produced %.1f req/s, want about 80", r)
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tier := range f.Tiers {
		if tier.Users == 0 || tier.End == nil || tier.End.Planned != 160 {
			t.Errorf("tier %d: %d users, closing line %+v", tier.Tier, tier.Users, tier.End)
		}
	}
	// Users who queued at the gate would wait about a service time (50 ms) each, all of them; a
	// busy machine delays a few goroutine wake-ups by as much (one waited 55 ms at a load
	// average of 10 under -race), so a few may, and no more than 2 %.
	waited := 0
	for _, r := range f.Records {
		q, ok := r.ClientQueueTime()
		if !ok {
			t.Errorf("tier %d request %d: no client queue time", r.Tier, r.ID)
		} else if q > 25e6 {
			waited++
		}
	}
	if waited*50 > len(f.Records) {
		t.Errorf("%d of %d requests waited over 25 ms in the client: a closed loop's users never queue there", waited, len(f.Records))
	}

	// Compared level by level, request by request (with itself: the wiring is under test).
	other := dir
	code, stdout, stderr = runCLI(t, "compare", dir, other)
	if code != exitOK || !strings.Contains(stdout, "users") || !strings.Contains(stdout, "ttft_ms") {
		t.Errorf("compare: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
