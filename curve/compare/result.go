package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/cost"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Side is one result of a comparison: where it came from, its records (the paired statistics
// need them) and the result rebuilt from them.
type Side struct {
	Name   string // "A" or "B"
	Path   string
	File   *records.File
	Result *result.Result
}

// Options of a comparison.
type Options struct {
	// Confidence of the paired intervals (0: 0.95).
	Confidence float64
	// Force compares results that are not comparable, stamping the result.
	Force bool
	// Costs, when set, prices both sides (the cost ledger at their operating points and the
	// cost per effective token at every rate both ran).
	Costs *Costs
}

// Costs are the hourly costs of the two sides.
type Costs struct {
	A, B     float64
	Currency string
}

// Result is a comparison of B against A: compare.json.
type Result struct {
	Stamp      string     `json:"stamp,omitempty"`
	Comparable bool       `json:"comparable"`
	A          string     `json:"a"`
	B          string     `json:"b"`
	Mismatches []Mismatch `json:"mismatches,omitempty"`
	// Tiers pairs the curve tiers of A and B at each nominal rate either ran (a nil side did not).
	Tiers []TierPair `json:"tiers"`
	// Paired compares latencies request by request at each rate both ran.
	Paired []PairedRow `json:"paired"`
	// Decisions are each side's capacity and operating point.
	Decisions [2]Decision `json:"decisions"`
	// Ledger prices both sides at their operating points; LedgerError says why it could not be
	// made (a side without an operating point, no effective output, …).
	Ledger      *cost.Ledger    `json:"cost,omitempty"`
	LedgerError string          `json:"cost_error,omitempty"`
	EqualLoad   []EqualLoadCost `json:"cost_at_equal_load,omitempty"`
}

// TierPair is the two sides' summaries at one nominal rate.
type TierPair struct {
	Rate records.Rate     `json:"rate"`
	A    *measure.Summary `json:"a"`
	B    *measure.Summary `json:"b"`
}

// PairedRow is one metric compared request by request at one rate.
type PairedRow struct {
	Rate   records.Rate  `json:"rate"`
	Metric string        `json:"metric"`
	Result *PairedResult `json:"result,omitempty"`
	Error  string        `json:"error,omitempty"`
}

// Decision is what one side's analysis decided.
type Decision struct {
	Side           string                `json:"side"`
	Capacity       *curve.Capacity       `json:"capacity"`
	CapacityText   string                `json:"capacity_text"`
	OperatingPoint *curve.OperatingPoint `json:"operating_point"`
	// Figures are what the ledger prices (result.Result.PricedFigures; Source says which);
	// FiguresError says why there are none.
	Figures      *curve.Figures `json:"figures"`
	FiguresError string         `json:"figures_error,omitempty"`
}

// EqualLoadCost prices both sides at one rate both ran.
type EqualLoadCost struct {
	Rate records.Rate `json:"rate"`
	A    *float64     `json:"a_cost_per_million_effective"` // null when A produced no effective output
	B    *float64     `json:"b_cost_per_million_effective"`
	BvsA *float64     `json:"b_vs_a_unit_cost_change"`
}

// ErrNotComparable is returned (wrapped, with the mismatches in the result) when the results are
// not comparable and Options.Force is not set.
var ErrNotComparable = errors.New("the results are not comparable")

// tokenizerHash is the hash in a header's tokenizer, "NAME (sha256:…)".
func tokenizerHash(t string) string {
	if i := strings.LastIndex(t, "(sha256:"); i >= 0 && strings.HasSuffix(t, ")") {
		return t[i+1 : len(t)-1]
	}
	return t
}

// IdentityOf is what must agree between two results for them to share a table.
func IdentityOf(r *result.Result) Identity {
	h := r.Header
	// A run's request set is its one tier's (the fingerprint says which); a sweep's tiers each
	// draw their own from the workload the header names.
	one := r.Shape().OneTier()
	fp := h.Workload
	if one {
		fp = h.WorkloadFingerprint
	}
	id := Identity{Fingerprint: fp, Schedule: h.Arrival, Seed: h.Seed, CachePolicy: h.CachePolicy,
		MetricsVersion: h.MetricsVersion, Objectives: r.Settings.Measure.Objectives.String(), Endpoint: h.Endpoint,
		MaxConcurrency: h.MaxConcurrency, ExtraBody: canonicalJSON(h.ExtraBody),
		TargetShare: strconv.FormatFloat(r.Analysis.Params.TargetShare, 'g', -1, 64), Tokenizer: tokenizerHash(h.Tokenizer)}
	if one {
		for _, t := range r.Tiers {
			id.NumRequests += t.Summary.Planned
		}
	}
	return id
}

// canonicalJSON re-encodes a JSON object with sorted keys ("" for none), so that two bodies
// that say the same compare equal.
func canonicalJSON(b json.RawMessage) string {
	if len(b) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(b)
	}
	return string(out)
}

