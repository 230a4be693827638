package plan_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/plan"
)

// Operating rates that are exact in binary, so that a quotient rate/operating rate is a whole
// number exactly when it should be and math.Ceil needs no tolerance in the brute force below.
var exactRates = []float64{0.5, 1.25, 2.5, 3, 7, 9.75, 16}

// slot is the grain of the random profiles: every time is a whole number of slots.
const slot = 5 * time.Minute

const slotsPerDay = int(plan.Day / slot)

// randomDay is a day profile on whole slots: 1 to 12 steps of whole rates 0 to 200 req/s
// (a third of them 0), the first step not necessarily at 00:00, and at least one rate > 0.
func randomDay(rng *rand.Rand) plan.Forecast {
	n := 1 + rng.IntN(12)
	slots := rng.Perm(slotsPerDay)[:n]
	slices.Sort(slots)
	f := plan.Forecast{Period: plan.Day}
	for _, m := range slots {
		rate := 0.0
		if rng.IntN(3) > 0 {
			rate = float64(rng.IntN(201))
		}
		f.Points = append(f.Points, pt(time.Duration(m)*slot, rate))
	}
	if f.Peak() == 0 {
		f.Points[rng.IntN(n)].Rate = 1 + float64(rng.IntN(200))
	}
	return f
}

// replicasAt is the timeline's replica count at t seconds.
func replicasAt(r plan.Result, t float64) (int, float64) {
	i := 0
	for i+1 < len(r.Timeline) && r.Timeline[i+1].TSeconds <= t {
		i++
	}
	return r.Timeline[i].Replicas, r.Timeline[i].Demand
}

// Against a brute force over the slots of the day: replicas(t) is exactly
// max(1, max over [t, t+lag] of ⌈rate/operating rate⌉), never below demand(t)/operating rate,
// the replica-hours are the sum over the slots, and following costs no more than static.
func TestPropertyFollowing(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		f := randomDay(rng)
		d := plan.Deployment{Name: "X", OperatingRate: exactRates[rng.IntN(len(exactRates))],
			CompliantTokensPerRequest: 90, RawTokensPerRequest: 100, CostPerHour: 1 + float64(rng.IntN(50))}
		lagSlots := rng.IntN(3) * rng.IntN(37*60/5) // a third of them 0, some over a day
		lag := time.Duration(lagSlots) * slot
		r, err := plan.Plan(d, f, plan.Options{ScaleUpLag: lag})
		if err != nil {
			t.Fatal(err)
		}
		need := make([]int, slotsPerDay) // ⌈rate/operating rate⌉ in each slot
		rate := make([]float64, slotsPerDay)
		for m := range slotsPerDay {
			rate[m] = f.RateAt(time.Duration(m) * slot)
			need[m] = int(math.Ceil(rate[m] / d.OperatingRate))
		}
		var replicaSlots, requestSeconds float64
		for m := range slotsPerDay {
			want := 1
			for s := m; s <= m+min(lagSlots, slotsPerDay); s++ {
				want = max(want, need[s%slotsPerDay])
			}
			got, demand := replicasAt(r, (time.Duration(m) * slot).Seconds())
			if demand != rate[m] {
				t.Fatalf("trial %d, slot %d: timeline demand %v, forecast %v", trial, m, demand, rate[m])
			}
			if got != want {
				t.Fatalf("trial %d (%v, lag %v, rate %v), slot %d: %d replicas, want %d", trial, f.Points, lag, d.OperatingRate, m, got, want)
			}
			if float64(got) < demand/d.OperatingRate {
				t.Fatalf("trial %d, slot %d: %d replicas for %v req/s at %v each", trial, m, got, demand, d.OperatingRate)
			}
			replicaSlots += float64(got)
			requestSeconds += demand * slot.Seconds()
		}
		if want := replicaSlots * slot.Hours() * 730 / 24; !near(r.Following.ReplicaHoursPerMonth, want) {
			t.Errorf("trial %d: replica-hours %v, brute force %v", trial, r.Following.ReplicaHoursPerMonth, want)
		}
		if !near(r.RequestsPerMonth, requestSeconds*730/24) {
			t.Errorf("trial %d: requests %v, brute force %v", trial, r.RequestsPerMonth, requestSeconds*730/24)
		}
		if r.Following.CostPerMonth > r.Static.CostPerMonth*(1+1e-12) {
			t.Errorf("trial %d: following %v > static %v", trial, r.Following.CostPerMonth, r.Static.CostPerMonth)
		}
		if r.Following.CostPerMillionEffectiveTokens > r.Static.CostPerMillionEffectiveTokens*(1+1e-12) {
			t.Errorf("trial %d: following %v per M > static %v", trial, r.Following.CostPerMillionEffectiveTokens, r.Static.CostPerMillionEffectiveTokens)
		}
	}
}

