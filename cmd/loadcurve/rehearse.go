package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

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
		m, err := measuredSim(h)
		switch {
		case h.Sim == "":
			return nil, usagef("--rehearse: %s (%s) measured %s, not the embedded deployment: rehearse against your own balancer with `loadcurve run --base-url URL --request-rate %g` and the planned replicas behind it", side.name, side.dir, h.Target, f.Peak())
		case err != nil:
			return nil, usagef("--rehearse: %s (%s): %v", side.name, side.dir, err)
		case src.Desc != h.Workload:
			return nil, usagef("--rehearse: %s was swept with the workload %s, and the rehearsal would send %s: give plan the sweep's workload flags", side.name, h.Workload, src.Desc)
		}
		label := target.SimLabel(h) // a cluster's name counts its replicas: the rehearsal's are others
		balance := c.String("balance")
		if !c.IsSet("balance") && h.SimBalance != "" {
			balance = h.SimBalance // a sweep of a cluster is rehearsed behind the balancer it measured
		}
		if !slices.Contains(sim.BalancePolicies(), balance) {
			return nil, usagef("--balance %q: want %s", balance, strings.Join(sim.BalancePolicies(), " or "))
		}
		trials, err := plan.Rehearse(plans[i].PeakReplicas, func(k int) (plan.Trial, error) {
			return rehearseOne(c, side, src, m, label, balance, k, f.Peak())
		})
		out = append(out, trials...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// measured is the embedded deployment a result measured, as a rehearsal rebuilds it: the
// engine's configuration, or the M/D/c queue's (queue set), and how many sim replicas one
// planned replica is (a sweep of a cluster plans in clusters).
type measured struct {
	engine  sim.Config
	queue   *sim.QueueConfig
	perUnit int
}

// measuredSim reads the deployment from the header's sim_config or sim_queue_config; results
// written before the header kept them name a profile.
func measuredSim(h records.Header) (measured, error) {
	m := measured{perUnit: max(1, h.SimReplicas)}
	switch {
	case len(h.SimQueueConfig) > 0:
		var q sim.QueueConfig
		if err := json.Unmarshal(h.SimQueueConfig, &q); err != nil {
			return m, fmt.Errorf("the records header's sim_queue_config: %w", err)
		}
		if err := q.Validate(); err != nil {
			return m, fmt.Errorf("the records header's sim_queue_config: %w", err)
		}
		m.queue = &q
	case len(h.SimConfig) > 0:
		if err := json.Unmarshal(h.SimConfig, &m.engine); err != nil {
			return m, fmt.Errorf("the records header's sim_config: %w", err)
		}
		if err := m.engine.Validate(); err != nil {
			return m, fmt.Errorf("the records header's sim_config: %w", err)
		}
	default:
		var err error
		if m.engine, err = sim.Profile(h.Sim); err != nil {
			return m, fmt.Errorf("it measured the embedded deployment %q, whose configuration its header does not keep, and which names no profile the rehearsal can rebuild (%s)", h.Sim, strings.Join(sim.ProfileNames(), ", "))
		}
		m.perUnit = 1
	}
	return m, nil
}

// rehearseOne runs one rehearsal tier (plan.Try) against replicas planned replicas of the
// embedded deployment, each m.perUnit sim replicas, all behind one balancer.
func rehearseOne(c *cli.Context, side *planSide, src *workloads.Source, m measured, label, balance string, replicas int, peak float64) (plan.Trial, error) {
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
		Sim: m.engine, Queue: m.queue, SimLabel: label, SimReplicas: replicas * m.perUnit, SimBalance: balance,
		Workload: src, Seed: c.Int64("seed"), Version: version, Log: logf})
	if err != nil {
		return plan.Trial{}, err
	}
	defer s.Close()
	return plan.Try(c.Context, side.loaded.Result, s, tc)
}

// rehearsalText prints the rehearsals, and after each deployment's what they mean for its plan.
func rehearsalText(w io.Writer, rs []plan.Trial) {
	for _, group := range rehearsalGroups(rs) {
		for _, r := range group {
			what := "the plan"
			if !r.Planned {
				what = "another count"
			}
			fmt.Fprintf(w, "Rehearsal of %s (%s): %d replicas at %s req/s (%s realised): %s, %s compliant [%s, %s].\n",
				r.Deployment, what, r.Replicas, fmtRateCLI(r.PeakRate), fmtRateCLI(r.RealisedRate), r.Verdict,
				pct(r.Share), pct(r.ShareLo), pct(r.ShareHi))
		}
		fmt.Fprintln(w, plan.Conclusion(group))
	}
}

// rehearsalConclusions is plan.Conclusion of every deployment's rehearsal.
func rehearsalConclusions(rs []plan.Trial) []string {
	var out []string
	for _, group := range rehearsalGroups(rs) {
		out = append(out, plan.Conclusion(group))
	}
	return out
}

// rehearsalGroups splits the trials by deployment: each group starts with its planned count.
func rehearsalGroups(rs []plan.Trial) [][]plan.Trial {
	var out [][]plan.Trial
	for i, r := range rs {
		if r.Planned || i == 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], r)
	}
	return out
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
