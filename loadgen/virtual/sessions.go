package virtual

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
)

// SessionQueueRunner serves tiers of sessions on the virtual M/D/c queue: every arrival of the
// plan starts a session of Turns requests, each sent when the one before it ended plus a think
// time drawn from an exponential distribution of mean Think (seeded by the tier's seed). The
// requests' records are those of QueueRunner, with their session and turn.
//
// Its request arrivals are a Poisson cluster process: Poisson session starts, each followed by
// Turns-1 later turns at least a service time plus a think time apart. When the think time is
// long against the service time, two turns of one session are never close, and at the queue's
// own time scale the arrivals are nearly Poisson of rate Turns × the session rate: the
// session capacity is then close to the M/D/c capacity (queueing.MDCCapacity) over Turns.
type SessionQueueRunner struct {
	Config sim.QueueConfig
	Turns  int
	Think  time.Duration
	Usage
}

var _ sweep.Runner = (*SessionQueueRunner)(nil)

// RunTier implements sweep.Runner on the virtual clock.
func (q *SessionQueueRunner) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	cfg := q.Config
	id, err := openTier(p, fmt.Sprintf("virtual-mdc-sessions(turns=%d, think=%v)", q.Turns, q.Think), cfg)
	if err != nil {
		return id, err
	}
	if q.Turns < 1 || q.Think < 0 || cfg.QueueLimit != 0 {
		return id, fmt.Errorf("session queue: want turns >= 1, think >= 0 and no queue limit")
	}
	rng := rand.New(rand.NewPCG(uint64(id.Seed), 0x73657373)) // "sess"
	initial := make([]event, len(p.Offsets))
	for k, at := range p.Offsets {
		initial[k] = event{at: at, session: k + 1, turn: 1}
	}
	res, err := serveLoop(ctx, cfg, balancer{}, initial, sink, stop, nil, func(ev event, start, end time.Duration) (records.Record, event, bool) {
		rec := queueRecord(id.Tier, served(cfg, (ev.session-1)*q.Turns+ev.turn-1, ev.at, start, end))
		rec.Session, rec.Turn = ev.session, ev.turn
		if ev.turn == q.Turns {
			return rec, event{}, false
		}
		think := time.Duration(rng.ExpFloat64() * float64(q.Think))
		return rec, event{at: end + think, session: ev.session, turn: ev.turn + 1}, true
	})
	if err != nil {
		return id, err
	}
	id.Planned = res.emitted
	id.End = tierEnd(ctx, id, res.emitted, p.ArrivalsEnd, res.stopped, res.stopAt)
	q.add(res.last)
	return id, nil
}

type event struct {
	at            time.Duration
	session, turn int
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].session < h[j].session
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type durationHeap []time.Duration

func (h durationHeap) Len() int           { return len(h) }
func (h durationHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h durationHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *durationHeap) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *durationHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// recordHeap orders records by their end (then id), the order a client would see them end.
type recordHeap []records.Record

func (h recordHeap) Len() int { return len(h) }
func (h recordHeap) Less(i, j int) bool {
	if h[i].End != h[j].End {
		return h[i].End < h[j].End
	}
	return h[i].ID < h[j].ID
}
func (h recordHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *recordHeap) Push(x any)   { *h = append(*h, x.(records.Record)) }
func (h *recordHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
