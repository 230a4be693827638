package sim

import (
	"errors"
	"fmt"
	"net/http"
)

// QueueCluster is N M/D/c queues (replicas, each with its own slots and waiting room) behind
// an in-process load balancer: an http.Handler for one address. It balances as Cluster does
// (BalanceIndex with the policy and Seed), so that a plan's rehearsal on queues, whose steady
// state is known exactly, runs over HTTP as it runs on the virtual clock. Completion POSTs go
// to the replica the policy picks; anything else is answered by replica 0, except GET /health
// (200 while every replica is up) and GET /metrics (the replicas' counters and gauges summed,
// under a Queue's names).
type QueueCluster struct {
	router[*Queue]
	cfg QueueConfig
}

var _ http.Handler = (*QueueCluster)(nil)

// NewQueueCluster validates cfg, replicas (1 to MaxReplicas) and policy (BalancePolicies; ""
// is round-robin), and starts the replicas' schedulers; seed draws the random policy's
// choices. Call Close to stop them.
func NewQueueCluster(cfg QueueConfig, replicas int, policy string, seed int64) (*QueueCluster, error) {
	policy, errs := checkCluster("sim queue cluster", replicas, policy)
	if err := cfg.Validate(); err != nil {
		errs = append([]error{fmt.Errorf("sim queue config: %w", err)}, errs...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c := &QueueCluster{cfg: cfg, router: router[*Queue]{policy: policy, seed: seed,
		balanced: func(path string) bool { return path == "/v1/chat/completions" || path == "/v1/completions" }}}
	c.metrics = func(w http.ResponseWriter) { writeQueueMetrics(w, c.cfg.ModelName, c.Stats()) }
	for i := range replicas {
		q, err := NewQueue(cfg)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("sim queue cluster: replica %d: %w", i, err)
		}
		c.replicas = append(c.replicas, q)
	}
	base := c.replicas[0].tag
	for i, q := range c.replicas {
		q.tag = replicaTag(base, i)
	}
	return c, nil
}

// Replicas returns the number of replicas.
func (c *QueueCluster) Replicas() int { return len(c.replicas) }

// Replica returns replica i (0 ≤ i < Replicas()), for Stats.
func (c *QueueCluster) Replica(i int) *Queue { return c.replicas[i] }

// Stats sums the replicas' counters and gauges; MaxLateness is the largest.
func (c *QueueCluster) Stats() QueueStats {
	var st QueueStats
	for _, q := range c.replicas {
		s := q.Stats()
		st.Running += s.Running
		st.Waiting += s.Waiting
		st.Received += s.Received
		st.Rejected += s.Rejected
		st.Completed += s.Completed
		st.Abandoned += s.Abandoned
		st.MaxLateness = max(st.MaxLateness, s.MaxLateness)
	}
	return st
}

// RunningQueueCluster is a QueueCluster serving on a listener.
type RunningQueueCluster struct {
	*serving
	c *QueueCluster
}

// StartQueueCluster creates a QueueCluster and serves it on addr (for example "127.0.0.1:0").
func StartQueueCluster(cfg QueueConfig, replicas int, policy string, seed int64, addr string) (*RunningQueueCluster, error) {
	c, err := NewQueueCluster(cfg, replicas, policy, seed)
	if err != nil {
		return nil, err
	}
	s, err := serve("sim queue cluster", c, c.Close, c.inflight, addr)
	if err != nil {
		return nil, err
	}
	return &RunningQueueCluster{serving: s, c: c}, nil
}

// Cluster is the handler being served, for Stats.
func (r *RunningQueueCluster) Cluster() *QueueCluster { return r.c }
