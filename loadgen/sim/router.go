package sim

import (
	"fmt"
	"net/http"
	"sync/atomic"
)

// replica is what a router balances over: a Server or a Queue.
type replica interface {
	http.Handler
	Close()
	isClosed() bool
	inflightHandlers() int64
}

func (s *Server) inflightHandlers() int64 { return s.inflight.Load() }
func (q *Queue) inflightHandlers() int64  { return q.inflight.Load() }

// router is replicas behind an in-process load balancer, the part a Cluster and a QueueCluster
// share: completion POSTs (the paths balanced says) go to the replica BalanceIndex picks with
// the policy and seed; GET /health is 200 while every replica is up; GET /metrics is metrics;
// anything else is answered by replica 0.
type router[R replica] struct {
	policy   string
	seed     int64
	replicas []R
	next     atomic.Uint64
	balanced func(path string) bool
	metrics  func(http.ResponseWriter)
}

// pick returns the replica of the next completion request.
func (c *router[R]) pick() R {
	return c.replicas[BalanceIndex(c.policy, c.seed, c.next.Add(1)-1, len(c.replicas))]
}

func (c *router[R]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && c.balanced(r.URL.Path) {
		c.pick().ServeHTTP(w, r)
		return
	}
	switch r.URL.Path {
	case "/health":
		if allowMethod(w, r, http.MethodGet) {
			for i, s := range c.replicas {
				if s.isClosed() {
					writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "",
						fmt.Sprintf("replica %d of the simulated cluster is shut down", i))
					return
				}
			}
			w.WriteHeader(http.StatusOK)
		}
		return
	case "/metrics":
		if allowMethod(w, r, http.MethodGet) {
			c.metrics(w)
		}
		return
	}
	c.replicas[0].ServeHTTP(w, r)
}

// Close stops every replica. It is safe to call more than once.
func (c *router[R]) Close() {
	for _, s := range c.replicas {
		s.Close()
	}
}

// inflight is the number of completion handlers running on all replicas.
func (c *router[R]) inflight() int64 {
	var n int64
	for _, s := range c.replicas {
		n += s.inflightHandlers()
	}
	return n
}
