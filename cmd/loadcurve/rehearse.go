package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/plan"
	"github.com/loadcurve/loadcurve/runner"
	"github.com/loadcurve/loadcurve/sim"
	"github.com/loadcurve/loadcurve/sweep"
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
		r := runner.Rebuild{Header: h, Workload: src, Seed: c.Int64("seed"), Timeout: defaultTimeout, Version: version}
		var wd *runner.WorkloadDiffers
		switch err := r.Check(); {
		case errors.Is(err, runner.ErrNotEmbedded):
			return nil, usagef("--rehearse: %s (%s) measured %s, not the embedded deployment: rehearse against your own balancer with `loadcurve run --base-url URL --request-rate %g` and the planned replicas behind it", side.name, side.dir, h.Target, f.Peak())
		case errors.As(err, &wd):
			return nil, usagef("--rehearse: %s was swept with the workload %s, and the rehearsal would send %s: give plan the sweep's workload flags", side.name, wd.Measured, wd.Sent)
		case err != nil:
			return nil, usagef("--rehearse: %s (%s): %v", side.name, side.dir, err)
		}
		if r.Balance = c.String("balance"); !c.IsSet("balance") {
			r.Balance = runner.RebuildBalance(h, "")
		}
		if !slices.Contains(sim.BalancePolicies(), r.Balance) {
			return nil, usagef("--balance %q: want %s", r.Balance, strings.Join(sim.BalancePolicies(), " or "))
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
		stderr := c.App.ErrWriter
		trials, err := plan.Rehearse(plans[i].PeakReplicas, func(replicas int) (plan.Trial, error) {
			tc.Replicas, r.Replicas = replicas, replicas
			tc.Log = func(format string, a ...any) {
				fmt.Fprintf(stderr, "loadcurve: rehearsal of %s on %d replicas: "+format+"\n", append([]any{side.name, replicas}, a...)...)
			}
			r.Log = tc.Log
			s, err := r.Open(c.Context)
			if err != nil {
				return plan.Trial{}, err
			}
			defer s.Close()
			return plan.Try(c.Context, side.loaded.Result, s, tc)
		})
		out = append(out, trials...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
