package plan_test

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/plan"
)

// A is the large deployment: 100 an hour for 10 req/s a replica. B is the small one: 30 an
// hour for 2 req/s. Per compliant token, what decides is cost per hour / compliant tokens per
// request times the replica-hours; the requests, the same for both, cancel.
var (
	bigA   = plan.Deployment{Name: "A", OperatingRate: 10, CompliantTokensPerRequest: 100, RawTokensPerRequest: 100, CostPerHour: 100}
	smallB = plan.Deployment{Name: "B", OperatingRate: 2, CompliantTokensPerRequest: 80, RawTokensPerRequest: 100, CostPerHour: 30}
)

func breakEvens(peaks []float64, names ...string) []plan.BreakEven {
	var out []plan.BreakEven
	for i, p := range peaks {
		out = append(out, plan.BreakEven{PeakRate: p, Below: names[i], Above: names[i+1]})
	}
	return out
}

func TestCompareBreakEven(t *testing.T) {
	equalTokens := smallB
	equalTokens.CompliantTokensPerRequest = 100
	halfDay := plan.Forecast{Period: plan.Day, Points: []plan.Point{pt(0, 10), pt(12*time.Hour, 5)}}
	cases := []struct {
		name      string
		a, b      plan.Deployment
		f         plan.Forecast
		lag       time.Duration
		following []plan.BreakEven
		static    []plan.BreakEven
		summary   string
		cheaper   string // at the forecast as given, following
	}{
		// Flat forecast at peak p (following = static). Per compliant token, A costs
		// 100/100 = 1 per replica-hour and B 30/80 = 0.375, so D = ⌈p/10⌉ − 0.375·⌈p/2⌉:
		//   p ≤ 2: 1 − 0.375 > 0, B;  2 < p ≤ 4: 1 − 0.75 > 0, B;  4 < p ≤ 6: 1 − 1.125 < 0, A;
		//   then A for good: per req/s A costs 1/10 = 0.1, B 0.375/2 = 0.1875, and the rounding
		//   (at most 1 replica-hour of A an hour) stops mattering once 0.0875·p > 1, p > 11.4:
		//   (6,8] 1 − 1.5, (8,10] 1 − 1.875, (10,12] 2 − 2.25 are all < 0.
		// B is cheaper up to 4 req/s peak, A above. At 10 req/s: A 100 vs B 150 an hour.
		{"B cheaper at low load, A at high load", bigA, smallB, plan.PeakForecast(10), 0,
			breakEvens([]float64{4}, "B", "A"), breakEvens([]float64{4}, "B", "A"),
			"B is cheaper up to 4 req/s peak, A above", "A"},
		// With equal tokens B costs 30/100 = 0.3 a replica-hour: D = ⌈p/10⌉ − 0.3·⌈p/2⌉:
		//   (0,2] 0.7 B, (2,4] 0.4 B, (4,6] 0.1 B, (6,8] −0.2 A, (8,10] −0.5 A,
		//   (10,12] 2 − 1.8 = 0.2 B again, (12,14] 2 − 2.1 A, and A for good above 20
		//   (0.1 − 0.15 per req/s; 0.05·p > 1): (14,20] ≤ 2 − 2.4, (20,22] 3 − 3.3.
		// A grid of forecast levels that skips (10, 12] misses two of the three reversals.
		{"reversal and back", bigA, equalTokens, plan.PeakForecast(10), 0,
			breakEvens([]float64{6, 10, 12}, "B", "A", "B", "A"), breakEvens([]float64{6, 10, 12}, "B", "A", "B", "A"),
			"B is cheaper up to 6 req/s peak, A up to 10, B up to 12, A above", "A"},
		// Half the day at p, half at p/2. Static sizes for p all day: break-even 4 as above.
		// Following, replica-hours over 12 h each: A ⌈p/10⌉ + ⌈p/20⌉, B ⌈p/2⌉ + ⌈p/4⌉:
		//   D/12 = ⌈p/10⌉ + ⌈p/20⌉ − 0.375·(⌈p/2⌉ + ⌈p/4⌉):
		//   (0,2] 2 − 0.75, (2,4] 2 − 1.125, (4,6] 2 − 1.875 = 0.125: B;
		//   (6,8] 2 − 2.25 < 0: A; (8,10] 2 − 3, (10,12] 3 − 3.375, (12,14] 3 − 4.125, (14,16] 3 − 4.5: A,
		//   and A for good above 24 / (18 · 0.0875) = 15.2 req/s peak.
		// So following the profile moves the break-even from 4 to 6 req/s peak: B's small
		// replicas track the half-load hours closely, A's large ones idle.
		{"following moves the break-even", bigA, smallB, halfDay, 0,
			breakEvens([]float64{6}, "B", "A"), breakEvens([]float64{4}, "B", "A"),
			"B is cheaper up to 6 req/s peak, A above", "A"},
		// The same forecast scaled down to 5 req/s peak: B is cheaper for it.
		{"B cheaper for the forecast", bigA, smallB, halfDay.Scale(0.5), 0,
			breakEvens([]float64{6}, "B", "A"), breakEvens([]float64{4}, "B", "A"),
			"B is cheaper up to 6 req/s peak, A above", "B"},
		// A 12 h scale-up lag: the replicas for p start at 00:00 − 12h = 12:00 the day before,
		// so both sizes run for p all day: static and following agree.
		{"a long lag", bigA, smallB, halfDay, 12 * time.Hour,
			breakEvens([]float64{4}, "B", "A"), breakEvens([]float64{4}, "B", "A"),
			"B is cheaper up to 4 req/s peak, A above", "A"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmp, err := plan.CompareDeployments(c.a, c.b, c.f, plan.Options{ScaleUpLag: c.lag})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []struct {
				v    plan.Verdict
				want []plan.BreakEven
			}{{cmp.Following, c.following}, {cmp.Static, c.static}} {
				got := slices.Clone(v.v.BreakEvens)
				for i := range got {
					if want := got[i].PeakRate / c.f.Peak(); !near(got[i].Scale, want) {
						t.Errorf("%s: scale %v, want %v", v.v.Basis, got[i].Scale, want)
					}
					got[i].Scale = 0
				}
				if !reflect.DeepEqual(got, v.want) {
					t.Errorf("%s break-evens %+v, want %+v", v.v.Basis, got, v.want)
				}
				if !v.v.Exhaustive {
					t.Errorf("%s: not exhaustive (searched to %v)", v.v.Basis, v.v.SearchedUpToPeak)
				}
			}
			if cmp.Following.Summary != c.summary {
				t.Errorf("summary %q, want %q", cmp.Following.Summary, c.summary)
			}
			if cmp.Following.Cheaper != c.cheaper {
				t.Errorf("cheaper %q, want %q", cmp.Following.Cheaper, c.cheaper)
			}
			// Each break-even, checked with Plan on either side of it.
			for _, be := range cmp.Following.BreakEvens {
				for _, side := range []struct {
					peak float64
					want string
				}{{be.PeakRate, be.Below}, {be.PeakRate * (1 + 1e-6), be.Above}} {
					f := c.f.Scale(side.peak / c.f.Peak())
					ra, _ := plan.Plan(c.a, f, plan.Options{ScaleUpLag: c.lag})
					rb, _ := plan.Plan(c.b, f, plan.Options{ScaleUpLag: c.lag})
					got := "A"
					if rb.Following.CostPerMillionEffectiveTokens < ra.Following.CostPerMillionEffectiveTokens {
						got = "B"
					}
					if got != side.want {
						t.Errorf("at peak %v: Plan says %s is cheaper, the break-even %+v says %s", f.Peak(), got, be, side.want)
					}
				}
			}
		})
	}
}