// Results puts B beside A. It checks comparability first: on a mismatch it returns the result
// (its Mismatches say what differs) and a field sentence wrapping ErrNotComparable that names
// FieldForce and counts the Mismatches as shown above it, unless Force, which
// stamps the result instead. Then it pairs the tiers at equal rate, compares latencies request by
// request there, and, with costs, prices both sides. A side without an operating point leaves
// the ledger out (LedgerError says why) but not the rest.
func Results(a, b Side, o Options) (Result, error) {
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	res := Result{A: a.Path, B: b.Path}
	res.Mismatches = append(Check(IdentityOf(a.Result), IdentityOf(b.Result)), tierMismatches(a.Result, b.Result)...)
	res.Comparable = len(res.Mismatches) == 0
	if !res.Comparable {
		if !o.Force {
			return res, notComparable(a.Path, b.Path, len(res.Mismatches))
		}
		res.Stamp = fmt.Sprintf("NOT COMPARABLE (%d differences)", len(res.Mismatches))
	}
	res.Tiers = pairTiers(a.Result, b.Result)
	res.Paired = pairedRows(a, b, o.Confidence)
	for i, s := range []Side{a, b} {
		an := s.Result.Analysis
		d := Decision{Side: s.Name, Capacity: an.Capacity, CapacityText: an.Capacity.String(), OperatingPoint: an.OperatingPoint}
		if f, err := s.Result.PricedFigures(); err == nil {
			d.Figures = &f
		} else {
			d.FiguresError = err.Error()
		}
		res.Decisions[i] = d
	}
	if o.Costs != nil {
		l, err := ledger(res.Decisions, *o.Costs, a.Result.Header.Unit.Short())
		if err != nil {
			res.LedgerError = err.Error()
		} else {
			res.Ledger = &l
		}
		res.EqualLoad = equalLoad(res.Tiers, *o.Costs)
	}
	return res, nil
}

// curveTiers are the tiers of a result that are points of its curve, by nominal rate, or by
// concurrency level for closed-loop tiers (the first of each).
func curveTiers(r *result.Result) map[float64]result.TierResult {
	m := map[float64]result.TierResult{}
	for _, t := range r.Tiers {
		if !t.Tier.CurveRole() || math.IsInf(t.Summary.NominalRate, 1) && r.Shape().Probes() {
			continue
		}
		key := curve.NominalLevel(t.Summary)
		if _, ok := m[key]; !ok {
			m[key] = t
		}
	}
	return m
}

// tierMismatches: at every rate both ran the request sets must be identical, and two sweeps
// must have a rate in common (their tables would be empty otherwise).
func tierMismatches(a, b *result.Result) []Mismatch {
	if x, y := axisOf(a), axisOf(b); x != y {
		// Users and arrival rates are different axes: no level of one is a rate of the other.
		return []Mismatch{{Field: "axis (concurrency levels or arrival rates)", A: x, B: y}}
	}
	ta, tb := curveTiers(a), curveTiers(b)
	var out []Mismatch
	common := 0
	for _, r := range sortedRates(ta) {
		y, ok := tb[r]
		if !ok {
			continue
		}
		common++
		if x := ta[r]; x.Tier.WorkloadFingerprint != y.Tier.WorkloadFingerprint {
			out = append(out, Mismatch{Field: "request set of the tier at " + rateString(r) + " req/s", A: x.Tier.WorkloadFingerprint, B: y.Tier.WorkloadFingerprint})
		}
	}
	if common == 0 && len(ta) > 0 && len(tb) > 0 {
		out = append(out, Mismatch{Field: FieldCommonRates, A: ratesText(ta), B: ratesText(tb)})
	}
	return out
}

// axisOf names a result's axis as a mismatch states it: "concurrency" for closed-loop
// tiers, else "rate" (of requests or of sessions: the request sets tell those apart).
func axisOf(r *result.Result) string {
	for _, t := range r.Tiers {
		if !curve.AxisOf(t.Summary).Open() {
			return "concurrency"
		}
	}
	return "rate"
}

// FieldCommonRates names the mismatch of two results without a tier at a common rate.
const FieldCommonRates = "tier rates (none in common: sweep both with the same --request-rates to compare them at equal load)"

func ratesText(m map[float64]result.TierResult) string {
	s := ""
	for i, r := range sortedRates(m) {
		if i > 0 {
			s += ","
		}
		s += rateString(r)
	}
	return s
}

func sortedRates(m map[float64]result.TierResult) []float64 {
	rs := make([]float64, 0, len(m))
	for r := range m {
		rs = append(rs, r)
	}
	sort.Float64s(rs)
	return rs
}

func rateString(r float64) string {
	if math.IsInf(r, 1) {
		return "inf"
	}
	return strconv.FormatFloat(r, 'g', 4, 64)
}

