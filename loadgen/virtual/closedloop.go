package virtual

import (
	"context"
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
)

// ClosedQueueRunner serves closed-loop tiers (curve.AxisUsers: Plan.Tier.Users set) on the virtual M/D/c queue:
// each user sends its next request of the pool when its previous one ended plus the tier's think
// time. With a fixed think time the whole system is deterministic; with none, N users that start
// together are served c at a time in rounds of the service time, so every wait is a whole
// number of rounds, at most ⌈N/c⌉ − 1, and the highest N whose TTFT meets an objective is known
// exactly (see the sweep's TestConcurrencySearchFindsTheTruth).
type ClosedQueueRunner struct {
	Config sim.QueueConfig
	Usage
}

var _ sweep.Runner = (*ClosedQueueRunner)(nil)

// RunTier implements sweep.Runner on the virtual clock.
func (q *ClosedQueueRunner) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	cfg := q.Config
	id, err := openTier(p, "virtual-mdc-closed-loop", cfg)
	if err != nil {
		return id, err
	}
	if id.Users < 1 || len(p.Offsets) != id.Users || cfg.QueueLimit != 0 {
		return id, fmt.Errorf("closed queue: want a closed-loop plan (%d users, %d starts) and no queue limit", id.Users, len(p.Offsets))
	}
	think := time.Duration(id.ThinkS * float64(time.Second))
	initial := make([]event, len(p.Offsets))
	for u, at := range p.Offsets {
		initial[u] = event{at: at, session: u + 1}
	}
	taken := 0
	retires := func(ev event) bool { return (p.StopAfter > 0 && ev.at >= p.StopAfter) || taken >= p.Pool }
	res, err := serveLoop(ctx, cfg, balancer{}, initial, sink, stop, func(ev event) bool { return !retires(ev) },
		func(ev event, start, end time.Duration) (records.Record, event, bool) {
			rec := queueRecord(id.Tier, served(cfg, taken, ev.at, start, end))
			taken++
			return rec, event{at: end + think, session: ev.session}, true
		})
	if err != nil {
		return id, err
	}
	// The arrival phase of a closed loop ends with the last request its users sent.
	id.End = tierEnd(ctx, id, res.emitted, res.lastArrival, res.stopped, res.stopAt)
	q.add(res.last)
	return id, nil
}
