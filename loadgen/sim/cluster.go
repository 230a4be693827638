package sim

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Load-balancing policies of a Cluster.
const (
	// BalanceRoundRobin sends the k-th completion request (counting from
	// 0, in the order the balancer received them) to replica k mod N.
	BalanceRoundRobin = "round-robin"
	// BalanceRandom sends the k-th completion request to a replica drawn
	// uniformly from Seed and k: the same seed and arrival order give the
	// same assignment.
	BalanceRandom = "random"
)

// MaxReplicas bounds the replicas of a Cluster.
const MaxReplicas = 256

// BalancePolicies lists the load-balancing policies, the default first.
func BalancePolicies() []string { return []string{BalanceRoundRobin, BalanceRandom} }

// Salts of the cluster's random choices (see mix); distinct from the
// per-request salts of a Server.
const (
	saltReplica uint64 = 0x100 + iota
	saltBalance
)

// Cluster is N independent simulated deployments (replicas, each with its
// own engine, KV cache and prefix cache) behind an in-process load
// balancer: an http.Handler for one address.
//
// Each completion request (POST /v1/chat/completions or /v1/completions)
// goes to the one replica the policy picks; any other method on those
// paths, GET /v1/models and unknown paths are answered by replica 0.
// GET /health answers 200 while every replica is up, else 503. GET
// /metrics reports the cluster as one deployment: the sum of the
// replicas' counters, gauges and histogram buckets under the same names
// as a Server's, so that a scraper reads the cluster's totals; the
// KV-cache usage is the replicas' used KV tokens over their total
// capacity, that is the mean of their usage fractions (they share
// KVCacheTokens). A few per-replica series follow, with a replica label,
// under sim_replica_* names that no vLLM-oriented scraper sums again:
// sim_replica_requests_received_total, sim_replica_num_requests_running,
// sim_replica_num_requests_waiting, sim_replica_kv_cache_usage_perc and
// sim_replica_generation_tokens_total; sim_replicas is N.
//
// Replica 0 runs with Config.Seed, replica i > 0 with a seed derived from
// it and i, so replicas draw different early stops and faults while a run
// repeats; each replica counts its own arrival indices. A one-replica
// cluster behaves as a Server with the same Config.
type Cluster struct {
	router[*Server]
	cfg Config
}

var _ http.Handler = (*Cluster)(nil)

// NewCluster validates cfg, replicas (1 to MaxReplicas) and policy (one of
// BalancePolicies; "" means round-robin), and starts the replicas' engines.
// Call Close to stop them.
func NewCluster(cfg Config, replicas int, policy string) (*Cluster, error) {
	policy, errs := checkCluster("sim cluster", replicas, policy)
	if err := cfg.Validate(); err != nil {
		errs = append([]error{fmt.Errorf("sim config: %w", err)}, errs...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, router: router[*Server]{policy: policy, seed: cfg.Seed, replicas: make([]*Server, 0, replicas),
		balanced: func(path string) bool { _, ok := routes[path]; return ok }}}
	c.metrics = c.serveMetrics
	for i := range replicas {
		rc := cfg
		rc.Seed = replicaSeed(cfg.Seed, i)
		s, err := New(rc)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("sim cluster: replica %d: %w", i, err)
		}
		c.replicas = append(c.replicas, s)
	}
	base := c.replicas[0].tag
	for i, s := range c.replicas {
		s.tag = replicaTag(base, i)
	}
	return c, nil
}

// checkCluster returns policy ("" is round-robin) and the problems of replicas (1 to
// MaxReplicas) and policy (one of BalancePolicies), each prefixed with what.
func checkCluster(what string, replicas int, policy string) (string, []error) {
	if policy == "" {
		policy = BalanceRoundRobin
	}
	var errs []error
	if replicas < 1 || replicas > MaxReplicas {
		errs = append(errs, fmt.Errorf("%s: replicas: %d, must be between 1 and %d", what, replicas, MaxReplicas))
	}
	if !slices.Contains(BalancePolicies(), policy) {
		errs = append(errs, fmt.Errorf("%s: balance policy %q: unknown (known: %s)", what, policy, strings.Join(BalancePolicies(), ", ")))
	}
	return policy, errs
}

// replicaTag is replica i's response-id tag, from the first replica's (base): response ids are
// tag-index with indices counted per replica, so one tag per replica keeps them unique in the
// cluster.
func replicaTag(base string, i int) string { return base + "-r" + strconv.Itoa(i) }

// replicaSeed is replica i's seed: seed itself for replica 0.
func replicaSeed(seed int64, i int) int64 {
	if i == 0 {
		return seed
	}
	return int64(mix(uint64(seed), uint64(i), saltReplica))
}

// Config returns the configuration the cluster was created with (the
// replicas' own differ in Seed; see Replica).
func (c *Cluster) Config() Config { return c.cfg }

