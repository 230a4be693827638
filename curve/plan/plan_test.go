package plan_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/internal/field"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// The worked case of testdata/worked_day.golden.json, by hand.
//
// One replica carries 9.75 req/s at its verified operating point (capacity 12.1875 req/s less
// 20 % headroom), with 180 compliant and 200 raw output tokens per request, for 4 an hour. The
// day: 20 req/s from 00:00, 120 from 08:00, 60 from 18:00. Replicas must run 30 min before
// demand needs them; a month is 720 h (30 days, to keep the arithmetic readable).
//
//	replicas per demand: ⌈20/9.75⌉ = ⌈2.05⌉ = 3, ⌈120/9.75⌉ = ⌈12.31⌉ = 13, ⌈60/9.75⌉ = ⌈6.15⌉ = 7
//	at peak: 120/13 = 9.2308 req/s a replica = 0.757 of its capacity, 0.947 of its operating point
//	following, up 30 min early, down at once:
//	  00:00–07:30 3 replicas × 7.5 h = 22.5
//	  07:30–18:00 13 × 10.5 h        = 136.5
//	  18:00–24:00 7 × 6 h            = 42
//	                                   201 replica-hours a day, 8.375 replicas on average
//	  a month: 201 × 30 = 6,030 replica-hours × 4 = 24,120
//	static: 13 × 720 = 9,360 replica-hours × 4 = 37,440
//	requests a day: (20·8 + 120·10 + 60·6) req/s·h × 3600 = 1,720 × 3,600 = 6,192,000 (mean 71.667 req/s)
//	a month: × 30 = 185,760,000 requests, × 180 = 33,436.8 M effective tokens, × 200 = 37,152 M raw
//	cost per M effective: following 24,120 / 33,436.8 = 0.72136, static 37,440 / 33,436.8 = 1.11973
//	cost per M raw:       following 24,120 / 37,152   = 0.64923, static 37,440 / 37,152   = 1.00775
//	operating point use: following 6,192,000 / (201 × 3600 × 9.75) = 0.87766,
//	                     static 6,192,000 / (13 × 24 × 3600 × 9.75) = 0.56542
var (
	workedDeployment = plan.Deployment{Name: "A", OperatingRate: 9.75, Capacity: 12.1875,
		CompliantTokensPerRequest: 180, RawTokensPerRequest: 200, CostPerHour: 4}
	workedForecast = plan.Forecast{Period: plan.Day, Points: []plan.Point{
		{T: 0, Rate: 20}, {T: 8 * time.Hour, Rate: 120}, {T: 18 * time.Hour, Rate: 60}}}
	workedOptions = plan.Options{ScaleUpLag: 30 * time.Minute, HoursPerMonth: 720}
)

