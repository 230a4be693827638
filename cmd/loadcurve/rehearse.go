package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/plan"
	"github.com/loadcurve/loadcurve/runner"
	"github.com/loadcurve/loadcurve/sim"
	"github.com/loadcurve/loadcurve/sweep"
	"github.com/loadcurve/loadcurve/workloads"
)

// rehearsalFlags size the rehearsal's tiers and choose its workload (it must be the sweep's).
func rehearsalFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.Int64Flag{Name: "seed", Category: catRehearse, Value: defaultSeed, Usage: "--rehearse: seed of the rehearsal's schedules and request sets"},
		&cli.IntFlag{Name: "tier-requests", Category: catRehearse, Value: sweep.ConfirmFactor * sweep.DefaultTierRequests, DefaultText: fmt.Sprintf("as many as the sweep's confirmation needed, at least %d", sweep.ConfirmFactor*sweep.DefaultTierRequests), Usage: "--rehearse: a rehearsal tier runs until its verdict is decided, planned for this many arrivals at most"},
		&cli.DurationFlag{Name: "max-tier-duration", Category: catRehearse, Value: sweep.ConfirmFactor * sweep.DefaultMaxTierDuration, Usage: "--rehearse: the longest a rehearsal tier runs"},
		&cli.StringFlag{Name: "balance", Category: catRehearse, Value: sim.BalanceRoundRobin, DefaultText: "the sweep's, when it measured several replicas, else " + sim.BalanceRoundRobin, Usage: "--rehearse: how the balancer spreads requests over the replicas: " + strings.Join(sim.BalancePolicies(), " or ")},
	}, sourceFlags()...)
}

// rehearse tries every plan on the embedded deployment (plan.Rehearse: the planned replicas,
// more when it fails, one fewer): the forecast's peak, flat, with the sweep's burstiness (each
// replica then sees peak/N, the plan's scale-out assumption).
func rehearse(c *cli.Context, sides []*planSide, plans []plan.Result, f plan.Forecast) ([]plan.Trial, error) {
	src, errs := readSource(c)
	if len(errs) > 0 {
		return nil, usageError{fmt.Errorf("--rehearse: %w", errs[0])}
	}
	var out []plan.Trial
	for i, side := range sides {
		h := side.loaded.Result.Header
		m, err := runner.MeasuredSim(h)
		switch {
		case h.Sim == "":
			return nil, usagef("--rehearse: %s (%s) measured %s, not the embedded deployment: rehearse against your own balancer with `loadcurve run --base-url URL --request-rate %g` and the planned replicas behind it", side.name, side.dir, h.Target, f.Peak())
		case err != nil:
			return nil, usagef("--rehearse: %s (%s): %v", side.name, side.dir, err)
		case src.Desc != h.Workload:
			return nil, usagef("--rehearse: %s was swept with the workload %s, and the rehearsal would send %s: give plan the sweep's workload flags", side.name, h.Workload, src.Desc)
		}
		balance := c.String("balance")
		if !c.IsSet("balance") && h.SimBalance != "" {
			balance = h.SimBalance // a sweep of a cluster is rehearsed behind the balancer it measured
		}
		if !slices.Contains(sim.BalancePolicies(), balance) {
			return nil, usagef("--balance %q: want %s", balance, strings.Join(sim.BalancePolicies(), " or "))
		}
		tc := plan.TrialConfig{Deployment: side.name, Peak: f.Peak(), Seed: c.Int64("seed")}
		if c.IsSet("tier-requests") {
			if tc.TierRequests = c.Int("tier-requests"); tc.TierRequests < 1 {
				return nil, usagef("--tier-requests: must be ≥ 1, got %d", tc.TierRequests)
			}
		}
		if c.IsSet("max-tier-duration") {
			if tc.MaxTierDuration = c.Duration("max-tier-duration"); tc.MaxTierDuration <= 0 {
				return nil, usagef("--max-tier-duration: must be > 0, got %v", tc.MaxTierDuration)
			}
		}
		if err := tc.Validate(side.loaded.Result); err != nil {
			return nil, usageError{flagError(err)}
		}
		trials, err := plan.Rehearse(plans[i].PeakReplicas, func(k int) (plan.Trial, error) {
			return rehearseOne(c, side, src, m, balance, tc, k)
		})
		out = append(out, trials...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// rehearseOne runs one rehearsal tier (plan.Try, tc on replicas planned replicas) against the
// embedded deployment m, each planned replica m.PerReplica sim replicas, all behind one balancer.
func rehearseOne(c *cli.Context, side *planSide, src *workloads.Source, m runner.Measured, balance string, tc plan.TrialConfig, replicas int) (plan.Trial, error) {
	ep, err := loadgen.ParseEndpoint(side.loaded.Result.Header.Endpoint)
	if err != nil {
		ep = loadgen.Chat
	}
	stderr := c.App.ErrWriter
	tc.Replicas = replicas
	tc.Log = func(format string, a ...any) {
		fmt.Fprintf(stderr, "loadcurve: rehearsal of %s on %d replicas: "+format+"\n", append([]any{side.name, replicas}, a...)...)
	}
	s, err := runner.Open(c.Context, runner.Options{Target: loadgen.Target{Endpoint: ep, Timeout: defaultTimeout},
		Sim: m.Sim, Queue: m.Queue, SimLabel: m.Label, SimReplicas: replicas * m.PerReplica, SimBalance: balance,
		Workload: src, Seed: c.Int64("seed"), Version: version, Log: tc.Log, Virtual: m.Virtual})
	if err != nil {
		return plan.Trial{}, err
	}
	defer s.Close()
	return plan.Try(c.Context, side.loaded.Result, s, tc)
}
