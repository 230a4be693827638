package arrival_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/internal/field"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var inf = math.Inf(1)

func TestParseRampStrategy(t *testing.T) {
	tests := []struct {
		in      string
		want    arrival.RampStrategy
		wantErr bool
	}{
		{in: "", want: arrival.RampNone},
		{in: "none", want: arrival.RampNone},
		{in: "linear", want: arrival.RampLinear},
		{in: "exponential", want: arrival.RampExponential},
		{in: "Linear", wantErr: true}, // flag values are exact, as in vLLM
		{in: " linear", wantErr: true},
		{in: "exp", wantErr: true},
		{in: "step", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := arrival.ParseRampStrategy(tt.in)
			if tt.wantErr {
				if fe := field.Of(err); fe == nil || fe.Name != arrival.FieldRamp || !strings.Contains(fe.Msg, strconv.Quote(tt.in)) {
					t.Fatalf("ParseRampStrategy(%q) error = %v, want a field error naming the ramp strategy and the value", tt.in, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseRampStrategy(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestRampStrategyText(t *testing.T) {
	tests := []struct {
		r    arrival.RampStrategy
		text string
	}{
		{arrival.RampNone, "none"},
		{arrival.RampLinear, "linear"},
		{arrival.RampExponential, "exponential"},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.text {
			t.Errorf("%d.String() = %q, want %q", int(tt.r), got, tt.text)
		}
		b, err := tt.r.MarshalText()
		if err != nil || string(b) != tt.text {
			t.Errorf("%v.MarshalText() = %q, %v; want %q", tt.r, b, err, tt.text)
		}
		var back arrival.RampStrategy
		if err := back.UnmarshalText(b); err != nil || back != tt.r {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", b, back, err, tt.r)
		}
	}
	if got := arrival.RampStrategy(7).String(); got != "RampStrategy(7)" {
		t.Errorf("unknown strategy prints %q", got)
	}
	if _, err := arrival.RampStrategy(7).MarshalText(); err == nil {
		t.Error("MarshalText of an unknown strategy succeeded")
	}
	var r arrival.RampStrategy
	if err := r.UnmarshalText([]byte("sideways")); err == nil {
		t.Error("UnmarshalText(sideways) succeeded")
	}
}

func TestValidate(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		spec arrival.Spec
		want []string // one substring per expected error, in order
	}{
		{name: "poisson", spec: arrival.Spec{Rate: 4, Burstiness: 1}},
		{name: "gamma", spec: arrival.Spec{Rate: 0.5, Burstiness: 0.25}},
		{name: "constant", spec: arrival.Spec{Rate: 4, Burstiness: arrival.Burstiness(inf)}},
		{name: "burst", spec: arrival.Spec{Rate: inf, Burstiness: 1}},
		{name: "linear ramp ignores rate", spec: arrival.Spec{Rate: -3, Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 1, RampEnd: 10}},
		{name: "exponential ramp", spec: arrival.Spec{Burstiness: 2, Ramp: arrival.RampExponential, RampStart: 1, RampEnd: 10}},
		{name: "flat ramp", spec: arrival.Spec{Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 5, RampEnd: 5}},

		{name: "zero value", spec: arrival.Spec{}, want: []string{
			"burstiness: must be > 0 or inf (1 = Poisson, inf = constant spacing), got 0",
			"rate: must be > 0 or inf, got 0",
		}},
		{name: "negative rate", spec: arrival.Spec{Rate: -1, Burstiness: 1}, want: []string{"rate: must be > 0 or inf, got -1"}},
		{name: "NaN rate", spec: arrival.Spec{Rate: nan, Burstiness: 1}, want: []string{"rate: must be > 0 or inf, got NaN"}},
		{name: "-inf rate", spec: arrival.Spec{Rate: math.Inf(-1), Burstiness: 1}, want: []string{"rate: must be > 0 or inf, got -inf"}},
		{name: "negative burstiness", spec: arrival.Spec{Rate: 1, Burstiness: -0.5}, want: []string{"burstiness: must be > 0 or inf (1 = Poisson, inf = constant spacing), got -0.5"}},
		{name: "NaN burstiness", spec: arrival.Spec{Rate: 1, Burstiness: arrival.Burstiness(nan)}, want: []string{"burstiness: must be > 0 or inf (1 = Poisson, inf = constant spacing), got NaN"}},
		{name: "ramp fields without strategy", spec: arrival.Spec{Rate: 1, Burstiness: 1, RampStart: 2, RampEnd: 3}, want: []string{
			"ramp start rate: is only allowed with ramp strategy linear or exponential, got 2 with strategy none",
			"ramp end rate: is only allowed with ramp strategy linear or exponential, got 3 with strategy none",
		}},
		{name: "unknown strategy", spec: arrival.Spec{Burstiness: 1, Ramp: 9, RampStart: 1, RampEnd: 2}, want: []string{
			"ramp strategy: must be none, linear or exponential, got RampStrategy(9)",
		}},
		{name: "linear ramp from zero", spec: arrival.Spec{Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 0, RampEnd: 10}, want: []string{
			"ramp start rate: must be a finite number > 0 with ramp strategy linear, got 0",
		}},
		{name: "exponential ramp from zero", spec: arrival.Spec{Burstiness: 1, Ramp: arrival.RampExponential, RampStart: 0, RampEnd: 10}, want: []string{
			"ramp start rate: must be a finite number > 0 with ramp strategy exponential, got 0",
		}},
		{name: "ramp end missing", spec: arrival.Spec{Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 1}, want: []string{
			"ramp end rate: must be a finite number > 0 with ramp strategy linear, got 0",
		}},
		{name: "ramp to inf", spec: arrival.Spec{Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 1, RampEnd: inf}, want: []string{
			"ramp end rate: must be a finite number > 0 with ramp strategy linear, got inf",
		}},
		{name: "ramp NaN start", spec: arrival.Spec{Burstiness: 1, Ramp: arrival.RampExponential, RampStart: nan, RampEnd: 4}, want: []string{
			"ramp start rate: must be a finite number > 0 with ramp strategy exponential, got NaN",
		}},
		{name: "ramp down", spec: arrival.Spec{Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 10, RampEnd: 1}, want: []string{
			"ramp start rate: must be <= ramp end rate (1), got 10",
		}},
		{name: "everything wrong", spec: arrival.Spec{Burstiness: 0, Ramp: arrival.RampExponential, RampStart: -1, RampEnd: nan}, want: []string{
			"burstiness: must be > 0",
			"ramp start rate: must be a finite number > 0 with ramp strategy exponential, got -1",
			"ramp end rate: must be a finite number > 0 with ramp strategy exponential, got NaN",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.spec.Validate()
			if len(errs) != len(tt.want) {
				t.Fatalf("Validate() = %v, want %d errors %q", errs, len(tt.want), tt.want)
			}
			for i, err := range errs {
				if !strings.Contains(err.Error(), tt.want[i]) {
					t.Errorf("error %d = %q, want it to contain %q", i, err, tt.want[i])
				}
				if fe := field.Of(err); fe == nil || !strings.HasPrefix(tt.want[i], fe.Name+": ") {
					t.Errorf("error %d = %q is not a field error naming its input", i, err)
				}
			}
			// The generators refuse exactly the specs Validate rejects.
			_, err := tt.spec.Offsets(3, 1)
			if (err != nil) != (len(tt.want) > 0) {
				t.Fatalf("Offsets error = %v, want error: %v", err, len(tt.want) > 0)
			}
			if err != nil && !errors.Is(err, arrival.ErrInvalidSpec) {
				t.Errorf("Offsets error %v does not wrap ErrInvalidSpec", err)
			}
			_, err = tt.spec.OffsetsWithin(time.Second, 1, 3)
			if (err != nil) != (len(tt.want) > 0) {
				t.Fatalf("OffsetsWithin error = %v, want error: %v", err, len(tt.want) > 0)
			}
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		spec arrival.Spec
		want string
	}{
		{arrival.Spec{Rate: 4, Burstiness: 1}, "poisson(rate=4/s)"},
		{arrival.Spec{Rate: 2.5, Burstiness: 1}, "poisson(rate=2.5/s)"},
		{arrival.Spec{Rate: 4, Burstiness: 0.5}, "gamma(rate=4/s, burstiness=0.5)"},
		{arrival.Spec{Rate: 0.1, Burstiness: 4}, "gamma(rate=0.1/s, burstiness=4)"},
		{arrival.Spec{Rate: 4, Burstiness: arrival.Burstiness(inf)}, "constant(rate=4/s)"},
		{arrival.Spec{Rate: inf, Burstiness: 1}, "burst(rate=inf)"},
		{arrival.Spec{Rate: inf, Burstiness: arrival.Burstiness(inf)}, "burst(rate=inf)"},
		{arrival.Spec{Rate: 100000, Burstiness: 1}, "poisson(rate=100000/s)"},
		{arrival.Spec{Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 1, RampEnd: 10}, "linear-ramp(1→10/s, burstiness=1)"},
		{arrival.Spec{Rate: 7, Burstiness: 0.25, Ramp: arrival.RampLinear, RampStart: 0.5, RampEnd: 2}, "linear-ramp(0.5→2/s, burstiness=0.25)"},
		{arrival.Spec{Burstiness: arrival.Burstiness(inf), Ramp: arrival.RampExponential, RampStart: 1, RampEnd: 64}, "exponential-ramp(1→64/s, burstiness=inf)"},
	}
	for _, tt := range tests {
		if got := tt.spec.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.spec, got, tt.want)
		}
	}
}

func TestRateAt(t *testing.T) {
	lin := arrival.Spec{Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 1, RampEnd: 5}
	exp := arrival.Spec{Burstiness: 1, Ramp: arrival.RampExponential, RampStart: 1, RampEnd: 16}
	tests := []struct {
		name string
		spec arrival.Spec
		i, n int
		want float64
	}{
		{"constant ignores index", arrival.Spec{Rate: 3, Burstiness: 1}, 7, 10, 3},
		{"linear first", lin, 0, 5, 1},
		{"linear middle", lin, 2, 5, 3},
		{"linear last", lin, 4, 5, 5},
		{"linear single request uses start", lin, 0, 1, 1},
		{"exponential first", exp, 0, 5, 1},
		{"exponential quarter", exp, 1, 5, 2},
		{"exponential last", exp, 4, 5, 16},
		{"exponential single request uses start", exp, 0, 1, 1},
	}
	for _, tt := range tests {
		if got := tt.spec.RateAt(tt.i, tt.n); math.Abs(got-tt.want) > 1e-12*tt.want {
			t.Errorf("%s: RateAt(%d, %d) = %v, want %v", tt.name, tt.i, tt.n, got, tt.want)
		}
	}
}

// specs used by several tests: every kind of process.
var specs = []arrival.Spec{
	{Rate: 4, Burstiness: 1},
	{Rate: 4, Burstiness: 0.25},
	{Rate: 4, Burstiness: 0.1}, // below gonum's small-shape threshold (0.2): the other gamma algorithm
	{Rate: 4, Burstiness: 4},
	{Rate: 3, Burstiness: arrival.Burstiness(inf)},
	{Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 1, RampEnd: 10},
	{Burstiness: 0.5, Ramp: arrival.RampExponential, RampStart: 1, RampEnd: 10},
}

func TestOffsetsDeterministic(t *testing.T) {
	for _, s := range specs {
		t.Run(s.String(), func(t *testing.T) {
			a, err := s.Offsets(500, 42)
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.Offsets(500, 42)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a, b) {
				t.Fatal("same spec and seed gave different offsets")
			}
			if !slices.IsSorted(a) || a[0] < 0 {
				t.Fatal("offsets are not non-negative and non-decreasing")
			}
			c, err := s.Offsets(500, 43)
			if err != nil {
				t.Fatal(err)
			}
			random := !math.IsInf(float64(s.Burstiness), 1)
			if random == slices.Equal(a, c) {
				t.Fatalf("seed 43 vs 42: equal=%v, but the process is random=%v", slices.Equal(a, c), random)
			}
			w1, err := s.OffsetsWithin(60*time.Second, 42, 1000)
			if err != nil {
				t.Fatal(err)
			}
			w2, err := s.OffsetsWithin(60*time.Second, 42, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(w1, w2) {
				t.Fatal("OffsetsWithin: same spec and seed gave different offsets")
			}
		})
	}
}

// TestOffsetsPrefix checks that a shorter schedule is a prefix of a longer
// one for constant-rate specs (one draw per request, whatever the branch).
func TestOffsetsPrefix(t *testing.T) {
	for _, s := range specs[:5] {
		long, err := s.Offsets(1000, 7)
		if err != nil {
			t.Fatal(err)
		}
		short, err := s.Offsets(10, 7)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(short, long[:10]) {
			t.Errorf("%s: Offsets(10) is not a prefix of Offsets(1000)", s)
		}
	}
}

func TestOffsetsWithin(t *testing.T) {
	const d = 20 * time.Second
	for _, s := range specs[:5] {
		for _, seed := range []int64{0, 1, -5, math.MaxInt64} {
			t.Run(fmt.Sprintf("%s/seed=%d", s, seed), func(t *testing.T) {
				w, err := s.OffsetsWithin(d, seed, 1_000_000)
				if err != nil {
					t.Fatal(err)
				}
				if len(w) == 0 {
					t.Fatal("no offsets within 20 s at 4/s")
				}
				full, err := s.Offsets(len(w)+1, seed)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(w, full[:len(w)]) {
					t.Fatal("OffsetsWithin is not a prefix of Offsets")
				}
				if w[len(w)-1] >= d {
					t.Fatalf("last offset %v is not before %v", w[len(w)-1], d)
				}
				if full[len(w)] < d {
					t.Fatalf("stopped at %d offsets although the next one, %v, is before %v", len(w), full[len(w)], d)
				}
				// The cap stops generation early and is not an error.
				capped, err := s.OffsetsWithin(d, seed, 5)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(capped, full[:5]) {
					t.Fatalf("capped at 5: got %v, want %v", capped, full[:5])
				}
			})
		}
	}
}

func TestOffsetsWithinRampBounds(t *testing.T) {
	const d = 30 * time.Second
	for _, s := range specs[5:] {
		w, err := s.OffsetsWithin(d, 3, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		if len(w) == 0 || w[len(w)-1] >= d || !slices.IsSorted(w) {
			t.Errorf("%s: %d offsets, last %v: want some, sorted, all before %v", s, len(w), w[len(w)-1], d)
		}
		capped, err := s.OffsetsWithin(d, 3, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(capped, w[:10]) {
			t.Errorf("%s: the capped schedule is not a prefix", s)
		}
	}
}

// TestDeterministicRamps pins the ramp formulas with b=inf, where every gap
// is exactly 1/r.
func TestDeterministicRamps(t *testing.T) {
	sec := func(x float64) time.Duration { return time.Duration(math.Round(x * 1e9)) }
	lin := arrival.Spec{Burstiness: arrival.Burstiness(inf), Ramp: arrival.RampLinear, RampStart: 1, RampEnd: 3}
	exp := arrival.Spec{Burstiness: arrival.Burstiness(inf), Ramp: arrival.RampExponential, RampStart: 1, RampEnd: 4}
	tests := []struct {
		name string
		got  func() ([]time.Duration, error)
		want []time.Duration
	}{
		// Rates 1, 2, 3: gaps 1, 1/2, 1/3.
		{"linear by index", func() ([]time.Duration, error) { return lin.Offsets(3, 1) },
			[]time.Duration{sec(1), sec(1.5), sec(1 + 0.5 + 1.0/3)}},
		// Rates 1, 2, 4: gaps 1, 1/2, 1/4.
		{"exponential by index", func() ([]time.Duration, error) { return exp.Offsets(3, 1) },
			[]time.Duration{sec(1), sec(1.5), sec(1.75)}},
		// N=1 uses the start rate.
		{"single request", func() ([]time.Duration, error) {
			return arrival.Spec{Burstiness: arrival.Burstiness(inf), Ramp: arrival.RampLinear, RampStart: 2, RampEnd: 10}.Offsets(1, 1)
		}, []time.Duration{sec(0.5)}},
		// Over d=2 s, r(t) = 1 + t, Λ(t) = t + t²/2, Λ⁻¹(k) = √(1+2k) - 1,
		// and Λ(2) = 4, so the 4th arrival falls exactly at d and is cut.
		{"linear by time", func() ([]time.Duration, error) { return lin.OffsetsWithin(2*time.Second, 1, 100) },
			[]time.Duration{sec(math.Sqrt(3) - 1), sec(math.Sqrt(5) - 1), sec(math.Sqrt(7) - 1)}},
		// Over d=2 s, r(t) = 2^t, Λ(t) = (2^t - 1)/ln 2, Λ⁻¹(k) = log2(1 + k·ln 2);
		// Λ(2) = 3/ln 2 ≈ 4.33, so 4 arrivals.
		{"exponential by time", func() ([]time.Duration, error) { return exp.OffsetsWithin(2*time.Second, 1, 100) },
			[]time.Duration{sec(math.Log2(1 + math.Ln2)), sec(math.Log2(1 + 2*math.Ln2)), sec(math.Log2(1 + 3*math.Ln2)), sec(math.Log2(1 + 4*math.Ln2))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				// The closed forms above are evaluated differently from the
				// package's, so allow one nanosecond of rounding.
				if diff := got[i] - tt.want[i]; diff < -1 || diff > 1 {
					t.Errorf("offset %d = %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// A flat ramp is the constant process, by index and by time.
func TestFlatRampIsConstant(t *testing.T) {
	for _, ramp := range []arrival.RampStrategy{arrival.RampLinear, arrival.RampExponential} {
		flat := arrival.Spec{Burstiness: 1, Ramp: ramp, RampStart: 5, RampEnd: 5}
		constant := arrival.Spec{Rate: 5, Burstiness: 1}
		a, err := flat.Offsets(200, 9)
		if err != nil {
			t.Fatal(err)
		}
		b, err := constant.Offsets(200, 9)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Errorf("flat %s ramp differs from the constant rate by index", ramp)
		}
		wa, err := flat.OffsetsWithin(10*time.Second, 9, 1000)
		if err != nil {
			t.Fatal(err)
		}
		wb, err := constant.OffsetsWithin(10*time.Second, 9, 1000)
		if err != nil {
			t.Fatal(err)
		}
		// By time, the ramp divides the sum of draws once instead of
		// summing divided draws: equal up to a nanosecond of rounding.
		if len(wa) != len(wb) {
			t.Fatalf("flat %s ramp by time: %d offsets, constant: %d", ramp, len(wa), len(wb))
		}
		for i := range wa {
			if diff := wa[i] - wb[i]; diff < -1 || diff > 1 {
				t.Fatalf("flat %s ramp by time: offset %d = %v, constant %v", ramp, i, wa[i], wb[i])
			}
		}
	}
}

func TestConstantSpacing(t *testing.T) {
	tests := []struct {
		rate  float64
		exact bool // 1/rate is a binary fraction, so the sums are exact
	}{
		{rate: 4, exact: true},
		{rate: 0.5, exact: true},
		{rate: 1024, exact: true},
		{rate: 3},
		{rate: 7.3},
	}
	for _, tt := range tests {
		s := arrival.Spec{Rate: tt.rate, Burstiness: arrival.Burstiness(inf)}
		got, err := s.Offsets(1000, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i, off := range got {
			want := time.Duration(math.Round(float64(i+1) / tt.rate * 1e9))
			diff := off - want
			// Each addition to the running sum (< 1000/r ≤ 2000 s here) errs
			// by at most half an ulp, 2⁻⁵³·2048 s ≈ 2.3e-13 s, so 1000 of
			// them drift by < 2.3e-10 s: the rounded offset can differ from
			// the rounded exact value by at most one nanosecond.
			if (tt.exact && diff != 0) || diff < -1 || diff > 1 {
				t.Fatalf("rate %v: offset %d = %v, want %v", tt.rate, i, off, want)
			}
		}
		if rr := arrival.RealisedRate(got); math.Abs(rr-tt.rate) > 1e-9*tt.rate {
			t.Errorf("rate %v: realised rate %v", tt.rate, rr)
		}
	}
}

func TestBurstAllAtT0(t *testing.T) {
	for _, b := range []float64{0.3, 1, inf} {
		s := arrival.Spec{Rate: inf, Burstiness: arrival.Burstiness(b)}
		got, err := s.Offsets(1000, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1000 || slices.ContainsFunc(got, func(d time.Duration) bool { return d != 0 }) {
			t.Fatalf("%s: want 1000 zero offsets", s)
		}
		within, err := s.OffsetsWithin(time.Second, 1, 250)
		if err != nil {
			t.Fatal(err)
		}
		if len(within) != 250 || slices.ContainsFunc(within, func(d time.Duration) bool { return d != 0 }) {
			t.Fatalf("%s: OffsetsWithin want 250 zero offsets", s)
		}
		if rr := arrival.RealisedRate(got); !math.IsInf(rr, 1) {
			t.Errorf("%s: realised rate %v, want +Inf", s, rr)
		}
	}
}

func TestOffsetsArgumentErrors(t *testing.T) {
	ok := arrival.Spec{Rate: 1, Burstiness: 1}
	tests := []struct {
		name string
		call func() ([]time.Duration, error)
		want string
	}{
		{"negative n", func() ([]time.Duration, error) { return ok.Offsets(-1, 1) }, "must be >= 0, got -1"},
		{"zero duration", func() ([]time.Duration, error) { return ok.OffsetsWithin(0, 1, 10) }, "duration must be > 0, got 0s"},
		{"negative duration", func() ([]time.Duration, error) { return ok.OffsetsWithin(-time.Second, 1, 10) }, "duration must be > 0, got -1s"},
		{"negative max", func() ([]time.Duration, error) { return ok.OffsetsWithin(time.Second, 1, -1) }, "must be >= 0, got -1"},
		// 1e-10/s is a gap of 1e10 s, beyond time.Duration's ~9.2e9 s.
		{"overflow", func() ([]time.Duration, error) {
			return arrival.Spec{Rate: 1e-10, Burstiness: arrival.Burstiness(inf)}.Offsets(1, 1)
		}, "beyond the time.Duration range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, %v; want an error containing %q", got, err, tt.want)
			}
		})
	}
	// Zero is a valid size: an empty schedule.
	if got, err := ok.Offsets(0, 1); err != nil || len(got) != 0 {
		t.Errorf("Offsets(0) = %v, %v", got, err)
	}
	if got, err := ok.OffsetsWithin(time.Hour, 1, 0); err != nil || len(got) != 0 {
		t.Errorf("OffsetsWithin(max 0) = %v, %v", got, err)
	}
	// A gap beyond the Duration range simply ends a duration-bound tier.
	if got, err := (arrival.Spec{Rate: 1e-10, Burstiness: arrival.Burstiness(inf)}).OffsetsWithin(time.Hour, 1, 10); err != nil || len(got) != 0 {
		t.Errorf("OffsetsWithin at 1e-10/s = %v, %v; want empty", got, err)
	}
}

func TestFromOffsets(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		in   []time.Duration
		want string // error substring; "" for success
	}{
		{"nil", nil, ""},
		{"single zero", []time.Duration{0}, ""},
		{"ties allowed", []time.Duration{0, s, s, 2 * s}, ""},
		{"negative", []time.Duration{0, -s}, "offset 1 is negative (-1s)"},
		{"decreasing", []time.Duration{0, 2 * s, s}, "offset 2 (1s) is before offset 1 (2s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := arrival.FromOffsets(tt.in)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error = %v, want one containing %q", err, tt.want)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.in) || got == nil {
				t.Fatalf("FromOffsets(%v) = %v, %v", tt.in, got, err)
			}
			if len(tt.in) > 0 {
				tt.in[0] = 99 * s
				if got[0] == tt.in[0] {
					t.Fatal("FromOffsets returned the caller's slice, not a copy")
				}
			}
		})
	}
}

func TestRealisedRate(t *testing.T) {
	tests := []struct {
		in   []time.Duration
		want float64
	}{
		{nil, 0},
		{[]time.Duration{0, 0}, inf},
		{[]time.Duration{time.Second}, 1},
		{[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, 0.75},
		{[]time.Duration{250 * time.Millisecond, 500 * time.Millisecond}, 4},
	}
	for _, tt := range tests {
		if got := arrival.RealisedRate(tt.in); got != tt.want {
			t.Errorf("RealisedRate(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestGolden pins the exact offsets for fixed seeds: the cross-machine
// bit-identity promise. A change here changes every published schedule.
func TestGolden(t *testing.T) {
	var buf bytes.Buffer
	for _, s := range specs {
		for _, seed := range []int64{1, 20260101} {
			offs, err := s.Offsets(12, seed)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&buf, "%s seed=%d Offsets(12):", s, seed)
			for _, o := range offs {
				fmt.Fprintf(&buf, " %d", int64(o))
			}
			buf.WriteByte('\n')
			within, err := s.OffsetsWithin(3*time.Second, seed, 1000)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&buf, "%s seed=%d OffsetsWithin(3s):", s, seed)
			for _, o := range within {
				fmt.Fprintf(&buf, " %d", int64(o))
			}
			buf.WriteByte('\n')
		}
	}
	path := filepath.Join("testdata", "offsets.golden")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("offsets differ from %s:\ngot:\n%s\nwant:\n%s", path, buf.Bytes(), want)
	}
}

func BenchmarkOffsets1M(b *testing.B) {
	for _, s := range []arrival.Spec{
		{Rate: 100, Burstiness: 1},
		{Rate: 100, Burstiness: 0.5},
		{Rate: 100, Burstiness: arrival.Burstiness(inf)},
		{Burstiness: 1, Ramp: arrival.RampExponential, RampStart: 10, RampEnd: 1000},
	} {
		b.Run(s.String(), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Offsets(1_000_000, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
