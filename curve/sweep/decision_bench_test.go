package sweep_test

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/curve/sweep/sweeptest"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Time to decision: how many seconds of load on the target a sweep spends to locate the capacity
// at the objective (Result.TargetSeconds, on the virtual clock of virtual.QueueRunner), and how
// accurately, for the automatic sweep and for fixed grids of tiers of the kind people run by hand.
// The deployments are sweeptest.DecisionQueues, whose capacity at their TTFT objective and a 99 %
// target is known exactly (queueing.MDCCapacity); each sweep's time is also stated against the
// oracle's (sweeptest.Oracle, scripts/oracle): the least load that can certify the capacity to
// ±10 % by observing whether requests comply.
//
// The metrics per method and deployment, and the markdown table of the time-to-decision
// section of docs/PERFORMANCE.md:
//
//	go test -run '^$' -bench TimeToDecision ./curve/sweep
//	LOADCURVE_DECISION_TABLE=1 go test -count=1 -v -run TestTimeToDecisionTable ./curve/sweep
//
// Both take -decision-seeds N (or LOADCURVE_DECISION_SEEDS=N): the seeds 1..N per method and
// deployment (default 8); every method sees the same deployments and seeds.

// decisionSeedsFlag sets the number of seeds; 0 defers to $LOADCURVE_DECISION_SEEDS, then 8.
var decisionSeedsFlag = flag.Int("decision-seeds", 0, "seeds per method and deployment of BenchmarkTimeToDecision and TestTimeToDecisionTable (0: $LOADCURVE_DECISION_SEEDS, else 8)")

// defaultDecisionSeeds is the number of seeds when neither the flag nor the environment sets one.
const defaultDecisionSeeds = 8

// decisionTargetShare is the target share the truth is computed at: the default of curve.Params,
// which defaultSweep uses.
const decisionTargetShare = 0.99

// Tolerances and the share of sweeps "time to decision" is stated at.
const (
	decisionTolerance = 0.05
	decisionLoose     = 0.10
	decisionCoverage  = 0.95
)

// Fixed grids: gridTiers rates spread geometrically from gridLow to gridHigh times the
// deployment's saturation rate c/D.
const (
	gridTiers = 10
	gridLow   = 0.2
	gridHigh  = 1.2
)

// decisionSetFlag chooses the deployments: the M/D/c queues, the batching engines, or both.
var decisionSetFlag = flag.String("decision-set", "", "deployments of BenchmarkTimeToDecision and TestTimeToDecisionTable: queues, engines or all ('': $LOADCURVE_DECISION_SET, else queues)")

// decisionMethodsFlag keeps only the methods named (by benchmark name, comma-separated).
var decisionMethodsFlag = flag.String("decision-methods", "", "methods of TestTimeToDecisionTable, by name (auto, autoNoBudget, autoNoShadow, autoBudget20m, grid10x30s, grid10x120s), comma-separated ('': $LOADCURVE_DECISION_METHODS, else all)")

// decisionOnlyFlag keeps only the deployments whose name contains it.
var decisionOnlyFlag = flag.String("decision-only", "", "deployments of TestTimeToDecisionTable whose name contains this ('': $LOADCURVE_DECISION_ONLY, else all of the set)")

// decisionDumpFlag prints, for every sweep of TestTimeToDecisionTable, its outcome and its
// tiers (rate over the truth, share, effective requests, interval, verdict).
var decisionDumpFlag = flag.Bool("decision-dump", false, "print every sweep of TestTimeToDecisionTable with its tiers")

// chosenMethods are the decision methods -decision-methods keeps.
func chosenMethods() []decisionMethod {
	names := cmp.Or(*decisionMethodsFlag, os.Getenv("LOADCURVE_DECISION_METHODS"))
	if names == "" {
		return decisionMethods
	}
	var out []decisionMethod
	for _, m := range decisionMethods {
		if slices.Contains(strings.Split(names, ","), m.name) {
			out = append(out, m)
		}
	}
	return out
}

