package curve_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
)

// stepDeployment is the synthetic deployment: every request is compliant
// below 10 req/s and none at or above it.
func stepDeployment(tierN int, rate float64) curve.Point {
	share := 0.0
	if rate < 10 {
		share = 1
	}
	return tier(tierN, rate, 200, share, 100*math.Min(rate, 10), false)
}

// sweep runs the planner against a deployment until it finishes or a
// safety cap is hit, and returns the tiers run.
func sweep(t *testing.T, pl *curve.Planner, deploy func(int, float64) curve.Point) []curve.Point {
	t.Helper()
	var done []curve.Point
	for range 100 {
		r, ok := pl.Next(done)
		if !ok {
			return done
		}
		if slices.ContainsFunc(done, func(p curve.Point) bool { return p.OfferedRate == r }) {
			t.Fatalf("planner repeated rate %v", r)
		}
		done = append(done, deploy(len(done)+1, r))
	}
	t.Fatal("planner did not finish in 100 tiers")
	return nil
}

// bisections is the number of geometric bisections that shrink the bracket
// (lo, hi) to (hi−lo)/lo ≤ precision: each halves ln(hi/lo), and the target
// is ln(1+precision).
func bisections(lo, hi, precision float64) int {
	if (hi-lo)/lo <= precision {
		return 0
	}
	return int(math.Ceil(math.Log2(math.Log(hi/lo) / math.Log1p(precision))))
}

func TestPlannerConverges(t *testing.T) {
	tests := []struct {
		name       string
		saturation float64
		precision  float64
		lo0, hi0   float64 // first bracket around 10 (by hand from AutoFractions)
		extra      int     // tiers added by doubling before the bracket exists
	}{
		// 1.6, 4, 8, 12, 14.4, 16, 20: bracket (8, 12).
		{"probe above capacity", 16, 0.1, 8, 12, 0},
		{"finer precision", 16, 0.01, 8, 12, 0},
		// ..., 9.45, 10.5, 13.125: bracket (9.45, 10.5), 11 % wide.
		{"probe near capacity", 10.5, 0.1, 9.45, 10.5, 0},
		// 0.4 ... 5 all meet; doubling gives 10, which fails: (5, 10).
		{"probe far below capacity", 4, 0.1, 5, 10, 1},
		// 6, 15, ...: bracket (6, 15).
		{"probe far above capacity", 60, 0.05, 6, 15, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			maxTiers := 30
			pl := curve.NewPlanner(tt.saturation, curve.DefaultParams(), tt.precision, maxTiers)
			if errs := pl.Validate(); errs != nil {
				t.Fatal(errs)
			}
			done := sweep(t, pl, stepDeployment)
			bound := len(curve.AutoFractions()) + tt.extra + bisections(tt.lo0, tt.hi0, tt.precision)
			if len(done) > bound {
				t.Errorf("%d tiers, bound %d", len(done), bound)
			}
			// The bracket Analyze interpolates in holds 10 and is within
			// the precision; so is the capacity.
			a := curve.Analyze(done, curve.DefaultParams())
			c := a.Capacity
			if c == nil || c.Method != curve.CapacityInterpolated {
				t.Fatalf("capacity %+v", c)
			}
			var lo, hi float64
			for _, p := range done {
				if p.Tier == c.FromTier {
					lo = p.OfferedRate
				}
				if p.Tier == *c.ToTier {
					hi = p.OfferedRate
				}
			}
			if !(lo < 10 && 10 <= hi) || (hi-lo)/lo > tt.precision {
				t.Errorf("final bracket (%v, %v) after %d tiers", lo, hi, len(done))
			}
			if math.Abs(c.Rate-10)/10 > tt.precision {
				t.Errorf("capacity %v, want 10 within %v", c.Rate, tt.precision)
			}
			t.Logf("%d tiers (bound %d), bracket (%.4g, %.4g), capacity %.4g", len(done), bound, lo, hi, c.Rate)
		})
	}
}

