package runner_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure"
)

func TestDefaultObjectives(t *testing.T) {
	q := sim.QueueConfig{ModelName: "mdc", Servers: 1, Service: 400 * time.Millisecond, FirstToken: 25 * time.Millisecond}
	for _, tc := range []struct {
		name      string
		opts      runner.Options
		want      string // in --goodput syntax
		whoseHead string
	}{
		{"a real target", runner.Options{Target: loadgen.Target{BaseURL: "http://x"}, Queue: &q}, "ttft:2000 tpot:100", "the default for a real target"},
		{"the queue: service plus first token", runner.Options{Queue: &q}, "ttft:425", "the embedded queue's"},
		{"the engine's profile", runner.Options{SimLabel: sim.ProfileLatency}, "ttft:1000 tpot:10", "the embedded deployment's own"},
		{"the engine's default profile", runner.Options{}, "ttft:100 tpot:0.75", "the embedded deployment's own"},
	} {
		got, whose := runner.DefaultObjectives(tc.opts)
		if want, err := measure.ParseGoodput([]string{tc.want}); err != nil || got != want {
			t.Errorf("%s: DefaultObjectives = %v, want %s (%v)", tc.name, got, tc.want, err)
		}
		if !strings.HasPrefix(whose, tc.whoseHead) {
			t.Errorf("%s: whose = %q, want %q…", tc.name, whose, tc.whoseHead)
		}
	}
}

func TestExactCapacityNote(t *testing.T) {
	q := sim.QueueConfig{ModelName: "mdc", Servers: 2, Service: 100 * time.Millisecond, FirstToken: 10 * time.Millisecond}
	ttft := measure.Objectives{TTFT: 200 * time.Millisecond}
	truth, err := queueing.MDCCapacity(q.Service, q.Servers, 190*time.Millisecond, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts runner.Options
		o    measure.Objectives
		want string // "" for no note; else a part of it
	}{
		{"the engine has no exact capacity", runner.Options{}, ttft, ""},
		{"a TTFT objective on the queue, in real time", runner.Options{Queue: &q}, ttft, "loopback network time aside"},
		{"on the virtual clock, no network", runner.Options{Queue: &q, Virtual: true}, ttft, "(queueing.MDCCapacity)"},
		{"another objective too", runner.Options{Queue: &q}, measure.Objectives{TTFT: ttft.TTFT, TPOT: time.Millisecond}, ""},
		{"no waiting left", runner.Options{Queue: &q}, measure.Objectives{TTFT: q.FirstToken}, ""},
		{"no objective", runner.Options{Queue: &q}, measure.Objectives{}, ""},
	} {
		got := runner.ExactCapacityNote(tc.opts, tc.o, 0.99)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if got != "" && !strings.Contains(got, fmt.Sprintf("is %.4g req/s", truth)) {
			t.Errorf("%s: %q does not give the capacity %.4g", tc.name, got, truth)
		}
	}
}
