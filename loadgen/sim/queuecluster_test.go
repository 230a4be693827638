package sim_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// TestQueueClusterBalances: 30 requests at once land 10 on each of 3 queue replicas behind
// round-robin, the random policy reaches every replica and repeats with its seed, response ids
// are unique across replicas, /metrics sums the replicas, and /health answers for all.
func TestQueueClusterBalances(t *testing.T) {
	cfg := sim.QueueConfig{ModelName: "q", Servers: 2, Service: 20 * time.Millisecond, FirstToken: 2 * time.Millisecond, OutputTokens: 3}
	r, err := sim.StartQueueCluster(cfg, 3, sim.BalanceRoundRobin, 1, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const n = 30
	ids := postAllIDs(t, r.URL(), n, func(i int) (string, string) {
		return "/completions", fmt.Sprintf(`{"model":"q","prompt":"p%d","max_tokens":3}`, i)
	})
	c := r.Cluster()
	// A service's end is counted by its queue's clock loop, which may run after the client has
	// read the response's last byte (under -race on a busy machine, 8 of 10 were counted at
	// that moment): wait for it, a bounded time.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		done := 0
		for i := range c.Replicas() {
			done += int(c.Replica(i).Stats().Completed)
		}
		if done >= n {
			break
		}
	}
	for i := range c.Replicas() {
		if st := c.Replica(i).Stats(); st.Received != n/3 || st.Completed != n/3 {
			t.Errorf("replica %d: received %d, completed %d; want %d each", i, st.Received, st.Completed, n/3)
		}
	}
	slices.Sort(ids)
	if len(slices.Compact(ids)) != n {
		t.Errorf("response ids not unique: %q", ids)
	}
	res, err := http.Get(strings.TrimSuffix(r.URL(), "/v1") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if want := fmt.Sprintf(`sim_requests_received_total{model_name="q"} %d`, n); !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %q:\n%s", want, body)
	}
	if res, err := http.Get(strings.TrimSuffix(r.URL(), "/v1") + "/health"); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("/health: %v %v", res, err)
	}

	// Random: the replicas in the order BalanceIndex names them, so a seed repeats.
	for k := range uint64(60) {
		if i := sim.BalanceIndex(sim.BalanceRandom, 5, k, 3); i < 0 || i > 2 {
			t.Fatalf("BalanceIndex = %d", i)
		}
	}
	rr, err := sim.StartQueueCluster(cfg, 3, sim.BalanceRandom, 5, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	client := newClient()
	want := make([]int64, 3)
	for k := range 24 { // one at a time: arrival k is the k-th request the balancer sees
		want[sim.BalanceIndex(sim.BalanceRandom, 5, uint64(k), 3)]++
		if res := post(context.Background(), client, rr.URL()+"/completions", `{"model":"q","prompt":"x","max_tokens":3}`); res.status != http.StatusOK {
			t.Fatalf("request %d: %d", k, res.status)
		}
	}
	for i := range 3 {
		if got := rr.Cluster().Replica(i).Stats().Received; got != want[i] || got == 0 {
			t.Errorf("random replica %d received %d, BalanceIndex says %d (each must get some)", i, got, want[i])
		}
	}
	if _, err := sim.NewQueueCluster(cfg, 0, "least-loaded", 1); err == nil || !strings.Contains(err.Error(), "replicas: 0") || !strings.Contains(err.Error(), "least-loaded") {
		t.Errorf("bad replicas and policy: %v", err)
	}
}
