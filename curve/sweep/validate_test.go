package sweep_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/field"
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
			"a tier planned to last 10s (tier duration 10s)"},
		{"a window that leaves a second", sweep.Config{Schedule: steady(10), Requests: 30}, time.Second, time.Second, ""},
		{"a ramp: its length is not known here", sweep.Config{Schedule: arrival.Spec{Rate: 10, Burstiness: 1, Ramp: arrival.RampLinear, RampStart: 1, RampEnd: 10}, Requests: 20}, time.Hour, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Settings = result.DefaultSettings()
			cfg.Settings.Measure.Warmup, cfg.Settings.Measure.Cooldown = tt.warmup, tt.cooldown
			var got *field.Error
			for _, err := range cfg.Validate() {
				if fe := field.Of(err); fe != nil && fe.Name == result.FieldWarmup {
					got = fe
				}
			}
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tt.want != "" && (got == nil || !strings.Contains(got.Text(nil), tt.want)):
				t.Errorf("got %v, want a window-warmup error containing %q", got, tt.want)
			}
		})
	}
}

// TestGivenZeroIsAValue: a knob whose zero means "take the default" is checked as a value when
// the caller says it gave it (a flag set to 0): refused where zero is not valid, and a given
// zero budget is no budget. Not given, the same zero takes the default. (cmd re-checked each
// flag for an explicit 0 before.)
func TestGivenZeroIsAValue(t *testing.T) {
	base := sweep.Config{Rates: sweep.Rates{Auto: true}, Settings: result.DefaultSettings()}
	tests := []struct {
		name  string
		given sweep.Given
		field string // "" = valid
	}{
		{"nothing given: defaults", sweep.Given{}, ""},
		{"requests", sweep.Given{Requests: true}, sweep.FieldRequests},
		{"duration", sweep.Given{Duration: true}, sweep.FieldDuration},
		{"tier requests", sweep.Given{TierRequests: true}, sweep.FieldTierRequests},
		{"shortest tier", sweep.Given{MinTierDuration: true}, sweep.FieldMinTierDuration},
		{"longest tier", sweep.Given{MaxTierDuration: true}, sweep.FieldMaxTierDuration},
		{"drain", sweep.Given{Drain: true}, sweep.FieldDrain},
		{"precision", sweep.Given{Precision: true}, sweep.FieldPrecision},
		{"most tiers", sweep.Given{MaxTiers: true}, sweep.FieldMaxTiers},
		{"repeats", sweep.Given{Repeat: true}, sweep.FieldRepeat},
		{"budget 0 is no bound", sweep.Given{Budget: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			cfg.Given = tt.given
			var names []string
			for _, err := range cfg.Validate() {
				fe := field.Of(err)
				if fe == nil {
					t.Fatalf("%v is not a field error", err)
				}
				names = append(names, fe.Name)
			}
			if tt.field == "" && len(names) > 0 || tt.field != "" && (len(names) == 0 || names[0] != tt.field) {
				t.Errorf("Validate() names %q, want %q", names, tt.field)
			}
		})
	}
	if base.NoBudget() {
		t.Error("a budget not given is the default, not none")
	}
	noBudget := base
	noBudget.Given.Budget = true
	if !noBudget.NoBudget() {
		t.Error("a given zero budget is no budget")
	}
	negative := noBudget
	negative.Budget = -time.Minute
	if errs := negative.Validate(); len(errs) != 1 || field.Of(errs[0]).Name != sweep.FieldBudget {
		t.Errorf("a given negative budget: %v, want it refused", errs)
	}
}
