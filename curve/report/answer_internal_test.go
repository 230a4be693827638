package report

import (
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestCapacityLine: the answer's first line says what the capacity is, how it was found, and
// what its interval shows, in words, each end relative to the stated capacity: 77.7 to 92.7
// around 83.4 is −6.8 % / +11.2 % (it read "±8.8 %", the half-width about the interval's middle,
// which is not where the capacity is).
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
			[]string{"Capacity: about 83.4 req/s", "crosses 99 %", "up to 77.7 req/s (−6.8 %)", "from 92.7 req/s (+11.2 %)"}, []string{"±"}},
		{"interpolated, no lower end", &curve.Capacity{Rate: 83.4, Method: curve.CapacityInterpolated, High: high(92.7)},
			[]string{"no tier met the target with confidence yet", "from 92.7 req/s"}, []string{"%)"}},
		{"interpolated, no upper end", &curve.Capacity{Rate: 83.4, Method: curve.CapacityInterpolated, Low: 77.7},
			[]string{"up to 77.7 req/s; no tier missed it with confidence"}, []string{"%)"}},
		{"at a tier", &curve.Capacity{Rate: 50, Method: curve.CapacityAtTier, Low: 45, High: high(55)},
			[]string{"Capacity: 50 req/s, the heaviest tier that settled", "up to 45 req/s (−10 %)", "from 55 req/s (+10 %)"}, nil},
		{"an interval that does not hold the capacity: its ends alone", &curve.Capacity{Rate: 50, Method: curve.CapacityAtTier, Low: 52, High: high(55)},
			[]string{"up to 52 req/s and misses it with confidence from 55 req/s"}, []string{"%)"}},
		{"a lower bound", &curve.Capacity{Rate: 40, Method: curve.CapacityLowerBound, Low: 40},
			[]string{"Capacity: at least 40 req/s", "none was heavy enough"}, []string{"%)"}},
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

// TestThePageSaysWhyVerified: the page's operating point states the analysis's own reason
// beside its badge, and the tier table says of an undecided confirmation that a heavier tier
// verified the point. Before, the "verified" badge sat beside "not yet enough requests to
// claim 99 %" and "(uncertain)" with no word of the heavier tier.
func TestThePageSaysWhyVerified(t *testing.T) {
	five := 5
	op := &curve.OperatingPoint{Rate: 4.79, VerifiedBy: curve.VerifiedByHeavierTier, HeavierTier: &five,
		Verification: "verified: tier 5 met the target with confidence at 5.43 req/s, a heavier load; confirmation tier 7 at the operating point agrees (too few requests to verify it on its own)",
		Confirmation: &curve.Confirmation{Tier: 7, NominalRate: 4.79, AtThisPoint: true, Share: 1, ShareLo: 0.944, ShareHi: 1, Verdict: curve.VerdictUncertain}}
	a := curve.Analysis{Params: curve.DefaultParams(), OperatingPoint: op}
	f := operatingFact(a, "req/s")
	if f.Badge != "verified" || !strings.Contains(f.Detail, op.Verification) {
		t.Errorf("fact %+v", f)
	}
	if got := tierVerdict(a, records.Tier{Tier: 7, Role: records.RoleConfirm}); got != "not yet enough requests for a 99 % claim; the operating point is verified by the heavier tier 5" {
		t.Errorf("the confirmation's verdict reads %q", got)
	}
	op.VerifiedBy, op.HeavierTier, op.Verification = "", nil, "not verified yet: confirmation tier 7 was 100 % compliant"
	if f := operatingFact(a, "req/s"); f.Badge != "NOT verified" || !strings.Contains(f.Detail, "not verified yet") {
		t.Errorf("fact %+v", f)
	}
}

