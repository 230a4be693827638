package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

func TestRebuildBalance(t *testing.T) {
	for _, tc := range []struct {
		h     records.Header
		given string
		want  string
	}{
		{records.Header{}, "", sim.BalanceRoundRobin},                                          // one replica measured: the default
		{records.Header{SimReplicas: 3, SimBalance: sim.BalanceRandom}, "", sim.BalanceRandom}, // the balancer measured
		{records.Header{SimReplicas: 3, SimBalance: sim.BalanceRandom}, sim.BalanceRoundRobin, sim.BalanceRoundRobin},
	} {
		if got := runner.RebuildBalance(tc.h, tc.given); got != tc.want {
			t.Errorf("%+v, given %q: %q, want %q", tc.h, tc.given, got, tc.want)
		}
	}
}

// TestRebuildOpen: a result's deployment, a cluster of 2 queues, rebuilt on 3 planned replicas
// is 6 queues behind the balancer given, on the endpoint it measured; a header that keeps no
// deployment is refused.
func TestRebuildOpen(t *testing.T) {
	q := sim.QueueConfig{ModelName: "m", Servers: 2, Service: 10 * time.Millisecond, FirstToken: time.Millisecond, OutputTokens: 2}
	raw, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	src, errs := workloads.NewSource(workloads.KindSynthetic, workloads.LoadOptions{Seed: 1, TimeScale: 1,
		Synthetic: workloads.Synthetic{InputLen: 8, OutputLen: 2}}, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	h := records.Header{Sim: q.String() + " ×2 (round-robin)", SimQueueConfig: raw, SimReplicas: 2, SimBalance: sim.BalanceRoundRobin, Endpoint: string(loadgen.Completions)}
	s, err := runner.Rebuild{Header: h, Replicas: 3, Balance: sim.BalanceRandom, Workload: src, Seed: 1, Timeout: time.Second, Version: "test"}.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := s.Header
	s.Close()
	if got.SimReplicas != 6 || got.SimBalance != sim.BalanceRandom || got.Endpoint != h.Endpoint {
		t.Errorf("rebuilt: %d replicas behind %q on %q; want 6 behind %q on %q", got.SimReplicas, got.SimBalance, got.Endpoint, sim.BalanceRandom, h.Endpoint)
	}
	if _, err := (runner.Rebuild{Header: records.Header{Sim: "mdc(servers=4)"}, Replicas: 1, Workload: src}).Open(context.Background()); err == nil {
		t.Error("a header that keeps no deployment: opened")
	}
}

// TestRebuildCheck: only the embedded deployment, kept in the header, can be rebuilt, and only
// to be sent the workload the result measured.
func TestRebuildCheck(t *testing.T) {
	q := sim.QueueConfig{ModelName: "m", Servers: 2, Service: 10 * time.Millisecond, FirstToken: time.Millisecond, OutputTokens: 2}
	raw, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	src, errs := workloads.NewSource(workloads.KindSynthetic, workloads.LoadOptions{Seed: 1, TimeScale: 1,
		Synthetic: workloads.Synthetic{InputLen: 8, OutputLen: 2}}, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	embedded := records.Header{Sim: q.String(), SimQueueConfig: raw, Workload: src.Desc}
	other := embedded
	other.Workload = "sharegpt:x.json"
	for _, tc := range []struct {
		name        string
		h           records.Header
		notEmbedded bool
		differs     bool
		err         bool
	}{
		{"the embedded deployment, its workload", embedded, false, false, false},
		{"a target of its own", records.Header{Target: "http://host:8000/v1", Workload: src.Desc}, true, false, true},
		{"an older queue, not kept", records.Header{Sim: "mdc(servers=4)", Workload: src.Desc}, false, false, true},
		{"another workload", other, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runner.Rebuild{Header: tc.h, Workload: src}.Check()
			var wd *runner.WorkloadDiffers
			if (err != nil) != tc.err || errors.Is(err, runner.ErrNotEmbedded) != tc.notEmbedded || errors.As(err, &wd) != tc.differs {
				t.Fatalf("error %v", err)
			}
			if wd != nil && (wd.Measured != other.Workload || wd.Sent != src.Desc) {
				t.Errorf("%+v, want measured %q, sent %q", wd, other.Workload, src.Desc)
			}
		})
	}
}
