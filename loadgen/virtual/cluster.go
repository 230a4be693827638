package virtual

import (
	"context"
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
)

// ClusterQueueRunner serves open-loop tiers on Replicas virtual M/D/c queues of Config behind a
// balancer that routes the k-th arrival as sim.Cluster does (sim.BalanceIndex with Policy and
// Seed): the virtual twin of `--sim-replicas N --sim-balance POLICY`. With the random policy
// each replica sees a Poisson tier's arrivals thinned at random, so a Poisson stream again at
// rate/Replicas, and its steady state is the M/D/c one (queueing.MDCWaitCDF) at that rate: the
// scale-out assumption of package plan, exactly. Round-robin hands each replica every
// Replicas-th arrival, a smoother stream that waits less. Records are as QueueRunner's.
type ClusterQueueRunner struct {
	Config   sim.QueueConfig
	Replicas int
	Policy   string
	Seed     int64
	Usage
}

var _ sweep.Runner = (*ClusterQueueRunner)(nil)

// RunTier implements sweep.Runner on the virtual clock.
func (q *ClusterQueueRunner) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	cfg := q.Config
	id, err := openTier(p, "virtual-mdc-cluster", cfg)
	if err != nil {
		return id, err
	}
	if !curve.AxisOfTier(id).Open() || cfg.QueueLimit != 0 || q.Replicas < 1 {
		return id, fmt.Errorf("cluster queue: want an open-loop plan, no queue limit and at least one replica (%d users, limit %d, %d replicas)",
			id.Users, cfg.QueueLimit, q.Replicas)
	}
	initial := make([]event, len(p.Offsets))
	for i, at := range p.Offsets {
		initial[i] = event{at: at, session: i}
	}
	b := balancer{replicas: q.Replicas, route: func(k int) int { return sim.BalanceIndex(q.Policy, q.Seed, uint64(k), q.Replicas) }}
	res, err := serveLoop(ctx, cfg, b, initial, sink, stop, nil,
		func(ev event, start, end time.Duration) (records.Record, event, bool) {
			return queueRecord(id.Tier, served(cfg, ev.session, ev.at, start, end)), event{}, false
		})
	if err != nil {
		return id, err
	}
	id.End = tierEnd(ctx, id, res.emitted, p.ArrivalsEnd, res.stopped, res.stopAt)
	q.add(res.last)
	return id, nil
}
