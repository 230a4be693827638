package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/plan"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/sim"
	"github.com/loadcurve/loadcurve/sweep"
	"github.com/loadcurve/loadcurve/target"
	"github.com/loadcurve/loadcurve/workloads"
)

// rehearsalFlags size the rehearsal's tiers and choose its workload (it must be the sweep's).
func rehearsalFlags() []cli.Flag {
	return append([]cli.Flag{
		seedFlag(),
		&cli.IntFlag{Name: "tier-requests", Value: sweep.ConfirmFactor * sweep.DefaultTierRequests, Usage: "--rehearse: a rehearsal tier runs until its verdict is decided, planned for this many arrivals at most (default: as many as the sweep's confirmation needed, at least this)"},
		&cli.DurationFlag{Name: "max-tier-duration", Value: sweep.ConfirmFactor * sweep.DefaultMaxTierDuration, Usage: "--rehearse: the longest a rehearsal tier runs"},
		&cli.StringFlag{Name: "balance", Value: sim.BalanceRoundRobin, Usage: "--rehearse: how the balancer spreads requests over the replicas: " + strings.Join(sim.BalancePolicies(), " or ") + " (default: the sweep's, when it measured several replicas)"},
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
		cfg, perUnit, err := measuredSim(h)
		switch {
		case h.Sim == "":
			return nil, usagef("--rehearse: %s (%s) measured %s, not the embedded deployment: rehearse against your own balancer with `loadcurve run --base-url URL --request-rate %g` and the planned replicas behind it", side.name, side.dir, h.Target, f.Peak())
		case err != nil:
			return nil, usagef("--rehearse: %s (%s): %v", side.name, side.dir, err)
		case src.Desc != h.Workload:
			return nil, usagef("--rehearse: %s was swept with the workload %s, and the rehearsal would send %s: give plan the sweep's workload flags", side.name, h.Workload, src.Desc)
		}
		label, _, _ := strings.Cut(h.Sim, " ×") // a cluster's label names its replicas: the rehearsal's are others
		balance := c.String("balance")
		if !c.IsSet("balance") && h.SimBalance != "" {
			balance = h.SimBalance // a sweep of a cluster is rehearsed behind the balancer it measured
		}
		if !slices.Contains(sim.BalancePolicies(), balance) {
			return nil, usagef("--balance %q: want %s", balance, strings.Join(sim.BalancePolicies(), " or "))
		}
		trials, err := plan.Rehearse(plans[i].PeakReplicas, func(k int) (plan.Trial, error) {
			return rehearseOne(c, side, src, cfg, label, balance, k, perUnit, f.Peak())
		})
		out = append(out, trials...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// measuredSim is the embedded deployment a result measured, as a rehearsal rebuilds it: its
// configuration and how many sim replicas one planned replica is (a sweep of a cluster plans in
// clusters). Results written before the header kept the configuration name a profile.
func measuredSim(h records.Header) (sim.Config, int, error) {
	if len(h.SimConfig) > 0 {
		var cfg sim.Config
		if err := json.Unmarshal(h.SimConfig, &cfg); err != nil {
			return cfg, 0, fmt.Errorf("the records header's sim_config: %w", err)
		}
		if err := cfg.Validate(); err != nil {
			return cfg, 0, fmt.Errorf("the records header's sim_config: %w", err)
		}
		return cfg, max(1, h.SimReplicas), nil
	}
	cfg, err := sim.Profile(h.Sim)
	if err != nil {
		return cfg, 0, fmt.Errorf("it measured the embedded deployment %q, whose configuration its header does not keep, and which names no profile the rehearsal can rebuild (%s)", h.Sim, strings.Join(sim.ProfileNames(), ", "))
	}
	return cfg, 1, nil
}

// rehearseOne runs one rehearsal tier (plan.Try) against replicas planned replicas of the
// embedded deployment, each perUnit sim replicas, all behind one balancer.
func rehearseOne(c *cli.Context, side *planSide, src *workloads.Source, cfg sim.Config, label, balance string, replicas, perUnit int, peak float64) (plan.Trial, error) {
	h := side.loaded.Result.Header
	ep, err := loadgen.ParseEndpoint(h.Endpoint)
	if err != nil {
		ep = loadgen.Chat
	}
	stderr := c.App.ErrWriter
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "loadcurve: rehearsal of %s on %d replicas: "+format+"\n", append([]any{side.name, replicas}, a...)...)
	}
	tc := plan.TrialConfig{Deployment: side.name, Replicas: replicas, Peak: peak, Seed: c.Int64("seed"), Log: logf}
	if c.IsSet("tier-requests") {
		if tc.TierRequests = c.Int("tier-requests"); tc.TierRequests < 1 {
			return plan.Trial{}, usagef("--tier-requests: must be ≥ 1, got %d", tc.TierRequests)
		}
	}
	if c.IsSet("max-tier-duration") {
		if tc.MaxTierDuration = c.Duration("max-tier-duration"); tc.MaxTierDuration <= 0 {
			return plan.Trial{}, usagef("--max-tier-duration: must be > 0, got %v", tc.MaxTierDuration)
		}
	}
	if err := tc.Validate(side.loaded.Result); err != nil {
		return plan.Trial{}, usageError{flagError(err)}
	}
	s, err := target.Open(c.Context, target.Options{Target: loadgen.Target{Endpoint: ep, Timeout: defaultTimeout},
		Sim: cfg, SimLabel: label, SimReplicas: replicas * perUnit, SimBalance: balance,
		Workload: src, Seed: c.Int64("seed"), Version: version, Log: logf})
	if err != nil {
		return plan.Trial{}, err
	}
	defer s.Close()
	return plan.Try(c.Context, side.loaded.Result, s, tc)
}

// rehearsalText prints the rehearsals, and what a failed plan needs.
func rehearsalText(w io.Writer, rs []plan.Trial) {
	for _, r := range rs {
		what := "the plan"
		if !r.Planned {
			what = "another count"
		}
		fmt.Fprintf(w, "Rehearsal of %s (%s): %d replicas at %s req/s (%s realised): %s, %s compliant [%s, %s].\n",
			r.Deployment, what, r.Replicas, fmtRateCLI(r.PeakRate), fmtRateCLI(r.RealisedRate), r.Verdict,
			pct(r.Share), pct(r.ShareLo), pct(r.ShareHi))
		if r.Planned && r.Verdict == string(curve.VerdictUncertain) {
			fmt.Fprintf(w, "  uncertain: the tier was too short to verify the target either way; a longer one (--tier-requests, --max-tier-duration) would decide.\n")
		}
	}
}

func fmtRateCLI(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.3g", v)
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.2f %%", 100*v)
}
