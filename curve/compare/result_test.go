package compare_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/compare"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// window is the length of every constructed tier's steady-state window, in seconds.
const window = 100.0

// tierSpec is one constructed tier: its rate, its steady-state compliant share, and its raw
// output tokens per request (the steady raw throughput is rate × tokens).
type tierSpec struct {
	rate, share, tokens float64
}

// summaryOf is the summary of a tier that ran at spec.rate for a steady window of `window`
// seconds, every request ok. The whole-tier throughputs are deliberately other than the steady
// ones (a warm-up in front), so that a figure taken from the wrong one shows.
func summaryOf(tier int, role records.Role, spec tierSpec) measure.Summary {
	n := int(spec.rate * window)
	raw := spec.rate * spec.tokens
	compliant := int(math.Round(spec.share * float64(n)))
	st := &measure.Steady{Start: 0, End: window, Warmup: measure.WarmupGiven, Requests: n, Compliant: compliant, Ok: n,
		RealisedRate: spec.rate, RequestThroughput: spec.rate, RawOutputThroughput: raw, CompliantOutputThroughput: raw * spec.share,
		CompliantShare: float64(compliant) / float64(n), VarianceFactor: 1, EffectiveRequests: float64(n), Stationary: true}
	return measure.Summary{MetricsVersion: records.MetricsVersion, Tier: tier, Role: role, Complete: true, Recorded: n,
		Duration: window + 5, Planned: n, Issued: n, Completed: n, NominalRate: spec.rate, Burstiness: 1, RealisedRate: spec.rate,
		RequestThroughput: spec.rate * 0.9, RawOutputThroughput: raw * 0.9, CompliantOutputThroughput: raw * spec.share * 0.9,
		CompliantRequestShare: st.CompliantShare, Objectives: "ttft:500", Steady: st}
}

// settings are the objectives and analysis parameters of every constructed result.
func settings() result.Settings {
	return result.Settings{Measure: measure.Options{Objectives: measure.Objectives{TTFT: 500 * time.Millisecond}}, Params: curve.DefaultParams()}
}

// header is the records header of a constructed result.
func header(cmd records.Command, arrival string, extraBody string) records.Header {
	h := records.Header{Kind: records.KindHeader, Tool: "loadcurve", MetricsVersion: records.MetricsVersion, Command: cmd,
		Target: "http://127.0.0.1:8000/v1", Endpoint: "chat", Model: "m", Workload: "random(input=32, output=8, range=0, seed=1)",
		Arrival: arrival, Seed: 1, CachePolicy: "cold", StartWall: time.Unix(1_700_000_000, 0).UTC(), Settings: settings().Record()}
	if extraBody != "" {
		h.ExtraBody = json.RawMessage(extraBody)
	}
	if cmd == records.CommandRun {
		h.WorkloadFingerprint = "sha256:run"
	}
	return h
}

// build makes the result result.Build makes of the constructed tiers.
func build(h records.Header, specs ...tierSpec) *result.Result {
	var tiers []result.TierResult
	for i, sp := range specs {
		s := summaryOf(i, records.RoleTier, sp)
		id := records.Tier{Kind: records.KindTier, Tier: i, Role: records.RoleTier, Arrival: fmt.Sprintf("poisson(rate=%g)", sp.rate),
			RequestRate: records.Rate(sp.rate), Burstiness: 1, Seed: sweep.TierSeed(h.Seed, sp.rate, 0), Planned: s.Planned,
			WorkloadFingerprint: fmt.Sprintf("sha256:tier-at-%g", sp.rate), StartWall: h.StartWall,
			End: &records.TierEnd{Kind: records.KindTierEnd, Tier: i, Planned: s.Planned, ArrivalsEndS: window, Reason: records.EndedSchedule}}
		tiers = append(tiers, result.TierResult{Tier: id, Summary: s})
	}
	return result.Build(h, settings(), tiers)
}

func side(name string, r *result.Result) compare.Side {
	return compare.Side{Name: name, Path: strings.ToLower(name), Result: r}
}

const autoSweep = "sweep(auto, burstiness=1)"