// The flat case in full: the verdict's figures and the curve.
func TestCompareFigures(t *testing.T) {
	a, b := bigA, smallB
	a.OneTimeCost, b.OneTimeCost = 50_000, 0
	cmp, err := plan.CompareDeployments(a, b, plan.PeakForecast(10), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A: 1 replica, 100 × 730 = 73,000 a month; B: 5 replicas, 150 × 730 = 109,500.
	// Tokens a month: 10 × 3600 × 730 = 26.28 M requests; A 100 each, B 80.
	// Per M effective: A 73,000 / 2,628 = 27.78, B 109,500 / 2,102.4 = 52.08.
	v := cmp.Following
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"A per month", cmp.A.Following.CostPerMonth, 73_000},
		{"B per month", cmp.B.Following.CostPerMonth, 109_500},
		{"difference per month", v.CostPerMonthDifference, 36_500},
		{"A per M", cmp.A.Following.CostPerMillionEffectiveTokens, 73_000 / 2_628.0},
		{"B per M", cmp.B.Following.CostPerMillionEffectiveTokens, 109_500 / 2_102.4},
		{"difference per M", v.CostPerMillionEffectiveDifference, 109_500/2_102.4 - 73_000/2_628.0},
		{"unit cost change", v.UnitCostChange, (109_500/2_102.4)/(73_000/2_628.0) - 1},
		// A costs 50,000 more once, so the payback judges the move from B to A, at B's effective
		// volume (2,102.4 M tokens a month): B pays 109,500 for it, A 27.78 × 2,102.4 = 58,400,
		// a net saving of 51,100 a month (package cost's rule), recovered in 0.98 months.
		{"net savings", v.NetSavingsPerMonth, 109_500 - 73_000/2_628.0*2_102.4},
		{"payback", *v.PaybackMonths, 50_000 / (109_500 - 73_000/2_628.0*2_102.4)},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if v.PaybackFrom != "B" || v.PaybackTo != "A" ||
		v.PaybackNote != "the one-time investment of 50,000.00 is recovered in 0.98 periods of 730 h (net savings 51,100.00 per period)" {
		t.Errorf("payback from %s to %s: %q", v.PaybackFrom, v.PaybackTo, v.PaybackNote)
	}
	if len(cmp.Curve) != 121 || !near(cmp.Curve[0].PeakRate, 0.1) || !near(cmp.Curve[120].PeakRate, 1000) {
		t.Fatalf("curve: %d points from %v to %v", len(cmp.Curve), cmp.Curve[0].PeakRate, cmp.Curve[len(cmp.Curve)-1].PeakRate)
	}
	for _, p := range cmp.Curve {
		// B is cheaper per effective token exactly up to the break-even at 4 req/s peak.
		if (p.FollowingB < p.FollowingA) != (p.PeakRate <= 4) {
			t.Errorf("at %v req/s peak: A %v, B %v", p.PeakRate, p.FollowingA, p.FollowingB)
		}
		if p.FollowingA != p.StaticA || p.FollowingB != p.StaticB {
			t.Errorf("flat forecast: following and static differ at %v", p.PeakRate)
		}
	}
	if !strings.Contains(strings.Join(cmp.Notes, "\n"), "A delivers 100 compliant tokens per request and B 80") {
		t.Errorf("notes %q", cmp.Notes)
	}
}

