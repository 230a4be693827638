package sim

import (
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/internal/queueing"
)

// QueueResult is the outcome of one request of SimulateQueue, in offsets
// from T0. A served request has Start (when a slot took it), First (Start +
// FirstToken), Last and End (both Start + Service) and Tokens
// (OutputTokens). A rejected one (the waiting room was full) has only
// Arrival, End = Arrival and Rejected.
type QueueResult struct {
	Index                            int // index in the arrivals
	Arrival, Start, First, Last, End time.Duration
	Tokens                           int
	Rejected                         bool
}

// Wait is the time the request spent waiting for a slot (0 for a rejected
// one).
func (r QueueResult) Wait() time.Duration {
	if r.Rejected {
		return 0
	}
	return r.Start - r.Arrival
}

// SimulateQueue runs the M/D/c FIFO queue of cfg on a virtual clock
// (queueing.Simulate, with the tokens' times of Queue added) for requests
// arriving at the given offsets from T0 (non-decreasing), with the same rule
// as Queue: FIFO starts, cfg.Servers slots, a request that finds
// cfg.QueueLimit requests waiting rejected at its arrival, and, at equal
// times, ends of service before arrivals.
//
// emit receives each request's result when its outcome is known: at its
// end of service, or at its arrival when rejected; results come in
// non-decreasing order of that time (results of one time in arrival
// order). When emit returns true the run stops admitting: arrivals later
// than the time of the result just emitted are not part of the run and are
// never emitted, while the requests that arrived by then (waiting ones
// included) run to completion and are all emitted, whatever emit returns
// from then on. This is how a sweep ends a tier once its verdict is known.
//
// It returns an error, before emitting anything, when cfg is invalid or
// the arrivals decrease. It takes O(1) amortised time per request.
func SimulateQueue(cfg QueueConfig, arrivals []time.Duration, emit func(QueueResult) bool) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("sim queue config: %w", err)
	}
	return queueing.Simulate(cfg.queue(), arrivals, func(r queueing.Result) bool {
		q := QueueResult{Index: r.Index, Arrival: r.Arrival, End: r.End, Rejected: r.Rejected}
		if !r.Rejected {
			q.Start, q.First, q.Last, q.Tokens = r.Start, r.Start+cfg.FirstToken, r.End, cfg.OutputTokens
		}
		return emit(q)
	})
}

// queue is the M/D/c queue c serves requests by.
func (c QueueConfig) queue() queueing.Config {
	return queueing.Config{Servers: c.Servers, Service: c.Service, QueueLimit: c.QueueLimit}
}
