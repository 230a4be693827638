package bench_test

import (
	"slices"
	"testing"

	"github.com/loadcurve/loadcurve/internal/bench"
	"github.com/loadcurve/loadcurve/internal/field"
)

func TestParseRates(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []float64
		bad  string // the field error's message, when the list is refused
	}{
		{in: "250,500,1000", want: []float64{250, 500, 1000}},
		{in: " 1.5 , 2e3", want: []float64{1.5, 2000}},
		{in: "-3,0", want: []float64{-3, 0}}, // numbers, judged by Validate
		{in: "fast", bad: `"fast" is not a number; want comma-separated request rates, e.g. 250,500,1000`},
		{in: "1,,2", bad: `"" is not a number; want comma-separated request rates, e.g. 250,500,1000`},
		{in: "1, x ,y", bad: `" x " is not a number; want comma-separated request rates, e.g. 250,500,1000`},
	} {
		got, err := bench.ParseRates(tc.in)
		if tc.bad == "" {
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("ParseRates(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			continue
		}
		fe := field.Of(err)
		if fe == nil || fe.Name != bench.FieldRates || fe.Msg != tc.bad || got != nil {
			t.Errorf("ParseRates(%q) = %v, %v; want the field error %q", tc.in, got, err, tc.bad)
		}
	}
}

func TestParseConcurrencies(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  []string // the field errors' messages, in order
	}{
		{in: "0", want: []int{0}},
		{in: "0, 64,128", want: []int{0, 64, 128}},
		{in: "-1", want: []int{-1}}, // a whole number, judged by Validate
		{in: "0,1.5,x,8", want: []int{0, 8}, bad: []string{
			`"1.5" is not a whole number; want comma-separated caps, e.g. 0,64 (0: no cap)`,
			`"x" is not a whole number; want comma-separated caps, e.g. 0,64 (0: no cap)`}},
	} {
		got, errs := bench.ParseConcurrencies(tc.in)
		if !slices.Equal(got, tc.want) || len(errs) != len(tc.bad) {
			t.Errorf("ParseConcurrencies(%q) = %v, %v; want %v and %d errors", tc.in, got, errs, tc.want, len(tc.bad))
			continue
		}
		for i, err := range errs {
			if fe := field.Of(err); fe == nil || fe.Name != bench.FieldConcurrency || fe.Msg != tc.bad[i] {
				t.Errorf("ParseConcurrencies(%q) error %d = %v, want %q", tc.in, i, err, tc.bad[i])
			}
		}
	}
}

func TestBaseOptions(t *testing.T) {
	if got, want := bench.BaseOptions(true).Rates, bench.QuickOptions().Rates; !slices.Equal(got, want) {
		t.Errorf("BaseOptions(true).Rates = %v, want the quick run's %v", got, want)
	}
	if got, want := bench.BaseOptions(false).Duration, bench.DefaultOptions().Duration; got != want {
		t.Errorf("BaseOptions(false).Duration = %v, want the full run's %v", got, want)
	}
}
