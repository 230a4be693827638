package plan_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/internal/field"
)

// TestForecastSourceRead: one forecast is read from the one source given; none, two, or a
// source that gives none is refused, named by its input.
//
// Every refusal is a field error; see TestForecastSourceRefusals for how they read.
func TestForecastSourceRead(t *testing.T) {
	profile := filepath.Join(t.TempDir(), "day.csv")
	if err := os.WriteFile(profile, []byte("time,rate\n00:00,10\n12:00,40\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	num := func(v float64) *float64 { return &v }
	str := func(s string) *string { return &s }
	notATrace := filepath.Join("..", "..", "workloads", "testdata", "requests.jsonl")
	for _, tc := range []struct {
		name  string
		src   plan.ForecastSource
		peak  float64 // of the forecast read
		err   error   // errors.Is
		field string  // a field error's input
		trace bool    // a *TraceError
	}{
		{"a peak", plan.ForecastSource{Peak: num(25)}, 25, nil, "", false},
		{"a profile", plan.ForecastSource{Profile: str(profile)}, 40, nil, "", false},
		{"none", plan.ForecastSource{}, 0, plan.ErrNoForecast, plan.FieldPeak, false},
		{"a profile given empty", plan.ForecastSource{Profile: str("")}, 0, plan.ErrNoForecast, plan.FieldPeak, false},
		{"two", plan.ForecastSource{Peak: num(1), Profile: str("")}, 0, plan.ErrManyForecasts, plan.FieldPeak, false},
		{"three", plan.ForecastSource{Peak: num(1), Profile: str(profile), Trace: str(notATrace)}, 0, plan.ErrManyForecasts, plan.FieldPeak, false},
		{"a peak of 0", plan.ForecastSource{Peak: num(0)}, 0, nil, plan.FieldPeak, false},
		{"a missing profile", plan.ForecastSource{Profile: str(profile + ".none")}, 0, os.ErrNotExist, plan.FieldProfile, false},
		{"a missing trace", plan.ForecastSource{Trace: str(profile + ".none.csv"), Bucket: time.Minute}, 0, os.ErrNotExist, plan.FieldProfileTrace, false},
		{"not a trace", plan.ForecastSource{Trace: str(notATrace), Bucket: time.Minute}, 0, plan.ErrNotATrace, plan.FieldProfileTrace, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.src.Read()
			wantErr := tc.err != nil || tc.field != "" || tc.trace
			if (err != nil) != wantErr {
				t.Fatalf("error %v, want one: %v", err, wantErr)
			}
			if !wantErr {
				if f.Peak() != tc.peak {
					t.Errorf("peak %v, want %v", f.Peak(), tc.peak)
				}
				return
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("error %v, want %v", err, tc.err)
			}
			if fe := field.Of(err); (fe == nil && tc.field != "") || (fe != nil && fe.Name != tc.field) {
				t.Errorf("error %v: field %v, want %q", err, fe, tc.field)
			}
			var te *plan.TraceError
			if errors.As(err, &te) != tc.trace {
				t.Errorf("error %v: a TraceError: want %v", err, tc.trace)
			}
		})
	}
}

// TestForecastSourceRefusals: the refusals read as sentences naming the inputs, written as a
// command line names them.
func TestForecastSourceRefusals(t *testing.T) {
	num := func(v float64) *float64 { return &v }
	str := func(s string) *string { return &s }
	notATrace := filepath.Join("..", "..", "workloads", "testdata", "requests.jsonl")
	for _, tc := range []struct {
		src  plan.ForecastSource
		want string
	}{
		{plan.ForecastSource{}, "plan: give the forecast: --peak RATE, --profile FILE.csv or --profile-trace TRACE"},
		{plan.ForecastSource{Peak: num(1), Trace: str("x")}, "--peak, --profile and --profile-trace: give one forecast"},
		{plan.ForecastSource{Peak: num(0)}, "--peak: a forecast peak in req/s > 0, got 0"},
		{plan.ForecastSource{Trace: str(notATrace), Bucket: time.Minute}, "--profile-trace " + notATrace + ": " + plan.ErrNotATrace.Error()},
	} {
		_, err := tc.src.Read()
		fe := field.Of(err)
		if fe == nil {
			t.Fatalf("%+v: error %v, want a field error", tc.src, err)
		}
		if got := fe.Render(asFlag); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.src, got, tc.want)
		}
		if err.Error() != fe.Error() {
			t.Errorf("%+v: error %q reads other than its field error %q", tc.src, err, fe)
		}
	}
}
