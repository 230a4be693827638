// Package sweeptest holds what the sweep's tests and benchmarks judge decisions against: the
// M/D/c deployments whose capacity is known exactly (DecisionQueues) and the oracle of the
// least load that certifies a capacity (Oracle). The runners that serve them on the virtual
// clock are package virtual's.
package sweeptest

import (
	"time"

	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// DecisionQueue is an M/D/c deployment with a TTFT objective, whose capacity at a target share
// is known exactly (queueing.MDCCapacity).
type DecisionQueue struct {
	Name      string
	Queue     sim.QueueConfig
	Objective time.Duration // TTFT
}

// Capacity is the exact capacity of the queue at the objective for target of requests.
func (d DecisionQueue) Capacity(target float64) (float64, error) {
	return queueing.MDCCapacity(d.Queue.Service, d.Queue.Servers, d.Objective-d.Queue.FirstToken, target)
}

// DecisionQueues are the deployments the sweep's decisions are held to (sweep's
// TestDecisionsHoldInSteadyState and time-to-decision benchmark, scripts/oracle): fixed slots
// and a fixed service time, like an inference server that runs a fixed number of sequences of a
// fixed length. At a 99 % target their capacities lie between 35 % and 80 % of their saturation
// rates c/D, where the share of requests meeting the objective falls from 99.9 % to 97 % over
// about ±15 % of the rate: a realistic, unforgiving shape for a decision at 99 %. The first is
// the fast queue of issue 21 (requests of 0.32 s, a 100 ms objective), the others have a 500 ms
// objective and requests of 0.4 to 2 s.
var DecisionQueues = []DecisionQueue{
	{"8 slots, 320 ms, ttft 100 ms", sim.QueueConfig{ModelName: "m", Servers: 8, Service: 320 * time.Millisecond, FirstToken: 30 * time.Millisecond, OutputTokens: 16}, 100 * time.Millisecond},
	{"4 slots, 400 ms", sim.QueueConfig{ModelName: "m", Servers: 4, Service: 400 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: 16}, 500 * time.Millisecond},
	{"8 slots, 1 s", sim.QueueConfig{ModelName: "m", Servers: 8, Service: time.Second, FirstToken: 50 * time.Millisecond, OutputTokens: 16}, 500 * time.Millisecond},
	{"8 slots, 1.4 s, 64 tokens", sim.QueueConfig{ModelName: "m", Servers: 8, Service: 1400 * time.Millisecond, FirstToken: 50 * time.Millisecond, OutputTokens: 64}, 500 * time.Millisecond},
	{"16 slots, 2 s", sim.QueueConfig{ModelName: "m", Servers: 16, Service: 2 * time.Second, FirstToken: 50 * time.Millisecond, OutputTokens: 16}, 500 * time.Millisecond},
}
