package plan

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// given applies the texts to the params, as a user giving them.
func given(t *testing.T, ps []param.Param, texts map[string]string) {
	t.Helper()
	errs := param.Apply(ps, func(name string) ([]string, bool) {
		if v, ok := texts[name]; ok {
			return []string{v}, true
		}
		return nil, false
	})
	if len(errs) > 0 {
		t.Fatalf("apply %v: %v", texts, errs)
	}
}

// TestSettingsForecastSource: only the forecast inputs given make the source, so that none,
// one and several are told apart; an empty profile given counts as given.
func TestSettingsForecastSource(t *testing.T) {
	tests := []struct {
		name  string
		texts map[string]string
		want  error
		peak  float64
	}{
		{"none", nil, ErrNoForecast, 0},
		{"peak", map[string]string{FieldPeak: "12.5"}, nil, 12.5},
		{"peak and profile", map[string]string{FieldPeak: "1", FieldProfile: "x.csv"}, ErrManyForecasts, 0},
		{"empty profile", map[string]string{FieldProfile: ""}, ErrNoForecast, 0},
		{"peak and trace", map[string]string{FieldPeak: "1", FieldProfileTrace: "azure:x"}, ErrManyForecasts, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSettings()
			ps := s.Params()
			given(t, ps, tt.texts)
			f, err := s.ForecastSource(ps).Read()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if err == nil && f.Peak() != tt.peak {
				t.Errorf("peak %v, want %v", f.Peak(), tt.peak)
			}
		})
	}
}

// TestSettingsCostsAndOptions: each side's hourly cost is required > 0 and named by its own
// input; the options carry what was given, the month's default when nothing was.
func TestSettingsCostsAndOptions(t *testing.T) {
	s := DefaultSettings()
	ps := s.Params()
	given(t, ps, map[string]string{FieldCostPerHourA: "2.5", FieldOneTimeCostA: "100", FieldScaleUpLag: "5m", FieldCurrency: "EUR"})
	if h, o, err := s.Costs(0); err != nil || h != 2.5 || o != 100 {
		t.Errorf("A's costs %v, %v, %v; want 2.5, 100, nil", h, o, err)
	}
	_, _, err := s.Costs(1)
	if fe := field.Of(err); fe == nil || fe.Name != FieldCostPerHourB || !strings.Contains(fe.Msg, "B per hour is required (> 0), got 0") {
		t.Errorf("B's cost not given: %v", err)
	}
	o := s.Options(nil)
	if o.ScaleUpLag != 5*time.Minute || o.HoursPerMonth != DefaultHoursPerMonth || o.Currency != "EUR" {
		t.Errorf("options %+v", o)
	}
}

// TestRehearsalTrial: bounds not given are left to TrialConfig's defaults, given ones are
// checked, and the balancer is the sweep's unless one was given.
func TestRehearsalTrial(t *testing.T) {
	if FieldTierRequests != sweep.FieldTierRequests || FieldMaxTierDuration != sweep.FieldMaxTierDuration {
		t.Fatalf("the rehearsal's bounds are named %q and %q, the sweep's %q and %q: one flag must set either",
			FieldTierRequests, FieldMaxTierDuration, sweep.FieldTierRequests, sweep.FieldMaxTierDuration)
	}
	tests := []struct {
		name    string
		texts   map[string]string
		sweeps  string
		balance string
		tiers   int
		longest time.Duration
		errs    []string // the inputs of the errors, in order
	}{
		{"defaults", nil, sim.BalanceRandom, sim.BalanceRandom, 0, 0, nil},
		{"given", map[string]string{FieldBalance: sim.BalanceRoundRobin, sweep.FieldTierRequests: "300", sweep.FieldMaxTierDuration: "20s"},
			sim.BalanceRandom, sim.BalanceRoundRobin, 300, 20 * time.Second, nil},
		{"all bad", map[string]string{FieldBalance: "x", sweep.FieldTierRequests: "0", sweep.FieldMaxTierDuration: "-1s"},
			sim.BalanceRandom, "x", 0, -time.Second, []string{FieldBalance, sweep.FieldTierRequests, sweep.FieldMaxTierDuration}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := DefaultRehearsal(RehearsalDefaults{Policies: sim.BalancePolicies(), TierRequests: sweep.TrialTierRequests, MaxTierDuration: sweep.TrialMaxTierDuration})
			ps := r.Params()
			given(t, ps, tt.texts)
			tc, balance, errs := r.Trial(ps, "A", 40, tt.sweeps)
			if balance != tt.balance || tc.TierRequests != tt.tiers || tc.MaxTierDuration != tt.longest || tc.Deployment != "A" || tc.Peak != 40 {
				t.Errorf("trial %+v, balance %q", tc, balance)
			}
			var names []string
			for _, err := range errs {
				names = append(names, field.Of(err).Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.errs, ",") {
				t.Errorf("errors %v, want on %v", errs, tt.errs)
			}
			if len(errs) == 3 {
				// Sentences: the input, then the message after a space when it opens with the
				// value given, after a colon otherwise.
				flag := func(n string) string { return "--" + n }
				want := []string{`--balance "x": want ` + strings.Join(sim.BalancePolicies(), " or "), "--" + sweep.FieldTierRequests + ": must be ≥ 1, got 0",
					"--" + sweep.FieldMaxTierDuration + ": must be > 0, got -1s"}
				for i, err := range errs {
					if got := field.Of(err).Render(flag); got != want[i] {
						t.Errorf("%q, want %q", got, want[i])
					}
				}
			}
		})
	}
}
