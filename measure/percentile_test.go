package measure_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure"
)

// closeTo compares with a tolerance of 1e-12 of the data's magnitude. Percentile's only error
// is floating-point rounding in q = p/100, h = (n-1)·q, its fraction g and one multiply-add:
// a few ulps, i.e. about 1e-15 relative. 1e-12 is far above that and far below any step
// between neighbouring values in these tables, so a wrong rank or weight cannot pass.
func closeTo(got, want, scale float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= 1e-12*math.Max(1, scale)
}

func TestPercentileMatchesNumpyLinear(t *testing.T) {
	tests := []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		// n=1: h = 0·q = 0 for every p, so the only value.
		{"n=1 p=0", []float64{7}, 0, 7},
		{"n=1 p=50", []float64{7}, 50, 7},
		{"n=1 p=99.9", []float64{7}, 99.9, 7},
		{"n=1 p=100", []float64{7}, 100, 7},
		// n=2, x = [10, 20]: h = q.
		{"n=2 p=0", []float64{10, 20}, 0, 10},                        // h=0 → x0
		{"n=2 p=25", []float64{10, 20}, 25, 12.5},                    // h=0.25 → 10 + 0.25·10
		{"n=2 p=50", []float64{10, 20}, 50, 15},                      // h=0.5 → 20 − 0.5·10 (upper branch)
		{"n=2 p=99.9", []float64{10, 20}, 99.9, 19.99},               // h=0.999 → 20 − 0.001·10
		{"n=2 p=100", []float64{10, 20}, 100, 20},                    // h=1 = n−1 → last
		{"n=2 equal", []float64{3, 3}, 37, 3},                        // interpolating between ties
		{"numpy doc example", []float64{1, 2, 3, 4, 7, 10}, 50, 3.5}, // np.percentile([[10,7,4],[3,2,1]], 50) = 3.5: h=2.5 → 4 − 0.5·1
		// ties: x = [1, 2, 2, 2, 3], h = 4q.
		{"ties p=50", []float64{1, 2, 2, 2, 3}, 50, 2},   // h=2 → x2
		{"ties p=30", []float64{1, 2, 2, 2, 3}, 30, 2},   // h=1.2 → 2 + 0.2·0
		{"ties p=90", []float64{1, 2, 2, 2, 3}, 90, 2.6}, // h=3.6 → 3 − 0.4·1
		{"ties p=0", []float64{1, 2, 2, 2, 3}, 0, 1},
		{"ties p=100", []float64{1, 2, 2, 2, 3}, 100, 3},
		// x = 1..10: h = 9q.
		{"1..10 p=99.9", seq(1, 10), 99.9, 9.991}, // h=8.991 → 10 − 0.009·1
		{"1..10 p=99", seq(1, 10), 99, 9.91},      // h=8.91 → 10 − 0.09·1
		{"1..10 p=90", seq(1, 10), 90, 9.1},       // h=8.1 → 9 + 0.1·1
		{"1..10 p=10", seq(1, 10), 10, 1.9},       // h=0.9 → 2 − 0.1·1
		// x = 0..100: h = 100q = p, so the percentile is p itself.
		{"0..100 p=99", seq(0, 100), 99, 99},
		{"0..100 p=99.9", seq(0, 100), 99.9, 99.9},
		{"0..100 p=0.5", seq(0, 100), 0.5, 0.5},
		// Not defined.
		{"empty", nil, 50, math.NaN()},
		{"p<0", []float64{1, 2}, -1, math.NaN()},
		{"p>100", []float64{1, 2}, 100.5, math.NaN()},
		{"p NaN", []float64{1, 2}, math.NaN(), math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scale := 0.0
			if len(tc.sorted) > 0 {
				scale = tc.sorted[len(tc.sorted)-1]
			}
			if got := measure.Percentile(tc.sorted, tc.p); !closeTo(got, tc.want, scale) {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tc.sorted, tc.p, got, tc.want)
			}
		})
	}
}

