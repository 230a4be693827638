// Package virtual serves sweep tiers on the virtual clock, without HTTP and without waiting:
// QueueRunner is a sweep.Runner that serves every tier with the discrete-event model of an
// M/D/c FIFO queue (sim.SimulateQueue), whose steady state is known exactly (queueing.MDCWaitCDF).
// The other runners serve on the same queues: sessions (SessionQueueRunner), closed-loop users
// (ClosedQueueRunner), and replicas behind a balancer (ClusterQueueRunner, for capacity plans'
// rehearsals). `--sim-clock virtual` runs the embedded queue on them (package runner); the
// sweep's own tests and the time-to-decision benchmark hold its decisions against the truth
// with them, in microseconds per tier.
package virtual

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
)

// QueueRunner serves tiers on a virtual M/D/c queue. A request's record has planned =
// dispatched = slot = sent (the client is perfect and uncapped: plans with a concurrency cap
// are not supported), its first output FirstToken after the start of service, its tokens evenly
// spaced to the end of service, and a rejected request (QueueLimit) an HTTP 429 at arrival. A
// request still running at the plan's drain deadline (its Grace after the arrival phase ended)
// is canceled there, as loadgen cancels it. Every tier starts from an empty queue.
type QueueRunner struct {
	Config sim.QueueConfig
	Usage
}

var _ sweep.Runner = (*QueueRunner)(nil)

// queueRecord is the record of a request the virtual queue served (or rejected).
func queueRecord(tier int, r sim.QueueResult) records.Record {
	rec := records.NewRecord(tier, r.Index, r.Arrival)
	rec.Dispatched, rec.Slot, rec.Sent = r.Arrival, r.Arrival, r.Arrival
	rec.End = r.End
	if r.Rejected {
		rec.Outcome, rec.HTTPStatus, rec.Error = records.HTTPError, 429, "HTTP 429: the waiting room is full"
	} else {
		rec.FirstEvent, rec.First, rec.Last = r.First, r.First, r.Last
		rec.Chunks, rec.OutputTokens, rec.OutputTokensSource = r.Tokens, r.Tokens, records.SourceUsage
		rec.InputTokens, rec.InputTokensSource = 1, records.SourceWorkload
		rec.FinishReason = "length"
		if n := r.Tokens - 1; n > 0 {
			rec.ITL = make([]time.Duration, n)
			prev := r.First
			for k := 1; k <= n; k++ {
				at := r.First + (r.Last-r.First)*time.Duration(k)/time.Duration(n)
				rec.ITL[k-1] = at - prev
				prev = at
			}
		}
	}
	return rec
}

// drainDeadline is a tier's second deadline when its arrival phase ends at phaseEnd: the plan's
// Grace later, as loadgen cancels the requests still running then (none without a Grace).
func drainDeadline(p sweep.Plan, phaseEnd time.Duration) time.Duration {
	if p.Grace <= 0 {
		return math.MaxInt64
	}
	return phaseEnd + p.Grace
}

// cutAtDeadline makes rec the record of a request the drain deadline canceled, as loadgen
// records one: it ends there, canceled, with the output it streamed before (the queue streams
// its tokens evenly from the first to the last; no usage arrives on a canceled stream).
func cutAtDeadline(rec *records.Record, deadline, grace time.Duration) {
	rec.Outcome, rec.End, rec.FinishReason = records.Canceled, deadline, ""
	rec.Error = fmt.Sprintf("canceled: the tier's drain deadline passed (grace %v after dispatching stopped)", grace)
	if rec.First == records.Unset || rec.First > deadline {
		rec.FirstEvent, rec.First, rec.Last = records.Unset, records.Unset, records.Unset
		rec.Chunks, rec.OutputTokens, rec.ITL = 0, 0, nil
		return
	}
	got := 1
	if n := len(rec.ITL); n > 0 && rec.Last > rec.First {
		got = 1 + int(float64(n)*float64(deadline-rec.First)/float64(rec.Last-rec.First))
		got = min(got, n+1)
		rec.Last = rec.First
		for _, gap := range rec.ITL[:got-1] {
			rec.Last += gap
		}
		rec.ITL = rec.ITL[:got-1]
	}
	rec.Chunks, rec.OutputTokens, rec.OutputTokensSource = got, got, records.SourceChunks
}

// RunTier implements sweep.Runner on the virtual clock.
func (q *QueueRunner) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	cfg := q.Config
	id, err := openTier(p, "virtual-mdc", cfg)
	if err != nil {
		return id, err
	}
	emitted, stoppedAt, stopped := 0, time.Duration(0), false
	var last time.Duration
	var sinkErr error
	deadline := drainDeadline(p, p.ArrivalsEnd)
	err = sim.SimulateQueue(cfg, p.Offsets, func(r sim.QueueResult) bool {
		rec := queueRecord(id.Tier, r)
		if rec.End > deadline {
			cutAtDeadline(&rec, deadline, p.Grace)
		}
		emitted++
		last = max(last, rec.End)
		if sinkErr == nil {
			sinkErr = sink.Write(&rec)
		}
		if stopped {
			return false
		}
		select {
		case <-stop:
			stopped, stoppedAt = true, r.End
			deadline = min(deadline, drainDeadline(p, stoppedAt))
			return true
		default:
			return ctx.Err() != nil
		}
	})
	if err != nil {
		return id, err
	}
	if sinkErr != nil {
		return id, sinkErr
	}
	id.End = tierEnd(ctx, id, emitted, p.ArrivalsEnd, stopped, stoppedAt)
	q.add(last)
	return id, nil
}
