package measure_test

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure"
)

// FuzzParseGoodput: ParseGoodput never panics, and objectives it accepts are positive, print
// (String) to a canonical form that parses back to the same objectives and prints the same
// again. The input is split at NUL bytes into the separate --goodput arguments.
func FuzzParseGoodput(f *testing.F) {
	for _, s := range []string{"ttft:500", "ttft:500 tpot:50 e2el:20000", "ttft:500,tpot:50", "ttft:500\x00tpot:50",
		"client_queue_time:0.5", "e2el_including_client_queue:1e3", "ttft:1e-7", "ttft:0", "ttft:-1", "ttft:NaN",
		"ttft:Inf", "ttft:1e300", "TTFT:5", "ttft:5 ttft:6", "ttft:", ":5", "ttft:5:6", "", " ", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\x00")
		o, err := measure.ParseGoodput(args)
		if err != nil {
			if fe := field.Of(err); fe == nil || fe.Name != measure.FieldObjectives {
				t.Fatalf("%q: the error does not name the flag: %v", s, err)
			}
			return
		}
		if o.IsZero() {
			t.Fatalf("%q: accepted without any objective", s) // every argument needs a pair
		}
		for _, d := range []int64{int64(o.TTFT), int64(o.TPOT), int64(o.E2EL), int64(o.ClientQueueTime), int64(o.E2ELIncludingClientQueue)} {
			if d < 0 {
				t.Fatalf("%q: negative objective in %+v", s, o)
			}
		}
		canon := o.String()
		back, err := measure.ParseGoodput([]string{canon})
		if err != nil || back != o {
			t.Fatalf("%q: %+v prints as %q, which parses to %+v (%v)", s, o, canon, back, err)
		}
		if again := back.String(); again != canon {
			t.Fatalf("%q: canonical form not stable: %q then %q", s, canon, again)
		}
	})
}

// FuzzParsePercentiles: ParsePercentiles never panics, and what it accepts is a non-empty list
// of distinct percentiles in [0, 100] that prints back (shortest form) to the same list, each
// with a distinct vLLM key.
func FuzzParsePercentiles(f *testing.F) {
	for _, s := range []string{measure.DefaultPercentiles, "99.9", " 50 , 99 ", "0,100", "-0,0", "0.999", "101", "-1",
		"NaN", "inf", "1e2", "1e-5", "50,,99", "", ",", "99,99", "0x10", "1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := measure.ParsePercentiles(s)
		if err != nil {
			if fe := field.Of(err); fe == nil || fe.Name != measure.FieldPercentiles {
				t.Fatalf("%q: the error does not name the flag: %v", s, err)
			}
			return
		}
		if len(ps) == 0 {
			t.Fatalf("%q: accepted an empty list", s)
		}
		keys := map[string]bool{}
		parts := make([]string, len(ps))
		for i, p := range ps {
			if math.IsNaN(p) || p < 0 || p > 100 {
				t.Fatalf("%q: percentile %v outside [0, 100]", s, p)
			}
			if slices.Contains(ps[:i], p) {
				t.Fatalf("%q: %v twice", s, p)
			}
			k := measure.PercentileKey(p)
			if !strings.HasPrefix(k, "p") || keys[k] {
				t.Fatalf("%q: key %q for %v is malformed or taken", s, k, p)
			}
			keys[k] = true
			parts[i] = strconv.FormatFloat(p, 'g', -1, 64)
		}
		back, err := measure.ParsePercentiles(strings.Join(parts, ","))
		if err != nil || !slices.Equal(back, ps) {
			t.Fatalf("%q: %v prints as %q, which parses to %v (%v)", s, ps, strings.Join(parts, ","), back, err)
		}
	})
}

// FuzzParsePercentileMetrics: ParsePercentileMetrics never panics; an error names the flag; what
// it accepts is a non-empty list of known metrics without repeats, in the summary's order, that
// parses back to itself.
func FuzzParsePercentileMetrics(f *testing.F) {
	for _, s := range []string{"ttft,tpot,itl,e2el", "e2el, ttft", "", ",", "ttft,,itl", "TTFT", "itl,itl",
		"schedule_lag", "client_queue_time,e2el_including_client_queue", "ttft ,tpot"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := measure.ParsePercentileMetrics(s)
		if err != nil {
			if fe := field.Of(err); fe == nil || fe.Name != measure.FieldPercentileMetrics {
				t.Fatalf("%q: the error does not name the flag: %v", s, err)
			}
			return
		}
		names := measure.MetricNames()
		last := -1
		for _, m := range ms {
			i := slices.Index(names, m)
			if i <= last {
				t.Fatalf("%q: %v is not a list of known metrics in the summary's order without repeats", s, ms)
			}
			last = i
		}
		if len(ms) == 0 {
			t.Fatalf("%q: accepted an empty list", s)
		}
		back, err := measure.ParsePercentileMetrics(strings.Join(ms, ","))
		if err != nil || !slices.Equal(back, ms) {
			t.Fatalf("%q: %v does not parse back (%v, %v)", s, ms, back, err)
		}
	})
}