// TestTwoSweepsWithoutACommonRateAreNotComparable: two automatic sweeps that share no tier rate
// have nothing to put side by side; before the redesign they passed the check and compare printed
// empty tables with exit 0. Force compares them anyway, stamped.
func TestTwoSweepsWithoutACommonRateAreNotComparable(t *testing.T) {
	a := build(header(records.CommandSweep, autoSweep, ""), tierSpec{2, 1, 100}, tierSpec{4, 1, 100})
	b := build(header(records.CommandSweep, autoSweep, ""), tierSpec{3, 1, 100}, tierSpec{5, 1, 100})
	res, err := compare.Results(side("A", a), side("B", b), compare.Options{})
	if !errors.Is(err, compare.ErrNotComparable) {
		t.Fatalf("err %v, want ErrNotComparable", err)
	}
	if res.Comparable || len(res.Mismatches) != 1 || res.Mismatches[0].Field != compare.FieldCommonRates {
		t.Fatalf("mismatches %v, want exactly the one about common rates", res.Mismatches)
	}
	if m := res.Mismatches[0]; m.A != "2,4" || m.B != "3,5" {
		t.Errorf("the mismatch names rates %q and %q, want 2,4 and 3,5", m.A, m.B)
	}
	forced, err := compare.Results(side("A", a), side("B", b), compare.Options{Force: true})
	if err != nil {
		t.Fatalf("Force: %v", err)
	}
	if forced.Comparable || !strings.Contains(forced.Stamp, "NOT COMPARABLE") || len(forced.Mismatches) != 1 {
		t.Errorf("Force: comparable %v, stamp %q, mismatches %v", forced.Comparable, forced.Stamp, forced.Mismatches)
	}
	// One rate in common is enough.
	c := build(header(records.CommandSweep, autoSweep, ""), tierSpec{4, 1, 100}, tierSpec{8, 1, 100})
	if res, err := compare.Results(side("A", a), side("C", c), compare.Options{}); err != nil || !res.Comparable {
		t.Errorf("sweeps sharing the rate 4: err %v, mismatches %v", err, res.Mismatches)
	}
}

// TestRequestBodiesCompareCanonically: the request body's extra parameters are part of the
// traffic. Bodies that say the same in another key order are equal; a body with ignore_eos and
// one without (or with it false) are not. Before the redesign the check ignored the body.
func TestRequestBodiesCompareCanonically(t *testing.T) {
	run := func(body string) *result.Result {
		return build(header(records.CommandRun, "poisson(rate=10)", body), tierSpec{10, 1, 100})
	}
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"key order", `{"top_k":5,"ignore_eos":true,"stop":["a","b"]}`, `{ "ignore_eos": true, "stop": ["a", "b"], "top_k": 5 }`, true},
		{"nested key order", `{"x":{"a":1,"b":2}}`, `{"x":{"b":2,"a":1}}`, true},
		{"none on either side", "", "", true},
		{"ignore_eos on one side only", `{"ignore_eos":true}`, "", false},
		{"ignore_eos true and false", `{"ignore_eos":true}`, `{"ignore_eos":false}`, false},
		{"another value", `{"top_k":5,"ignore_eos":true}`, `{"ignore_eos":true,"top_k":6}`, false},
		{"a member more", `{"ignore_eos":true}`, `{"ignore_eos":true,"top_k":5}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := compare.Results(side("A", run(tc.a)), side("B", run(tc.b)), compare.Options{})
			if tc.same {
				if err != nil || !res.Comparable {
					t.Errorf("err %v, mismatches %v: want comparable", err, res.Mismatches)
				}
				return
			}
			if !errors.Is(err, compare.ErrNotComparable) || len(res.Mismatches) != 1 || res.Mismatches[0].Field != compare.FieldExtraBody {
				t.Errorf("err %v, mismatches %v: want exactly the request-body mismatch", err, res.Mismatches)
			}
		})
	}
}

// TestPairedStatisticsUseSnakeCaseKeys: compare.json's paired statistics were encoded with Go's
// field names (MedianDiff, CILow, Wins) while every other file uses snake_case.
func TestPairedStatisticsUseSnakeCaseKeys(t *testing.T) {
	pr, err := compare.Paired(map[int]float64{0: 10, 1: 11, 2: 12, 3: 13, 4: 14, 5: 15, 6: 16, 7: 17},
		map[int]float64{0: 9, 1: 11, 2: 13, 3: 12, 4: 13, 5: 14, 6: 15, 7: 15}, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	res := compare.Result{Comparable: true, A: "a", B: "b", Paired: []compare.PairedRow{{Rate: 4, Metric: "ttft_ms", Result: &pr}}}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Paired []struct {
			Result map[string]any `json:"result"`
		} `json:"paired"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Paired) != 1 || m.Paired[0].Result == nil {
		t.Fatalf("no paired result in %s", b)
	}
	keys := m.Paired[0].Result
	for _, k := range []string{"n", "median_diff", "mean_diff", "ci_low", "ci_high", "confidence", "b_better", "b_worse", "ties"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("paired result lacks %q: %s", k, b)
		}
	}
	for k := range keys {
		if k != strings.ToLower(k) {
			t.Errorf("paired result key %q is not snake_case", k)
		}
	}
	for _, camel := range []string{"MedianDiff", "CILow", "CIHigh", "Wins", "Losses"} {
		if strings.Contains(string(b), `"`+camel+`"`) {
			t.Errorf("compare.json holds the Go field name %q: %s", camel, b)
		}
	}
}

