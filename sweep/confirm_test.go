package sweep_test

import (
	"math"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/sweep"
)

// TestConfirmRequests: the confirmation is sized by the Wilson bound at the clustering the search
// measured in the stable tiers that met the target; probes, failing and unstable tiers say
// nothing about it.
func TestConfirmRequests(t *testing.T) {
	tier := func(role records.Role, share, f float64, stable bool) measure.Summary {
		return measure.Summary{Role: role, Steady: &measure.Steady{Stationary: stable, CompliantShare: share, VarianceFactor: f}}
	}
	p := curve.DefaultParams() // 99 % at 95 % confidence
	z2 := 1.959963984540054 * 1.959963984540054
	tests := []struct {
		name   string
		search []measure.Summary
		want   float64
	}{
		{"none ran", nil, 0},
		{"only a probe and a failing tier", []measure.Summary{tier(records.RoleProbe, 1, 30, true), tier(records.RoleTier, 0.9, 40, true)}, 0},
		{"one meeting tier, f = 10", []measure.Summary{tier(records.RoleTier, 1, 10, true)}, sweep.ConfirmMargin * z2 * 10 * 99},
		{"the median f of the meeting tiers", []measure.Summary{tier(records.RoleTier, 1, 4, true), tier(records.RoleTier, 0.995, 12, true),
			tier(records.RoleTier, 1, 7, true), tier(records.RoleTier, 1, 50, false), tier(records.RoleConfirm, 1, 60, true)}, sweep.ConfirmMargin * z2 * 7 * 99},
		{"of two, the larger", []measure.Summary{tier(records.RoleTier, 1, 4, true), tier(records.RoleTier, 0.995, 12, true)}, sweep.ConfirmMargin * z2 * 12 * 99},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sweep.ConfirmRequests(tt.search, p)
			if math.Abs(got-tt.want) > 1e-9*math.Max(1, tt.want) {
				t.Errorf("ConfirmRequests = %v, want %v", got, tt.want)
			}
		})
	}
	// With that many requests and no miss, the Wilson lower bound at the measured f clears the
	// target: the confirmation can verify.
	n := sweep.ConfirmRequests([]measure.Summary{tier(records.RoleTier, 1, 10, true)}, p)
	if lo, _ := curve.WilsonN(1, n/10, p.Confidence); lo < p.TargetShare {
		t.Errorf("%.0f requests at f = 10 give a lower bound %.4f, below the target", n, lo)
	}
}
