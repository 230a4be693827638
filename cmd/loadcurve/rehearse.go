package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// rehearse tries every plan on the embedded deployment (plan.Rehearse: the planned replicas,
// more when it fails, one fewer): the forecast's peak, flat, with the sweep's burstiness (each
// replica then sees peak/N, the plan's scale-out assumption), as set, read by its params ps,
// says.
func rehearse(c *cli.Context, set plan.Rehearsal, ps []param.Param, ins []plan.Input, plans []plan.Result, f plan.Forecast) ([]plan.Trial, error) {
	src, errs := readSource(c)
	if len(errs) > 0 {
		return nil, usageError{fmt.Errorf("--rehearse: %w", errs[0])}
	}
	var out []plan.Trial
	for i, side := range ins {
		h := side.Loaded.Result.Header
		r := runner.Rebuild{Header: h, Workload: src, Seed: set.Seed, Timeout: defaultTimeout, Version: version}
		if err := plan.CheckRebuild(side.Side, side.Dir, r, f.Peak()); err != nil {
			return nil, usageError{bind.Error(err)}
		}
		tc, balance, errs := set.Trial(ps, side.Side, f.Peak(), runner.RebuildBalance(h, ""))
		if len(errs) > 0 {
			return nil, usageError{bind.Error(errs[0])}
		}
		r.Balance = balance
		res := side.Loaded.Result
		tier := sweep.TrialTier{Peak: tc.Peak, Seed: tc.Seed, TierRequests: tc.TierRequests, MaxTierDuration: tc.MaxTierDuration}
		if err := tier.Validate(res); err != nil {
			return nil, usageError{bind.Error(err)}
		}
		stderr := c.App.ErrWriter
		trials, err := plan.Rehearse(plans[i].PeakReplicas, func(replicas int) (plan.Trial, error) {
			tc.Replicas, r.Replicas = replicas, replicas
			tier.Log = func(format string, a ...any) {
				fmt.Fprintf(stderr, "loadcurve: rehearsal of %s on %d replicas: "+format+"\n", append([]any{side.Side, replicas}, a...)...)
			}
			r.Log = tier.Log
			s, err := r.Open(c.Context)
			if err != nil {
				return plan.Trial{}, err
			}
			defer s.Close()
			v, ran, err := sweep.RunTrial(c.Context, res, s, tier)
			if err != nil {
				return plan.Trial{}, err
			}
			return plan.TrialOf(tc, v, ran, res.Settings.Params.TargetShare), nil
		})
		out = append(out, trials...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// rehearsalDefaults are what a rehearsal runs on when nobody chose: the embedded deployment's
// balancer and a sweep's trial tier.
func rehearsalDefaults() plan.RehearsalDefaults {
	return plan.RehearsalDefaults{Policies: sim.BalancePolicies(), TierRequests: sweep.TrialTierRequests, MaxTierDuration: sweep.TrialMaxTierDuration}
}
