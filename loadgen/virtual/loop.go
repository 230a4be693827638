package virtual

import (
	"container/heap"
	"context"
	"time"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Usage counts the tiers a runner ran and the virtual time they took (to each last end).
type Usage struct {
	Tiers   int
	Seconds float64
}

// add counts a tier whose last record ended at last.
func (u *Usage) add(last time.Duration) {
	u.Tiers++
	u.Seconds += last.Seconds()
}

// openTier is a virtual tier's identity: the plan's, named by the runner's model (fingerprint),
// starting at the Unix epoch, once cfg is valid.
func openTier(p sweep.Plan, fingerprint string, cfg sim.QueueConfig) (records.Tier, error) {
	id := p.Tier
	id.WorkloadFingerprint = fingerprint
	id.StartWall = time.Unix(0, 0).UTC()
	return id, cfg.Validate()
}

// loopResult is what serveLoop did.
type loopResult struct {
	emitted     int
	stopped     bool
	stopAt      time.Duration // the end of the record emitted when the stop was seen
	last        time.Duration // the latest end
	lastArrival time.Duration // the latest arrival served
}

// balancer spreads a loop's admitted arrivals over replicas of the queue: the k-th (from 0)
// goes to replica route(k). The zero balancer is one queue.
type balancer struct {
	replicas int
	route    func(k int) int
}

// serveLoop serves arrivals that depend on earlier ends (a session's next turn, a user's next
// request), or that do not (a plain tier's), on the virtual M/D/c queue of cfg: FIFO,
// cfg.Servers slots, no waiting-room limit; or on b.replicas such queues, each arrival served by
// the one b routes it to. It takes arrivals in time order, from initial and from those serve
// causes, and hands each record to sink in order of its end, before any arrival after that end.
// serve gets an admitted arrival with its start and end of service and returns its record and,
// when follow is true, the arrival it causes. admit, when not nil, may turn an arrival away: it
// is not part of the tier. Once stop is closed, arrivals after the end of the record emitted
// then are not part of the tier either. The error is the sink's first.
func serveLoop(ctx context.Context, cfg sim.QueueConfig, b balancer, initial []event, sink sweep.Sink, stop <-chan struct{},
	admit func(event) bool, serve func(ev event, start, end time.Duration) (rec records.Record, next event, follow bool)) (loopResult, error) {
	var res loopResult
	arrivals := &eventHeap{}
	for _, ev := range initial {
		heap.Push(arrivals, ev)
	}
	if b.replicas < 1 {
		b = balancer{replicas: 1, route: func(int) int { return 0 }}
	}
	free := make([]*durationHeap, b.replicas)
	for i := range free {
		free[i] = &durationHeap{}
		for range cfg.Servers {
			heap.Push(free[i], time.Duration(0))
		}
	}
	admitted := 0
	done := &recordHeap{}
	var sinkErr error
	emit := func(rec records.Record) {
		res.emitted++
		res.last = max(res.last, rec.End)
		if sinkErr == nil {
			sinkErr = sink.Write(&rec)
		}
		if !res.stopped {
			select {
			case <-stop:
				res.stopped, res.stopAt = true, rec.End
			default:
			}
		}
	}
	for arrivals.Len() > 0 && ctx.Err() == nil {
		next := heap.Pop(arrivals).(event)
		for done.Len() > 0 && (*done)[0].End <= next.at {
			emit(heap.Pop(done).(records.Record))
		}
		if (res.stopped && next.at > res.stopAt) || (admit != nil && !admit(next)) {
			continue
		}
		q := free[b.route(admitted)]
		admitted++
		start := max(next.at, heap.Pop(q).(time.Duration))
		end := start + cfg.Service
		heap.Push(q, end)
		rec, follow, ok := serve(next, start, end)
		heap.Push(done, rec)
		res.lastArrival = next.at
		if ok {
			heap.Push(arrivals, follow)
		}
	}
	for done.Len() > 0 {
		emit(heap.Pop(done).(records.Record))
	}
	return res, sinkErr
}

// served is the sim's result of a request of the virtual queue served from start to end.
func served(cfg sim.QueueConfig, index int, arrival, start, end time.Duration) sim.QueueResult {
	return sim.QueueResult{Result: queueing.Result{Index: index, Arrival: arrival, Start: start, End: end}, First: start + cfg.FirstToken, Last: end, Tokens: cfg.OutputTokens}
}

// tierEnd is the closing line of a virtual tier: its arrival phase ended at arrivalsEnd unless
// the stop came first (at stopAt) or the context was canceled; a capped tier ran to its cap.
func tierEnd(ctx context.Context, id records.Tier, emitted int, arrivalsEnd time.Duration, stopped bool, stopAt time.Duration) *records.TierEnd {
	end := records.TierEnd{Kind: records.KindTierEnd, Tier: id.Tier, Planned: emitted, ArrivalsEndS: arrivalsEnd.Seconds(), Reason: records.EndedSchedule}
	switch {
	case stopped:
		end.Reason, end.ArrivalsEndS = records.EndedDecided, stopAt.Seconds()
	case ctx.Err() != nil:
		end.Reason = records.EndedInterrupted
	case id.MaxDurationS > 0:
		end.Reason = records.EndedCap
	}
	return &end
}
