package runner

import (
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/workloads"
)

// FieldResume names the interrupted sweep a resume continues (its output directory).
const FieldResume = sweep.FieldResume

// CheckSessions refuses, naming the option, what a workload of sessions cannot run with; nil
// for a workload of single requests. A sharded run is refused (a shard would need whole
// sessions), and so is a think time stated for the sessions of a file (thinkStated; ShareGPT's
// multi-turn sessions take it, so it is not stated for them): they carry their own think times
// (think_ms on each later turn, 0 when absent), which the run follows, so the stated one would
// be dropped without a word. A command checks it before anything starts.
func CheckSessions(opts Options, thinkStated bool) []error {
	src := opts.Workload
	if src == nil || !src.Sessions() {
		return nil
	}
	var errs []error
	if opts.Shard.Sharded() {
		errs = append(errs, field.Errorf(shard.FieldShard, "a workload of sessions cannot be sharded yet (a shard would need whole sessions); run it from one process"))
	}
	if !src.Generated() && thinkStated {
		errs = append(errs, field.Errorf(workloads.FieldThink, "the sessions of %s carry their own think times (think_ms on each later turn, 0 when absent), which the run follows; omit %v, or set think_ms in the file",
			src.Spec, field.Ref(workloads.FieldThink)))
	}
	return errs
}

// CheckEndpoint refuses a workload of sessions on an endpoint that does not stream text (the
// embeddings): a session's next turn carries the answer to the last.
func CheckEndpoint(opts Options) error {
	e := opts.Target.Endpoint
	if e.Streams() || opts.Workload == nil || !opts.Workload.Sessions() {
		return nil
	}
	return field.Sentencef(loadgen.FieldEndpoint, "%v %s with a %v of sessions: a session's next turn carries the answer to the last, and an %s answer has no text; use %v chat (or responses), or a workload of single requests",
		field.Ref(loadgen.FieldEndpoint), e, field.Ref(workloads.FieldWorkload), e, field.Ref(loadgen.FieldEndpoint))
}

// CheckClockAt refuses the virtual clock for a deployment at an address (baseURL): it serves
// the embedded queue only.
func CheckClockAt(baseURL, clock string) error {
	if baseURL == "" || clock != sim.ClockVirtual {
		return nil
	}
	return field.Sentencef(FieldVirtual, "%v %s: the virtual clock serves the embedded queue; with %v the deployment runs in real time",
		field.Ref(FieldVirtual), clock, field.Ref(loadgen.FieldBaseURL))
}

// CheckResumable refuses to resume a sweep whose tiers start at fixed wall-clock times (a
// sharded one, or one given a start time): its slots have passed.
func CheckResumable(opts Options) error {
	if opts.Shard.Sharded() || !opts.StartAt.IsZero() {
		return field.Errorf(FieldResume, "a sharded sweep's tiers start at fixed wall-clock times (%v, %v): it cannot be resumed",
			field.Ref(shard.FieldShard), field.Ref(shard.FieldStartAt))
	}
	return nil
}

// Check refuses, naming the options, every combination of them a run cannot start with: a
// workload of sessions's (CheckSessions, thinkStated as it says), the virtual clock at an
// address (CheckClockAt, clock the clock asked for) or what it does not model (CheckVirtual),
// sessions on an endpoint without text (CheckEndpoint). A command checks it before anything
// starts.
func (o Options) Check(thinkStated bool, clock string) []error {
	errs := CheckSessions(o, thinkStated)
	if err := CheckClockAt(o.Target.BaseURL, clock); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, CheckVirtual(o)...)
	}
	if err := CheckEndpoint(o); err != nil {
		errs = append(errs, err)
	}
	return errs
}
