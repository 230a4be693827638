package curve_test

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// tier is a constructed tier: its nominal and realised rate, requests, compliant requests,
// variance factor, raw and compliant output, completions per second, and whether its queue
// settled.
type tier struct {
	n              int
	rate, realised float64
	requests, ok   int
	f              float64
	raw, compliant float64
	completions    float64
	unstable       bool
	role           records.Role
}

func (c tier) summary() measure.Summary {
	f := c.f
	if f == 0 {
		f = 1
	}
	realised := c.realised
	if realised == 0 {
		realised = c.rate
	}
	completions := c.completions
	if completions == 0 {
		completions = realised
	}
	st := &measure.Steady{End: 60, Requests: c.requests, Compliant: c.ok, Ok: c.requests, RealisedRate: realised,
		RequestThroughput: completions, RawOutputThroughput: c.raw, CompliantOutputThroughput: c.compliant,
		CompliantShare: float64(c.ok) / float64(c.requests), VarianceFactor: f, EffectiveRequests: float64(c.requests) / f,
		Stationary: !c.unstable}
	if c.unstable {
		st.Note = "no steady state: queueing grows inside the window"
		st.Trend = measure.Trend{Tested: true, Growing: true}
	}
	role := c.role
	if role == "" {
		role = records.RoleTier
	}
	return measure.Summary{Tier: c.n, Role: role, NominalRate: c.rate, Planned: c.requests, Recorded: c.requests, Issued: c.requests,
		Complete: true, RequestThroughput: completions, Steady: st}
}

func summaries(ts ...tier) []measure.Summary {
	out := make([]measure.Summary, len(ts))
	for i, t := range ts {
		out[i] = t.summary()
	}
	return out
}

// saturating is a constructed sweep: raw output grows 100 tok/s per req/s up to 1000 tok/s at
// 10 req/s; the share is 100 % up to 4, 99.8 % at 6, 98.6 % at 8 (uncertain on 500 requests),
// 80 % at 10 (fails), and 12 never settles.
func saturating() []measure.Summary {
	return summaries(
		tier{n: 1, rate: 2, requests: 1000, ok: 1000, raw: 200, compliant: 200},
		tier{n: 2, rate: 4, requests: 2000, ok: 2000, raw: 400, compliant: 400},
		tier{n: 3, rate: 6, requests: 3000, ok: 2994, raw: 600, compliant: 598.8},
		tier{n: 4, rate: 8, requests: 500, ok: 493, raw: 800, compliant: 788.8},
		tier{n: 5, rate: 10, requests: 2000, ok: 1600, raw: 1000, compliant: 800},
		tier{n: 6, rate: 12, requests: 2000, ok: 400, raw: 1010, compliant: 202, unstable: true, completions: 10},
	)
}

func TestVerdictsFromTheSteadyStateInterval(t *testing.T) {
	a := curve.Analyze(saturating(), curve.DefaultParams())
	want := map[int]curve.Verdict{1: curve.VerdictMeets, 2: curve.VerdictMeets, 3: curve.VerdictMeets, 4: curve.VerdictUncertain,
		5: curve.VerdictFails, 6: curve.VerdictFails}
	for _, v := range a.Points {
		if v.Verdict != want[v.Tier] {
			t.Errorf("tier %d: %s (%s), want %s", v.Tier, v.Verdict, v.Reason, want[v.Tier])
		}
		if lo, hi := curve.WilsonN(v.Share, v.EffectiveRequests, 0.95); v.ShareLo != lo || v.ShareHi != hi {
			t.Errorf("tier %d: interval [%v, %v], Wilson on the effective sample gives [%v, %v]", v.Tier, v.ShareLo, v.ShareHi, lo, hi)
		}
	}
	// The variance factor shrinks the sample: 2994 of 3000 meets on 3000 independent requests,
	// and is uncertain when misses cluster by a factor of 10.
	clustered := summaries(tier{n: 3, rate: 6, requests: 3000, ok: 2994, f: 10, raw: 600, compliant: 598.8})
	if v := curve.Analyze(clustered, curve.DefaultParams()).Points[0]; v.Verdict != curve.VerdictUncertain || v.EffectiveRequests != 300 {
		t.Errorf("clustered tier: %s on %v effective requests, want uncertain on 300", v.Verdict, v.EffectiveRequests)
	}
}

