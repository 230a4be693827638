package measure

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadcurve/loadcurve/internal/field"
)

// DefaultPercentiles are the percentiles reported by default (vLLM's are "99").
const DefaultPercentiles = "50,90,95,99"

// ParsePercentiles parses the percentiles to report (FieldPercentiles): comma-separated percentiles on the 0–100 scale
// (not 0–1), each in [0, 100], e.g. "50,90,95,99" or "99.9". Spaces around items are allowed.
// The order is kept (it is the order of the JSON keys); a value given twice is an error.
func ParsePercentiles(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, field.Errorf(FieldPercentiles, "empty (want comma-separated percentiles in [0, 100], e.g. %q)", DefaultPercentiles)
	}
	items := strings.Split(s, ",")
	out := make([]float64, 0, len(items))
	for _, it := range items {
		it = strings.TrimSpace(it)
		if it == "" {
			return nil, field.Errorf(FieldPercentiles, "%q: empty item (want comma-separated percentiles in [0, 100], e.g. %q)", s, DefaultPercentiles)
		}
		p, err := strconv.ParseFloat(it, 64)
		switch {
		case err != nil:
			return nil, field.Errorf(FieldPercentiles, "%q: %q is not a number (want percentiles in [0, 100], e.g. %q)", s, it, DefaultPercentiles)
		case math.IsNaN(p) || p < 0 || p > 100:
			return nil, field.Errorf(FieldPercentiles, "%q: %q is outside [0, 100] (percentiles are on the 0–100 scale: 99.9, not 0.999)", s, it)
		case slices.Contains(out, p):
			return nil, field.Errorf(FieldPercentiles, "%q: %q is given twice", s, it)
		}
		out = append(out, p)
	}
	return out, nil
}

// defaultPercentiles is DefaultPercentiles parsed.
func defaultPercentiles() []float64 { return []float64{50, 90, 95, 99} }

// DefaultPercentileList is DefaultPercentiles parsed.
func DefaultPercentileList() []float64 { return defaultPercentiles() }

// PercentileKey names percentile p the way vLLM names it in its result keys ("p99" in
// "p99_ttft_ms"): "p" followed by the integer when p is whole, else by Python's str(p)
// ("p99.9", "p0.5", "p1e-05").
func PercentileKey(p float64) string {
	if p == math.Trunc(p) && math.Abs(p) < 1e15 {
		return "p" + strconv.FormatInt(int64(p), 10)
	}
	// Python's float repr: the shortest digits that round-trip, in scientific notation when the
	// decimal exponent is below -4 or at least 16, with at least two exponent digits.
	if a := math.Abs(p); a < 1e-4 || a >= 1e16 {
		return "p" + strconv.FormatFloat(p, 'e', -1, 64)
	}
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}

// Percentile returns the p-th percentile (p on the 0–100 scale) of sorted, which must be in
// ascending order: it is not checked, and on unsorted input the result is meaningless. It is
// numpy's default (np.percentile, method "linear", Hyndman–Fan type 7), as METRICS.md states:
// with n values, h = (n-1)·p/100 and the value is x[⌊h⌋] + (h-⌊h⌋)·(x[⌊h⌋+1]-x[⌊h⌋]),
// evaluated in the same floating-point steps as numpy's implementation (q = p/100 first, then
// h = (n-1)·q; for a fraction ≥ 0.5 the interpolation runs down from the upper neighbour).
// It returns NaN for an empty slice or p outside [0, 100].
func Percentile(sorted []float64, p float64) float64 { return percentile(sorted, 1, p) }

// sample is a metric value: a duration in nanoseconds, or already a float.
type sample interface{ ~int64 | ~float64 }

// percentileRank returns ⌊h⌋ for percentile p of n values, h = (n-1)·(p/100), and whether
// p is a percentile at all. percentile reads ranks ⌊h⌋ and ⌊h⌋+1 (when below n).
func percentileRank(n int, p float64) (int, bool) {
	if n == 0 || !(p >= 0 && p <= 100) {
		return 0, false
	}
	return int(math.Floor(float64(n-1) * (p / 100))), true
}

// percentile is Percentile on sorted[i]/div, converting only the two values it reads.
func percentile[T sample](sorted []T, div, p float64) float64 {
	n := len(sorted)
	i, ok := percentileRank(n, p)
	if !ok {
		return math.NaN()
	}
	if i >= n-1 {
		return float64(sorted[n-1]) / div
	}
	g := float64(n-1)*(p/100) - float64(i)
	a, b := float64(sorted[i])/div, float64(sorted[i+1])/div
	d := b - a
	// The conversions round each product, so no fused multiply-add changes the last bit.
	if g >= 0.5 {
		return b - float64(d*(1-g))
	}
	return a + float64(d*g)
}

