package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// Rebuild is the embedded deployment a result measured (MeasuredSim of its records header),
// opened again on another number of replicas behind one balancer: what a plan's rehearsal runs
// on.
type Rebuild struct {
	// Header is the result's records header.
	Header records.Header
	// Replicas is how many of the measured deployments stand behind the balancer; each is as
	// many sim replicas as the result measured (Measured.PerReplica).
	Replicas int
	// Balance is the balancer's policy (sim.BalancePolicies; RebuildBalance chooses it).
	Balance string
	// Workload builds each tier's requests; Seed seeds them.
	Workload *workloads.Source
	Seed     int64
	// Timeout is the per-request deadline; Version the tool's, for the header.
	Timeout time.Duration
	Version string
	// Log receives messages for the user; nil drops them.
	Log func(format string, a ...any)
}

// ErrNotEmbedded is a result that measured a deployment of its own, not the embedded one:
// there is nothing to rebuild.
var ErrNotEmbedded error = notEmbedded{}

// notEmbedded is ErrNotEmbedded: its NotEmbedded method is how plan, which imports no runner,
// recognises it (plan.Rebuild).
type notEmbedded struct{}

func (notEmbedded) Error() string {
	return "the result measured a deployment other than the embedded one"
}
func (notEmbedded) NotEmbedded() bool { return true }

// WorkloadDiffers is a rebuild that would send another workload than the result measured: its
// trials would not say how the measured traffic fares.
type WorkloadDiffers struct {
	// Measured and Sent describe the workloads (workloads.Source.Desc, the header's workload).
	Measured, Sent string
}

// Workloads are the two workloads, for plan (plan.Rebuild).
func (e *WorkloadDiffers) Workloads() (measured, sent string) { return e.Measured, e.Sent }

func (e *WorkloadDiffers) Error() string {
	return fmt.Sprintf("the result measured the workload %s, and the rebuild would send %s", e.Measured, e.Sent)
}

// Target is the deployment the result measured.
func (r Rebuild) Target() string { return r.Header.Target }

// Check says, before anything starts, whether the result's deployment can be rebuilt and sent
// the same traffic: ErrNotEmbedded, MeasuredSim's error, or a *WorkloadDiffers.
func (r Rebuild) Check() error {
	if r.Header.Sim == "" {
		return ErrNotEmbedded
	}
	if _, err := MeasuredSim(r.Header); err != nil {
		return err
	}
	if r.Workload == nil || r.Workload.Desc != r.Header.Workload {
		sent := "no workload"
		if r.Workload != nil {
			sent = r.Workload.Desc
		}
		return &WorkloadDiffers{Measured: r.Header.Workload, Sent: sent}
	}
	return nil
}

// RebuildBalance is the balancer a rebuilt deployment stands behind: the policy given, else the
// one the result measured when it measured several replicas (a cluster is rehearsed behind the
// balancer it was measured behind), else round-robin.
func RebuildBalance(h records.Header, given string) string {
	switch {
	case given != "":
		return given
	case h.SimBalance != "":
		return h.SimBalance
	}
	return sim.BalanceRoundRobin
}

// Open starts the rebuilt deployment, on the endpoint the result measured (chat for a header
// that names none it knows), and opens a session on it.
func (r Rebuild) Open(ctx context.Context) (*Session, error) {
	m, err := MeasuredSim(r.Header)
	if err != nil {
		return nil, err
	}
	ep, err := loadgen.ParseEndpoint(r.Header.Endpoint)
	if err != nil {
		ep = loadgen.Chat
	}
	return Open(ctx, Options{Target: loadgen.Target{Endpoint: ep, Timeout: r.Timeout},
		Sim: m.Sim, Queue: m.Queue, SimLabel: m.Label, SimReplicas: r.Replicas * m.PerReplica, SimBalance: r.Balance,
		Workload: r.Workload, Seed: r.Seed, Version: r.Version, Log: r.Log, Virtual: m.Virtual})
}