func TestCapacityIsWhereTheMonotoneFitCrossesTheTarget(t *testing.T) {
	a := curve.Analyze(saturating(), curve.DefaultParams())
	c := a.Capacity
	if c == nil {
		t.Fatalf("no capacity: %v", a.Notes)
	}
	// The fit is the shares themselves (already non-increasing): 0.998 at 6, 0.986 at 8; crossing
	// 0.99 at 6 + (0.998 − 0.99)/(0.998 − 0.986)·2 = 7.333.
	if want := 6 + 0.008/0.012*2; c.Method != curve.CapacityInterpolated || math.Abs(c.Rate-want) > 1e-9 {
		t.Errorf("capacity %+v, want %v interpolated", c, want)
	}
	// Interval: 6 meets with confidence, 10 fails with confidence (8 is uncertain).
	if c.Low != 6 || c.High == nil || *c.High != 10 || *c.LowTier != 3 || *c.HighTier != 5 {
		t.Errorf("interval [%v, %v] (tiers %v, %v), want [6, 10] (tiers 3, 5)", c.Low, c.High, *c.LowTier, *c.HighTier)
	}
	if !strings.Contains(c.String(), "7.33 req/s (6–10)") {
		t.Errorf("String() = %q", c.String())
	}
	op := a.OperatingPoint
	if want := c.Rate * 0.8; math.Abs(op.Rate-want) > 1e-9 {
		t.Errorf("operating point %v, want %v", op.Rate, want)
	}
	// One interpolation: the curve through the origin: raw 100·rate, compliant as measured.
	f, _ := a.At(op.Rate)
	if math.Abs(op.ExpectedRawThroughput-100*op.Rate) > 1e-9 || f.RawOutputThroughput != op.ExpectedRawThroughput ||
		f.CompliantOutputThroughput != op.ExpectedCompliantThroughput {
		t.Errorf("expected raw %v (At %v), want %v", op.ExpectedRawThroughput, f, 100*op.Rate)
	}
	if a.Knee == nil || a.Knee.Tier != 5 || !a.Knee.ClearlyFails {
		t.Errorf("knee %+v, want tier 5 failing clearly", a.Knee)
	}
	if a.Plateau == nil || a.Plateau.StartTier != 5 {
		t.Errorf("plateau %+v, want from tier 5", a.Plateau)
	}
}

func TestTheFitPoolsANonMonotoneCurve(t *testing.T) {
	// Tier 2 (3 req/s) fails, and tier 3 (4 req/s) meets: the fit pools them into one block at
	// their weighted share, and a single early failure does not erase the capacity.
	ts := summaries(
		tier{n: 1, rate: 2, requests: 1000, ok: 1000, raw: 200, compliant: 200},
		tier{n: 2, rate: 3, requests: 1000, ok: 970, raw: 300, compliant: 291},
		tier{n: 3, rate: 4, requests: 3000, ok: 2997, raw: 400, compliant: 399},
		tier{n: 4, rate: 6, requests: 2000, ok: 1800, raw: 600, compliant: 540},
	)
	a := curve.Analyze(ts, curve.DefaultParams())
	pooled := (970.0 + 2997) / 4000
	for _, v := range a.Points {
		if (v.Tier == 2 || v.Tier == 3) && math.Abs(v.Fit-pooled) > 1e-12 {
			t.Errorf("tier %d fitted %v, want the pooled %v", v.Tier, v.Fit, pooled)
		}
		if v.Tier == 1 && v.Fit != 1 {
			t.Errorf("tier 1 fitted %v", v.Fit)
		}
	}
	if a.Capacity == nil || !(a.Capacity.Rate > 4 && a.Capacity.Rate < 6) {
		t.Errorf("capacity %+v, want between 4 and 6", a.Capacity)
	}
	found := false
	for _, n := range a.Notes {
		found = found || strings.Contains(n, "not monotone")
	}
	if !found {
		t.Errorf("the notes do not report the non-monotone curve: %v", a.Notes)
	}
}