func TestCompareSummaries(t *testing.T) {
	// A dominates: cheaper per hour and carrying more.
	a := plan.Deployment{Name: "fast", OperatingRate: 10, CompliantTokensPerRequest: 100, RawTokensPerRequest: 100, CostPerHour: 10}
	b := plan.Deployment{Name: "slow", OperatingRate: 5, CompliantTokensPerRequest: 100, RawTokensPerRequest: 100, CostPerHour: 20}
	cmp, err := plan.CompareDeployments(a, b, plan.PeakForecast(10), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cmp.Following.Summary, "fast is cheaper per effective token at every peak"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	// Identical deployments under two names: equal everywhere, and no bound on the search.
	twin := a
	twin.Name = "twin"
	cmp, err = plan.CompareDeployments(a, twin, plan.PeakForecast(10), plan.Options{MaxScale: 10})
	if err != nil {
		t.Fatal(err)
	}
	v := cmp.Following
	if v.Cheaper != "" || len(v.BreakEvens) != 0 || v.Exhaustive || v.SearchedUpToPeak != 100 ||
		v.Summary != "both cost the same per effective token at every peak (searched up to 100 req/s peak)" {
		t.Errorf("twins: %+v", v)
	}
	if v.PaybackMonths != nil || v.PaybackNote != "no one-time investment given; moving from fast to twin would not save: net savings per period are zero because twin costs the same per effective token as fast" {
		t.Errorf("payback %v %q", v.PaybackMonths, v.PaybackNote)
	}
}

func TestCompareErrors(t *testing.T) {
	bad := bigA
	bad.OperatingRate = math.Inf(1)
	for _, c := range []struct {
		name string
		a, b plan.Deployment
		f    plan.Forecast
		says []string
	}{
		{"same names", bigA, bigA, plan.PeakForecast(1), []string{`compare: both deployments are named "A"`}},
		{"unnamed get A and B", plan.Deployment{OperatingRate: 1}, plan.Deployment{OperatingRate: 1}, plan.PeakForecast(1),
			[]string{`deployment "A": cost-per-hour`, `deployment "B": cost-per-hour`}},
		{"both wrong", bad, smallB, plan.Forecast{}, []string{`deployment "A": operating-rate: +Inf`, "forecast: no points"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := plan.CompareDeployments(c.a, c.b, c.f, plan.Options{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
		})
	}
}

// TestCompareNotesClaimOnlyWhatWasChecked: the notes say the two were measured alike only when
// a comparability check found no difference; with differences the comparison is stamped and
// says what differs; without a check they claim nothing. No note says the two serve "the same
// requests" (issue 26: 128- and 64-token results were said to serve the same requests).
func TestCompareNotesClaimOnlyWhatWasChecked(t *testing.T) {
	diff := "request-set fingerprint differs: A=random(input=1024, output=128), B=random(input=1024, output=64)"
	for _, c := range []struct {
		name  string
		k     *plan.Comparability
		stamp string
		says  string
	}{
		{"not checked", nil, "", "whether A and B were measured with the same requests, objectives and lengths was not checked"},
		{"alike", &plan.Comparability{}, "", "A and B were measured alike: the comparability check found the same request set"},
		{"different", &plan.Comparability{Differences: []string{diff}}, "NOT COMPARABLE (1 differences)",
			"NOT COMPARABLE (1 differences): A and B were measured differently, and planned anyway: " + diff},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmp, err := plan.CompareDeployments(bigA, smallB, plan.PeakForecast(10), plan.Options{Comparability: c.k})
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(cmp.Notes, "\n")
			if cmp.Stamp != c.stamp || !strings.Contains(notes, c.says) {
				t.Errorf("stamp %q, notes:\n%s", cmp.Stamp, notes)
			}
			if strings.Contains(notes, "same requests they") || strings.Contains(notes, "serving the same requests") ||
				c.name != "alike" && strings.Contains(notes, "measured alike") {
				t.Errorf("a note claims a sameness no check established:\n%s", notes)
			}
			if c.stamp != "" && (len(cmp.Differences) != 1 || cmp.Differences[0] != diff) {
				t.Errorf("differences %q", cmp.Differences)
			}
		})
	}
}
