package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
)

// TierSummaryTable is the compact table of a sweep's tiers printed under its answer: each
// tier's role, level, steady-state requests, compliant share with the interval its verdict
// rests on, and the verdict in the words of the tier lines (tierVerdict). CurveTable has every
// column (--verbose, report.html); curve.csv every figure.
func TierSummaryTable(r *result.Result) Table {
	a := r.Analysis
	t := Table{Title: fmt.Sprintf("Tiers (objectives %s, target %s of requests, %s confidence)", orNone(r.Settings.Measure.Objectives.String()),
		pctText(a.Params.TargetShare), pctText(a.Params.Confidence)),
		Columns: []string{"tier", "role", "rate " + RateUnit(r), "requests", "compliant share [interval]", "verdict"},
		Align:   []bool{true, false, true, true, false, false}, Highlight: -1,
		Notes: []string{fmt.Sprintf("compliant share: %s; the interval is its verdict's, at %s confidence", verdictShareText, pctText(a.Params.Confidence))}}
	vs := verdictSharesOf(a)
	for _, tr := range r.Tiers {
		s, id := tr.Summary, tr.Tier
		requests, share := strconv.Itoa(s.Issued), pctShort(s.CompliantRequestShare)
		if st := s.Steady; st != nil && !math.IsInf(s.NominalRate, 1) {
			requests, share = strconv.Itoa(st.Requests), pctShort(vs.share(id.Tier, st))
		}
		if iv, ok := vs.intervals[id.Tier]; ok {
			share += fmt.Sprintf(" [%s, %s]", pctShort(iv[0]), pctShort(iv[1]))
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(id.Tier), roleText(id), curve.LevelCell(s, rateCell), requests, share, tierVerdict(a, id)})
	}
	return t
}

// verdictShareText says what both tiers tables print as a tier's share.
const verdictShareText = "the share each verdict uses, in the steady-state window (with the shadow queue where it controlled the tier; of all the tiers of a point that pools several)"

// verdictShares says, tier by tier, what a tier's verdict rests on: the interval of its point
// (of the confirmation for the tiers it pools), and for a tier of a point that pools several,
// the pooled share, so that a table never prints a share beside an interval that is not its own.
type verdictShares struct {
	intervals map[int][2]float64
	pooled    map[int]float64
}

func verdictSharesOf(a curve.Analysis) verdictShares {
	vs := verdictShares{intervals: map[int][2]float64{}, pooled: map[int]float64{}}
	for _, v := range a.Points {
		for _, tier := range append([]int{v.Tier}, v.Pooled...) {
			vs.intervals[tier] = [2]float64{v.ShareLo, v.ShareHi}
			if len(v.Pooled) > 1 {
				vs.pooled[tier] = v.Share
			}
		}
	}
	if cf := confirmation(a); cf != nil {
		for _, tier := range append([]int{cf.Tier}, cf.Pooled...) {
			vs.intervals[tier] = [2]float64{cf.ShareLo, cf.ShareHi}
		}
	}
	return vs
}

// share is the share tier's verdict uses: the pooled point's when it pools several tiers, else
// the window's judged share (controlled by the shadow queue where it was).
func (vs verdictShares) share(tier int, st *measure.Steady) float64 {
	if p, ok := vs.pooled[tier]; ok {
		return p
	}
	judged, _ := st.Judged()
	return judged
}

// pctShort writes a share as a percentage with two decimals at most ("99.92 %", "100 %"), as
// the sweep's tier lines do.
func pctShort(v float64) string {
	if math.IsNaN(v) {
		return NaNText
	}
	return strconv.FormatFloat(math.Round(10000*v)/100, 'f', -1, 64) + " %"
}