func TestNoRateAboveAnUnstableTierIsClaimed(t *testing.T) {
	// Every share meets the target, but the 12 req/s tier never settled and 14 req/s arrivals
	// exceed every completion rate: capacity stops at 8, the last stable tier.
	ts := summaries(
		tier{n: 1, rate: 4, requests: 2000, ok: 2000, raw: 400, compliant: 400},
		tier{n: 2, rate: 8, requests: 2000, ok: 2000, raw: 800, compliant: 800},
		tier{n: 3, rate: 12, requests: 2000, ok: 1990, raw: 1000, compliant: 995, unstable: true, completions: 10},
		tier{n: 4, rate: 14, requests: 2000, ok: 2000, raw: 1000, compliant: 1000, completions: 10},
	)
	a := curve.Analyze(ts, curve.DefaultParams())
	if c := a.Capacity; c == nil || c.Method != curve.CapacityAtTier || c.Rate != 8 || c.High == nil || *c.High != 12 {
		t.Fatalf("capacity %+v, want 8 at tier 2 with the interval ending at 12", c)
	}
	for _, v := range a.Points {
		if v.Tier == 4 && (v.Stable || v.Verdict != curve.VerdictFails || !strings.Contains(v.Reason, "exceed the highest completion rate")) {
			t.Errorf("tier 4 at 14 req/s with completions at 10 req/s: %+v", v)
		}
	}
}

func TestBoundByServiceMarksUnsustainableTiers(t *testing.T) {
	ts := summaries(
		tier{n: 1, rate: 5, requests: 100, ok: 100, raw: 50, compliant: 50, completions: 4.9},
		tier{n: 2, rate: 10.4, requests: 100, ok: 100, raw: 98, compliant: 98, completions: 9.8},  // within 5 % of the best completion rate
		tier{n: 3, rate: 14, requests: 100, ok: 100, raw: 100, compliant: 100, completions: 10.1}, // arrivals 40 % above it
		tier{n: 4, rate: 30, requests: 10, ok: 10, raw: 100, compliant: 100, completions: 10},     // too few requests to judge
	)
	a := curve.Analyze(ts, curve.DefaultParams())
	want := map[int]bool{1: true, 2: true, 3: false, 4: true}
	for _, v := range a.Points {
		if v.Stable != want[v.Tier] {
			t.Errorf("tier %d: stable %v (%s), want %v", v.Tier, v.Stable, v.Reason, want[v.Tier])
		}
		if v.Tier == 3 && !strings.Contains(v.Reason, "10.1 req/s") {
			t.Errorf("the reason should name the best completion rate: %s", v.Reason)
		}
	}
}