func TestWorkedDay(t *testing.T) {
	r, err := plan.Plan(workedDeployment, workedForecast, workedOptions)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"peak", r.PeakRate, 120},
		{"mean rate 1720/24", r.MeanRate, 1720.0 / 24},
		{"peak replicas", float64(r.PeakReplicas), 13},
		{"load per replica at peak", r.LoadPerReplicaAtPeak, 120.0 / 13},
		{"utilisation of capacity", *r.UtilisationOfCapacityAtPeak, 120.0 / 13 / 12.1875},
		{"utilisation of operating point", r.UtilisationOfOperatingPointAtPeak, 120.0 / 13 / 9.75},
		{"requests a month", r.RequestsPerMonth, 185_760_000},
		{"effective tokens a month", r.EffectiveTokensPerMonth, 33_436_800_000},
		{"raw tokens a month", r.RawTokensPerMonth, 37_152_000_000},
		{"static replica-hours", r.Static.ReplicaHoursPerMonth, 9_360},
		{"static cost", r.Static.CostPerMonth, 37_440},
		{"static per M effective", r.Static.CostPerMillionEffectiveTokens, 37_440 / 33_436.8},
		{"static per M raw", r.Static.CostPerMillionRawTokens, 37_440 / 37_152.0},
		{"static use", r.Static.OperatingPointUse, 6_192_000 / (13 * 24 * 3600 * 9.75)},
		{"following mean replicas", r.Following.MeanReplicas, 8.375},
		{"following replica-hours", r.Following.ReplicaHoursPerMonth, 6_030},
		{"following cost", r.Following.CostPerMonth, 24_120},
		{"following per M effective", r.Following.CostPerMillionEffectiveTokens, 24_120 / 33_436.8},
		{"following per M raw", r.Following.CostPerMillionRawTokens, 24_120 / 37_152.0},
		{"following use", r.Following.OperatingPointUse, 6_192_000 / (201 * 3600 * 9.75)},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if want := "N = ⌈peak / operating rate⌉ = ⌈120 / 9.75⌉ = 13"; r.PeakReplicasFormula != want {
		t.Errorf("formula %q, want %q", r.PeakReplicasFormula, want)
	}
	wantSteps := []plan.Step{
		{TSeconds: 0, Demand: 20, Replicas: 3},
		{TSeconds: 7.5 * 3600, Demand: 20, Replicas: 13},
		{TSeconds: 8 * 3600, Demand: 120, Replicas: 13},
		{TSeconds: 18 * 3600, Demand: 60, Replicas: 7},
	}
	if !reflect.DeepEqual(r.Timeline, wantSteps) {
		t.Errorf("timeline %+v, want %+v", r.Timeline, wantSteps)
	}

	got, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "worked_day.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the result (run with -update after checking the change):\n%s", path, got)
	}
}

