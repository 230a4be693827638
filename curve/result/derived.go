package result

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Result is a run or sweep derived from its records: the summary of every tier, the analysis of
// the curve and, for a repeated sweep, the spread of its decisions. It is a pure function of the
// records and the settings (Build), so a result rebuilt from records.jsonl is the one the run
// printed.
type Result struct {
	Header   records.Header
	Settings Settings
	Tiers    []TierResult // in the order they ran
	// Analysis judges the first (or only) repetition's curve.
	Analysis curve.Analysis
	// Repeats holds every repetition's decision when the sweep was repeated (--repeat).
	Repeats []Repetition
	// Complete is false when a tier was interrupted, cut, or had requests canceled at its drain
	// deadline.
	Complete bool
	// TargetSeconds is the time the target spent under load: the sum of the tiers' durations
	// (from T0 to the last response), the cost of the decision.
	TargetSeconds float64
	// Notes say how the result was made where that is worth knowing (settings defaulted, …).
	Notes []string
	// Peaks are vLLM's peak figures of the tiers (by tier number) when they were computed from
	// the records (PeakOf, PeakAccumulator, PeaksOfFile); summary.json writes null without them.
	Peaks map[int]Peak
	// Budget is the load the sweep was allowed to put on the target (Config.Budget, for each
	// repetition), and BudgetNotes say what it changed as the sweep ran: a confirmation
	// shortened or skipped, a tier not run, the search stopped. The Executor sets both; the
	// records do not hold them, so a result rebuilt from its records has neither (0, nil).
	Budget      time.Duration
	BudgetNotes []string
}

// Repetition is one repetition's decision.
type Repetition struct {
	Repeat         int                   `json:"repeat"`
	Capacity       *curve.Capacity       `json:"capacity"`
	OperatingPoint *curve.OperatingPoint `json:"operating_point"`
	TargetSeconds  float64               `json:"target_seconds"`
}

// Spread is the run-to-run spread of the capacity over the repetitions.
type Spread struct {
	N                  int     `json:"n"`
	Min, Median, Max   float64 `json:"-"`
	RelativeRange      float64 `json:"relative_range"` // (max − min) / median
	RelativeStdDev     float64 `json:"relative_std_dev"`
	VerifiedOperations int     `json:"verified_operating_points"`
}

// Spread summarises the repetitions' capacities; nil without at least two with a capacity.
func (r *Result) Spread() *Spread {
	var caps []float64
	verified := 0
	for _, rep := range r.Repeats {
		if rep.Capacity != nil {
			caps = append(caps, rep.Capacity.Rate)
		}
		if rep.OperatingPoint.Verified() {
			verified++
		}
	}
	if len(caps) < 2 {
		return nil
	}
	slices.Sort(caps)
	n := len(caps)
	med := caps[n/2]
	if n%2 == 0 {
		med = (caps[n/2-1] + caps[n/2]) / 2
	}
	mean, ss := 0.0, 0.0
	for _, c := range caps {
		mean += c
	}
	mean /= float64(n)
	for _, c := range caps {
		ss += (c - mean) * (c - mean)
	}
	return &Spread{N: n, Min: caps[0], Median: med, Max: caps[n-1], RelativeRange: (caps[n-1] - caps[0]) / med,
		RelativeStdDev: math.Sqrt(ss/float64(n-1)) / mean, VerifiedOperations: verified}
}

// Build makes the result of a header, settings and tiers (already summarised under those
// settings): the analysis of each repetition, completeness and cost.
func Build(h records.Header, s Settings, tiers []TierResult) *Result {
	res := &Result{Header: h, Settings: s, Tiers: tiers, Complete: true}
	byRepeat := map[int][]measure.Summary{}
	var repeats []int
	sessions := false
	for _, t := range tiers {
		sum := t.Summary
		sessions = sessions || sum.Sessions != nil
		res.Complete = res.Complete && sum.Complete && sum.Recorded >= sum.Planned
		if isFinite(sum.Duration) {
			res.TargetSeconds += sum.Duration
		}
		if _, ok := byRepeat[t.Tier.Repeat]; !ok {
			repeats = append(repeats, t.Tier.Repeat)
		}
		byRepeat[t.Tier.Repeat] = append(byRepeat[t.Tier.Repeat], sum)
	}
	sort.Ints(repeats)
	for i, k := range repeats {
		a := curve.Analyze(byRepeat[k], s.Params)
		if i == 0 {
			res.Analysis = a
		}
		if len(repeats) > 1 {
			sec := 0.0
			for _, sum := range byRepeat[k] {
				if isFinite(sum.Duration) {
					sec += sum.Duration
				}
			}
			res.Repeats = append(res.Repeats, Repetition{Repeat: k, Capacity: a.Capacity, OperatingPoint: a.OperatingPoint, TargetSeconds: sec})
		}
	}
	if len(repeats) == 0 {
		res.Analysis = curve.Analyze(nil, s.Params)
	}
	if sessions {
		res.Notes = append(res.Notes, SessionsNote)
	}
	return res
}

// SessionsNote says what the rates of a result of sessions are.
const SessionsNote = "the workload is sessions: every rate here (offered, realised, capacity, operating point) counts sessions started per second, not requests; each session's turns follow their responses after the think time, and the summaries give the request rates and the metrics by turn"

// FromFile rebuilds the result of a records file under settings s: every tier summarised from
// its records (exactly), then Build.
func FromFile(f *records.File, s Settings) *Result {
	byTier := map[int][]records.Record{}
	for _, r := range f.Records {
		byTier[r.Tier] = append(byTier[r.Tier], r)
	}
	tiers := make([]TierResult, 0, len(f.Tiers))
	for _, t := range f.Tiers {
		t = IdentityOf(f.Header, t)
		tiers = append(tiers, TierResult{Tier: t, Summary: measure.Summarize(byTier[t.Tier], t, s.Measure), Server: f.ServerMetrics[t.Tier]})
	}
	return Build(f.Header, s, tiers)
}

