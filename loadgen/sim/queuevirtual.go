package sim

import (
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/internal/queueing"
)

// QueueResult is the outcome of one request of SimulateQueue, in offsets
// from T0: queueing.Result's (its Index, Arrival, Start, End, Rejected and
// Wait) with the tokens' times, First (Start + FirstToken) and Last (Start +
// Service), and Tokens (OutputTokens) for a served request.
type QueueResult struct {
	queueing.Result
	First, Last time.Duration
	Tokens      int
}

// SimulateQueue runs the M/D/c FIFO queue of cfg on a virtual clock
// (queueing.Simulate, with the tokens' times of Queue added) for requests
// arriving at the given offsets from T0 (non-decreasing), with the same rule
// as Queue: FIFO starts, cfg.Servers slots, a request that finds
// cfg.QueueLimit requests waiting rejected at its arrival, and, at equal
// times, ends of service before arrivals.
//
// emit receives each result as queueing.Simulate hands it over, and stops the
// run's admissions as there. It returns an error, before emitting anything,
// when cfg is invalid or the arrivals decrease.
func SimulateQueue(cfg QueueConfig, arrivals []time.Duration, emit func(QueueResult) bool) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("sim queue config: %w", err)
	}
	return queueing.Simulate(cfg.queue(), arrivals, func(r queueing.Result) bool {
		q := QueueResult{Result: r}
		if !r.Rejected {
			q.First, q.Last, q.Tokens = r.Start+cfg.FirstToken, r.End, cfg.OutputTokens
		}
		return emit(q)
	})
}

// queue is the M/D/c queue c serves requests by.
func (c QueueConfig) queue() queueing.Config {
	return queueing.Config{Servers: c.Servers, Service: c.Service, QueueLimit: c.QueueLimit}
}
