package arrival_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
)

func TestSizeErrorExplain(t *testing.T) {
	flags := func(n string) string {
		return map[string]string{arrival.FieldArrivals: "--num-requests", arrival.FieldWithin: "--duration", arrival.FieldRate: "--request-rate"}[n]
	}
	ten := arrival.Spec{Rate: 10, Burstiness: 1}
	for _, tc := range []struct {
		name string
		err  *arrival.SizeError
		want string
	}{
		{"a count: its schedule's memory", &arrival.SizeError{Spec: ten, N: 1_000_000_000},
			"--num-requests 1000000000 is more than the 2000000 arrivals one tier may plan (its schedule alone would hold 7.45 GiB of memory): ask for fewer"},
		{"a duration", &arrival.SizeError{Spec: ten, Within: 60 * time.Hour, Expected: 2_160_000},
			"--duration 60h0m0s at " + ten.String() + " plans about 2160000 arrivals, more than the 2000000 one tier may plan (its schedule alone would hold 16.5 MiB of memory): shorten --duration or lower the rate"},
		{"a duration at rate inf", &arrival.SizeError{Spec: arrival.Spec{Rate: math.Inf(1)}, Within: 10 * time.Second, Expected: math.Inf(1)},
			"--duration 10s at --request-rate inf plans every arrival at once, so the duration does not bound it: give --num-requests"},
		{"a draw over the bound", &arrival.SizeError{Spec: ten, Within: time.Hour, Expected: 1_999_999, Drawn: 2_000_001},
			"--duration 1h0m0s: arrival: " + ten.String() + " within 1h0m0s drew more than 2000000 arrivals (about 1999999 expected), more than the 2000000 one tier may plan: shorten --duration or lower the rate"},
	} {
		if got := tc.err.Explain(flags); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	// What CheckSize refuses explains itself, in the package's words without names.
	err := ten.CheckSize(0, 60*time.Hour)
	var se *arrival.SizeError
	if !errors.As(err, &se) {
		t.Fatalf("CheckSize: %v", err)
	}
	if got, want := se.Explain(nil)[:len("tier duration 60h0m0s at")], "tier duration 60h0m0s at"; got != want {
		t.Errorf("Explain(nil) = %q…, want %q…", got, want)
	}
}
