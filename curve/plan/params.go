package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// Names of a plan's settings besides the forecast's and the options' (named, as this
// package's other inputs are, after what a user gives).
const (
	FieldProfileBucket   = "profile-bucket"
	FieldCostPerHourA    = "a-cost-per-hour"
	FieldCostPerHourB    = "b-cost-per-hour"
	FieldOneTimeCostA    = "a-one-time-cost"
	FieldOneTimeCostB    = "b-one-time-cost"
	FieldAllowUnverified = "allow-unverified"
	FieldAllowDifferent  = "allow-different"
	FieldRehearse        = "rehearse"
	FieldSeed            = "seed"
	FieldBalance         = "balance"
)

// Sides names the deployments of a plan, in the order their results are given.
var Sides = []string{"A", "B"}

// Settings are the user's choices for a plan, as given: the forecast (exactly one of a flat
// peak, a profile file, or a trace counted in buckets), the costs of each deployment (A's,
// then B's), the planning options, and which refusals to waive.
type Settings struct {
	Peak          float64
	Profile       string
	ProfileTrace  string
	ProfileBucket time.Duration
	CostPerHour   [2]float64
	OneTimeCost   [2]float64
	ScaleUpLag    time.Duration
	HoursPerMonth float64
	Currency      string
	// AllowUnverified plans from an operating point no confirmation tier verified.
	AllowUnverified bool
	// AllowDifferent plans A against B although compare's check finds them measured
	// differently (the plan is then stamped NOT COMPARABLE).
	AllowDifferent bool
}

// DefaultSettings are the settings nobody chose: forecast steps of a minute, a month of
// DefaultHoursPerMonth.
func DefaultSettings() Settings {
	return Settings{ProfileBucket: time.Minute, HoursPerMonth: DefaultHoursPerMonth}
}

// Params declares the settings, bound to s.
func (s *Settings) Params() []param.Param {
	return []param.Param{
		param.Float(FieldPeak, &s.Peak, "the forecast: a flat peak request rate (req/s)"),
		param.String(FieldProfile, &s.Profile, "the forecast: a CSV of time,rate lines (time in seconds, a duration or HH:MM; rate in req/s)"),
		param.String(FieldProfileTrace, &s.ProfileTrace, fmt.Sprintf("the forecast: a trace's arrivals (azure:FILE, mooncake:FILE, FILE.csv), counted in buckets of %v; the profile repeats the trace", field.Ref(FieldProfileBucket))),
		param.Duration(FieldProfileBucket, &s.ProfileBucket, fmt.Sprintf("%v: the length of a step of the forecast", field.Ref(FieldProfileTrace))),
		param.Float(FieldCostPerHourA, &s.CostPerHour[0], "cost of one replica of A per hour (required)"),
		param.Float(FieldCostPerHourB, &s.CostPerHour[1], "cost of one replica of B per hour (required with two results)"),
		param.Float(FieldOneTimeCostA, &s.OneTimeCost[0], "one-time cost of adopting A (for the payback)"),
		param.Float(FieldOneTimeCostB, &s.OneTimeCost[1], "one-time cost of adopting B"),
		param.Duration(FieldScaleUpLag, &s.ScaleUpLag, "how long before demand needs them replicas must be started"),
		param.Float(FieldHoursPerMonth, &s.HoursPerMonth, "hours in a month"),
		param.String(FieldCurrency, &s.Currency, "the currency of the costs (USD, EUR, …), named beside every amount").Default("none, amounts in cost units"),
		param.Bool(FieldAllowUnverified, &s.AllowUnverified, "plan from an operating point no confirmation tier verified"),
		param.Bool(FieldAllowDifferent, &s.AllowDifferent, "plan A against B even when compare's comparability check finds them measured differently (request set, lengths, schedule, cache policy, …): the plan is stamped NOT COMPARABLE and says what differs"),
	}
}

// ForecastSource is where the settings the params (Params, applied) read take the forecast
// from: the inputs given, and only those.
func (s *Settings) ForecastSource(ps []param.Param) ForecastSource {
	src := ForecastSource{Bucket: s.ProfileBucket}
	if param.IsGiven(ps, FieldPeak) {
		src.Peak = &s.Peak
	}
	if param.IsGiven(ps, FieldProfile) {
		src.Profile = &s.Profile
	}
	if param.IsGiven(ps, FieldProfileTrace) {
		src.Trace = &s.ProfileTrace
	}
	return src
}

// Costs returns the hourly and one-time costs of the side-th deployment (0: A, 1: B), and a
// *field.Error when its hourly cost, required, is not > 0.
func (s Settings) Costs(side int) (perHour, oneTime float64, err error) {
	perHour, oneTime = s.CostPerHour[side], s.OneTimeCost[side]
	if !(perHour > 0) {
		err = field.Errorf([]string{FieldCostPerHourA, FieldCostPerHourB}[side], "the cost of one replica of %s per hour is required (> 0), got %v", Sides[side], perHour)
	}
	return perHour, oneTime, err
}