func TestPlannerStops(t *testing.T) {
	t.Run("lightest tier fails", func(t *testing.T) {
		// 0.1·200 = 20 req/s already fails: the initial tiers draw the
		// curve, then there is nothing to bisect.
		done := sweep(t, curve.NewPlanner(200, curve.Params{}, 0.1, 30), stepDeployment)
		if len(done) != len(curve.AutoFractions()) {
			t.Errorf("%d tiers, want the %d initial ones", len(done), len(curve.AutoFractions()))
		}
	})
	t.Run("max tiers", func(t *testing.T) {
		done := sweep(t, curve.NewPlanner(16, curve.Params{}, 1e-6, 9), stepDeployment)
		if len(done) != 9 {
			t.Errorf("%d tiers, want 9", len(done))
		}
	})
	t.Run("everything meets", func(t *testing.T) {
		// Doubling from 1.25·4 = 5: 10, 20; 40 would pass 8·4 = 32.
		always := func(n int, r float64) curve.Point { return tier(n, r, 200, 1, 100*r, false) }
		done := sweep(t, curve.NewPlanner(4, curve.Params{}, 0.1, 30), always)
		if len(done) != len(curve.AutoFractions())+2 || done[len(done)-1].OfferedRate != 20 {
			t.Errorf("tiers %d, last rate %v; want %d, 20", len(done), done[len(done)-1].OfferedRate, len(curve.AutoFractions())+2)
		}
	})
}

func TestPlannerInitialTiers(t *testing.T) {
	pl := curve.NewPlanner(20, curve.Params{}, 0.1, 30)
	var done []curve.Point
	for i, f := range curve.AutoFractions() {
		r, ok := pl.Next(done)
		if !ok || !near(r, 20*f) {
			t.Fatalf("tier %d: %v %v, want %v", i, r, ok, 20*f)
		}
		// Next depends on done only: asking again gives the same answer.
		if r2, _ := pl.Next(done); r2 != r {
			t.Fatalf("Next not repeatable: %v then %v", r, r2)
		}
		done = append(done, stepDeployment(i+1, r))
	}
	// Order of done does not matter.
	rev := slices.Clone(done)
	slices.Reverse(rev)
	r1, _ := pl.Next(done)
	r2, _ := pl.Next(rev)
	if r1 != r2 || !near(r1, math.Sqrt(5*10)) { // 20·0.25 = 5 meets, 20·0.5 = 10 fails
		t.Errorf("Next after the initial tiers: %v and %v, want √50", r1, r2)
	}
}

func TestPlannerValidate(t *testing.T) {
	tests := []struct {
		name       string
		saturation float64
		p          curve.Params
		precision  float64
		maxTiers   int
		says       []string
	}{
		{"zero saturation", 0, curve.Params{}, 0.1, 20, []string{"saturation rate 0"}},
		{"NaN saturation", math.NaN(), curve.Params{}, 0.1, 20, []string{"saturation rate NaN"}},
		{"inf saturation", math.Inf(1), curve.Params{}, 0.1, 20, []string{"saturation rate +Inf"}},
		{"zero precision", 10, curve.Params{}, 0, 20, []string{"precision 0"}},
		{"few tiers", 10, curve.Params{}, 0.1, 3, []string{"at most 3 tiers"}},
		{"bad target", 10, curve.Params{TargetShare: 2}, 0.1, 20, []string{"--target-share"}},
		{"all", -1, curve.Params{TargetShare: 2}, -1, 0, []string{"saturation", "precision", "at most 0", "--target-share"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := curve.NewPlanner(tt.saturation, tt.p, tt.precision, tt.maxTiers)
			errs := pl.Validate()
			if len(errs) != len(tt.says) {
				t.Fatalf("errors %v, want %d", errs, len(tt.says))
			}
			for i, s := range tt.says {
				if !strings.Contains(errs[i].Error(), s) {
					t.Errorf("error %q does not say %q", errs[i], s)
				}
			}
			if _, ok := pl.Next(nil); ok {
				t.Error("an invalid planner planned a tier")
			}
		})
	}
}

func TestPlannerString(t *testing.T) {
	s := curve.NewPlanner(16, curve.DefaultParams(), 0.1, 12).String()
	for _, want := range []string{"0.1, 0.25, 0.5, 0.75, 0.9, 1, 1.25 × 16 req/s", "99 %", "≤ 10 %", "at most 12 tiers"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %q, missing %q", s, want)
		}
	}
}