// decisionDeployment is a deployment a sweep's decisions are held to, with its truth.
type decisionDeployment struct {
	name       string
	objectives measure.Objectives
	truth      float64 // the true capacity, req/s
	oracle     float64 // the oracle's seconds to certify it to ±decisionLoose
	// scale is what the fixed grids are placed by: c/D for a queue; for an engine, where no
	// closed form gives it, the truth over 0.6 (the queues' capacities lie at 35 to 80 % of c/D).
	scale, scaleLabel string
	saturation        float64
	runner            func() (sweep.Runner, error)
}

// decisionDeploymentsOf returns the deployments of the set named ("queues", "engines", "all").
func decisionDeploymentsOf(set string) ([]decisionDeployment, error) {
	var out []decisionDeployment
	if set == "queues" || set == "all" {
		for _, q := range queues {
			truth, err := q.Capacity(decisionTargetShare)
			if err != nil {
				return nil, err
			}
			sat := float64(q.Queue.Servers) / q.Queue.Service.Seconds()
			out = append(out, decisionDeployment{name: q.Name, objectives: measure.Objectives{TTFT: q.Objective}, truth: truth,
				oracle: oracleSeconds()[q.Name], saturation: sat, scaleLabel: "c/D",
				runner: func() (sweep.Runner, error) { return &virtual.QueueRunner{Config: q.Queue}, nil }})
		}
	}
	if set == "engines" || set == "all" {
		truths, err := sweeptest.EngineTruths()
		if err != nil {
			return nil, err
		}
		for i, e := range sweeptest.DecisionEngines {
			out = append(out, decisionDeployment{name: e.Name, objectives: e.Objectives, truth: truths[i].Capacity,
				oracle: truths[i].Oracle.Seconds, saturation: truths[i].Capacity / 0.6, scaleLabel: "T/0.6",
				runner: func() (sweep.Runner, error) { return e.Runner() }})
		}
	}
	if out == nil {
		return nil, fmt.Errorf("decision set %q: want queues, engines or all", set)
	}
	return out, nil
}

// decisionDeployments are the deployments -decision-set (or $LOADCURVE_DECISION_SET) names.
func decisionDeployments() ([]decisionDeployment, error) {
	set := *decisionSetFlag
	if set == "" {
		set = cmp.Or(os.Getenv("LOADCURVE_DECISION_SET"), "queues")
	}
	deps, err := decisionDeploymentsOf(set)
	if only := cmp.Or(*decisionOnlyFlag, os.Getenv("LOADCURVE_DECISION_ONLY")); only != "" && err == nil {
		deps = slices.DeleteFunc(deps, func(d decisionDeployment) bool { return !strings.Contains(d.name, only) })
		if len(deps) == 0 {
			return nil, fmt.Errorf("-decision-only %q: no deployment of the set %q has it in its name", only, set)
		}
	}
	return deps, err
}

// decisionMethod is one way of sweeping a deployment.
type decisionMethod struct {
	name  string // in benchmark names
	label string // in the table
	// config is the sweep of deployment d with seed.
	config func(d decisionDeployment, seed int64) (sweep.Config, error)
}

// sweepOf is the default sweep of a deployment at its own objectives.
func sweepOf(d decisionDeployment, seed int64) sweep.Config {
	cfg := defaultSweep(seed)
	cfg.Settings.Measure.Objectives = d.objectives
	return cfg
}