func TestPeakReplicas(t *testing.T) {
	cases := []struct {
		peak, rate float64
		want       int
		formula    string
	}{
		{120, 9.75, 13, "N = ⌈peak / operating rate⌉ = ⌈120 / 9.75⌉ = 13"},
		{100, 10, 10, "N = ⌈peak / operating rate⌉ = ⌈100 / 10⌉ = 10"}, // exactly at the operating point
		{100.5, 10, 11, "N = ⌈peak / operating rate⌉ = ⌈100.5 / 10⌉ = 11"},
		{1.1, 0.1, 11, "N = ⌈peak / operating rate⌉ = ⌈1.1 / 0.1⌉ = 11"}, // 1.1/0.1 = 11.000000000000002 in floating point
		{0.3, 0.1, 3, "N = ⌈peak / operating rate⌉ = ⌈0.3 / 0.1⌉ = 3"},
		{0.5, 9.75, 1, "N = ⌈peak / operating rate⌉ = ⌈0.5 / 9.75⌉ = 1"},
	}
	for _, c := range cases {
		d := workedDeployment
		d.OperatingRate, d.Capacity = c.rate, 0
		r, err := plan.Plan(d, plan.PeakForecast(c.peak), plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.PeakReplicas != c.want || r.PeakReplicasFormula != c.formula {
			t.Errorf("peak %v at %v: %d (%q), want %d (%q)", c.peak, c.rate, r.PeakReplicas, r.PeakReplicasFormula, c.want, c.formula)
		}
		// A flat profile: following it is running N replicas all the time.
		if r.Following.CostPerMonth != r.Static.CostPerMonth || r.Static.CostPerMonth != float64(c.want)*4*730 {
			t.Errorf("peak %v: following %v, static %v, want both %v", c.peak, r.Following.CostPerMonth, r.Static.CostPerMonth, float64(c.want)*4*730)
		}
		if r.UtilisationOfCapacityAtPeak != nil {
			t.Error("utilisation of capacity without a capacity")
		}
	}
}

// Idle capacity is paid for: 5 req/s on replicas that carry 10 each still needs one replica,
// half of whose capacity idles, so each effective token costs twice what it costs at the
// operating point.
func TestCostPerMillionCountsIdleCapacity(t *testing.T) {
	d := plan.Deployment{Name: "A", OperatingRate: 10, CompliantTokensPerRequest: 100, RawTokensPerRequest: 125, CostPerHour: 100}
	r, err := plan.Plan(d, plan.PeakForecast(5), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// At the operating point: 100 / (10 req/s × 3600 × 100 tokens) × 10⁶ = 27.78 per M.
	// At 5 req/s: 100 / (5 × 3600 × 100) × 10⁶ = 55.56 per M effective, and over 125 raw
	// tokens a request 100 / (5 × 3600 × 125) × 10⁶ = 44.44 per M raw.
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"per M effective", r.Static.CostPerMillionEffectiveTokens, 100 / (5 * 3600 * 100.0) * 1e6},
		{"per M raw", r.Static.CostPerMillionRawTokens, 100 / (5 * 3600 * 125.0) * 1e6},
		{"following per M effective", r.Following.CostPerMillionEffectiveTokens, 100 / (5 * 3600 * 100.0) * 1e6},
		{"operating point use", r.Static.OperatingPointUse, 0.5},
		{"monthly cost 100 × 730", r.Static.CostPerMonth, 73_000},
		{"effective tokens 5 × 3600 × 730 × 100", r.EffectiveTokensPerMonth, 5 * 3600 * 730 * 100},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// Double the load: the same replica, now used fully, halves the unit cost.
	r2, err := plan.Plan(d, plan.PeakForecast(10), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !near(r2.Static.CostPerMillionEffectiveTokens, r.Static.CostPerMillionEffectiveTokens/2) {
		t.Errorf("at 10 req/s %v per M, want half of %v", r2.Static.CostPerMillionEffectiveTokens, r.Static.CostPerMillionEffectiveTokens)
	}
}

// A profile with idle hours, a lag that crosses midnight, and the minimum of one replica.
//
//	00:00 0 req/s, 06:00 25, 22:00 0; operating rate 10 → replicas 1 (at least one), 3, 1.
//	lag 2h: up at 04:00, down at 22:00.
//	  00:00–04:00 1 × 4 = 4, 04:00–22:00 3 × 18 = 54, 22:00–24:00 1 × 2 = 2: 60 replica-hours a day
//	With the 0 moved to 01:00 and the rise to 23:00 (the lag crosses midnight: up at 21:00):
//	  00:00–01:00 3 × 1 (still the 25 of 23:00), 01:00–21:00 1 × 20, 21:00–24:00 3 × 3: 32
func TestFollowingDayProfile(t *testing.T) {
	d := plan.Deployment{Name: "A", OperatingRate: 10, CompliantTokensPerRequest: 1, RawTokensPerRequest: 1, CostPerHour: 1}
	cases := []struct {
		name       string
		points     []plan.Point
		lag        time.Duration
		perDay     float64
		timeline   []plan.Step
		meanDemand float64
	}{
		{"idle nights", []plan.Point{pt(0, 0), pt(6*time.Hour, 25), pt(22*time.Hour, 0)}, 2 * time.Hour, 60,
			[]plan.Step{st(0, 0, 1), st(4*3600, 0, 3), st(6*3600, 25, 3), st(22*3600, 0, 1)}, 25 * 16 / 24.0},
		{"lag across midnight", []plan.Point{pt(time.Hour, 0), pt(23*time.Hour, 25)}, 2 * time.Hour, 32,
			[]plan.Step{st(0, 25, 3), st(3600, 0, 1), st(21*3600, 0, 3), st(23*3600, 25, 3)}, 25 * 2 / 24.0},
		{"no lag", []plan.Point{pt(0, 0), pt(6*time.Hour, 25), pt(22*time.Hour, 0)}, 0, 6 + 48 + 2,
			[]plan.Step{st(0, 0, 1), st(6*3600, 25, 3), st(22*3600, 0, 1)}, 25 * 16 / 24.0},
		{"lag longer than the day", []plan.Point{pt(0, 0), pt(6*time.Hour, 25)}, 30 * time.Hour, 72,
			[]plan.Step{st(0, 0, 3), st(6*3600, 25, 3)}, 25 * 18 / 24.0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := plan.Forecast{Points: c.points, Period: plan.Day}
			r, err := plan.Plan(d, f, plan.Options{ScaleUpLag: c.lag})
			if err != nil {
				t.Fatal(err)
			}
			if !near(r.Following.ReplicaHoursPerMonth, c.perDay*730/24) {
				t.Errorf("replica-hours a month %v, want %v × 730/24", r.Following.ReplicaHoursPerMonth, c.perDay)
			}
			if !reflect.DeepEqual(r.Timeline, c.timeline) {
				t.Errorf("timeline %v, want %v", r.Timeline, c.timeline)
			}
			if !near(r.MeanRate, c.meanDemand) || !near(f.Mean(), c.meanDemand) {
				t.Errorf("mean %v (forecast %v), want %v", r.MeanRate, f.Mean(), c.meanDemand)
			}
			if !near(r.Static.ReplicaHoursPerMonth, 3*730) {
				t.Errorf("static %v, want 3 × 730", r.Static.ReplicaHoursPerMonth)
			}
		})
	}
}

func TestForecastHelpers(t *testing.T) {
	f := plan.Forecast{Period: plan.Day, Points: []plan.Point{pt(2*time.Hour, 10), pt(10*time.Hour, 40)}}
	if f.Peak() != 40 {
		t.Errorf("peak %v", f.Peak())
	}
	g := f.Scale(0.5)
	if g.Peak() != 20 || f.Peak() != 40 || g.Period != f.Period || g.Points[0].T != 2*time.Hour {
		t.Errorf("scale: %+v from %+v", g, f)
	}
	for _, c := range []struct {
		t    time.Duration
		want float64
	}{{0, 40}, {2*time.Hour - 1, 40}, {2 * time.Hour, 10}, {10 * time.Hour, 40}, {26 * time.Hour, 10}, {-time.Hour, 40}} {
		if got := f.RateAt(c.t); got != c.want {
			t.Errorf("RateAt(%v) = %v, want %v", c.t, got, c.want)
		}
	}
	if p := plan.PeakForecast(7); p.Peak() != 7 || p.Period != 24*time.Hour || p.Mean() != 7 {
		t.Errorf("PeakForecast: %+v", p)
	}
}

func TestPlanErrors(t *testing.T) {
	good := workedDeployment
	cases := []struct {
		name   string
		d      plan.Deployment
		f      plan.Forecast
		o      plan.Options
		fields []string // the field errors expected, in order
		says   []string // and what the message must say
	}{
		{"no operating point", func() plan.Deployment { d := good; d.OperatingRate = 0; return d }(), workedForecast, plan.Options{},
			[]string{plan.FieldOperatingRate}, []string{`deployment "A": operating-rate: 0 req/s: must be a finite rate > 0`, "verified operating point"}},
		{"NaN operating rate", func() plan.Deployment { d := good; d.OperatingRate = math.NaN(); return d }(), workedForecast, plan.Options{},
			[]string{plan.FieldOperatingRate}, []string{"operating-rate: NaN req/s"}},
		{"costs", func() plan.Deployment { d := good; d.CostPerHour = 0; d.OneTimeCost = -1; return d }(), workedForecast, plan.Options{},
			[]string{plan.FieldCostPerHour, plan.FieldOneTimeCost}, []string{"cost-per-hour: 0: must be a finite cost > 0", "one-time-cost: -1"}},
		{"tokens", func() plan.Deployment {
			d := good
			d.CompliantTokensPerRequest, d.RawTokensPerRequest = 200, 180
			return d
		}(), workedForecast, plan.Options{},
			[]string{plan.FieldRawTokensPerRequest}, []string{"raw-tokens-per-request: 180 is below the compliant tokens per request 200"}},
		{"capacity below operating rate", func() plan.Deployment { d := good; d.Capacity = 5; return d }(), workedForecast, plan.Options{},
			[]string{plan.FieldCapacity}, []string{"capacity: 5 req/s is below the operating rate 9.75 req/s"}},
		{"empty forecast", good, plan.Forecast{Period: plan.Day}, plan.Options{},
			nil, []string{"forecast: no points"}},
		{"negative and NaN rates", good, plan.Forecast{Period: plan.Day, Points: []plan.Point{pt(0, -1), pt(time.Hour, math.NaN())}}, plan.Options{},
			nil, []string{"forecast: point 0 (at 0s): rate -1: must be a finite number of req/s ≥ 0", "forecast: point 1 (at 1h0m0s): rate NaN"}},
		{"times", good, plan.Forecast{Period: plan.Day, Points: []plan.Point{pt(time.Hour, 1), pt(time.Hour, 2), pt(25*time.Hour, 3)}}, plan.Options{},
			nil, []string{"point 1: time 1h0m0s is not after the previous point's 1h0m0s", "point 2: time 25h0m0s is not before the end of the period 24h0m0s"}},
		{"no period", good, plan.Forecast{Points: []plan.Point{pt(0, 1)}}, plan.Options{}, nil, []string{"forecast: period 0s: must be > 0"}},
		{"no demand", good, plan.PeakForecast(0), plan.Options{}, nil, []string{"forecast: no demand"}},
		{"options", good, workedForecast, plan.Options{ScaleUpLag: -time.Second, HoursPerMonth: math.Inf(1), MaxScale: 0.5},
			[]string{plan.FieldScaleUpLag, plan.FieldHoursPerMonth, plan.FieldMaxScale}, []string{"scale-up-lag: -1s: must be ≥ 0"}},
		{"currency with a space", good, workedForecast, plan.Options{Currency: "US dollars"},
			[]string{plan.FieldCurrency}, []string{`currency "US dollars": a currency is a short name without spaces`}},
		{"currency too long", good, workedForecast, plan.Options{Currency: strings.Repeat("X", plan.MaxCurrencyLen+1)},
			[]string{plan.FieldCurrency}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := plan.Plan(c.d, c.f, c.o)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "plan: ") {
				t.Errorf("%q does not start with plan:", msg)
			}
			for _, s := range c.says {
				if !strings.Contains(msg, s) {
					t.Errorf("%q does not say %q", msg, s)
				}
			}
			var got []string
			for _, e := range unwrapAll(err) {
				if fe := field.Of(e); fe != nil {
					got = append(got, fe.Name)
				}
			}
			if !reflect.DeepEqual(got, c.fields) {
				t.Errorf("field errors %v, want %v", got, c.fields)
			}
		})
	}
}

