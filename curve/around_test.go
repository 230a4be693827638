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

// TestVerificationSaysWhy: every operating point says whether it is verified and why, in the
// one sentence the terminal, the page and a plan state; a point verified by a heavier tier
// whose own confirmation could not decide says both, so that "verified" never sits beside an
// unexplained "uncertain".
func TestVerificationSaysWhy(t *testing.T) {
	p := DefaultParams()
	five := 5
	cf := func(v Verdict, share float64, at bool) *Confirmation {
		return &Confirmation{Tier: 7, NominalRate: 4.79, AtThisPoint: at, Share: share, ShareLo: share - 0.05, ShareHi: 1,
			EffectiveRequests: 65, Verdict: v, Reason: "its reason", ConfidenceReached: 0.8}
	}
	tests := []struct {
		name string
		op   OperatingPoint
		want []string
	}{
		{"by a heavier tier, no confirmation", OperatingPoint{VerifiedBy: VerifiedByHeavierTier, HeavierTier: &five},
			[]string{"verified: tier 5 met the target with confidence at 5.43 req/s, a heavier load"}},
		{"by a heavier tier, its confirmation undecided", OperatingPoint{VerifiedBy: VerifiedByHeavierTier, HeavierTier: &five, Confirmation: cf(VerdictUncertain, 1, true)},
			[]string{"verified: tier 5", "confirmation tier 7 at the operating point agrees", "too few requests to verify it on its own"}},
		{"by its confirmation", OperatingPoint{VerifiedBy: VerifiedByConfirmation, Confirmation: cf(VerdictMeets, 1, true)},
			[]string{"verified by confirmation tier 7: its reason"}},
		{"none ran", OperatingPoint{}, []string{"not verified: no confirmation tier ran at it"}},
		{"another point's", OperatingPoint{Confirmation: cf(VerdictMeets, 1, false)}, []string{"not verified: the confirmation tier 7 ran at 4.79 req/s, another operating point"}},
		{"not yet", OperatingPoint{Confirmation: cf(VerdictUncertain, 0.999, true)},
			[]string{"not verified yet: confirmation tier 7 was 99.9 % compliant", "at 80 % confidence, short of 95 %", "a longer confirmation would decide"}},
		{"not yet, with what would decide", OperatingPoint{Confirmation: func() *Confirmation { c := cf(VerdictUncertain, 1, true); c.RequestsToDecide = 21787; return c }()},
			[]string{"a longer confirmation would decide (about 22000 requests there, at the share and the clustering it showed)"}},
		{"it failed", OperatingPoint{Confirmation: cf(VerdictFails, 0.9, true)}, []string{"NOT verified: confirmation tier 7 fails: its reason"}},
		{"not judged", OperatingPoint{Confirmation: cf(VerdictExcluded, 1, true)}, []string{"NOT verified: confirmation tier 7 excluded: its reason"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := verification(&tt.op, 5.43, "tier 5", p, "req/s")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			if verified := tt.op.Verified(); verified != strings.HasPrefix(got, "verified") {
				t.Errorf("Verified() = %v, yet it says %q", verified, got)
			}
		})
	}
}
