package report

import (
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
)

// TestCapacityLine: the answer's first line says what the capacity is, how it was found, and
// what its interval shows, in words (the interval's half-width about its middle is the precision
// a sweep certifies: 77.7 to 92.7 is ±8.8 %).
func TestCapacityLine(t *testing.T) {
	high := func(v float64) *float64 { return &v }
	params := curve.DefaultParams()
	tests := []struct {
		name string
		c    *curve.Capacity
		want []string
		not  []string
	}{
		{"interpolated, both ends", &curve.Capacity{Rate: 83.4, Method: curve.CapacityInterpolated, Low: 77.7, High: high(92.7)},
			[]string{"Capacity: about 83.4 req/s", "crosses 99 %", "shown to ±8.8 %", "up to 77.7 req/s", "from 92.7 req/s"}, nil},
		{"interpolated, no lower end", &curve.Capacity{Rate: 83.4, Method: curve.CapacityInterpolated, High: high(92.7)},
			[]string{"no tier met the target with confidence yet", "from 92.7 req/s"}, []string{"shown to"}},
		{"interpolated, no upper end", &curve.Capacity{Rate: 83.4, Method: curve.CapacityInterpolated, Low: 77.7},
			[]string{"up to 77.7 req/s; no tier missed it with confidence"}, []string{"shown to"}},
		{"at a tier", &curve.Capacity{Rate: 50, Method: curve.CapacityAtTier, Low: 45, High: high(55)},
			[]string{"Capacity: 50 req/s, the heaviest tier that settled", "shown to ±10 %"}, nil},
		{"a lower bound", &curve.Capacity{Rate: 40, Method: curve.CapacityLowerBound, Low: 40},
			[]string{"Capacity: at least 40 req/s", "none was heavy enough"}, []string{"shown to"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := capacityLine(curve.Analysis{Params: params, Capacity: tt.c}, "req/s")
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(line, n) {
					t.Errorf("%q has %q", line, n)
				}
			}
		})
	}
	if line := capacityLine(curve.Analysis{Params: params}, "req/s"); !strings.HasPrefix(line, "Capacity: none found") {
		t.Errorf("no capacity: %q", line)
	}
}