func pairTiers(a, b *result.Result) []TierPair {
	ta, tb := curveTiers(a), curveTiers(b)
	rates := map[float64]bool{}
	for r := range ta {
		rates[r] = true
	}
	for r := range tb {
		rates[r] = true
	}
	var out []TierPair
	for r := range rates {
		p := TierPair{Rate: records.Rate(r)}
		if t, ok := ta[r]; ok {
			s := t.Summary
			p.A = &s
		}
		if t, ok := tb[r]; ok {
			s := t.Summary
			p.B = &s
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rate < out[j].Rate })
	return out
}

// pairedRows compares TTFT, E2EL and E2EL including the client queue request by request at every
// rate both ran (the same request ids in both).
func pairedRows(a, b Side, conf float64) []PairedRow {
	ta, tb := curveTiers(a.Result), curveTiers(b.Result)
	recs := func(f *records.File, tier int) []records.Record { return f.TierRecords(tier) }
	var out []PairedRow
	for _, r := range sortedRates(ta) {
		y, ok := tb[r]
		if !ok || a.File == nil || b.File == nil {
			continue
		}
		ra, rb := recs(a.File, ta[r].Tier.Tier), recs(b.File, y.Tier.Tier)
		for _, m := range []struct {
			name string
			get  func(*records.Record) (float64, bool)
		}{
			{"ttft_ms", func(r *records.Record) (float64, bool) { d, ok := r.TTFT(); return float64(d) / 1e6, ok }},
			{"e2el_ms", func(r *records.Record) (float64, bool) { d, ok := r.E2EL(); return float64(d) / 1e6, ok }},
			{"e2el_including_client_queue_ms", func(r *records.Record) (float64, bool) {
				d, ok := r.E2ELIncludingClientQueue()
				return float64(d) / 1e6, ok
			}},
		} {
			row := PairedRow{Rate: records.Rate(r), Metric: m.name}
			pr, err := Paired(okValues(ra, m.get), okValues(rb, m.get), conf, a.Result.Header.Seed)
			if err != nil {
				row.Error = err.Error()
			} else {
				row.Result = &pr
			}
			out = append(out, row)
		}
	}
	return out
}

func okValues(recs []records.Record, get func(*records.Record) (float64, bool)) map[int]float64 {
	m := make(map[int]float64, len(recs))
	for i := range recs {
		if recs[i].Outcome != records.OK {
			continue
		}
		if v, ok := get(&recs[i]); ok {
			m[recs[i].ID] = v
		}
	}
	return m
}

// ledger prices both sides at their operating points; tokens is what their throughputs count
// (records.Unit.Short: output, or input for an embeddings endpoint).
func ledger(d [2]Decision, c Costs, tokens string) (cost.Ledger, error) {
	var opts [2]cost.Option
	for i, x := range d {
		if x.Figures == nil {
			return cost.Ledger{}, fmt.Errorf("%s: %s", x.Side, x.FiguresError)
		}
		f := *x.Figures
		unit := "req/s"
		if x.Capacity != nil && x.Capacity.Unit != "" {
			unit = x.Capacity.Unit // users, on the concurrency axis
		}
		opts[i] = cost.Option{Name: fmt.Sprintf("%s (%s %s, %s)", x.Side, strconv.FormatFloat(float64(f.Rate), 'g', 3, 64), unit, f.Source),
			CostPerHour: []float64{c.A, c.B}[i], RawThroughput: f.RawOutputThroughput, CompliantShare: f.CompliantTokenShare()}
	}
	return cost.NewLedger(opts[0], opts[1], cost.Params{Currency: c.Currency, HoursPerPeriod: cost.DefaultHoursPerPeriod, Tokens: tokens})
}

// equalLoad prices every rate both ran: cost per hour over steady-state compliant throughput.
func equalLoad(tiers []TierPair, c Costs) []EqualLoadCost {
	unit := func(perHour float64, s *measure.Summary) *float64 {
		raw, compl, _ := s.Throughputs()
		if !(raw > 0) || !(compl > 0) {
			return nil
		}
		o := cost.Option{CostPerHour: perHour, RawThroughput: raw, CompliantShare: math.Min(1, compl/raw)}
		v, err := o.CostPerMillionEffective()
		if err != nil {
			return nil
		}
		return &v
	}
	var out []EqualLoadCost
	for _, t := range tiers {
		if t.A == nil || t.B == nil {
			continue
		}
		e := EqualLoadCost{Rate: t.Rate, A: unit(c.A, t.A), B: unit(c.B, t.B)}
		if e.A != nil && e.B != nil {
			d := *e.B / *e.A - 1
			e.BvsA = &d
		}
		out = append(out, e)
	}
	return out
}

// Write writes the comparison as indented JSON to path.
func (r Result) Write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadResult reads compare.json.
func ReadResult(path string) (Result, error) {
	var r Result
	b, err := os.ReadFile(path)
	if err != nil {
		return r, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: not a loadcurve compare.json: %w", path, err)
	}
	return r, nil
}