// TestTheLedgerPricesPricedFigures: the cost ledger prices each side at the figures
// result.Result.PricedFigures gives (for a sweep the analysis's operating figures, the project's
// one interpolation, through the origin below the first tier; for a run its tier's steady-state
// figures). Before the redesign compare and cost interpolated again, clamped to the first tier:
// two prices for one operating point.
func TestTheLedgerPricesPricedFigures(t *testing.T) {
	costs := &compare.Costs{A: 10, B: 8}
	t.Run("sweeps", func(t *testing.T) {
		// Capacity between 10 and 20 req/s, just above 10: the operating point (20 % headroom) is
		// below the first tier, where the two interpolation rules disagree.
		a := build(header(records.CommandSweep, autoSweep, ""), tierSpec{10, 1, 100}, tierSpec{20, 0.5, 100})
		b := build(header(records.CommandSweep, autoSweep, ""), tierSpec{10, 1, 120}, tierSpec{20, 0.6, 120})
		res, err := compare.Results(side("A", a), side("B", b), compare.Options{Costs: costs})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range []*result.Result{a, b} {
			d := res.Decisions[i]
			op := r.Analysis.OperatingPoint
			if op == nil || !(op.Rate < 10) {
				t.Fatalf("%s: operating point %+v: the test wants it below the first tier (10 req/s); notes %v", d.Side, op, r.Analysis.Notes)
			}
			want, ok := r.Analysis.OperatingFigures()
			if !ok {
				t.Fatalf("%s: no operating figures", d.Side)
			}
			priced, err := r.PricedFigures()
			if err != nil || priced != want {
				t.Errorf("%s: PricedFigures %+v (%v), OperatingFigures %+v", d.Side, priced, err, want)
			}
			if d.Figures == nil || *d.Figures != want {
				t.Errorf("%s: the decision's figures %+v, want the operating figures %+v", d.Side, d.Figures, want)
			}
			// Through the origin: the first tier's steady raw throughput scaled by op.Rate/10.
			first := r.Tiers[0].Summary.Steady.RawOutputThroughput
			if through := first * op.Rate / 10; math.Abs(want.RawOutputThroughput-through) > 1e-9*through {
				t.Errorf("%s: raw %v at %v req/s, want %v (linear through the origin), not the first tier's %v",
					d.Side, want.RawOutputThroughput, op.Rate, through, first)
			}
		}
		if res.Ledger == nil {
			t.Fatalf("no ledger: %s", res.LedgerError)
		}
		for i, o := range []struct{ got, want float64 }{
			{res.Ledger.A.Option.RawThroughput, res.Decisions[0].Figures.RawOutputThroughput},
			{res.Ledger.A.Option.CompliantShare, res.Decisions[0].Figures.CompliantTokenShare()},
			{res.Ledger.B.Option.RawThroughput, res.Decisions[1].Figures.RawOutputThroughput},
			{res.Ledger.B.Option.CompliantShare, res.Decisions[1].Figures.CompliantTokenShare()},
		} {
			if o.got != o.want {
				t.Errorf("ledger figure %d: %v, want the decision's %v", i, o.got, o.want)
			}
		}
	})
	t.Run("runs", func(t *testing.T) {
		a := build(header(records.CommandRun, "poisson(rate=10)", ""), tierSpec{10, 1, 100})
		b := build(header(records.CommandRun, "poisson(rate=10)", ""), tierSpec{10, 0.9, 110})
		res, err := compare.Results(side("A", a), side("B", b), compare.Options{Costs: costs})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range []*result.Result{a, b} {
			st := r.Tiers[0].Summary.Steady
			want := curve.Figures{Rate: records.Rate(st.RealisedRate), RawOutputThroughput: st.RawOutputThroughput,
				CompliantOutputThroughput: st.CompliantOutputThroughput, Source: "the run's tier 0, steady state"}
			d := res.Decisions[i]
			if d.Figures == nil || *d.Figures != want {
				t.Errorf("%s: the decision's figures %+v, want the run's steady-state tier figures %+v", d.Side, d.Figures, want)
			}
			if priced, err := r.PricedFigures(); err != nil || priced != want {
				t.Errorf("%s: PricedFigures %+v (%v), want %+v", d.Side, priced, err, want)
			}
		}
		if res.Ledger == nil || res.Ledger.A.Option.RawThroughput != 1000 || res.Ledger.B.Option.RawThroughput != 1100 ||
			math.Abs(res.Ledger.B.Option.CompliantShare-0.9) > 1e-12 {
			t.Errorf("ledger %+v (%s): want A at 1000 tok/s raw, B at 1100 tok/s and a 0.9 share", res.Ledger, res.LedgerError)
		}
	})
}

