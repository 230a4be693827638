package arrival_test

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/param"
)

func given(m map[string][]string) func(string) ([]string, bool) {
	return func(f string) ([]string, bool) { v, ok := m[f]; return v, ok }
}

func TestSpecParams(t *testing.T) {
	tests := []struct {
		name  string
		given map[string][]string
		want  arrival.Spec
		errs  int
	}{
		{"defaults kept", nil, arrival.Spec{Rate: 4, Burstiness: 1}, 0},
		{"inf rate and burstiness", map[string][]string{arrival.FieldRate: {"inf"}, arrival.FieldBurstiness: {"INF"}},
			arrival.Spec{Rate: math.Inf(1), Burstiness: arrival.Burstiness(math.Inf(1))}, 0},
		{"a ramp", map[string][]string{arrival.FieldRamp: {"linear"}, arrival.FieldRampStart: {"1"}, arrival.FieldRampEnd: {"5"}},
			arrival.Spec{Rate: 4, Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 1, RampEnd: 5}, 0},
		{"texts that do not parse", map[string][]string{arrival.FieldRate: {"0"}, arrival.FieldBurstiness: {"x"}, arrival.FieldRamp: {"zigzag"}},
			arrival.Spec{}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := arrival.Spec{Rate: 4, Burstiness: 1}
			errs := param.Apply(s.Params(), given(tt.given))
			if len(errs) != tt.errs {
				t.Fatalf("errors %v, want %d", errs, tt.errs)
			}
			if tt.errs == 0 && !reflect.DeepEqual(s, tt.want) {
				t.Errorf("spec %+v, want %+v", s, tt.want)
			}
		})
	}
}

func TestSpecParamsShowTheirValues(t *testing.T) {
	s := arrival.Spec{Rate: 2.5, Burstiness: arrival.Burstiness(math.Inf(1))}
	ps := s.Params()
	for i, want := range []any{"2.5", "inf", "", 0.0, 0.0} {
		if got := ps[i].Current(); got != want {
			t.Errorf("%s: %#v, want %#v", ps[i].Field, got, want)
		}
	}
	s.Ramp = arrival.RampExponential
	if got := ps[2].Current(); got != "exponential" {
		t.Errorf("ramp shown as %q", got)
	}
}

func TestLengthResolve(t *testing.T) {
	tests := []struct {
		name  string
		given map[string][]string
		want  arrival.Length
		err   string
	}{
		{"the default count", nil, arrival.Length{Requests: 200}, ""},
		{"a count", map[string][]string{arrival.FieldRequests: {"3"}}, arrival.Length{Requests: 3}, ""},
		{"a duration replaces the count", map[string][]string{arrival.FieldDuration: {"30s"}}, arrival.Length{Duration: 30 * time.Second}, ""},
		{"no request", map[string][]string{arrival.FieldRequests: {"0"}}, arrival.Length{}, "requests per tier: must be >= 1, got 0"},
		{"a duration given as zero", map[string][]string{arrival.FieldDuration: {"0s"}}, arrival.Length{}, "tier duration: must be > 0, got 0s"},
		{"a count and a duration", map[string][]string{arrival.FieldRequests: {"3"}, arrival.FieldDuration: {"30s"}}, arrival.Length{}, "give requests per tier or tier duration, not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := arrival.Length{Requests: 200}
			ps := l.Params()
			if errs := param.Apply(ps, given(tt.given)); len(errs) > 0 {
				t.Fatal(errs)
			}
			got, errs := l.Resolve(ps)
			if tt.err != "" {
				if len(errs) != 1 || errs[0].Error() != tt.err {
					t.Errorf("errors %v, want %q", errs, tt.err)
				}
				return
			}
			if len(errs) > 0 || got != tt.want {
				t.Errorf("Resolve = %+v, %v; want %+v", got, errs, tt.want)
			}
		})
	}
}

// The length's inputs are the sweep's: one name, one flag.
func TestLengthFieldsAreTheSweeps(t *testing.T) {
	if arrival.FieldRequests != sweep.FieldRequests || arrival.FieldDuration != sweep.FieldDuration {
		t.Errorf("arrival's %q, %q; sweep's %q, %q", arrival.FieldRequests, arrival.FieldDuration, sweep.FieldRequests, sweep.FieldDuration)
	}
}
