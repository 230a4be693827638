package sweep_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/field"
	"github.com/loadcurve/loadcurve/sweep"
)

// TestValidateRefusesAWindowThatLeavesNothing: a fixed steady-state window as long as a tier whose
// length is known before it runs is refused, naming the window's field; a shorter one, or a tier
// whose length is not known in advance (a ramp), passes.
func TestValidateRefusesAWindowThatLeavesNothing(t *testing.T) {
	steady := func(rate float64) arrival.Spec { return arrival.Spec{Rate: rate, Burstiness: 1} }
	tests := []struct {
		name     string
		cfg      sweep.Config
		warmup   time.Duration
		cooldown time.Duration
		want     string // "" = valid
	}{
		{"20 requests at 10 req/s, a 1h warm-up", sweep.Config{Schedule: steady(10), Requests: 20}, time.Hour, 0,
			"would leave nothing of a tier planned to last 2s (20 requests at 10 req/s, about 2s)"},
		{"a burst and a 1s cool-down", sweep.Config{Schedule: steady(math.Inf(1)), Requests: 20}, 0, time.Second,
			"all planned at once"},
		{"fixed 10s sweep tiers, 6s + 5s", sweep.Config{Rates: sweep.Rates{List: []float64{2, 4}}, Duration: 10 * time.Second}, 6 * time.Second, 5 * time.Second,
			"a tier planned to last 10s (--duration 10s)"},
		{"a window that leaves a second", sweep.Config{Schedule: steady(10), Requests: 30}, time.Second, time.Second, ""},
		{"a ramp: its length is not known here", sweep.Config{Schedule: arrival.Spec{Rate: 10, Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 1, RampEnd: 10}, Requests: 20}, time.Hour, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Settings = sweep.DefaultSettings()
			cfg.Settings.Measure.Warmup, cfg.Settings.Measure.Cooldown = tt.warmup, tt.cooldown
			var got *field.Error
			for _, err := range cfg.Validate() {
				if fe := field.Of(err); fe != nil && fe.Name == "window-warmup" {
					got = fe
				}
			}
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tt.want != "" && (got == nil || !strings.Contains(got.Msg, tt.want)):
				t.Errorf("got %v, want a window-warmup error containing %q", got, tt.want)
			}
		})
	}
}
