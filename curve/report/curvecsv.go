package report

import (
	"encoding/csv"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/records"
)

// CurveCSVColumns are curve.csv's columns, in order: one row per tier, in the order the tiers
// ran. Numbers are plain (a dot for the decimals, no thousands separator, no unit, no
// percentage: shares are fractions in [0, 1]); an unknown or undefined value is an empty cell;
// an infinite rate (a burst) is "inf". The README's "curve.csv" documents each column.
var CurveCSVColumns = []string{
	"tier", "role", "repeat", "unit", "nominal_rate", "realised_rate", "window_requests", "effective_requests",
	"compliant_share", "judged_share", "share_lo", "share_hi", "verdict", "stable", "point",
	"raw_output_throughput", "compliant_output_throughput", "request_throughput", "p99_ttft_ms",
	"arrivals_end_s", "ended", "server_mean_waiting", "server_prefix_cache_hit_rate",
}

// CurveCSV writes a sweep's curve.csv: CurveCSVColumns, then a row per tier with its own
// steady-state figures and the verdict it belongs to (its point's on the curve, pooled with the
// tiers run at its rate; a confirmation's own), the interval that verdict rests on, and how the
// tier ended.
func CurveCSV(w io.Writer, r *result.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CurveCSVColumns); err != nil {
		return err
	}
	for _, tr := range r.Tiers {
		if err := cw.Write(curveCSVRow(r, tr)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// curveCSVRow is one tier's row of curve.csv.
func curveCSVRow(r *result.Result, tr result.TierResult) []string {
	a := r.Analysis
	s, id := tr.Summary, tr.Tier
	row := map[string]string{
		"tier": strconv.Itoa(id.Tier), "role": string(id.Role), "repeat": strconv.Itoa(id.Repeat), "unit": RateUnit(r),
		"nominal_rate": csvNumber(s.NominalRate), "p99_ttft_ms": csvNumber(percentileOr(s.TTFT.Percentiles, "p99")),
	}
	if row["role"] == "" {
		row["role"] = string(records.RoleTier)
	}
	if curve.AxisOf(s) == curve.AxisUsers {
		row["nominal_rate"] = strconv.Itoa(s.Users)
	}
	if st := s.Steady; st != nil && !math.IsInf(s.NominalRate, 1) {
		judged, eff := st.Judged()
		row["realised_rate"], row["window_requests"], row["effective_requests"] = csvNumber(st.RealisedRate), strconv.Itoa(st.Requests), csvNumber(eff)
		row["compliant_share"], row["judged_share"] = csvNumber(st.CompliantShare), csvNumber(judged)
		row["raw_output_throughput"], row["compliant_output_throughput"] = csvNumber(st.RawOutputThroughput), csvNumber(st.CompliantOutputThroughput)
		row["request_throughput"] = csvNumber(st.RequestThroughput)
	} else { // a burst, off the rate axis: its whole-tier figures
		row["window_requests"], row["compliant_share"] = strconv.Itoa(s.Issued), csvNumber(s.CompliantRequestShare)
		row["raw_output_throughput"], row["compliant_output_throughput"] = csvNumber(s.RawOutputThroughput), csvNumber(s.CompliantOutputThroughput)
		row["request_throughput"] = csvNumber(s.RequestThroughput)
	}
	verdict := func(v curve.Verdict, stable bool, lo, hi float64, point int) {
		row["verdict"], row["stable"], row["share_lo"], row["share_hi"], row["point"] = string(v), strconv.FormatBool(stable), csvNumber(lo), csvNumber(hi), strconv.Itoa(point)
	}
	if op := a.OperatingPoint; id.Role == records.RoleConfirm && op != nil && op.Confirmation != nil {
		if cf := op.Confirmation; cf.Tier == id.Tier || slices.Contains(cf.Pooled, id.Tier) {
			unstable := cf.Verdict == curve.VerdictFails && strings.HasPrefix(cf.Reason, "unstable")
			verdict(cf.Verdict, !unstable, cf.ShareLo, cf.ShareHi, cf.Tier)
		}
	}
	for _, v := range a.Points {
		if v.Tier == id.Tier || slices.Contains(v.Pooled, id.Tier) {
			verdict(v.Verdict, v.Stable, v.ShareLo, v.ShareHi, v.Tier)
		}
	}
	if e := id.End; e != nil {
		row["arrivals_end_s"], row["ended"] = csvNumber(e.ArrivalsEndS), string(e.Reason)
	}
	if tr.Server != nil {
		tm := decodeServer(tr.Server)
		row["server_mean_waiting"], row["server_prefix_cache_hit_rate"] = csvOpt(tm.MeanWaiting), csvOpt(tm.PrefixCacheHitRate)
	}
	out := make([]string, len(CurveCSVColumns))
	for i, c := range CurveCSVColumns {
		out[i] = row[c]
	}
	return out
}

// csvNumber writes a number as curve.csv holds it: the shortest form that reads back the same,
// "inf" for +Inf, empty for NaN.
func csvNumber(v float64) string {
	switch {
	case math.IsNaN(v):
		return ""
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// csvOpt is csvNumber of an optional value, empty when absent.
func csvOpt(v *float64) string {
	if v == nil {
		return ""
	}
	return csvNumber(*v)
}

// percentileOr is the percentile key of ps, NaN when absent.
func percentileOr(ps map[string]float64, key string) float64 {
	if v, ok := ps[key]; ok {
		return v
	}
	return math.NaN()
}