// TestOnlyAFailingProbeCounts: a saturation probe is short and starts from idle, so a batching
// engine can carry it compliant at a rate it cannot sustain. A probe that did not fail is left
// out of the fit (here it would lift the capacity from 8 to the probe's 12); a failing one caps
// the curve like any failing tier.
func TestOnlyAFailingProbeCounts(t *testing.T) {
	ts := summaries(
		tier{n: 1, rate: 6, requests: 75, ok: 75, raw: 1000, compliant: 1000, role: records.RoleProbe},
		tier{n: 2, rate: 12, requests: 75, ok: 75, raw: 1200, compliant: 1200, role: records.RoleProbe},
		tier{n: 3, rate: 4, requests: 2000, ok: 2000, raw: 400, compliant: 400},
		tier{n: 4, rate: 8, requests: 2000, ok: 2000, raw: 800, compliant: 800},
		tier{n: 5, rate: 10, requests: 2000, ok: 1600, raw: 1000, compliant: 800},
	)
	a := curve.Analyze(ts, curve.DefaultParams())
	for _, v := range a.Points {
		probe := v.Tier <= 2
		if probe != (v.Verdict == curve.VerdictExcluded) {
			t.Errorf("tier %d: %s (%s); want excluded exactly for the probes", v.Tier, v.Verdict, v.Reason)
		}
		if probe && !strings.Contains(v.Reason, "a probe counts only when it fails") {
			t.Errorf("tier %d: the reason should say why a compliant probe does not count: %s", v.Tier, v.Reason)
		}
	}
	if c := a.Capacity; c == nil || c.Rate < 8 || c.Rate > 10 || c.High == nil || *c.High != 10 {
		t.Errorf("capacity %+v: want between 8 and 10, the interval ending at the failing tier 5", c)
	}
	// A probe that fails stays a failing point: it caps the curve below the tiers above it.
	failing := summaries(
		tier{n: 1, rate: 9, requests: 75, ok: 30, raw: 900, compliant: 360, role: records.RoleProbe},
		tier{n: 2, rate: 4, requests: 2000, ok: 2000, raw: 400, compliant: 400},
	)
	a = curve.Analyze(failing, curve.DefaultParams())
	if c := a.Capacity; c == nil || c.High == nil || *c.High != 9 {
		t.Errorf("capacity %+v: the failing probe at 9 req/s should bound its interval", c)
	}
}

func TestNoCapacityWhenEvenTheLightestTierFails(t *testing.T) {
	interrupted := tier{n: 3, rate: 1, requests: 500, ok: 500, raw: 100, compliant: 100}.summary()
	interrupted.Interrupted = true
	tests := []struct {
		name        string
		tiers       []measure.Summary
		want, avoid string
	}{
		{"the deployment misses", summaries(
			tier{n: 1, rate: 2, requests: 1000, ok: 800, raw: 200, compliant: 160},
			tier{n: 2, rate: 4, requests: 1000, ok: 500, raw: 400, compliant: 200},
		), "no capacity: even the lightest judged tier, tier 1 (2 req/s), misses the objective (fitted share 80 % against a 99 % target): loosen the objectives", "not judged"},
		// Ctrl-C during the first tier below the saturation probe: the lighter load was never
		// judged, and the advice must not blame the objectives or the deployment.
		{"a lighter tier was interrupted", append(summaries(
			tier{n: 1, rate: 2, requests: 1000, ok: 800, raw: 200, compliant: 160},
		), interrupted), "lighter loads were not judged: tier 3 excluded", "loosen the objectives"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := curve.Analyze(tt.tiers, curve.DefaultParams())
			if a.Capacity != nil || a.OperatingPoint != nil {
				t.Errorf("capacity %+v, operating point %+v: want none", a.Capacity, a.OperatingPoint)
			}
			notes := strings.Join(a.Notes, "\n")
			if !strings.Contains(notes, tt.want) || strings.Contains(notes, tt.avoid) {
				t.Errorf("notes should say %q and not %q:\n%s", tt.want, tt.avoid, notes)
			}
		})
	}
}

func TestExcludedTiersAreNotJudged(t *testing.T) {
	cb := tier{n: 2, rate: 4, requests: 1000, ok: 1000, raw: 400, compliant: 400}.summary()
	cb.ClientBound, cb.ClientBoundReason = true, "schedule_lag p99 is 9 ms"
	cut := tier{n: 3, rate: 6, requests: 1000, ok: 400, raw: 600, compliant: 240}.summary()
	cut.Recorded = 500 // a kill -9: half the planned requests have no record
	stopped := tier{n: 4, rate: 8, requests: 1000, ok: 100, raw: 800, compliant: 80}.summary()
	stopped.Interrupted = true
	a := curve.Analyze([]measure.Summary{tier{n: 1, rate: 2, requests: 1000, ok: 1000, raw: 200, compliant: 200}.summary(), cb, cut, stopped},
		curve.DefaultParams())
	for _, v := range a.Points {
		if v.Tier != 1 && v.Verdict != curve.VerdictExcluded {
			t.Errorf("tier %d: %s, want excluded", v.Tier, v.Verdict)
		}
	}
	if c := a.Capacity; c == nil || !c.LowerBoundOnly() || c.Rate != 2 {
		t.Errorf("capacity %+v: only the one judged tier counts (at least 2 req/s)", c)
	}
	if !strings.HasPrefix(a.Capacity.String(), "at least 2 req/s") {
		t.Errorf("a lower bound must say so: %q", a.Capacity.String())
	}
}

