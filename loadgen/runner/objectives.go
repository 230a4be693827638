package runner

import (
	"fmt"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure"
)

// DefaultObjectives are the objectives a sweep of the deployment opts names judges by when it
// is given none, and whose they are, in words: a real deployment's (Target.BaseURL) are
// sweep.DefaultObjectives; the embedded M/D/c queue's (Queue) its service time plus its first
// token; the embedded engine's, those of its profile (SimLabel, sim.ProfileObjectives).
func DefaultObjectives(opts Options) (objectives measure.Objectives, whose string) {
	switch {
	case opts.Target.BaseURL != "":
		return sweep.DefaultObjectives, "the default for a real target"
	case opts.Queue != nil:
		return simObjectives(opts.Queue.Objectives()), "the embedded queue's: its service time plus its first token"
	}
	return simObjectives(sim.ProfileObjectives(opts.SimLabel)), "the embedded deployment's own"
}

// simObjectives are an embedded deployment's own objectives as the sweep judges them.
func simObjectives(o sim.Objectives) measure.Objectives {
	return measure.Objectives{TTFT: o.TTFT, TPOT: o.TPOT}
}

// ExactCapacityNote is, for a sweep of the embedded M/D/c queue judged by a TTFT objective alone
// that leaves the queue some waiting (above its first token), the line that gives the queue's
// exact capacity at it for share of requests (queueing.MDCCapacity), for comparison with what the
// sweep finds; "" otherwise. Served in real time, the loopback's network time is left aside.
func ExactCapacityNote(opts Options, o measure.Objectives, share float64) string {
	q := opts.Queue
	if q == nil || o != (measure.Objectives{TTFT: o.TTFT}) || o.TTFT <= q.FirstToken {
		return ""
	}
	truth, err := queueing.MDCCapacity(q.Service, q.Servers, o.TTFT-q.FirstToken, share)
	if err != nil {
		return ""
	}
	aside := "; loopback network time aside"
	if opts.Virtual {
		aside = ""
	}
	return fmt.Sprintf("for comparison: the embedded M/D/c queue's exact capacity at these objectives is %.4g req/s (queueing.MDCCapacity%s)", truth, aside)
}