// ScanFile rebuilds the result of a records file in bounded memory: the file is read one line at
// a time and every tier summarised as its records pass (percentiles within ±0.5 %; everything
// the analysis uses is exact). A window with a cooldown needs the exact path.
func ScanFile(path string, s Settings) (*Result, []string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read records: %w", err)
	}
	defer fh.Close()
	return scan(fh, path, func(records.Header) (Settings, error) { return s, nil })
}

// scan is ScanFile on r (the records file at path), under the settings settle gives for its
// header, which the file's first line is.
func scan(r io.Reader, path string, settle func(records.Header) (Settings, error)) (*Result, []string, error) {
	var h records.Header
	var s Settings
	var ids []records.Tier
	accs := map[int]*measure.ApproxAccumulator{}
	server := map[int]json.RawMessage{}
	var accErr, settleErr error
	warnings, err := records.Scan(r, records.Visitor{
		Header: func(x records.Header) error {
			h = x
			s, settleErr = settle(x)
			return settleErr
		},
		Tier: func(t records.Tier) error {
			a, err := measure.NewApproxAccumulator(s.Measure, 0)
			if err != nil {
				accErr = err
				return err
			}
			accs[t.Tier] = a
			ids = append(ids, t)
			return nil
		},
		TierEnd: func(e records.TierEnd) error {
			for i := range ids {
				if ids[i].Tier == e.Tier {
					ids[i].End = &e
				}
			}
			return nil
		},
		Record:        func(r *records.Record) error { accs[r.Tier].Add(r); return nil },
		ServerMetrics: func(m records.ServerMetrics) error { server[m.Tier] = m.Metrics; return nil },
	})
	switch {
	case settleErr != nil:
		return nil, nil, settleErr
	case accErr != nil:
		return nil, nil, BoundedError(accErr)
	case err != nil:
		return nil, nil, fmt.Errorf("read records %s: %w", path, err)
	}
	tiers := make([]TierResult, 0, len(ids))
	for _, t := range ids {
		t = IdentityOf(h, t)
		tiers = append(tiers, TierResult{Tier: t, Summary: accs[t.Tier].Summary(t), Server: server[t.Tier]})
	}
	return Build(h, s, tiers), warnings, nil
}

// IdentityOf completes a tier line of an older file from its header: the concurrency cap was a
// run setting before it was a tier's, and a sweep's probe was only its rate.
func IdentityOf(h records.Header, t records.Tier) records.Tier {
	if t.MaxConcurrency == 0 {
		t.MaxConcurrency = h.MaxConcurrency
	}
	if t.Role == "" {
		t.Role = records.RoleTier
		if math.IsInf(float64(t.RequestRate), 1) && ShapeOf(h).Probes() {
			t.Role = records.RoleProbe
		}
	}
	return t
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// PricedFigures are what the cost ledger prices for this result: for a run, its tier's
// steady-state figures (the whole tier's for a burst, which has no steady state); for a sweep,
// the figures at its operating point (the confirmation's measured ones when it verified it, else
// the curve's expectation there).
func (r *Result) PricedFigures() (curve.Figures, error) {
	if r.Shape().OneTier() && len(r.Tiers) == 1 {
		s := r.Tiers[0].Summary
		raw, compl, steady := s.Throughputs()
		f := curve.Figures{Rate: records.Rate(s.RealisedRate), RawOutputThroughput: raw, CompliantOutputThroughput: compl,
			Source: fmt.Sprintf("the run's tier %d, steady state", s.Tier)}
		if st := s.Steady; steady && st != nil {
			f.Rate = records.Rate(st.RealisedRate)
		} else {
			f.Source = fmt.Sprintf("the run's tier %d, whole tier (a burst has no steady state)", s.Tier)
		}
		return f, nil
	}
	if f, ok := r.Analysis.OperatingFigures(); ok {
		return f, nil
	}
	why := "no tier to analyse"
	if n := r.Analysis.Notes; len(n) > 0 {
		why = n[len(n)-1]
	}
	return curve.Figures{}, fmt.Errorf("no operating point: %s", why)
}

// TierFigures are one curve tier's steady-state figures.
func (r *Result) TierFigures(tier int) (curve.Figures, error) {
	for _, v := range r.Analysis.Points {
		if v.Tier == tier {
			return curve.Figures{Rate: records.Rate(v.Rate), RawOutputThroughput: v.RawOutputThroughput, CompliantOutputThroughput: v.CompliantOutputThroughput,
				Source: fmt.Sprintf("tier %d, steady state", tier)}, nil
		}
	}
	return curve.Figures{}, fmt.Errorf("no curve tier %d (the result has %d tiers)", tier, len(r.Tiers))
}

// Axis is the result's axis: its analysis's when that is users, else sessions when any of its
// tiers (of any repetition) started sessions, else the request rate.
func (r *Result) Axis() curve.Axis {
	if r.Analysis.Axis == curve.AxisUsers {
		return curve.AxisUsers
	}
	for _, t := range r.Tiers {
		if curve.AxisOf(t.Summary) == curve.AxisSessions {
			return curve.AxisSessions
		}
	}
	return curve.AxisRate
}

// BoundedError says that the bounded-memory option (FieldBounded) refused what err says: the
// summarizer that keeps no records cannot apply it.
func BoundedError(err error) error { return field.Errorf(FieldBounded, "%v", err) }