func TestTheConfirmationVerifiesTheOperatingPoint(t *testing.T) {
	base := saturating()
	a := curve.Analyze(base, curve.DefaultParams())
	op := a.OperatingPoint.Rate
	confirm := tier{n: 7, rate: op, requests: 4000, ok: 4000, raw: 100 * op, compliant: 100 * op, role: records.RoleConfirm}
	a = curve.Analyze(append(base, confirm.summary()), curve.DefaultParams())
	if !a.OperatingPoint.Verified() {
		t.Fatalf("confirmation %+v does not verify the operating point", a.OperatingPoint.Confirmation)
	}
	f, ok := a.OperatingFigures()
	if !ok || f.RawOutputThroughput != 100*op || !strings.Contains(f.Source, "confirmation tier 7") {
		t.Errorf("the ledger's figures %+v are not the confirmation's", f)
	}
	// The confirmation is not a point of the curve: the capacity is the same with or without it.
	if a.Capacity.Rate != curve.Analyze(base, curve.DefaultParams()).Capacity.Rate {
		t.Error("the confirmation moved the capacity")
	}
	// Under other settings the operating point moves. With less headroom it is above the
	// confirmed rate: the tier no longer confirms it.
	p := curve.DefaultParams()
	p.Headroom = 0.1
	b := curve.Analyze(append(base, confirm.summary()), p)
	if b.OperatingPoint.Verified() || b.OperatingPoint.Confirmation.AtThisPoint {
		t.Errorf("a confirmation run at a lighter operating point verifies this one: %+v", b.OperatingPoint.Confirmation)
	}
	if f, _ := b.OperatingFigures(); !strings.Contains(f.Source, "no tier ran there") {
		t.Errorf("figures of an unverified point: %+v", f)
	}
	if v := b.OperatingPoint.Verification; !strings.HasPrefix(v, "not verified: the confirmation tier") || !strings.Contains(v, "another operating point") {
		t.Errorf("an unverified point says %q", v)
	}
	// With more headroom it is below the confirmed rate, which met the target with confidence:
	// every lighter load meets it too, so it is verified by that heavier tier, and its figures
	// come from the curve (no tier ran at it).
	p.Headroom = 0.4
	b = curve.Analyze(append(base, confirm.summary()), p)
	op2 := b.OperatingPoint
	if !op2.Verified() || op2.VerifiedBy != curve.VerifiedByHeavierTier || op2.HeavierTier == nil || op2.Confirmation.AtThisPoint {
		t.Errorf("a confirmation that met the target at a heavier load does not verify this point: %+v, by %q", op2.Confirmation, op2.VerifiedBy)
	}
	if f, _ := b.OperatingFigures(); !strings.Contains(f.Source, "curve") {
		t.Errorf("figures of a point verified by a heavier tier: %+v", f)
	}
}

func TestAnalysisJSONGolden(t *testing.T) {
	a := curve.Analyze(saturating(), curve.DefaultParams())
	got, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "saturating.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got)+"\n" != string(want) {
		t.Errorf("analysis JSON differs from %s (go test -update to accept):\n%s", path, got)
	}
	// And back: the decoded analysis is the analysis.
	var back curve.Analysis
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(denan(back), denan(a)) {
		t.Errorf("round trip changed the analysis:\n got %+v\nwant %+v", back, a)
	}
}