// Options are the planning options the settings give, with the comparability check's findings.
func (s Settings) Options(k *Comparability) Options {
	return Options{ScaleUpLag: s.ScaleUpLag, HoursPerMonth: s.HoursPerMonth, Currency: s.Currency, Comparability: k}
}

// Rehearsal is the user's choices about rehearsing a plan on the embedded deployment (the
// command runs its trials): whether to, and its tiers' seed, bounds and balancer.
type Rehearsal struct {
	On              bool
	Seed            int64
	TierRequests    int
	MaxTierDuration time.Duration
	// Balance is the balancer's policy, one of Policies; when not given, the sweep's.
	Balance string
	// Policies are the balancer's policies the rehearsed deployment offers, its default first.
	Policies []string
}

// RehearsalDefaults are what the executor of a rehearsal offers and does when nobody chose:
// its balancer's policies (sim.BalancePolicies, the default first) and a trial tier's bounds
// (sweep.TrialTierRequests, sweep.TrialMaxTierDuration).
type RehearsalDefaults struct {
	Policies        []string
	TierRequests    int
	MaxTierDuration time.Duration
}

// The rehearsal's inputs that bound its tiers, named as the sweep names its own
// (FieldTierRequests, FieldMaxTierDuration; TestRehearsalTrial holds them
// together), so that one flag sets either.
const (
	FieldTierRequests    = "requests per sequential tier"
	FieldMaxTierDuration = "longest tier"
)

// DefaultRehearsal is the rehearsal nobody chose on the executor d describes: off, seed 0,
// d's bounds and default policy.
func DefaultRehearsal(d RehearsalDefaults) Rehearsal {
	r := Rehearsal{TierRequests: d.TierRequests, MaxTierDuration: d.MaxTierDuration, Policies: d.Policies}
	if len(d.Policies) > 0 {
		r.Balance = d.Policies[0]
	}
	return r
}

// Params declares the settings, bound to r: the switch first, then what sizes its tiers.
func (r *Rehearsal) Params() []param.Param {
	on := field.Ref(FieldRehearse)
	return []param.Param{
		param.Bool(FieldRehearse, &r.On, "run the forecast's peak against the planned number of the embedded deployment's replicas, and one fewer, and say whether the objectives held (with the sweep's workload: give its workload flags)"),
		param.Int64(FieldSeed, &r.Seed, fmt.Sprintf("%v: seed of the rehearsal's schedules and request sets", on)),
		param.Int(FieldTierRequests, &r.TierRequests, fmt.Sprintf("%v: a rehearsal tier runs until its verdict is decided, planned for this many arrivals at most", on)).
			Default(fmt.Sprintf("as many as the sweep's confirmation needed, at least %d", r.TierRequests)),
		param.Duration(FieldMaxTierDuration, &r.MaxTierDuration, fmt.Sprintf("%v: the longest a rehearsal tier runs", on)),
		param.String(FieldBalance, &r.Balance, fmt.Sprintf("%v: how the balancer spreads requests over the replicas: %s", on, strings.Join(r.Policies, " or "))).
			Default("the sweep's, when it measured several replicas, else " + r.Balance),
	}
}

// Trial returns the rehearsal tier of the deployment named for the forecast's peak, and every
// problem with the settings the params (Params, applied) read, in the order balance, tier
// requests, longest tier: the balancer's policy (sweep's: the policy used when none was
// given) must be one of r.Policies, tier requests given ≥ 1, a longest tier given
// > 0. A bound not given is left 0 (TrialConfig's default).
func (r Rehearsal) Trial(ps []param.Param, deployment string, peak float64, sweeps string) (tc TrialConfig, balance string, errs []error) {
	balance = r.Balance
	if !param.IsGiven(ps, FieldBalance) {
		balance = sweeps
	}
	if !slices.Contains(r.Policies, balance) {
		errs = append(errs, field.Sentencef(FieldBalance, "%v %q: want %s", field.Ref(FieldBalance), balance, strings.Join(r.Policies, " or ")))
	}
	tc = TrialConfig{Deployment: deployment, Peak: peak, Seed: r.Seed}
	if param.IsGiven(ps, FieldTierRequests) {
		if tc.TierRequests = r.TierRequests; tc.TierRequests < 1 {
			errs = append(errs, field.Sentencef(FieldTierRequests, "%v: must be ≥ 1, got %d", field.Ref(FieldTierRequests), tc.TierRequests))
		}
	}
	if param.IsGiven(ps, FieldMaxTierDuration) {
		if tc.MaxTierDuration = r.MaxTierDuration; tc.MaxTierDuration <= 0 {
			errs = append(errs, field.Sentencef(FieldMaxTierDuration, "%v: must be > 0, got %v", field.Ref(FieldMaxTierDuration), tc.MaxTierDuration))
		}
	}
	return tc, balance, errs
}
