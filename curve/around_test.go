package curve

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestCapacityAround: the interval is stated around the capacity, each end relative to it
// (what the terminal, the page and curve.json's low_relative and high_relative say), never as
// the half-width about the interval's middle: 77.7 to 92.7 around 83.4 is −6.8 % / +11.2 %,
// not ±8.8 %.
func TestCapacityAround(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name         string
		c            Capacity
		below, above float64
		ok           bool
		lowJ, highJ  string // low_relative and high_relative in JSON
	}{
		{"both ends", Capacity{Rate: 83.4, Low: 77.7, High: f(92.7)}, 1 - 77.7/83.4, 92.7/83.4 - 1, true, "-0.068", "0.111"},
		{"no upper end", Capacity{Rate: 83.4, Low: 77.7}, 0, 0, false, "-0.068", "null"},
		{"no lower end", Capacity{Rate: 83.4, High: f(92.7)}, 0, 0, false, "null", "0.111"},
		{"a lower end above the estimate (a confirmation met there)", Capacity{Rate: 50, Low: 52, High: f(55)}, 0, 0, false, "0.04", "0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			below, above, ok := tt.c.Around()
			if ok != tt.ok || math.Abs(below-tt.below) > 1e-12 || math.Abs(above-tt.above) > 1e-12 {
				t.Errorf("Around = %v, %v, %v; want %v, %v, %v", below, above, ok, tt.below, tt.above, tt.ok)
			}
			c := tt.c
			c.relate()
			b, err := json.Marshal(&c)
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]string{"low_relative": tt.lowJ, "high_relative": tt.highJ} {
				if !strings.Contains(string(b), `"`+key+`":`+want) {
					t.Errorf("%s: want %s…: %s", key, want, b)
				}
			}
		})
	}
}