// TestClientLine: the answer says what the client's own delays may have done to the curve's
// tiers: the largest p99 of its writing (inside the latencies) and of its reading (not counted),
// the misses its writing may have made of all the tiers' misses, and those timing at the socket
// took out; the probes are left out, and without socket timing nothing is said.
func TestClientLine(t *testing.T) {
	tier := func(role records.Role, requests, compliant int, c *measure.ClientDelays) result.TierResult {
		return result.TierResult{Tier: records.Tier{Role: role},
			Summary: measure.Summary{Steady: &measure.Steady{Requests: requests, Compliant: compliant, Client: c}}}
	}
	for _, tc := range []struct {
		name  string
		tiers []result.TierResult
		want  []string
		not   []string
	}{
		{"no socket timing", []result.TierResult{tier(records.RoleTier, 1000, 990, nil)}, nil, nil},
		{"the probes only", []result.TierResult{tier(records.RoleProbe, 100, 0, &measure.ClientDelays{Requests: 100, SendP99: 40})}, nil, nil},
		{"two tiers, no miss the client's", []result.TierResult{
			tier(records.RoleProbe, 100, 0, &measure.ClientDelays{Requests: 100, SendP99: 40, ReadP99: 90, SendMisses: 7}),
			tier(records.RoleTier, 1000, 990, &measure.ClientDelays{Requests: 1000, SendP99: 0.5, ReadP99: 3.25}),
			tier(records.RoleConfirm, 2000, 1995, &measure.ClientDelays{Requests: 2000, SendP99: 1.5, ReadP99: 2}),
		}, []string{"in the 2 tiers of the curve", "p99 at most 1.50 ms from sent", "none of their 15 misses", "3.25 ms from a first token's arrival"}, []string{"more would have missed", "40", "90"}},
		{"no miss at all", []result.TierResult{
			tier(records.RoleTier, 1000, 1000, &measure.ClientDelays{Requests: 1000, SendP99: 1.3, ReadP99: 4}),
		}, []string{"(inside TTFT and E2EL: they had no miss)"}, []string{"0 misses"}},
		{"misses it may have made and took out", []result.TierResult{
			tier(records.RoleTier, 1000, 980, &measure.ClientDelays{Requests: 1000, SendP99: 12, ReadP99: 30, SendMisses: 3, ReadMisses: 4}),
		}, []string{"in the 1 tier of the curve", "at most 3 of their 20 misses", "timed when read, 4 more would have missed"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := clientLine(&result.Result{Tiers: tc.tiers})
			if tc.want == nil {
				if line != "" {
					t.Errorf("said %q, want nothing", line)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(line, n) {
					t.Errorf("%q has %q", line, n)
				}
			}
		})
	}
}

// TestCPUClause: the Client line ends with the most CPU the client took in a tier of the curve
// (the probes left out) and how busy the machine's CPUs were at most, and says when the
// embedded deployment's CPU is in the client's.
func TestCPUClause(t *testing.T) {
	tier := func(role records.Role, c *records.TierCPU) result.TierResult {
		return result.TierResult{Tier: records.Tier{Role: role}, Summary: measure.Summary{CPU: c}}
	}
	for _, tc := range []struct {
		name  string
		tiers []result.TierResult
		want  string
	}{
		{"none read", []result.TierResult{tier(records.RoleTier, nil)}, ""},
		{"the probes only", []result.TierResult{tier(records.RoleProbe, &records.TierCPU{WallS: 10, ProcessS: 5})}, ""},
		{"two tiers", []result.TierResult{
			tier(records.RoleProbe, &records.TierCPU{WallS: 10, ProcessS: 9, MachineCPUs: 2, MachineBusy: 1}),
			tier(records.RoleTier, &records.TierCPU{WallS: 100, ProcessS: 0.9, MachineCPUs: 2, MachineBusy: 0.54}),
			tier(records.RoleConfirm, &records.TierCPU{WallS: 200, ProcessS: 1, MachineCPUs: 2, MachineBusy: 0.5}),
		}, " Its CPU: at most 0.9 % of one core in a tier; the machine's 2 CPUs at most 54.0 % busy."},
		{"the embedded deployment, no /proc/stat", []result.TierResult{
			tier(records.RoleTier, &records.TierCPU{WallS: 10, ProcessS: 2.5, InProcessTarget: true}),
		}, " Its CPU: at most 25.0 % of one core in a tier (the embedded deployment's included)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cpuClause(&result.Result{Tiers: tc.tiers}); got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestOperatingLineNamesThePoolThatVerified: when the capacity's lower end was set by a pool
// (its tier and every stable tier above it up to the estimate), the operating point verified
// by it says the pool met the target, with its share and bound, not its lightest tier, which
// alone may not have decided. The README's first command showed "met the target with confidence
// (tiers 3+8)" above a table whose row 3+8 read "not yet enough requests for a 99 % claim".
func TestOperatingLineNamesThePoolThatVerified(t *testing.T) {
	three, high := 3, 93.6
	c := &curve.Capacity{Rate: 85.6, Method: curve.CapacityInterpolated, Low: 78.4, LowTier: &three, High: &high}
	op := &curve.OperatingPoint{Rate: 68.5, VerifiedBy: curve.VerifiedByHeavierTier, HeavierTier: &three}
	a := curve.Analysis{Params: curve.DefaultParams(), Capacity: c, OperatingPoint: op,
		Points: []curve.PointVerdict{{Tier: 3, Pooled: []int{3, 8}}}}
	if line := operatingLine(a, op, "req/s"); !strings.Contains(line, "met the target with confidence (tiers 3+8)") {
		t.Errorf("a lower end from one point: %q", line)
	}
	c.LowPool = &curve.VerifyingPool{Tiers: []int{3, 6}, Share: 0.9971, ShareLo: 0.9912, From: 78.4, To: 83.5}
	line := operatingLine(a, op, "req/s")
	for _, w := range []string{"a heavier load, 78.4 req/s, meets the target with confidence", "tiers 3+8, 6, pooled: 99.71 % compliant, at least 99.12 %"} {
		if !strings.Contains(line, w) {
			t.Errorf("%q lacks %q", line, w)
		}
	}
	if strings.Contains(line, "(tiers 3+8)") || strings.Contains(line, "met the target") {
		t.Errorf("%q names the pool's lightest point as if it alone met the target", line)
	}
	// The tier table's confirmation row says the same.
	op.Confirmation = &curve.Confirmation{Tier: 9, NominalRate: 68.5, AtThisPoint: true, Share: 1, ShareLo: 0.98, ShareHi: 1, Verdict: curve.VerdictUncertain}
	if got := tierVerdict(a, records.Tier{Tier: 9, Role: records.RoleConfirm}); !strings.HasSuffix(got, "; the operating point is verified by the heavier tiers 3+8, 6, pooled") {
		t.Errorf("the confirmation's verdict reads %q", got)
	}
}

// TestOperatingLineSaysHowMuchWouldDecide: an operating point left unverified by a confirmation
// that did not decide says how many requests there, and how long at its rate, would decide it
// at the share and clustering it showed; without that figure, only that more would.
func TestOperatingLineSaysHowMuchWouldDecide(t *testing.T) {
	c := &curve.Capacity{Rate: 6.94, Method: curve.CapacityInterpolated, Low: 0}
	cf := &curve.Confirmation{Tier: 9, NominalRate: 5.55, AtThisPoint: true, Rate: 5.54, Share: 1, ShareLo: 0.9576, ShareHi: 1,
		EffectiveRequests: 87, Verdict: curve.VerdictUncertain, RequestsToDecide: 21787}
	op := &curve.OperatingPoint{Rate: 5.55, Confirmation: cf}
	a := curve.Analysis{Params: curve.DefaultParams(), Capacity: c, OperatingPoint: op}
	want := "about 22,000 requests there (1h06 at 5.54 req/s: a longer --budget with a longer --max-tier-duration, whose triple bounds a confirmation, or loadcurve run at this rate for that long) would decide"
	if line := operatingLine(a, op, "req/s"); !strings.Contains(line, want) {
		t.Errorf("%q lacks %q", line, want)
	}
	cf.RequestsToDecide = 0
	if line := operatingLine(a, op, "req/s"); !strings.Contains(line, "; more requests (a longer --budget) would decide") {
		t.Errorf("without the figure: %q", line)
	}
}

func TestMinutes(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{10 * time.Second, "1 min"}, {7 * time.Minute, "7 min"}, {time.Hour, "1h00"}, {66 * time.Minute, "1h06"}, {150 * time.Minute, "2h30"}} {
		if got := minutes(tc.d); got != tc.want {
			t.Errorf("minutes(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestAbout(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{{21787.4, "22,000"}, {380.3, "380"}, {1234567, "1,200,000"}, {9.6, "10"}, {99.5, "100"}, {0.4, "0"}} {
		if got := about(tc.x); got != tc.want {
			t.Errorf("about(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}
