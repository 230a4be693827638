package sweeptest

import (
	"container/heap"
	"context"
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/sim"
	"github.com/loadcurve/loadcurve/sweep"
)

// ClosedQueueRunner serves closed-loop tiers (Plan.Tier.Users > 0) on the virtual M/D/c queue:
// each user sends its next request of the pool when its previous one ended plus the tier's think
// time. With a fixed think time the whole system is deterministic; with none, N users that start
// together are served c at a time in rounds of the service time, so every wait is a whole
// number of rounds, at most ⌈N/c⌉ − 1, and the highest N whose TTFT meets an objective is known
// exactly (see the sweep's TestConcurrencySearchFindsTheTruth).
type ClosedQueueRunner struct {
	Config sim.QueueConfig
	// Tiers counts the tiers run and Seconds the virtual time they took (to each last end).
	Tiers   int
	Seconds float64
}

var _ sweep.Runner = (*ClosedQueueRunner)(nil)

// RunTier implements sweep.Runner on the virtual clock.
func (q *ClosedQueueRunner) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	id := p.Tier
	id.WorkloadFingerprint = "virtual-mdc-closed-loop"
	id.StartWall = time.Unix(0, 0).UTC()
	cfg := q.Config
	if err := cfg.Validate(); err != nil {
		return id, err
	}
	if id.Users < 1 || len(p.Offsets) != id.Users || cfg.QueueLimit != 0 {
		return id, fmt.Errorf("closed queue: want a closed-loop plan (%d users, %d starts) and no queue limit", id.Users, len(p.Offsets))
	}
	think := time.Duration(id.ThinkS * float64(time.Second))
	arrivals := &eventHeap{}
	for u, at := range p.Offsets {
		heap.Push(arrivals, event{at: at, session: u + 1})
	}
	free := &durationHeap{}
	for range cfg.Servers {
		heap.Push(free, time.Duration(0))
	}
	done := &recordHeap{}
	taken, emitted, stopped, stopAt := 0, 0, false, time.Duration(0)
	var lastSent time.Duration // the arrival phase of a closed loop ends with its last request
	var last time.Duration
	var sinkErr error
	emit := func(rec records.Record) {
		emitted++
		last = max(last, rec.End)
		if sinkErr == nil {
			sinkErr = sink.Write(&rec)
		}
		if !stopped {
			select {
			case <-stop:
				stopped, stopAt = true, rec.End
			default:
			}
		}
	}
	for arrivals.Len() > 0 && ctx.Err() == nil {
		next := heap.Pop(arrivals).(event)
		for done.Len() > 0 && (*done)[0].End <= next.at {
			emit(heap.Pop(done).(records.Record))
		}
		if (stopped && next.at > stopAt) || (p.StopAfter > 0 && next.at >= p.StopAfter) || taken >= p.Pool {
			continue // the user retires
		}
		start := max(next.at, heap.Pop(free).(time.Duration))
		end := start + cfg.Service
		heap.Push(free, end)
		heap.Push(done, queueRecord(id.Tier, sim.QueueResult{Index: taken, Arrival: next.at, Start: start,
			First: start + cfg.FirstToken, Last: end, End: end, Tokens: cfg.OutputTokens}))
		taken++
		lastSent = next.at
		heap.Push(arrivals, event{at: end + think, session: next.session})
	}
	for done.Len() > 0 {
		emit(heap.Pop(done).(records.Record))
	}
	if sinkErr != nil {
		return id, sinkErr
	}
	end := records.TierEnd{Kind: records.KindTierEnd, Tier: id.Tier, Planned: emitted, ArrivalsEndS: lastSent.Seconds(), Reason: records.EndedSchedule}
	switch {
	case stopped:
		end.Reason, end.ArrivalsEndS = records.EndedDecided, stopAt.Seconds()
	case ctx.Err() != nil:
		end.Reason = records.EndedInterrupted
	case id.MaxDurationS > 0:
		end.Reason = records.EndedCap
	}
	id.End = &end
	q.Tiers++
	q.Seconds += last.Seconds()
	return id, nil
}