var decisionMethods = []decisionMethod{
	{"auto", "automatic (default)", func(d decisionDeployment, seed int64) (sweep.Config, error) { return sweepOf(d, seed), nil }},
	{"autoNoBudget", "automatic, --budget 0", func(d decisionDeployment, seed int64) (sweep.Config, error) {
		cfg := sweepOf(d, seed)
		cfg.Budget = -1
		return cfg, nil
	}},
	// Without the shadow queue: what the control variate contributes (on these deployments the
	// shadow is the queue's own model, its best case).
	{"autoNoShadow", "automatic, no shadow queue", func(d decisionDeployment, seed int64) (sweep.Config, error) {
		cfg := sweepOf(d, seed)
		cfg.NoShadow = true
		return cfg, nil
	}},
	// With a third of the default budget, as the busy-machine sweeps over HTTP ran (issue 35):
	// the search stops with fewer tiers around the capacity.
	{"autoBudget20m", "automatic, --budget 20m", func(d decisionDeployment, seed int64) (sweep.Config, error) {
		cfg := sweepOf(d, seed)
		cfg.Budget = 20 * time.Minute
		return cfg, nil
	}},
	{"grid10x30s", "grid 10 × 30 s", gridSweep(30 * time.Second)},
	{"grid10x120s", "grid 10 × 120 s", gridSweep(120 * time.Second)},
}

// gridSweep is a fixed grid of tiers of length d, confirmed, under the settings of defaultSweep.
// The rates are written as a user would write them (LO:HI:geom:N) and parsed as the command does.
func gridSweep(length time.Duration) func(d decisionDeployment, seed int64) (sweep.Config, error) {
	return func(d decisionDeployment, seed int64) (sweep.Config, error) {
		sat := d.saturation
		spec := fmt.Sprintf("%s:%s:geom:%d", strconv.FormatFloat(gridLow*sat, 'g', -1, 64), strconv.FormatFloat(gridHigh*sat, 'g', -1, 64), gridTiers)
		rates, err := sweep.ParseRates(spec)
		if err != nil {
			return sweep.Config{}, err
		}
		cfg := sweepOf(d, seed)
		cfg.Rates, cfg.Duration = rates, length
		return cfg, nil
	}
}

// decisionSeeds returns the number of seeds per method and deployment.
func decisionSeeds() (int, error) {
	if n := *decisionSeedsFlag; n > 0 {
		return n, nil
	}
	if s := os.Getenv("LOADCURVE_DECISION_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("LOADCURVE_DECISION_SEEDS=%q: want a positive integer", s)
		}
		return n, nil
	}
	return defaultDecisionSeeds, nil
}

// oracleSeconds is the oracle's time to certify the capacity of d to ±decisionLoose
// (sweeptest.Oracle), computed once per deployment.
var oracleSeconds = sync.OnceValue(func() map[string]float64 {
	out := map[string]float64{}
	for _, d := range queues {
		res, err := sweeptest.Oracle{Queue: d.Queue, Objective: d.Objective, Precision: decisionLoose}.Run() // as scripts/oracle runs it
		if err != nil {
			panic(fmt.Sprintf("oracle of %s: %v", d.Name, err))
		}
		out[d.Name] = res.Seconds
	}
	return out
})

// decisionOutcome is what one sweep cost and decided, judged against the truth.
type decisionOutcome struct {
	targetS  float64 // Result.TargetSeconds
	confirmS float64 // of which the confirmation tier
	tiers    int
	relErr   float64 // capacity estimate / truth − 1; NaN without an estimate
	covers   bool    // [Capacity.Low, Capacity.High] contains the truth (an open High is +∞)
	low      float64 // Capacity.Low / truth; NaN without a capacity
	high     float64 // Capacity.High / truth; +Inf when High is open, NaN without a capacity
	below    bool    // the operating point exists and is below the truth
	verified bool    // the operating point was verified by its confirmation
	// certifyS is the target-seconds of the tiers up to the first after which the capacity
	// interval was certified to ±decisionLoose: High/Low ≤ (1 + p)/(1 − p), a claim as precise
	// as the oracle's; +Inf when it never was. certifiedIn says whether that interval also lay
	// within ±decisionLoose of the truth, as the oracle's does.
	certifyS    float64
	certifiedIn bool
	// oracle is certifyS over the oracle's time for the deployment.
	oracle float64
	// dump is the sweep and its tiers in words (-decision-dump).
	dump string
}