// denan replaces NaN fields of the points so that DeepEqual can compare them.
func denan(a curve.Analysis) curve.Analysis {
	a.Points = append([]curve.PointVerdict(nil), a.Points...)
	for i := range a.Points {
		for _, f := range []*float64{&a.Points[i].Fit, &a.Points[i].FitLo, &a.Points[i].FitHi, &a.Points[i].NominalRate, &a.Points[i].Share} {
			if math.IsNaN(*f) {
				*f = -1
			}
		}
	}
	return a
}

func TestParams(t *testing.T) {
	if errs := (curve.Params{TargetShare: 1.5, Headroom: 1, Confidence: 2, PlateauGain: -1}).Validate(); len(errs) != 4 {
		t.Errorf("%d errors, want 4: %v", len(errs), errs)
	} else {
		for _, err := range errs {
			if strings.Contains(err.Error(), "--") {
				t.Errorf("a library error names a flag: %v", err)
			}
		}
	}
	if errs := curve.DefaultParams().Validate(); len(errs) != 0 {
		t.Errorf("defaults invalid: %v", errs)
	}
	a := curve.Analyze(saturating(), curve.Params{})
	if a.Params.TargetShare != curve.DefaultTargetShare || a.Params.Confidence != curve.DefaultConfidence || a.Params.PlateauGain != curve.DefaultPlateauGain {
		t.Errorf("the echoed params are not the ones used: %+v", a.Params)
	}
}

// TestAPoolOfHeavierTiersVerifiesTheOperatingPoint: the stable tiers from the operating point up
// to the capacity, pooled with its confirmation, verify it when their pooled share's lower bound
// reaches the target, though none does alone (each 150 or 200 requests with no miss: lower
// bounds of 97.5 and 98.1 %; pooled, 500: 99.2 %). The confirmation counts at its nominal rate,
// the operating point's, even when its arrivals realised a little less (their Poisson noise is
// about 1 % on a confirmation), as it would when verifying on its own; one run at another,
// lighter point does not count.
func TestAPoolOfHeavierTiersVerifiesTheOperatingPoint(t *testing.T) {
	base := []tier{
		{n: 1, rate: 5, requests: 150, ok: 150, raw: 500, compliant: 500},
		{n: 2, rate: 8.5, requests: 150, ok: 150, raw: 850, compliant: 850},
		{n: 3, rate: 9.5, requests: 150, ok: 150, raw: 950, compliant: 950},
		{n: 4, rate: 11, requests: 1000, ok: 800, raw: 1100, compliant: 880},
	}
	a := curve.Analyze(summaries(base...), curve.DefaultParams())
	if a.OperatingPoint == nil || a.OperatingPoint.Verified() {
		t.Fatalf("the search tiers alone must not verify the operating point: %+v", a.OperatingPoint)
	}
	op := a.OperatingPoint.Rate
	if !(op < 8.5) {
		t.Fatalf("operating point %v: the constructed tiers must put it below 8.5 req/s", op)
	}
	tests := []struct {
		name              string
		nominal, realised float64
		verified          bool
	}{
		{"the confirmation at the point, as planned", op, op, true},
		{"the confirmation at the point, 0.6 % fewer arrivals", op, op * 0.994, true},
		{"a confirmation at a lighter point", op * 0.97, op * 0.97, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			confirm := tier{n: 5, rate: tt.nominal, realised: tt.realised, requests: 200, ok: 200, raw: 100 * tt.realised,
				compliant: 100 * tt.realised, role: records.RoleConfirm}
			got := curve.Analyze(summaries(append(base, confirm)...), curve.DefaultParams()).OperatingPoint
			if got.Verified() != tt.verified {
				t.Fatalf("verified %v, want %v: %s", got.Verified(), tt.verified, got.Verification)
			}
			if tt.verified && (got.VerifiedBy != curve.VerifiedByHeavierTiers || got.Pool == nil || !slices.Contains(got.Pool.Tiers, 5)) {
				t.Errorf("verified by %q, pool %+v: want the heavier tiers pooled with confirmation 5", got.VerifiedBy, got.Pool)
			}
		})
	}
}