// median is numpy's np.median on sorted values: the middle value, or the mean of the two
// middle values for an even count.
func median[T sample](sorted []T, div float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return float64(sorted[n/2]) / div
	default:
		return (float64(sorted[n/2-1])/div + float64(sorted[n/2])/div) / 2
	}
}

// Stats describes one metric in milliseconds. Percentiles is keyed by PercentileKey ("p99",
// "p99.9"). With Count 0 every statistic is NaN.
type Stats struct {
	Count       int
	Mean        float64
	Median      float64
	Std         float64
	Percentiles map[string]float64
}

// clone returns a copy that shares nothing with st.
func (st Stats) clone() Stats {
	st.Percentiles = maps.Clone(st.Percentiles)
	return st
}

// Describe returns the statistics of values for the given percentiles. It sorts values in
// place.
func Describe(values []float64, percentiles []float64) Stats {
	st := moments(values, 1, len(percentiles))
	slices.Sort(values)
	return withOrder(st, values, 1, percentiles)
}

// describe is Describe on x[i]/div without a full sort: only the ranks the statistics read are
// put in place (selectRanks), and x is left partly ordered.
func describe[T sample](x []T, div float64, percentiles []float64) Stats {
	st := moments(x, div, len(percentiles))
	selectRanks(x, ranksFor(len(x), percentiles))
	return withOrder(st, x, div, percentiles)
}

// moments returns Stats with the count, mean and population standard deviation of x[i]/div,
// two-pass with compensated sums, so they stay exact to a few ulps whatever the count (numpy's
// pairwise sums agree with them to rounding). With no values they are NaN.
func moments[T sample](x []T, div float64, nPercentiles int) Stats {
	s := Stats{Count: len(x), Mean: math.NaN(), Std: math.NaN(), Median: math.NaN(),
		Percentiles: make(map[string]float64, nPercentiles)}
	if len(x) == 0 {
		return s
	}
	n := float64(len(x))
	var sum, c float64
	for _, v := range x {
		sum, c = neumaier(sum, c, float64(v)/div)
	}
	s.Mean = (sum + c) / n
	sum, c = 0, 0
	for _, v := range x {
		d := float64(v)/div - s.Mean
		sum, c = neumaier(sum, c, float64(d*d)) // rounded: no fused multiply-add
	}
	s.Std = math.Sqrt((sum + c) / n)
	return s
}

// withOrder adds the median and the percentiles to s, reading x at the ranks of ranksFor,
// which must hold their sorted values.
func withOrder[T sample](s Stats, x []T, div float64, percentiles []float64) Stats {
	s.Median = median(x, div)
	for _, p := range percentiles {
		s.Percentiles[PercentileKey(p)] = percentile(x, div, p)
	}
	return s
}

// neumaier adds x to the running sum with its compensation term c (Neumaier's variant of
// Kahan summation).
func neumaier(sum, c, x float64) (float64, float64) {
	t := sum + x
	if math.Abs(sum) >= math.Abs(x) {
		c += (sum - t) + x
	} else {
		c += (x - t) + sum
	}
	return t, c
}

// MetricNames returns the names of the metrics with statistics, in the order of the summary's
// JSON keys: vLLM's ttft, tpot, itl and e2el, then loadcurve's.
func MetricNames() []string { return metricKeys(Metrics[:]) }

// ParsePercentileMetrics parses the metrics to report (FieldPercentileMetrics): comma-separated metric names (MetricNames),
// e.g. vLLM's "ttft,tpot,itl,e2el". The summary reports statistics for these only, in the
// summary's own order.
func ParsePercentileMetrics(s string) ([]string, error) {
	names := MetricNames()
	want := "comma-separated names among " + strings.Join(names, ",")
	if strings.TrimSpace(s) == "" {
		return nil, field.Errorf(FieldPercentileMetrics, "empty (want %s)", want)
	}
	var picked []string
	for _, it := range strings.Split(s, ",") {
		it = strings.TrimSpace(it)
		switch {
		case !slices.Contains(names, it):
			return nil, field.Errorf(FieldPercentileMetrics, "%q: unknown metric %q (want %s)", s, it, want)
		case slices.Contains(picked, it):
			return nil, field.Errorf(FieldPercentileMetrics, "%q: %q is given twice", s, it)
		}
		picked = append(picked, it)
	}
	var out []string // in the summary's order
	for _, n := range names {
		if slices.Contains(picked, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// Reports tells whether the summary reports the statistics of the named metric.
//
// The answer's metrics (ttfa, answer_itl) are reported only when they can differ from ttft and
// itl, that is when some response of the tier streamed reasoning, or when Metrics names them.
func (s *Summary) Reports(metric string) bool {
	if s.Metrics != nil {
		return slices.Contains(s.Metrics, metric)
	}
	if m, ok := MetricOf(metric); ok && m.Answer {
		return s.ReasoningResponses > 0
	}
	return true
}
