package sim_test

import (
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure"
)

// TestQueueObjectives: the queue's default objective is a TTFT of its service time plus its
// first token, in milliseconds, in a form --goodput reads.
func TestQueueObjectives(t *testing.T) {
	for _, tc := range []struct {
		service, first time.Duration
		want           string
	}{
		{40 * time.Millisecond, 10 * time.Millisecond, "ttft:50"},
		{1500 * time.Microsecond, 0, "ttft:1.5"},
		{2 * time.Second, 2 * time.Second, "ttft:4000"},
	} {
		q := sim.DefaultQueueConfig()
		q.Service, q.FirstToken = tc.service, tc.first
		got := q.Objectives()
		if got != tc.want {
			t.Errorf("service %v, first token %v: %q, want %q", tc.service, tc.first, got, tc.want)
		}
		if _, err := measure.ParseGoodput([]string{got}); err != nil {
			t.Errorf("%q does not parse as objectives: %v", got, err)
		}
	}
}