// certifiedWidth is the largest High/Low of an interval certified to ±decisionLoose.
var certifiedWidth = (1 + decisionLoose) / (1 - decisionLoose)

// runDecision runs one sweep of deployment d by method m with seed and judges it.
func runDecision(m decisionMethod, d decisionDeployment, seed int64) (decisionOutcome, error) {
	truth := d.truth
	cfg, err := m.config(d, seed)
	if err != nil {
		return decisionOutcome{}, err
	}
	runner, err := d.runner()
	if err != nil {
		return decisionOutcome{}, err
	}
	x := &sweep.Executor{Config: cfg, Runner: runner}
	var detail strings.Builder
	if *decisionDumpFlag {
		x.Detail = func(format string, a ...any) { fmt.Fprintf(&detail, "    · "+format+"\n", a...) }
	}
	res, err := x.Run(context.Background())
	if err != nil {
		return decisionOutcome{}, fmt.Errorf("%s seed %d: %w", m.name, seed, err)
	}
	o := decisionOutcome{targetS: res.TargetSeconds, tiers: len(res.Tiers), relErr: math.NaN(), low: math.NaN(), high: math.NaN(), certifyS: math.Inf(1)}
	var prefix []measure.Summary
	elapsed := 0.0
	for _, t := range res.Tiers {
		if dur := t.Summary.Duration; !math.IsNaN(dur) && !math.IsInf(dur, 0) {
			elapsed += dur
			if t.Tier.Role == records.RoleConfirm {
				o.confirmS += dur
			}
		}
		prefix = append(prefix, t.Summary)
		if !math.IsInf(o.certifyS, 1) {
			continue
		}
		if c := curve.Analyze(prefix, cfg.Settings.Params).Capacity; c != nil && c.Low > 0 && c.High != nil && *c.High/c.Low <= certifiedWidth*(1+1e-9) {
			o.certifyS = elapsed
			o.certifiedIn = c.Low >= (1-decisionLoose)*truth && *c.High <= (1+decisionLoose)*truth
		}
	}
	o.oracle = o.certifyS / d.oracle
	a := res.Analysis
	if c := a.Capacity; c != nil {
		o.relErr = c.Rate/truth - 1
		o.covers = c.Low <= truth && (c.High == nil || truth <= *c.High)
		o.low, o.high = c.Low/truth, math.Inf(1)
		if c.High != nil {
			o.high = *c.High / truth
		}
	}
	if op := a.OperatingPoint; op != nil {
		o.below = op.Rate < truth
		o.verified = op.Verified()
	}
	if *decisionDumpFlag {
		o.dump = dumpDecision(d, seed, o, a) + detail.String()
	}
	return o, nil
}

// dumpDecision is one sweep's outcome and its points, rates as multiples of the truth.
func dumpDecision(d decisionDeployment, seed int64, o decisionOutcome, a curve.Analysis) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s seed %d: error %+.1f %%, interval %.3f–%.3f× covers %v, verified %v, %.0f target-s\n", d.name, seed, 100*o.relErr, o.low, o.high, o.covers, o.verified, o.targetS)
	for _, p := range a.Points {
		fmt.Fprintf(&sb, "  tier %2d %.3f×T share %.4f [%.4f, %.4f] n %d eff %.0f fit %.4f [%.4f, %.4f] %s\n",
			p.Tier, p.Rate/d.truth, p.Share, p.ShareLo, p.ShareHi, p.Requests, p.EffectiveRequests, p.Fit, p.FitLo, p.FitHi, p.Verdict)
		if !p.Stable || (p.Verdict == curve.VerdictFails && p.Share >= 0.99) {
			fmt.Fprintf(&sb, "    why: %s\n", p.Reason)
		}
	}
	return sb.String()
}

