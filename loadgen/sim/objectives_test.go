package sim_test

import (
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// TestQueueObjectives: the queue's default objective is a TTFT of its service time plus its
// first token, and nothing else.
func TestQueueObjectives(t *testing.T) {
	for _, tc := range []struct {
		service, first time.Duration
		want           time.Duration
	}{
		{40 * time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond},
		{1500 * time.Microsecond, 0, 1500 * time.Microsecond},
		{2 * time.Second, 2 * time.Second, 4 * time.Second},
	} {
		q := sim.DefaultQueueConfig()
		q.Service, q.FirstToken = tc.service, tc.first
		if got := q.Objectives(); got != (sim.Objectives{TTFT: tc.want}) {
			t.Errorf("service %v, first token %v: %+v, want a TTFT of %v alone", tc.service, tc.first, got, tc.want)
		}
	}
}

// TestProfileObjectives: every profile has objectives on both TTFT and TPOT (its curve has a
// knee to find), the default profile's are the README's, and an unknown profile has none.
func TestProfileObjectives(t *testing.T) {
	for _, name := range []string{"", sim.ProfileDefault, sim.ProfileLatency, sim.ProfileMedium, sim.ProfileThroughput} {
		if o := sim.ProfileObjectives(name); o.TTFT <= 0 || o.TPOT <= 0 {
			t.Errorf("profile %q: %+v, want both objectives", name, o)
		}
	}
	if got, want := sim.ProfileObjectives(sim.ProfileDefault), (sim.Objectives{TTFT: 100 * time.Millisecond, TPOT: 750 * time.Microsecond}); got != want {
		t.Errorf("default profile: %+v, want %+v", got, want)
	}
	if got := sim.ProfileObjectives("no-such-profile"); got != (sim.Objectives{}) {
		t.Errorf("an unknown profile: %+v, want none", got)
	}
}