// Percentile does not sort: the caller does (Describe sorts in place). This pins the contract:
// the same values unsorted and sorted give the sorted answer only after sorting.
func TestPercentileNeedsSortedInput(t *testing.T) {
	vals := []float64{200, 30, 50, 40}
	sorted := slices.Sorted(slices.Values(vals))
	// sorted = [30 40 50 200], h = 3·0.9 = 2.7 → 200 − 0.3·150 = 155.
	if got := measure.Percentile(sorted, 90); !closeTo(got, 155, 200) {
		t.Fatalf("p90 of sorted = %v, want 155", got)
	}
	st := measure.Describe(vals, []float64{90})
	if !slices.IsSorted(vals) {
		t.Errorf("Describe did not sort its input in place: %v", vals)
	}
	if got := st.Percentiles["p90"]; !closeTo(got, 155, 200) {
		t.Errorf("Describe p90 = %v, want 155", got)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name                   string
		vals                   []float64
		mean, median, std, p50 float64
	}{
		// Classic: mean 5, deviations² 9,1,1,1,0,0,4,16 sum 32, /8 = 4, std 2; median (4+5)/2.
		{"population std", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, 4.5, 2, 4.5},
		// Odd count: the middle value; std sqrt(((−1)²+0+1²)/3) = sqrt(2/3).
		{"odd", []float64{3, 1, 2}, 2, 2, math.Sqrt(2.0 / 3), 2},
		{"one", []float64{42}, 42, 42, 0, 42},
		{"empty", nil, math.NaN(), math.NaN(), math.NaN(), math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := measure.Describe(tc.vals, []float64{50})
			if st.Count != len(tc.vals) {
				t.Errorf("Count = %d, want %d", st.Count, len(tc.vals))
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{{"mean", st.Mean, tc.mean}, {"median", st.Median, tc.median}, {"std", st.Std, tc.std}, {"p50", st.Percentiles["p50"], tc.p50}} {
				if !closeTo(c.got, c.want, 10) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
		})
	}
}

func TestPercentileKey(t *testing.T) {
	tests := []struct {
		p    float64
		want string
	}{
		// vLLM: str(int(p)) if int(p) == p else str(p), Python's repr of a float.
		{99, "p99"}, {50, "p50"}, {0, "p0"}, {100, "p100"},
		{99.9, "p99.9"}, {99.99, "p99.99"}, {0.5, "p0.5"}, {12.25, "p12.25"},
		{0.0001, "p0.0001"}, // Python: repr(0.0001) = '0.0001'
		{0.00001, "p1e-05"}, // Python: repr(0.00001) = '1e-05'
	}
	for _, tc := range tests {
		if got := measure.PercentileKey(tc.p); got != tc.want {
			t.Errorf("PercentileKey(%v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestParsePercentiles(t *testing.T) {
	good := []struct {
		in   string
		want []float64
	}{
		{measure.DefaultPercentiles, []float64{50, 90, 95, 99}},
		{"99.9", []float64{99.9}},
		{" 50 , 99.9 ", []float64{50, 99.9}},
		{"0,100", []float64{0, 100}},
		{"99,50", []float64{99, 50}}, // order kept
	}
	for _, tc := range good {
		got, err := measure.ParsePercentiles(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParsePercentiles(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	bad := []struct{ in, mentions string }{
		{"", "empty"},
		{"  ", "empty"},
		{"50,,90", "empty item"},
		{"50,", "empty item"},
		{"abc", `"abc" is not a number`},
		{"50,9O", `"9O" is not a number`},
		{"-1", `"-1" is outside [0, 100]`},
		{"100.1", `"100.1" is outside [0, 100]`},
		{"NaN", `"NaN" is outside`},
		{"Inf", `"Inf" is outside`},
		{"50,50.0", `"50.0" is given twice`},
	}
	for _, tc := range bad {
		_, err := measure.ParsePercentiles(tc.in)
		if err == nil {
			t.Errorf("ParsePercentiles(%q): no error", tc.in)
			continue
		}
		if msg := err.Error(); field.Of(err) == nil || field.Of(err).Name != measure.FieldPercentiles || !strings.Contains(msg, tc.mentions) {
			t.Errorf("ParsePercentiles(%q) error %q: want a field error naming the percentiles and %q", tc.in, msg, tc.mentions)
		}
	}
}

func seq(from, to int) []float64 {
	var out []float64
	for i := from; i <= to; i++ {
		out = append(out, float64(i))
	}
	return out
}

func TestParsePercentileMetrics(t *testing.T) {
	tests := []struct {
		in     string
		want   []string
		errHas string
	}{
		{in: "ttft,tpot,itl,e2el", want: []string{"ttft", "tpot", "itl", "e2el"}},
		{in: " e2el , ttft ", want: []string{"ttft", "e2el"}}, // the summary's order
		{in: "schedule_lag,client_queue_time", want: []string{"client_queue_time", "schedule_lag"}},
		{in: "", errHas: "empty"},
		{in: "ttft,", errHas: `unknown metric ""`},
		{in: "ttft,latency", errHas: `unknown metric "latency"`},
		{in: "TTFT", errHas: `unknown metric "TTFT"`},
		{in: "itl,itl", errHas: "given twice"},
	}
	for _, tc := range tests {
		got, err := measure.ParsePercentileMetrics(tc.in)
		switch {
		case tc.errHas != "":
			if err == nil || !strings.Contains(err.Error(), tc.errHas) || field.Of(err) == nil || field.Of(err).Name != measure.FieldPercentileMetrics {
				t.Errorf("%q: err %v, want it to name the flag and mention %q", tc.in, err, tc.errHas)
			}
		case err != nil || !slices.Equal(got, tc.want):
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
	if names := measure.MetricNames(); len(names) != 9 || names[0] != "ttft" || names[3] != "e2el" || names[7] != "ttfa" {
		t.Errorf("MetricNames() = %v", names)
	}
}