// decisionStats summarise the outcomes of one method on one or more deployments.
type decisionStats struct {
	sweeps                  int
	medianS, maxS, confirmS float64 // target-seconds per sweep: median, maximum; confirmation's median
	searchS                 float64 // median target-seconds before the confirmation (probes and search)
	// medianErr is the median signed error of the capacity estimate relative to the truth, p90Err
	// the 90th percentile of its absolute value (a sweep without an estimate counts as +Inf).
	medianErr, p90Err float64
	medianTiers       float64
	// Medians of the capacity interval's ends relative to the truth (a sweep without a capacity
	// counts as [0, +Inf]) and of its width, (High − Low) / truth.
	medianLow, medianHigh, medianWidth float64
	noEstimate                         int
	// Fractions of the sweeps.
	within5, within10, covers, below, verified float64
	// certified is the fraction of sweeps that certified the capacity to ±10 %, certifiedIn of
	// those within ±10 % of the truth; oracleRatio the median time to certify over the oracle's
	// (+Inf when most sweeps never certified).
	certified, certifiedIn, oracleRatio float64
}

func summariseDecisions(outs []decisionOutcome) decisionStats {
	st := decisionStats{sweeps: len(outs)}
	if len(outs) == 0 {
		return st
	}
	var secs, confirm, search, tiers, lows, highs, widths, errs, absErrs, ratios []float64
	var w5, w10, cov, below, ver, cert, certIn int
	for _, o := range outs {
		ratios = append(ratios, o.oracle)
		if !math.IsInf(o.certifyS, 1) {
			cert++
			if o.certifiedIn {
				certIn++
			}
		}
		secs = append(secs, o.targetS)
		confirm, search = append(confirm, o.confirmS), append(search, o.targetS-o.confirmS)
		if math.IsNaN(o.relErr) {
			absErrs = append(absErrs, math.Inf(1))
		} else {
			errs, absErrs = append(errs, o.relErr), append(absErrs, math.Abs(o.relErr))
		}
		tiers = append(tiers, float64(o.tiers))
		lo, hi := o.low, o.high
		if math.IsNaN(lo) {
			lo, hi = 0, math.Inf(1)
		}
		lows, highs, widths = append(lows, lo), append(highs, hi), append(widths, hi-lo)
		switch e := math.Abs(o.relErr); {
		case math.IsNaN(e):
			st.noEstimate++
		case e <= decisionTolerance:
			w5++
			w10++
		case e <= decisionLoose:
			w10++
		}
		if o.covers {
			cov++
		}
		if o.below {
			below++
		}
		if o.verified {
			ver++
		}
	}
	n := float64(len(outs))
	st.medianS, st.maxS = median(secs), slices.Max(secs)
	st.confirmS, st.searchS, st.medianTiers = median(confirm), median(search), median(tiers)
	st.medianErr, st.p90Err = math.NaN(), quantile(absErrs, 0.9)
	if len(errs) > 0 {
		st.medianErr = median(errs)
	}
	st.medianLow, st.medianHigh, st.medianWidth = median(lows), median(highs), median(widths)
	st.within5, st.within10 = float64(w5)/n, float64(w10)/n
	st.covers, st.below, st.verified = float64(cov)/n, float64(below)/n, float64(ver)/n
	st.certified, st.oracleRatio = float64(cert)/n, median(ratios)
	if cert > 0 {
		st.certifiedIn = float64(certIn) / float64(cert)
	}
	return st
}

// quantile is the q-quantile of v by the nearest rank.
func quantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[max(int(math.Ceil(q*float64(len(s))))-1, 0)]
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	k := len(s) / 2
	if len(s)%2 == 0 {
		return (s[k-1] + s[k]) / 2
	}
	return s[k]
}

// benchName is a deployment's name as a sub-benchmark name ("8slots,1.4s,64tokens").
func benchName(s string) string { return strings.ReplaceAll(s, " ", "") }

