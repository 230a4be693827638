package plan

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TokenCount is what the requests of one or more steady-state windows delivered, counted from
// their records: never a ratio of rates, so a workload whose every request outputs 128 tokens
// counts exactly 128 per request.
type TokenCount struct {
	// Tiers are the tiers counted; Windows their steady-state windows on planned time, seconds
	// from each tier's T0, as "tier 8: 12.5–60 s".
	Tiers   []int    `json:"tiers"`
	Windows []string `json:"windows"`
	// Requests are the issued requests planned inside the windows, Compliant of them compliant
	// (the records' outcome, quality check and objectives: measure.Objectives.Compliant), the
	// same requests whose share the steady state judged.
	Requests  int `json:"requests"`
	Compliant int `json:"compliant"`
	// OutputTokens are every output token of those requests, CompliantOutputTokens those of
	// the compliant ones.
	OutputTokens          int64 `json:"output_tokens"`
	CompliantOutputTokens int64 `json:"compliant_output_tokens"`
}

// Add counts the issued records planned in [start, end] (a steady-state window) under o.
func (c *TokenCount) Add(tier int, recs []records.Record, start, end time.Duration, o measure.Objectives) {
	c.Tiers = append(c.Tiers, tier)
	c.Windows = append(c.Windows, fmt.Sprintf("tier %d: %s–%s s", tier, num(start.Seconds()), num(end.Seconds())))
	for i := range recs {
		r := &recs[i]
		if r.Dispatched == records.Unset || r.Planned < start || r.Planned > end {
			continue
		}
		c.Requests++
		c.OutputTokens += int64(r.OutputTokens)
		if o.Compliant(r) {
			c.Compliant++
			c.CompliantOutputTokens += int64(r.OutputTokens)
		}
	}
}

// TokensPerCompliantRequest is the mean output tokens of the compliant requests (NaN without one).
func (c TokenCount) TokensPerCompliantRequest() float64 {
	return float64(c.CompliantOutputTokens) / float64(c.Compliant)
}

// CompliantShare is compliant over issued requests in the windows.
func (c TokenCount) CompliantShare() float64 { return float64(c.Compliant) / float64(c.Requests) }

// FromResult is the deployment a sweep measured ([FromAnalysis]: the operating point's rate
// and the capacity), with its tokens per request counted from its records: in the steady-state
// window of the confirmation tier that ran at the operating point (every one, when it ran more
// than once), or, when none did, of the curve tier whose realised rate is nearest the operating
// point (Source says which). The compliant tokens per request are the compliant requests'
// output tokens over the issued requests, the mean output of a compliant request times the
// compliant share (a request that missed delivers no effective output); the raw ones every
// output token over the same requests. f holds the result's records (the whole file).
func FromResult(name string, r *result.Result, f *records.File) (d Deployment, verified bool, err error) {
	d, verified, err = FromAnalysis(name, r.Analysis)
	if err != nil {
		return d, verified, err
	}
	if f == nil {
		return d, verified, errors.New("the records are needed to count the tokens per request")
	}
	a := r.Analysis
	var tiers []int
	var where string
	if cf := a.OperatingPoint.Confirmation; cf != nil && cf.AtThisPoint {
		tiers, where = orOne(cf.Pooled, cf.Tier), "the confirmation's steady-state window"
	} else {
		best := -1
		for i, p := range a.Points {
			if best < 0 || math.Abs(p.Rate-a.OperatingPoint.Rate) < math.Abs(a.Points[best].Rate-a.OperatingPoint.Rate) {
				best = i
			}
		}
		if best < 0 {
			return d, verified, errors.New("no tier to count the tokens per request in")
		}
		p := a.Points[best]
		tiers = orOne(p.Pooled, p.Tier)
		where = fmt.Sprintf("the steady-state window of the curve tier nearest the operating point (%s req/s; no confirmation ran there)", num(p.Rate))
	}
	var c TokenCount
	for _, t := range tiers {
		st := steadyOf(r, t)
		if st == nil {
			return d, verified, fmt.Errorf("tier %d has no steady-state window to count the tokens per request in", t)
		}
		c.Add(t, f.TierRecords(t), seconds(st.Start), seconds(st.End), r.Settings.Measure.Objectives)
	}
	if c.Compliant == 0 {
		return d, verified, fmt.Errorf("%s (%s) holds no compliant request: there is no effective output to price", where, strings.Join(c.Windows, ", "))
	}
	d.CompliantTokensPerRequest = float64(c.CompliantOutputTokens) / float64(c.Requests)
	d.RawTokensPerRequest = float64(c.OutputTokens) / float64(c.Requests)
	d.Tokens = &c
	d.Source += "; tokens per request counted in " + where
	return d, verified, nil
}

// orOne is pooled, or the one tier when nothing was pooled.
func orOne(pooled []int, tier int) []int {
	if len(pooled) > 0 {
		return pooled
	}
	return []int{tier}
}

// steadyOf is tier t's steady state, nil when it has none.
func steadyOf(r *result.Result, t int) *measure.Steady {
	for i := range r.Tiers {
		if r.Tiers[i].Tier.Tier == t {
			return r.Tiers[i].Summary.Steady
		}
	}
	return nil
}

// seconds is s seconds as a duration, to the nanosecond.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