// Policy returns the load-balancing policy.
func (c *Cluster) Policy() string { return c.policy }

// Replicas returns the number of replicas.
func (c *Cluster) Replicas() int { return len(c.replicas) }

// Replica returns replica i (0 ≤ i < Replicas()), for Stats and Config.
func (c *Cluster) Replica(i int) *Server { return c.replicas[i] }

// ReplicaStats returns a snapshot of every replica, in replica order.
func (c *Cluster) ReplicaStats() []Stats {
	out := make([]Stats, len(c.replicas))
	for i, s := range c.replicas {
		out[i] = s.Stats()
	}
	return out
}

// TheoreticalPeakOutput is the cluster's plateau output throughput, in
// tokens per second: Replicas() times Config.TheoreticalPeakOutput. A
// saturating load keeps every replica's queue non-empty whichever the
// policy, so each replica reaches its own plateau.
func (c *Cluster) TheoreticalPeakOutput(inputLen, outputLen int) float64 {
	return c.cfg.TheoreticalClusterPeakOutput(len(c.replicas), inputLen, outputLen)
}

// TheoreticalClusterPeakOutput is TheoreticalPeakOutput for a Cluster of
// replicas replicas of c: replicas times the one-replica plateau, 0 when
// replicas is not between 1 and MaxReplicas.
func (c Config) TheoreticalClusterPeakOutput(replicas, inputLen, outputLen int) float64 {
	if replicas < 1 || replicas > MaxReplicas {
		return 0
	}
	return float64(replicas) * c.TheoreticalPeakOutput(inputLen, outputLen)
}

// BalanceIndex is the replica (0 to replicas−1) that a Cluster of replicas with Config.Seed seed
// and policy sends its k-th completion request to (k from 0): k mod replicas for round-robin, a
// uniform draw from seed and k for random. Virtual models of a cluster use it to balance as the
// HTTP one does.
func BalanceIndex(policy string, seed int64, k uint64, replicas int) int {
	n := uint64(replicas)
	if policy == BalanceRandom {
		return int(mix(uint64(seed), k, saltBalance) % n)
	}
	return int(k % n)
}

// serveMetrics writes the cluster's Prometheus text exposition (see
// Cluster).
func (c *Cluster) serveMetrics(w http.ResponseWriter) {
	l := c.replicas[0].metricsLabels()
	snaps := make([]metricsSnap, len(c.replicas))
	var total metricsSnap
	for i, s := range c.replicas {
		snaps[i] = s.metricsSnap()
		total.add(snaps[i])
	}
	b := total.appendProm(nil, l)
	b = appendMetric(b, "sim_replicas", "Replicas behind the simulated cluster's load balancer.", "gauge", l, float64(len(c.replicas)))
	labels := make([]string, len(c.replicas))
	for i := range labels {
		labels[i] = l + `,replica="` + strconv.Itoa(i) + `"`
	}
	for _, f := range []struct {
		name, help, typ string
		v               func(*metricsSnap) float64
	}{
		{"sim_replica_requests_received_total", "Completion requests received by each replica.", "counter",
			func(m *metricsSnap) float64 { return float64(m.received) }},
		{"sim_replica_num_requests_running", "Requests in each replica's batch.", "gauge",
			func(m *metricsSnap) float64 { return float64(m.running) }},
		{"sim_replica_num_requests_waiting", "Requests waiting in each replica's queue.", "gauge",
			func(m *metricsSnap) float64 { return float64(m.waiting) }},
		{"sim_replica_kv_cache_usage_perc", "Each replica's KV-cache usage, 0 to 1.", "gauge",
			func(m *metricsSnap) float64 { return m.kvUsage() }},
		{"sim_replica_generation_tokens_total", "Tokens generated by each replica.", "counter",
			func(m *metricsSnap) float64 { return float64(m.genTokens) }},
	} {
		b = appendHeader(b, f.name, f.help, f.typ)
		for i := range snaps {
			b = appendSample(b, f.name, labels[i], f.v(&snaps[i]))
		}
	}
	writeMetrics(w, b)
}

// RunningCluster is a simulated cluster serving on a listener.
type RunningCluster struct {
	*serving
	c *Cluster
}

// StartCluster creates a Cluster of replicas replicas of cfg balanced by
// policy (see NewCluster) and serves it on addr (for example "127.0.0.1:0"
// for any free loopback port), as Start serves one Server.
func StartCluster(cfg Config, replicas int, policy, addr string) (*RunningCluster, error) {
	c, err := NewCluster(cfg, replicas, policy)
	if err != nil {
		return nil, err
	}
	s, err := serve("sim cluster", c, c.Close, c.inflight, addr)
	if err != nil {
		return nil, err
	}
	return &RunningCluster{serving: s, c: c}, nil
}

// Cluster is the handler being served, for its replicas' Stats.
func (r *RunningCluster) Cluster() *Cluster { return r.c }