// BenchmarkTimeToDecision runs, per method and deployment, one sweep per seed in every
// iteration (so ns/op is the CPU cost of that many sweeps), and reports what they cost the target
// and how well they decided: target-s/op is the median of Result.TargetSeconds per sweep (one
// sweep, not one iteration), max-target-s its maximum, interval_width the median of
// (Capacity.High − Capacity.Low) / truth, and the rest are fractions of the sweeps.
func BenchmarkTimeToDecision(b *testing.B) {
	n, err := decisionSeeds()
	if err != nil {
		b.Fatal(err)
	}
	deps, err := decisionDeployments()
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range decisionMethods {
		b.Run(m.name, func(b *testing.B) {
			for _, qc := range deps {
				b.Run(benchName(qc.name), func(b *testing.B) {
					var st decisionStats
					for b.Loop() {
						outs := make([]decisionOutcome, 0, n)
						for seed := int64(1); seed <= int64(n); seed++ {
							o, err := runDecision(m, qc, seed)
							if err != nil {
								b.Fatal(err)
							}
							outs = append(outs, o)
						}
						st = summariseDecisions(outs)
					}
					b.ReportMetric(st.medianS, "target-s/op")
					b.ReportMetric(st.maxS, "max-target-s")
					b.ReportMetric(st.within5, "within5pct")
					b.ReportMetric(st.within10, "within10pct")
					b.ReportMetric(st.covers, "interval_covers")
					b.ReportMetric(st.medianWidth, "interval_width")
					b.ReportMetric(st.below, "op_below_truth")
					b.ReportMetric(st.verified, "verified")
					b.ReportMetric(st.certified, "certified")
					b.ReportMetric(st.oracleRatio, "x-oracle")
				})
			}
		})
	}
}

