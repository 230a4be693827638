package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/plan"
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
		&cli.StringFlag{Name: "balance", Value: sim.BalanceRoundRobin, Usage: "--rehearse: how the balancer spreads requests over the replicas: " + strings.Join(sim.BalancePolicies(), " or ")},
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
		cfg, err := sim.Profile(h.Sim)
		switch {
		case h.Sim == "":
			return nil, usagef("--rehearse: %s (%s) measured %s, not the embedded deployment: rehearse against your own balancer with `loadcurve run --base-url URL --request-rate %g` and the planned replicas behind it", side.name, side.dir, h.Target, f.Peak())
		case err != nil:
			return nil, usagef("--rehearse: %s (%s) measured the embedded deployment %q, which the rehearsal cannot rebuild (it rebuilds a named profile: %s)", side.name, side.dir, h.Sim, strings.Join(sim.ProfileNames(), ", "))
		case src.Desc != h.Workload:
			return nil, usagef("--rehearse: %s was swept with the workload %s, and the rehearsal would send %s: give plan the sweep's workload flags", side.name, h.Workload, src.Desc)
		}
		trials, err := plan.Rehearse(plans[i].PeakReplicas, func(k int) (plan.Trial, error) {
			return rehearseOne(c, side, src, cfg, h.Sim, k, f.Peak())
		})
		out = append(out, trials...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// rehearseOne runs one rehearsal tier: a sweep's tier at the forecast's peak, until its
// verdict is decided, against replicas of the embedded deployment.
func rehearseOne(c *cli.Context, side *planSide, src *workloads.Source, cfg sim.Config, profile string, replicas int, peak float64) (plan.Trial, error) {
	res := side.loaded.Result
	h := res.Header
	burst := 1.0
	if len(res.Tiers) > 0 {
		if b := float64(res.Tiers[0].Tier.Burstiness); b > 0 && !math.IsInf(b, 0) {
			burst = b
		}
	}
	ep, err := loadgen.ParseEndpoint(h.Endpoint)
	if err != nil {
		ep = loadgen.Chat
	}
	stderr := c.App.ErrWriter
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "loadcurve: rehearsal of %s on %d replicas: "+format+"\n", append([]any{side.name, replicas}, a...)...)
	}
	s, err := target.Open(c.Context, target.Options{Target: loadgen.Target{Endpoint: ep, Timeout: defaultTimeout},
		Sim: cfg, SimLabel: profile, SimReplicas: replicas, SimBalance: c.String("balance"),
		Workload: src, Seed: c.Int64("seed"), Version: version, Log: logf})
	if err != nil {
		return plan.Trial{}, err
	}
	defer s.Close()
	// As long as the sweep's confirmation: what verifying the target takes with misses as
	// clustered as the sweep measured them (unless --tier-requests says otherwise).
	n := c.Int("tier-requests")
	if !c.IsSet("tier-requests") {
		var sums []measure.Summary
		for _, t := range res.Tiers {
			sums = append(sums, t.Summary)
		}
		n = max(n, int(math.Ceil(sweep.ConfirmRequests(sums, res.Settings.Params))))
	}
	maxDur := c.Duration("max-tier-duration")
	if !c.IsSet("max-tier-duration") {
		maxDur = sweep.ConfirmFactor * sweep.DefaultMaxTierDuration
	}
	scfg := sweep.Config{Rates: sweep.Rates{List: []float64{peak}}, Burstiness: burst, Seed: c.Int64("seed"), Settings: res.Settings,
		TierRequests: n, MaxTierDuration: maxDur}
	if errs := scfg.Validate(); len(errs) > 0 {
		return plan.Trial{}, flagError(errs[0])
	}
	out, err := (&sweep.Executor{Config: scfg, Runner: s, Log: logf}).Run(c.Context)
	if err != nil {
		return plan.Trial{}, err
	}
	r := plan.Trial{Deployment: side.name, Replicas: replicas, PeakRate: peak, RealisedRate: math.NaN(),
		Share: math.NaN(), ShareLo: math.NaN(), ShareHi: math.NaN(), Verdict: "no verdict"}
	for _, v := range out.Analysis.Points {
		r.RealisedRate, r.Verdict, r.Share, r.ShareLo, r.ShareHi, r.Reason = v.Rate, string(v.Verdict), v.Share, v.ShareLo, v.ShareHi, v.Reason
		if !v.Stable {
			r.Verdict = "fails (unstable)"
		}
	}
	return r, nil
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