// The break-evens agree with Plan: at levels sampled between them (and just either side of
// each), the deployment Plan finds cheaper per effective token is the one the break-evens say.
func TestPropertyBreakEvens(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	randomDeployment := func(name string) plan.Deployment {
		return plan.Deployment{Name: name, OperatingRate: exactRates[rng.IntN(len(exactRates))],
			CompliantTokensPerRequest: float64(50 + rng.IntN(51)), RawTokensPerRequest: 100, CostPerHour: float64(1 + rng.IntN(100))}
	}
	changes := 0
	for trial := range 60 {
		a, b := randomDeployment("A"), randomDeployment("B")
		f := randomDay(rng)
		o := plan.Options{ScaleUpLag: time.Duration(rng.IntN(3)*rng.IntN(240)) * time.Minute, MaxScale: 10}
		cmp, err := plan.CompareDeployments(a, b, f, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []plan.Verdict{cmp.Following, cmp.Static} {
			changes += len(v.BreakEvens)
			cheaperAt := func(peak float64) string {
				g := f.Scale(peak / f.Peak())
				ra, _ := plan.Plan(a, g, o)
				rb, _ := plan.Plan(b, g, o)
				ua, ub := ra.Following.CostPerMillionEffectiveTokens, rb.Following.CostPerMillionEffectiveTokens
				if v.Basis == plan.BasisStatic {
					ua, ub = ra.Static.CostPerMillionEffectiveTokens, rb.Static.CostPerMillionEffectiveTokens
				}
				switch {
				case math.Abs(ua-ub) <= 1e-6*(ua+ub):
					return "?" // too close to call in floating point
				case ua < ub:
					return "A"
				}
				return "B"
			}
			// expected is the cheaper at peak according to the break-evens.
			expected := func(peak float64) string {
				for _, be := range v.BreakEvens {
					if peak <= be.PeakRate {
						return be.Below
					}
				}
				if len(v.BreakEvens) > 0 {
					return v.BreakEvens[len(v.BreakEvens)-1].Above
				}
				return cheaperAt(f.Peak() / 1000) // no change: the same everywhere
			}
			var probes []float64
			for i := range 60 {
				probes = append(probes, v.SearchedUpToPeak*math.Pow(10, -3*float64(i)/60))
			}
			for _, be := range v.BreakEvens {
				probes = append(probes, be.PeakRate, be.PeakRate*(1+1e-7))
			}
			for _, p := range probes {
				got, want := cheaperAt(p), expected(p)
				if got != "?" && want != "" && got != want {
					t.Fatalf("trial %d, %s: at %v req/s peak Plan says %s, the break-evens %+v say %s (a %+v, b %+v, forecast %v, lag %v)",
						trial, v.Basis, p, got, v.BreakEvens, want, a, b, f.Points, o.ScaleUpLag)
				}
			}
			if want := expected(f.Peak()); want != "" && v.Cheaper != want {
				t.Errorf("trial %d, %s: cheaper %q at the forecast, the break-evens say %q", trial, v.Basis, v.Cheaper, want)
			}
		}
	}
	if changes == 0 {
		t.Error("no trial had a break-even: the property was not exercised")
	}
	t.Logf("%d break-evens checked", changes)
}
