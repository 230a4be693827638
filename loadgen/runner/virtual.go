package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// The virtual clock. With Options.Virtual the embedded deployment is not started: each tier is
// served by its discrete-event model (package virtual, the runners the sweep's own decision
// tests use), the M/D/c queue's (Options.Queue) or the batching engine's (Options.Sim), in
// microseconds of wall time per request, and the session writes what it would write over
// HTTP: the header, each tier's lines and records, the tallies. The client is perfect there
// (sent = planned, no lag, no connection), so what the virtual clock shows is the
// deployment's steady state and the sweep's decisions on it, not a client's.

// Fields of Options named in errors: the virtual clock (Virtual), the embedded deployment's
// replicas (SimReplicas) and the queue's waiting-room limit (Queue.QueueLimit).
const (
	FieldVirtual     = "virtual clock"
	FieldSimReplicas = "simulated replicas"
	FieldQueueLimit  = "queue's waiting-room limit"
)

// notCapped is why a concurrency cap is refused on the virtual clock, for the options and for
// a tier alike.
const notCapped = "the client's concurrency cap is not modelled (the client is perfect and uncapped)"

// CheckVirtual refuses, naming the option, what the virtual queue cannot serve; nil when
// opts.Virtual is not set. Open checks it too; a command checks it before anything starts.
func CheckVirtual(opts Options) []error {
	if !opts.Virtual {
		return nil
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, field.Errorf(FieldVirtual, format, a...)) }
	if opts.Target.BaseURL != "" {
		bad("it serves the embedded deployment, not a deployment at an address")
	}
	if opts.Queue != nil && opts.Queue.QueueLimit > 0 && opts.SimReplicas > 1 {
		bad("replicas of a queue with a waiting-room limit are not modelled")
	}
	if opts.Queue == nil && opts.SimReplicas > 1 {
		bad("replicas of the batching engine are not modelled (the M/D/c queue's are)")
	}
	if opts.Queue == nil && opts.Target.Endpoint == loadgen.Embeddings {
		bad("embeddings are not modelled on the batching engine's virtual clock")
	}
	if opts.Workload != nil && opts.Workload.Sessions() {
		bad("a workload of sessions is not modelled (each turn's think time and history); run it in real time")
	}
	if opts.Workload != nil && opts.Workload.Cache == workloads.CacheWarm {
		bad("a warm cache needs its warm-up sent to a server; use --cache cold or replay")
	}
	if opts.MaxConcurrency > 0 {
		bad(notCapped)
	}
	if opts.Warmups > 0 {
		bad("warm-up requests need a server")
	}
	if opts.RateLimit > 0 {
		bad("the client's rate limit is not modelled")
	}
	if opts.Shard.Sharded() {
		bad("a virtual sweep is not sharded")
	}
	return errs
}

// CheckVirtualUsers refuses, as CheckVirtual does, the closed loop of users the virtual queue
// does not model: on replicas, or with a waiting-room limit; nil otherwise or when
// opts.Virtual is not set. A command that sweeps users checks it before anything starts; a
// closed-loop tier checks it again.
func CheckVirtualUsers(opts Options) []error {
	if opts.Virtual && opts.Queue == nil {
		return []error{field.Errorf(FieldVirtual, "a closed loop of users is modelled on the M/D/c queue, not on the batching engine")}
	}
	if !opts.Virtual || opts.Queue == nil || (opts.SimReplicas <= 1 && opts.Queue.QueueLimit == 0) {
		return nil
	}
	return []error{field.Errorf(FieldVirtual, "with %v: a closed loop of users is modelled on one queue without a waiting-room limit (no %v, no %v)",
		field.Ref(sweep.FieldUsers), field.Ref(FieldSimReplicas), field.Ref(FieldQueueLimit))}
}

// virtualRunner is the discrete-event runner of the tier id: a closed loop of users, replicas
// behind the balancer, or one queue; or the batching engine, serving the tier's requests reqs.
func (s *Session) virtualRunner(id records.Tier, reqs []workloads.Request) (sweep.Runner, error) {
	if s.opts.Queue == nil {
		if !curve.AxisOfTier(id).Open() {
			return nil, CheckVirtualUsers(s.opts)[0]
		}
		if id.MaxConcurrency > 0 {
			return nil, field.Errorf(FieldVirtual, notCapped)
		}
		t := s.opts.Target
		return engineTier{run: &virtual.EngineRunner{Config: s.opts.Sim, Chat: t.Endpoint != loadgen.Completions, IgnoreEOS: ignoresEOS(t.ExtraBody)},
			reqs: reqs}, nil
	}
	q := *s.opts.Queue
	switch {
	case !curve.AxisOfTier(id).Open():
		if errs := CheckVirtualUsers(s.opts); len(errs) > 0 {
			return nil, errs[0]
		}
		return &virtual.ClosedQueueRunner{Config: q}, nil
	case id.MaxConcurrency > 0:
		return nil, field.Errorf(FieldVirtual, notCapped)
	case s.opts.SimReplicas > 1:
		return &virtual.ClusterQueueRunner{Config: q, Replicas: s.opts.SimReplicas, Policy: s.opts.SimBalance, Seed: s.opts.Seed}, nil
	}
	return &virtual.QueueRunner{Config: q}, nil
}

// runVirtual serves the tier id planned by p on the virtual clock, every record to sink with
// the workload's input tokens of its request, and returns its closing line.
func (s *Session) runVirtual(ctx context.Context, id records.Tier, p sweep.Plan, reqs []workloads.Request, sink sweep.Sink,
	stop <-chan struct{}) (records.TierEnd, error) {
	r, err := s.virtualRunner(id, reqs)
	if err != nil {
		return records.TierEnd{}, err
	}
	ran, err := r.RunTier(ctx, p, inputTokens{reqs: reqs, sink: sink}, stop)
	if err != nil {
		return records.TierEnd{}, err
	}
	if ran.End == nil {
		return records.TierEnd{}, fmt.Errorf("virtual tier %d: no closing line", id.Tier)
	}
	end := *ran.End
	return end, nil
}

// engineTier serves one tier's requests on the virtual batching engine.
type engineTier struct {
	run  *virtual.EngineRunner
	reqs []workloads.Request
}

func (e engineTier) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	if sk, ok := sink.(inputTokens); ok {
		sink = sk.sink // the engine counts the prompts itself, as the server does
	}
	return e.run.RunRequests(ctx, p, e.reqs, sink, stop)
}

// ignoresEOS reports whether the request body's extra parameters ask for ignore_eos.
func ignoresEOS(extra json.RawMessage) bool {
	var body struct {
		IgnoreEOS bool `json:"ignore_eos"`
	}
	return len(extra) > 0 && json.Unmarshal(extra, &body) == nil && body.IgnoreEOS
}

// inputTokens gives each record of the virtual queue (which reads no prompt) the input tokens
// of the request it stands for, by its id (a closed loop's users draw the pool in order).
type inputTokens struct {
	reqs []workloads.Request
	sink sweep.Sink
}

func (t inputTokens) Write(r *records.Record) error {
	if len(t.reqs) > 0 {
		r.InputTokens = t.reqs[r.ID%len(t.reqs)].InputTokens
	}
	return t.sink.Write(r)
}
