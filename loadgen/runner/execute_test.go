package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// virtualSession opens a session on the virtual M/D/c queue, tallying the records as they pass.
func virtualSession(t *testing.T) *runner.Session {
	q := sim.QueueConfig{ModelName: "mdc", Servers: 2, Service: 100 * time.Millisecond, FirstToken: 10 * time.Millisecond, OutputTokens: 4}
	return open(t, "", "off", "", func(o *runner.Options) {
		o.Target.Model, o.Queue, o.Virtual, o.SimLabel, o.Tally = "", &q, true, q.String(), true
	})
}

// runConfig is a run of n arrivals at 10/s on the virtual clock.
func runConfig(n int) sweep.Config {
	return sweep.Config{Schedule: arrival.Spec{Rate: 10, Burstiness: 1}, Requests: n, Seed: 1, Settings: result.DefaultSettings(),
		Drain: sweep.RunDrain(0, false)}
}

// TestExecuteARun: a run executed in a session has its one tier, whole, and the peak figures the
// session tallied; the executor's lines go to its log.
func TestExecuteARun(t *testing.T) {
	s := virtualSession(t)
	var lines []string
	x := s.Executor(runConfig(40), func(format string, a ...any) { lines = append(lines, format) }, nil)
	res, err := s.Execute(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tiers) != 1 || res.Tiers[0].Summary.Planned != 40 || !res.Complete {
		t.Fatalf("result: %d tiers, complete %v", len(res.Tiers), res.Complete)
	}
	if res.Header.Target != s.Header.Target {
		t.Errorf("result header target %q, want the session's %q", res.Header.Target, s.Header.Target)
	}
	if p, ok := res.Peaks[0]; !ok || p.MaxConcurrentRequests < 1 {
		t.Errorf("peaks %+v: want the session's tally of tier 0", res.Peaks)
	}
	if len(lines) == 0 {
		t.Error("the executor logged nothing")
	}
}

// TestExecuteInterrupted: interrupted before its tier, a run returns no error (the caller says
// it was interrupted); a bad configuration is the executor's error.
func TestExecuteInterrupted(t *testing.T) {
	s := virtualSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Execute(ctx, s.Executor(runConfig(40), nil, nil)); err != nil {
		t.Errorf("interrupted: %v, want no error", err)
	}
	bad := runConfig(40)
	bad.Requests, bad.Duration = 0, 0
	bad.Schedule = nil
	bad.Rates = sweep.Rates{List: []float64{-1}}
	_, err := s.Execute(context.Background(), s.Executor(bad, nil, nil))
	if err == nil {
		t.Fatal("a negative rate: no error")
	}
	if !strings.Contains(err.Error(), "rate") {
		t.Errorf("error %q does not name the rates", err)
	}
}