// TestCompareResultRoundTrip: compare.json read back is the comparison that was written, the
// ledger and the paired statistics included (compared as structs).
func TestCompareResultRoundTrip(t *testing.T) {
	a := build(header(records.CommandSweep, autoSweep, ""), tierSpec{10, 1, 100}, tierSpec{20, 0.5, 100})
	b := build(header(records.CommandSweep, autoSweep, ""), tierSpec{10, 1, 120}, tierSpec{20, 0.6, 120})
	res, err := compare.Results(side("A", a), side("B", b), compare.Options{Costs: &compare.Costs{A: 10, B: 8, Currency: "EUR"}})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := compare.Paired(map[int]float64{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6}, map[int]float64{0: 2, 1: 2, 2: 2, 3: 5, 4: 6, 5: 7}, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	res.Paired = []compare.PairedRow{{Rate: 10, Metric: "ttft_ms", Result: &pr}, {Rate: 20, Metric: "e2el_ms", Error: "too few pairs"}}
	if res.Ledger == nil {
		t.Fatalf("no ledger: %s", res.LedgerError)
	}
	path := filepath.Join(t.TempDir(), "compare.json")
	if err := res.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := compare.ReadResult(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Paired, res.Paired) || !reflect.DeepEqual(back.Decisions, res.Decisions) || back.Comparable != res.Comparable {
		t.Errorf("paired rows or decisions changed through compare.json:\n%+v\n%+v", back, res)
	}
	if back.Ledger == nil || back.Ledger.A.Option.RawThroughput != res.Ledger.A.Option.RawThroughput ||
		back.Ledger.BvsAUnitCostChange != res.Ledger.BvsAUnitCostChange || back.Ledger.Currency != "EUR" {
		got := "nil"
		if back.Ledger != nil {
			got = fmt.Sprintf("currency %q, A raw %v, B vs A %v", back.Ledger.Currency, back.Ledger.A.Option.RawThroughput, back.Ledger.BvsAUnitCostChange)
		}
		t.Errorf("compare.ReadResult lost the cost ledger compare.json holds (wrote A raw %v, B vs A %v; read %s)",
			res.Ledger.A.Option.RawThroughput, res.Ledger.BvsAUnitCostChange, got)
	}
}

// TestCompareJSONOfBurstRuns: a comparison of two runs at rate inf (a tier every compare prints)
// encodes as JSON; the rate inf must not make encoding/json fail.
func TestCompareJSONOfBurstRuns(t *testing.T) {
	burst := func() *result.Result {
		h := header(records.CommandRun, "burst(rate=inf)", "")
		s := summaryOf(0, records.RoleTier, tierSpec{10, 1, 100})
		s.NominalRate, s.RealisedRate, s.Steady = math.Inf(1), math.Inf(1), nil
		id := records.Tier{Kind: records.KindTier, Tier: 0, Role: records.RoleTier, Arrival: "burst(rate=inf)", RequestRate: records.Rate(math.Inf(1)),
			Burstiness: 1, Planned: s.Planned, WorkloadFingerprint: "sha256:burst", StartWall: h.StartWall}
		return result.Build(h, settings(), []result.TierResult{{Tier: id, Summary: s}})
	}
	res, err := compare.Results(side("A", burst()), side("B", burst()), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tiers) != 1 || !math.IsInf(float64(res.Tiers[0].Rate), 1) {
		t.Fatalf("tiers %+v: want the one at rate inf", res.Tiers)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("a comparison of two runs at rate inf does not encode: %v", err)
	}
}

// TestTokenizersCompareByContents: two results whose prompts were sized (or counted) by
// tokenizer files of different contents are not comparable; the same file found in two places
// is the same tokenizer; a result sized in words differs from one sized by a tokenizer.
func TestTokenizersCompareByContents(t *testing.T) {
	run := func(tokenizer string) *result.Result {
		r := build(header(records.CommandRun, "poisson(rate=10)", ""), tierSpec{10, 1, 100})
		r.Header.Tokenizer = tokenizer
		return r
	}
	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"one file in two places", "/a/tokenizer.json (sha256:aaaa)", "/home/b/llama3.json (sha256:aaaa)", true},
		{"two files", "/a/tokenizer.json (sha256:aaaa)", "/a/tokenizer.json (sha256:bbbb)", false},
		{"words and a tokenizer", "", "/a/tokenizer.json (sha256:aaaa)", false},
		{"words on both sides", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := compare.Results(side("A", run(tc.a)), side("B", run(tc.b)), compare.Options{})
			if tc.same {
				if err != nil || !res.Comparable {
					t.Errorf("err %v, mismatches %v: want comparable", err, res.Mismatches)
				}
				return
			}
			if !errors.Is(err, compare.ErrNotComparable) || len(res.Mismatches) != 1 || res.Mismatches[0].Field != compare.FieldTokenizer {
				t.Errorf("err %v, mismatches %v: want exactly the tokenizer mismatch", err, res.Mismatches)
			}
		})
	}
}