// TestAPoolSetLowerEndVerifiesInItsOwnName: a lower end set by a pool (two tiers of 250 requests
// with no miss: alone 98.5 %, pooled 99.2 % at least) verifies the lighter operating point, and
// the verification names the pool and its bound, not the lightest tier as if it met the target
// alone.
func TestAPoolSetLowerEndVerifiesInItsOwnName(t *testing.T) {
	a := curve.Analyze(summaries(
		tier{n: 1, rate: 8.5, requests: 250, ok: 250, raw: 850, compliant: 850},
		tier{n: 2, rate: 9.5, requests: 250, ok: 250, raw: 950, compliant: 950},
		tier{n: 3, rate: 11, requests: 1000, ok: 800, raw: 1100, compliant: 880},
	), curve.DefaultParams())
	c, op := a.Capacity, a.OperatingPoint
	if c == nil || c.LowPool == nil || c.Low != 8.5 || op == nil || op.Rate >= c.Low {
		t.Fatalf("the constructed tiers must set the lower end 8.5 by a pool above the operating point: %+v, %+v", c, op)
	}
	if op.VerifiedBy != curve.VerifiedByHeavierTier {
		t.Fatalf("verified by %q: %s", op.VerifiedBy, op.Verification)
	}
	if want := "verified: tiers 1, 2, pooled (100 % compliant on 500 effective requests, lower bound"; !strings.HasPrefix(op.Verification, want) {
		t.Errorf("verification %q, want it to begin %q", op.Verification, want)
	}
}

// TestUndecidedConfirmationSaysWhatWouldDecide: a confirmation with no miss that did not decide
// says how many requests there would, at the clustering it showed: a share of 1 clears a 99 %
// target at 95 % confidence once its effective sample reaches z²·q/(1 − q) = 380.3 (the Wilson
// bound; NeededEffective's whole 381), so 4,984 requests that count as 87 need 381 · 4984/87 ≈
// 21,827. One that decided needs none.
func TestUndecidedConfirmationSaysWhatWouldDecide(t *testing.T) {
	base := saturating()
	op := curve.Analyze(base, curve.DefaultParams()).OperatingPoint.Rate
	for _, tc := range []struct {
		name string
		conf tier
		want float64
	}{
		{"no miss, clustered", tier{n: 7, rate: op, requests: 4984, ok: 4984, f: 4984.0 / 87, role: records.RoleConfirm}, math.Ceil(1.959964*1.959964*0.99/0.01) * 4984 / 87},
		{"decided", tier{n: 7, rate: op, requests: 4000, ok: 4000, role: records.RoleConfirm}, 0},
		{"below the target", tier{n: 7, rate: op, requests: 4000, ok: 3950, f: 40, role: records.RoleConfirm}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := curve.Analyze(append(base, tc.conf.summary()), curve.DefaultParams())
			cf := a.OperatingPoint.Confirmation
			if got := cf.RequestsToDecide; math.Abs(got-tc.want) > 0.001*tc.want+1e-9 {
				t.Errorf("requests to decide %.1f, want %.1f (verdict %s, %.1f effective)", got, tc.want, cf.Verdict, cf.EffectiveRequests)
			}
		})
	}
	// Above the target but not at 1: the figure is where the interval's lower end reaches it.
	c := tier{n: 7, rate: op, requests: 3000, ok: 2985, f: 10, role: records.RoleConfirm}
	cf := curve.Analyze(append(base, c.summary()), curve.DefaultParams()).OperatingPoint.Confirmation
	n := cf.RequestsToDecide * cf.EffectiveRequests / 3000 // effective
	if lo, _ := curve.WilsonN(0.995, n, 0.95); lo < 0.99 {
		t.Errorf("%.0f effective requests do not decide: lower end %.5f", n, lo)
	}
	if lo, _ := curve.WilsonN(0.995, 0.999*n, 0.95); lo >= 0.99 {
		t.Errorf("%.0f effective requests are more than it takes: %.0f decide too (lower end %.5f)", n, 0.999*n, lo)
	}
}
