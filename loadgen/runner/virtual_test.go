package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// TestVirtualSessionServesTheQueuesModel: a session on the virtual clock starts nothing and sends
// nothing, and its tier is the M/D/c queue's discrete-event model: 1 slot of 100 ms, arrivals every
// 50 ms, so request k starts at 100k ms and waits 50k ms; every record carries its request's input
// tokens, the file has the tier's lines, and the header names the virtual clock and the queue.
func TestVirtualSessionServesTheQueuesModel(t *testing.T) {
	q := sim.QueueConfig{ModelName: "mdc", Servers: 1, Service: 100 * time.Millisecond, FirstToken: 10 * time.Millisecond, OutputTokens: 4}
	dir := t.TempDir()
	s := open(t, "", "off", dir, func(o *runner.Options) {
		o.Target.Model, o.Queue, o.Virtual, o.SimLabel = "", &q, true, q.String()
	})
	if s.Header.Target != result.VirtualTarget || s.Header.Model != "mdc" || len(s.Header.SimQueueConfig) == 0 {
		t.Fatalf("header: target %q, model %q, queue %s", s.Header.Target, s.Header.Model, s.Header.SimQueueConfig)
	}
	var got counter
	id, err := s.RunTier(context.Background(), plan(5, 50*time.Millisecond), &got, nil)
	if err != nil {
		t.Fatal(err)
	}
	if id.End == nil || id.End.Reason != records.EndedSchedule || id.End.Planned != 5 || got.count() != 5 {
		t.Fatalf("tier end %+v, %d records to the sink", id.End, got.count())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tier, recs := tierLine(t, dir)
	if tier.Tier != 0 || len(recs) != 5 {
		t.Fatalf("file: tier %+v, %d records", tier, len(recs))
	}
	for _, r := range recs {
		k := time.Duration(r.ID)
		ttft, _ := r.TTFT()
		if want := 50*k*time.Millisecond + q.FirstToken; r.Sent != 50*k*time.Millisecond || ttft != want || r.OutputTokens != 4 {
			t.Errorf("request %d: sent %v, ttft %v (want %v), %d tokens", r.ID, r.Sent, ttft, want, r.OutputTokens)
		}
		if r.InputTokens < 8 {
			t.Errorf("request %d: %d input tokens, want the workload's (8 words and more)", r.ID, r.InputTokens)
		}
	}
}

// TestCheckVirtual: what the virtual queue does not model is refused before anything starts
// (CheckVirtual, and CheckVirtualUsers for a sweep of users), each problem named by the virtual
// clock's field.
func TestCheckVirtual(t *testing.T) {
	q := &sim.QueueConfig{ModelName: "m", Servers: 1, Service: time.Second, OutputTokens: 1}
	warm, errs := workloads.NewSource(workloads.KindSynthetic, workloads.LoadOptions{Seed: 1, TimeScale: 1,
		Synthetic: workloads.Synthetic{InputLen: 8, OutputLen: 2}}, "warm")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, tc := range []struct {
		name string
		opts runner.Options
		want string // "" for none
	}{
		{"not virtual", runner.Options{}, ""},
		{"the queue", runner.Options{Virtual: true, Queue: q}, ""},
		// The batching engine runs on it too, but not as a closed loop of users, on replicas or
		// for embeddings.
		{"the engine's users", runner.Options{Virtual: true}, "a closed loop of users is modelled on the M/D/c queue, not on the batching engine"},
		{"an address", runner.Options{Virtual: true, Queue: q, Target: loadgen.Target{BaseURL: "http://127.0.0.1:1"}}, "not a deployment at an address"},
		{"a cap", runner.Options{Virtual: true, Queue: q, MaxConcurrency: 4}, "concurrency cap"},
		{"a rate limit", runner.Options{Virtual: true, Queue: q, RateLimit: 3}, "rate limit"},
		{"warm-ups", runner.Options{Virtual: true, Queue: q, Warmups: 1}, "warm-up requests"},
		{"a warm cache", runner.Options{Virtual: true, Queue: q, Workload: warm}, "a warm cache needs its warm-up sent to a server"},
		// Users are refused on replicas or with a waiting-room limit (CheckVirtualUsers).
		{"replicas", runner.Options{Virtual: true, Queue: q, SimReplicas: 2}, "a closed loop of users is modelled on one queue"},
		{"a waiting-room limit", runner.Options{Virtual: true, Queue: &sim.QueueConfig{ModelName: "m", Servers: 1, Service: time.Second, OutputTokens: 1, QueueLimit: 4}},
			"a closed loop of users is modelled on one queue"},
	} {
		errs := append(runner.CheckVirtual(tc.opts), runner.CheckVirtualUsers(tc.opts)...)
		if tc.opts.Virtual && tc.opts.Queue == nil && len(runner.CheckVirtual(tc.opts)) > 0 {
			t.Errorf("%s: the engine on the virtual clock refused: %v", tc.name, runner.CheckVirtual(tc.opts))
		}
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%s: refused: %v", tc.name, errs)
		case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want)):
			t.Errorf("%s: %v, want one error saying %q", tc.name, errs, tc.want)
		case tc.want != "":
			var fe *field.Error
			if !errors.As(errs[0], &fe) || fe.Name != runner.FieldVirtual {
				t.Errorf("%s: %v is not the virtual clock's field error", tc.name, errs[0])
			}
		}
	}
}

// TestCheckVirtualEngine: on the batching engine's virtual clock, replicas and embeddings are
// refused (what the engine's model has no part of).
func TestCheckVirtualEngine(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts runner.Options
		want string
	}{
		{"replicas", runner.Options{Virtual: true, SimReplicas: 2}, "replicas of the batching engine"},
		{"embeddings", runner.Options{Virtual: true, Target: loadgen.Target{Endpoint: loadgen.Embeddings}}, "embeddings are not modelled"},
	} {
		if errs := runner.CheckVirtual(tc.opts); len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%s: %v, want one error saying %q", tc.name, errs, tc.want)
		}
	}
}
