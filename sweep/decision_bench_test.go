package sweep_test

import (
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

	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/sim"
	"github.com/loadcurve/loadcurve/sweep"
	"github.com/loadcurve/loadcurve/sweep/sweeptest"
)

// Time to decision: how many seconds of load on the target a sweep spends to locate the capacity
// at the objective (Result.TargetSeconds, on the virtual clock of sweeptest.QueueRunner), and how
// accurately, for the automatic sweep and for fixed grids of tiers of the kind people run by hand.
// The deployments are the M/D/c queues of decisions_test.go, whose capacity at a 500 ms TTFT
// objective and a 99 % target is known exactly (sim.MDCCapacity).
//
// The metrics per method and deployment, and the markdown table of the time-to-decision
// section of docs/PERFORMANCE.md:
//
//	go test -run '^$' -bench TimeToDecision ./sweep
//	LOADCURVE_DECISION_TABLE=1 go test -count=1 -v -run TestTimeToDecisionTable ./sweep
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

// decisionMethod is one way of sweeping a deployment.
type decisionMethod struct {
	name  string // in benchmark names
	label string // in the table
	// config is the sweep of deployment q with seed.
	config func(q sim.QueueConfig, seed int64) (sweep.Config, error)
}

var decisionMethods = []decisionMethod{
	{"auto", "automatic (default)", func(_ sim.QueueConfig, seed int64) (sweep.Config, error) { return defaultSweep(seed), nil }},
	{"grid10x30s", "grid 10 × 30 s", gridSweep(30 * time.Second)},
	{"grid10x120s", "grid 10 × 120 s", gridSweep(120 * time.Second)},
}

// gridSweep is a fixed grid of tiers of length d, confirmed, under the settings of defaultSweep.
// The rates are written as a user would write them (LO:HI:geom:N) and parsed as the command does.
func gridSweep(d time.Duration) func(q sim.QueueConfig, seed int64) (sweep.Config, error) {
	return func(q sim.QueueConfig, seed int64) (sweep.Config, error) {
		sat := float64(q.Servers) / q.Service.Seconds()
		spec := fmt.Sprintf("%s:%s:geom:%d", strconv.FormatFloat(gridLow*sat, 'g', -1, 64), strconv.FormatFloat(gridHigh*sat, 'g', -1, 64), gridTiers)
		rates, err := sweep.ParseRates(spec)
		if err != nil {
			return sweep.Config{}, err
		}
		cfg := defaultSweep(seed)
		cfg.Rates, cfg.Duration = rates, d
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

// decisionTruth is the exact capacity of deployment q at the objective.
func decisionTruth(q sim.QueueConfig) (float64, error) {
	return sim.MDCCapacity(q.Service, q.Servers, ttftObjective-q.FirstToken, decisionTargetShare)
}

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
}

// runDecision runs one sweep of deployment q by method m with seed and judges it.
func runDecision(m decisionMethod, q sim.QueueConfig, truth float64, seed int64) (decisionOutcome, error) {
	cfg, err := m.config(q, seed)
	if err != nil {
		return decisionOutcome{}, err
	}
	res, err := (&sweep.Executor{Config: cfg, Runner: &sweeptest.QueueRunner{Config: q}}).Run(context.Background())
	if err != nil {
		return decisionOutcome{}, fmt.Errorf("%s seed %d: %w", m.name, seed, err)
	}
	o := decisionOutcome{targetS: res.TargetSeconds, tiers: len(res.Tiers), relErr: math.NaN(), low: math.NaN(), high: math.NaN()}
	for _, t := range res.Tiers {
		if d := t.Summary.Duration; t.Tier.Role == records.RoleConfirm && !math.IsNaN(d) && !math.IsInf(d, 0) {
			o.confirmS += d
		}
	}
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
	return o, nil
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
}

func summariseDecisions(outs []decisionOutcome) decisionStats {
	st := decisionStats{sweeps: len(outs)}
	if len(outs) == 0 {
		return st
	}
	var secs, confirm, search, tiers, lows, highs, widths, errs, absErrs []float64
	var w5, w10, cov, below, ver int
	for _, o := range outs {
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
	for _, m := range decisionMethods {
		b.Run(m.name, func(b *testing.B) {
			for _, qc := range queues {
				b.Run(benchName(qc.name), func(b *testing.B) {
					truth, err := decisionTruth(qc.q)
					if err != nil {
						b.Fatal(err)
					}
					var st decisionStats
					for b.Loop() {
						outs := make([]decisionOutcome, 0, n)
						for seed := int64(1); seed <= int64(n); seed++ {
							o, err := runDecision(m, qc.q, truth, seed)
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
	truths := make([]float64, len(queues))
	for i, qc := range queues {
		if truths[i], err = decisionTruth(qc.q); err != nil {
			t.Fatal(err)
		}
	}
	// outs[method][deployment][seed−1], filled by GOMAXPROCS workers (the sweeps are independent).
	outs := make([][][]decisionOutcome, len(decisionMethods))
	for m := range decisionMethods {
		outs[m] = make([][]decisionOutcome, len(queues))
		for d := range queues {
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
				o, err := runDecision(decisionMethods[j.m], queues[j.d].q, truths[j.d], int64(j.s+1))
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", queues[j.d].name, err))
				}
				outs[j.m][j.d][j.s] = o
				mu.Unlock()
			}
		})
	}
	for m := range decisionMethods {
		for d := range queues {
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

	var sb strings.Builder
	fmt.Fprintf(&sb, "Objective TTFT ≤ %v for %.0f %% of requests; %d seeds per method and deployment; ±5 %% and ±10 %% are of the true capacity.\n\n",
		ttftObjective, 100*decisionTargetShare, n)
	sb.WriteString("| deployment | true capacity | method | target-s per sweep: median (max) | of which confirmation (median) | tiers (median) | capacity error: median, 90th pct of \\|error\\| | within ±5 % | within ±10 % | interval covers truth | interval ends, × truth (medians) | operating point below truth | operating point verified |\n")
	sb.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	row := func(dep, truth string, m decisionMethod, st decisionStats) {
		fmt.Fprintf(&sb, "| %s | %s | %s | %.0f (%.0f) | %.0f | %.0f | %s, %s | %s | %s | %s | %s | %s | %s |\n", dep, truth, m.label,
			st.medianS, st.maxS, st.confirmS, st.medianTiers, signedPct(st.medianErr), absPct(st.p90Err), pct(st.within5), pct(st.within10), pct(st.covers), ends(st.medianLow, st.medianHigh), pct(st.below), pct(st.verified))
	}
	for d, qc := range queues {
		sat := float64(qc.q.Servers) / qc.q.Service.Seconds()
		for m, dm := range decisionMethods {
			dep, truth := "", ""
			if m == 0 {
				dep = fmt.Sprintf("%s (c/D = %.3g req/s)", qc.name, sat)
				truth = fmt.Sprintf("%.3f req/s (%.0f %% of c/D)", truths[d], 100*truths[d]/sat)
			}
			row(dep, truth, dm, summariseDecisions(outs[m][d]))
		}
	}
	all := make([]decisionStats, len(decisionMethods))
	for m, dm := range decisionMethods {
		all[m] = summariseDecisions(slices.Concat(outs[m]...))
		dep := ""
		if m == 0 {
			dep = fmt.Sprintf("**all %d**", len(queues))
		}
		row(dep, "", dm, all[m])
	}
	fmt.Fprintf(&sb, "\nTime to decision at ±%.0f %% / %.0f %% of sweeps:\n\n", 100*decisionTolerance, 100*decisionCoverage)
	for m, dm := range decisionMethods {
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
