package arrival_test

import (
	"math"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/internal/field"
)

func TestCheckWithin(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	tests := []struct {
		name    string
		spec    arrival.Spec
		d       time.Duration
		refused bool
	}{
		{"inf bounded by a duration", arrival.Spec{Rate: inf}, time.Second, true},
		{"inf bounded by a count", arrival.Spec{Rate: inf}, 0, false},
		{"a finite rate", arrival.Spec{Rate: 4}, time.Second, false},
		{"a ramp from inf's rate", arrival.Spec{Rate: inf, Ramp: arrival.RampLinear, RampStart: 1, RampEnd: 2}, time.Second, false},
	}
	for _, tt := range tests {
		err := tt.spec.CheckWithin(tt.d)
		if (err != nil) != tt.refused {
			t.Errorf("%s: %v, want refused %v", tt.name, err, tt.refused)
			continue
		}
		if err == nil {
			continue
		}
		name := func(s string) string {
			return map[string]string{arrival.FieldDuration: "-d", arrival.FieldRate: "-r", arrival.FieldRequests: "-n"}[s]
		}
		if got, want := field.Of(err).Render(name), "-d needs a finite -r (with inf every request is planned at once): use -n"; got != want {
			t.Errorf("%s: rendered %q, want %q", tt.name, got, want)
		}
	}
}