// TestPlanCurrency: the currency names the money of every amount in the result and its notes;
// without one the amounts are in cost units.
func TestPlanCurrency(t *testing.T) {
	for _, c := range []struct{ currency, says string }{
		{"", "cost 37440 cost units and deliver"},
		{"EUR", "cost 37440 EUR and deliver"},
		{"€", "1.11972 € per million"},
	} {
		r, err := plan.Plan(workedDeployment, workedForecast, plan.Options{ScaleUpLag: 30 * time.Minute, HoursPerMonth: 720, Currency: c.currency})
		if err != nil {
			t.Fatal(err)
		}
		if r.Currency != c.currency {
			t.Errorf("currency %q: result says %q", c.currency, r.Currency)
		}
		if notes := strings.Join(r.Notes, "\n"); !strings.Contains(notes, c.says) {
			t.Errorf("currency %q: notes do not say %q:\n%s", c.currency, c.says, notes)
		}
	}
}

func pt(t time.Duration, rate float64) plan.Point { return plan.Point{T: t, Rate: rate} }

func st(seconds, demand float64, replicas int) plan.Step {
	return plan.Step{TSeconds: seconds, Demand: demand, Replicas: replicas}
}

// unwrapAll is the leaves of a tree of joined and wrapped errors.
func unwrapAll(err error) []error {
	if _, ok := err.(*field.Error); ok {
		return []error{err} // a field error is a leaf here, though it unwraps to what its message wraps
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unwrapAll(e)...)
		}
		return out
	}
	if u := errors.Unwrap(err); u != nil {
		if _, ok := u.(interface{ Unwrap() []error }); ok {
			return unwrapAll(u)
		}
	}
	return []error{err}
}