// TestTimeToDecisionTable prints the markdown table of the time-to-decision section of
// docs/PERFORMANCE.md when LOADCURVE_DECISION_TABLE=1 (run it with -v to see the output). It
// checks nothing: the assertions on the default sweep are TestDecisionsHoldInSteadyState's.
func TestTimeToDecisionTable(t *testing.T) {
	if os.Getenv("LOADCURVE_DECISION_TABLE") != "1" {
		t.Skip("set LOADCURVE_DECISION_TABLE=1 to print the time-to-decision table")
	}
	n, err := decisionSeeds()
	if err != nil {
		t.Fatal(err)
	}
	deps, err := decisionDeployments()
	if err != nil {
		t.Fatal(err)
	}
	methods := chosenMethods()
	// outs[method][deployment][seed−1], filled by GOMAXPROCS workers (the sweeps are independent).
	outs := make([][][]decisionOutcome, len(methods))
	for m := range methods {
		outs[m] = make([][]decisionOutcome, len(deps))
		for d := range deps {
			outs[m][d] = make([]decisionOutcome, n)
		}
	}
	type job struct{ m, d, s int }
	jobs := make(chan job)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range jobs {
				o, err := runDecision(methods[j.m], deps[j.d], int64(j.s+1))
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", deps[j.d].name, err))
				}
				outs[j.m][j.d][j.s] = o
				mu.Unlock()
			}
		})
	}
	for m := range methods {
		for d := range deps {
			for s := range n {
				jobs <- job{m, d, s}
			}
		}
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) > 0 {
		return
	}
	if *decisionDumpFlag {
		for m := range outs {
			for d := range outs[m] {
				for _, o := range outs[m][d] {
					fmt.Printf("[%s] %s", methods[m].name, o.dump)
				}
			}
		}
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "Objective: each deployment's objectives for %.0f %% of requests; %d seeds per method and deployment; ±5 %% and ±10 %% are of the true capacity. "+
		"Certified: the capacity interval reached High/Low ≤ 1.1/0.9 (±10 %%), the oracle's precision; × oracle is the median of the load until then over the oracle's.\n\n",
		100*decisionTargetShare, n)
	sb.WriteString("| deployment | true capacity | method | target-s per sweep: median (max) | of which confirmation (median) | tiers (median) | capacity error: median, 90th pct of \\|error\\| | within ±5 % | within ±10 % | interval covers truth | interval ends, × truth (medians) | operating point below truth | operating point verified | certified ±10 % (of them within ±10 % of truth) | time to certify, × oracle (median) |\n")
	sb.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	row := func(dep, truth string, m decisionMethod, st decisionStats) {
		fmt.Fprintf(&sb, "| %s | %s | %s | %.0f (%.0f) | %.0f | %.0f | %s, %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s |\n", dep, truth, m.label,
			st.medianS, st.maxS, st.confirmS, st.medianTiers, signedPct(st.medianErr), absPct(st.p90Err), pct(st.within5), pct(st.within10), pct(st.covers), ends(st.medianLow, st.medianHigh), pct(st.below), pct(st.verified),
			pct(st.certified), pct(st.certifiedIn), times(st.oracleRatio))
	}
	for d, qc := range deps {
		for m, dm := range methods {
			dep, truth := "", ""
			if m == 0 {
				dep = fmt.Sprintf("%s (%s = %.3g req/s; oracle %.0f s)", qc.name, qc.scaleLabel, qc.saturation, qc.oracle)
				if o := qc.objectives.String(); qc.scaleLabel != "c/D" {
					dep = fmt.Sprintf("%s, %s (oracle %.0f s)", qc.name, o, qc.oracle)
				}
				truth = fmt.Sprintf("%.3f req/s", qc.truth)
			}
			row(dep, truth, dm, summariseDecisions(outs[m][d]))
		}
	}
	all := make([]decisionStats, len(methods))
	for m, dm := range methods {
		all[m] = summariseDecisions(slices.Concat(outs[m]...))
		dep := ""
		if m == 0 {
			dep = fmt.Sprintf("**all %d**", len(deps))
		}
		row(dep, "", dm, all[m])
	}
	fmt.Fprintf(&sb, "\nTime to decision at ±%.0f %% / %.0f %% of sweeps:\n\n", 100*decisionTolerance, 100*decisionCoverage)
	for m, dm := range methods {
		st := all[m]
		verdict := fmt.Sprintf("reaches %.0f %%", 100*decisionCoverage)
		if st.within5 < decisionCoverage {
			verdict = fmt.Sprintf("does NOT reach %.0f %% of sweeps within ±%.0f %%", 100*decisionCoverage, 100*decisionTolerance)
		}
		fmt.Fprintf(&sb, "- %s: %.0f target-s per sweep (median; max %.0f; %.0f before the confirmation), %s of %d sweeps within ±%.0f %%: %s.\n",
			dm.label, st.medianS, st.maxS, st.searchS, pct(st.within5), st.sweeps, 100*decisionTolerance, verdict)
		if st.noEstimate > 0 {
			fmt.Fprintf(&sb, "  (%d of its sweeps gave no capacity estimate.)\n", st.noEstimate)
		}
	}
	fmt.Print(sb.String())
}

// ends writes an interval's ends relative to the truth: "0.62–1.49×", or "0.62×–open".
func ends(lo, hi float64) string {
	if math.IsInf(hi, 1) {
		return fmt.Sprintf("%.2f×–open", lo)
	}
	return fmt.Sprintf("%.2f–%.2f×", lo, hi)
}

// times writes a ratio as "1.23×" ("never" for +Inf).
func times(f float64) string {
	if math.IsInf(f, 1) {
		return "never"
	}
	return fmt.Sprintf("%.2f×", f)
}

// signedPct writes a relative error as a signed percentage ("n/a" for NaN).
func signedPct(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f %%", 100*f)
}

// absPct writes an absolute relative error to a tenth of a percent ("no estimate" for +Inf).
func absPct(f float64) string {
	if math.IsInf(f, 1) {
		return "no estimate"
	}
	return fmt.Sprintf("%.1f %%", 100*f)
}

// pct writes a fraction as a percentage ("open" for +Inf: an interval without an upper end).
func pct(f float64) string {
	if math.IsInf(f, 1) {
		return "open"
	}
	return fmt.Sprintf("%.0f %%", 100*f)
}
