package sweep_test

import (
	"math"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/field"
)

func TestParseRates(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		in   string
		auto bool
		want []float64
	}{
		{"1,2,4,8", false, []float64{1, 2, 4, 8}},
		{" 0.5 , 1.5 ", false, []float64{0.5, 1.5}}, // spaces are ignored
		{"3", false, []float64{3}},                  // one tier
		{"1,2,inf", false, []float64{1, 2, inf}},    // inf last
		{"INF", false, []float64{inf}},              // inf alone, any case
		{"auto", true, nil},
		{" Auto ", true, nil},
		// 64^(i/6) = 2^i: 1, 2, 4, ..., 64.
		{"1:64:geom:7", false, []float64{1, 2, 4, 8, 16, 32, 64}},
		// steps of (20−2)/9 = 2.
		{"2:20:lin:10", false, []float64{2, 4, 6, 8, 10, 12, 14, 16, 18, 20}},
		{"1:2:lin:2", false, []float64{1, 2}},                            // the smallest range
		{"1:4:GEOM:3", false, []float64{1, 2, 4}},                        // spacing in any case
		{"0.5,1:4:geom:3,8,inf", false, []float64{0.5, 1, 2, 4, 8, inf}}, // ranges mix with numbers
		{"1:2:lin:2,3:4:lin:2", false, []float64{1, 2, 3, 4}},            // adjacent ranges
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := sweep.ParseRates(tt.in)
			if err != nil {
				t.Fatalf("ParseRates(%q): %v", tt.in, err)
			}
			if got.Auto != tt.auto {
				t.Fatalf("Auto = %v, want %v", got.Auto, tt.auto)
			}
			if len(got.List) != len(tt.want) {
				t.Fatalf("List = %v, want %v", got.List, tt.want)
			}
			for i, w := range tt.want {
				if g := got.List[i]; !(g == w || math.Abs(g-w) <= 1e-12*w) {
					t.Errorf("List[%d] = %v, want %v", i, g, w)
				}
			}
		})
	}
}

func TestParseRatesEndsExact(t *testing.T) {
	// The ends of a range are the numbers written, not a rounding of them.
	r, err := sweep.ParseRates("0.3:7.7:geom:9")
	if err != nil {
		t.Fatal(err)
	}
	if r.List[0] != 0.3 || r.List[8] != 7.7 {
		t.Errorf("ends %v, %v; want 0.3, 7.7", r.List[0], r.List[8])
	}
}

func TestParseRatesErrors(t *testing.T) {
	tests := []struct {
		in   string
		bad  string // the part the error must quote
		says string // what the error must say
	}{
		{"", "", "empty"},
		{"   ", "", "empty"},
		{",", `""`, "empty"},                                                    // zero tiers
		{"1,,2", `""`, "element 2 is empty"},                                    // a hole in the list
		{"1,2,", `""`, "element 3 is empty"},                                    // trailing comma
		{"0", `"0"`, "not positive"},                                            // zero rate
		{"1,-2", `"-2"`, "not positive"},                                        // negative rate
		{"abc", `"abc"`, "not a finite number"},                                 // not a number
		{"NaN", `"NaN"`, "not a finite number"},                                 // NaN
		{"1e999", `"1e999"`, "not a finite number"},                             // overflows to Inf
		{"infinity", `"infinity"`, "not a finite number"},                       // only "inf" spells it
		{"inf,1", `"inf"`, "only be the last"},                                  // inf not last
		{"1,inf,inf", `"inf"`, "only be the last"},                              // two infs
		{"4,2", `"2"`, "strictly ascending"},                                    // descending
		{"1,2,2", `"2"`, "strictly ascending"},                                  // duplicate
		{"1:8:geom:4,4", `"4"`, "strictly ascending"},                           // a number inside a range
		{"1:8:geom:4,6:9:lin:2", `"6:9:lin:2"`, "strictly ascending"},           // overlapping ranges
		{"auto,1", `"auto"`, "cannot be combined"},                              // auto in a list
		{"1:8:geom", `"1:8:geom"`, "4 fields"},                                  // too few fields
		{"1:8:geom:4:5", `"1:8:geom:4:5"`, "4 fields"},                          // too many fields
		{"1:8:log:4", `"1:8:log:4"`, "neither geom nor lin"},                    // unknown spacing
		{"1:8:lin:x", `"1:8:lin:x"`, "not an integer"},                          // count not a number
		{"1:8:lin:2.5", `"1:8:lin:2.5"`, "not an integer"},                      // count not an integer
		{"1:8:lin:1", `"1:8:lin:1"`, "below 2"},                                 // count < 2
		{"1:8:lin:0", `"1:8:lin:0"`, "below 2"},                                 // zero tiers in a range
		{"8:1:geom:4", `"8:1:geom:4"`, "not below HI"},                          // lo > hi
		{"4:4:lin:3", `"4:4:lin:3"`, "not below HI"},                            // lo = hi
		{"0:4:lin:3", `"0:4:lin:3"`, "LO 0 is not positive"},                    // lo = 0
		{"1:inf:geom:4", `"1:inf:geom:4"`, "HI \"inf\" is not a finite number"}, // no infinite range
		{"1:2:lin:5000", `"1:2:lin:5000"`, "above 1000"},                        // absurd count
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := sweep.ParseRates(tt.in)
			if err == nil {
				t.Fatalf("ParseRates(%q) = nil error", tt.in)
			}
			msg := err.Error()
			if fe := field.Of(err); fe == nil || fe.Name != sweep.FieldRates {
				t.Errorf("ParseRates(%q) error %v is not a field error naming %q", tt.in, err, sweep.FieldRates)
			}
			for _, want := range []string{tt.bad, tt.says} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
		})
	}
}

func TestParseRatesAllowedForms(t *testing.T) {
	// Syntax errors say what is allowed.
	_, err := sweep.ParseRates("1:8")
	if err == nil || !strings.Contains(err.Error(), "LO:HI:geom:N") || !strings.Contains(err.Error(), `"auto"`) {
		t.Errorf("error %v does not list the allowed forms", err)
	}
}

func TestRatesString(t *testing.T) {
	for _, in := range []string{"1,2.5,4,inf", "auto", "0.25"} {
		r, err := sweep.ParseRates(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.String(); got != in {
			t.Errorf("String() = %q, want %q", got, in)
		}
		back, err := sweep.ParseRates(r.String())
		if err != nil || back.String() != in {
			t.Errorf("round trip of %q: %v, %v", in, back, err)
		}
	}
}
