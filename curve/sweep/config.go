package sweep

import (
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Documented defaults of a sweep, printed with every result.
const (
	// DefaultTierRequests sizes a tier that runs until its verdict is decided: it is planned long
	// enough for this many arrivals (within the bounds below). Near a 99 % target, misses cluster
	// (a variance factor of 3 to 15 on M/D/c queues), so a verdict there takes thousands of
	// requests; far from it a tier stops much earlier.
	DefaultTierRequests = 2000
	// DefaultMinTierDuration and DefaultMaxTierDuration bound such a tier's length.
	DefaultMinTierDuration = 30 * time.Second
	DefaultMaxTierDuration = 300 * time.Second
	// ConfirmFactor: the confirmation tier is planned for this many times TierRequests, within
	// this many times MaxTierDuration: it is the one verdict the result rests on.
	ConfirmFactor = 3
	// DefaultDrain is how long a tier's stragglers may run after its arrival phase.
	DefaultDrain = 20 * time.Second
	// DefaultPrecision: the automatic search stops once the capacity interval is this narrow
	// relative to its lower end.
	DefaultPrecision = 0.1
	// DefaultMaxTiers bounds the tiers of an automatic search, probes and confirmation apart
	// (a tier extended at its rate counts once more).
	DefaultMaxTiers = 24
	// DefaultBudget bounds the load an automatic sweep puts on the target: probes, search and
	// confirmation. A sweep stops earlier once its capacity is certified to ±Precision and its
	// operating point verified. Certifying ±10 % at a 99 % target takes an oracle that knows the
	// capacity 12 to 48 minutes on M/D/c queues whose requests last 0.3 to 1.4 s
	// (scripts/oracle): misses cluster, so a 99 % claim needs hundreds of independent stretches
	// of traffic on each side of the capacity.
	DefaultBudget = 60 * time.Minute
	// MaxDurationRequests bounds the arrivals one tier may plan (arrival.MaxArrivals): a
	// duration or count that would plan more is refused by Validate (it was once cut there
	// without a word), and a schedule that draws more by chance is refused when it is made.
	MaxDurationRequests = arrival.MaxArrivals
)

// Names of a sweep's inputs, as its errors name them (field.Error): its own knobs in its words,
// and the arrival process's burstiness as package arrival names it.
const (
	FieldRates           = "rates"
	FieldUsers           = "concurrency levels"
	FieldThink           = "think time"
	FieldBurstiness      = arrival.FieldBurstiness
	FieldMaxConcurrency  = "concurrency cap"
	FieldRequests        = arrival.FieldArrivals
	FieldDuration        = arrival.FieldWithin
	FieldTierRequests    = "requests per sequential tier"
	FieldMinTierDuration = "shortest tier"
	FieldMaxTierDuration = "longest tier"
	FieldDrain           = "drain"
	FieldCooldown        = "cooldown"
	FieldPrecision       = "precision"
	FieldBudget          = "budget"
	FieldMaxTiers        = "most tiers"
	FieldRepeat          = "repeats"
)

// Config says what a sweep sends and how it decides. Zero durations and counts not Given take
// the documented defaults where they have one (see Validate).
type Config struct {
	// Rates are the tiers: a list, or Auto (probe, then search the capacity).
	Rates Rates
	// Concurrency, when set, replaces Rates: every tier is a closed loop of users.
	Concurrency Concurrency
	// Sessions says that the workload's requests are sessions (conversations whose later turns
	// follow their responses): the schedule's arrivals then start sessions, and the sweep's
	// rates count sessions per second. Validate refuses it with Concurrency.
	Sessions bool
	// Schedule, when set, makes the run one tier of this schedule (a run: an arrival process,
	// ramps included, or a trace), Requests long (0: a replay's every arrival) or Duration long,
	// seeded with Seed as it is. Rates are not used then.
	Schedule arrival.Schedule
	// Burstiness is the Gamma shape of the inter-arrival gaps (0: arrival.DefaultBurstiness).
	Burstiness arrival.Burstiness
	// MaxConcurrency caps the requests in flight in every tier (0: none).
	MaxConcurrency int
	// Requests makes every tier count-bound: this many requests, no early stop.
	Requests int
	// Duration makes every tier duration-bound with this fixed length, no early stop (sharded
	// sweeps need it: every shard must start each tier at the same time).
	Duration time.Duration
	// A sequential tier (neither Requests nor Duration) runs until its verdict is decided at the
	// stated confidence, or until its cap: the time of TierRequests arrivals at its rate, within
	// [MinTierDuration, MaxTierDuration].
	TierRequests                     int
	MinTierDuration, MaxTierDuration time.Duration
	// Drain is the grace after a tier's arrival phase; Cooldown the pause between tiers.
	Drain, Cooldown time.Duration
	// Seed seeds every tier's schedule and request set.
	Seed int64
	// Settings are the objectives, statistics and analysis parameters.
	Settings result.Settings
	// Precision and MaxTiers bound the automatic search: it stops once the capacity interval is
	// certified to ±Precision (High/Low ≤ (1 + Precision)/(1 − Precision)), or after MaxTiers.
	Precision float64
	MaxTiers  int
	// Budget bounds the load each repetition of a sweep puts on the target (the sum of its
	// tiers' durations, drains included): every tier is planned to end within what it leaves
	// (budget.go), and the result says what the budget bought and what it cut. A sharded
	// sweep's tiers run in fixed slots, and Validate refuses a stated Budget they exceed. 0
	// takes DefaultBudget; negative means no budget.
	Budget time.Duration
	// Confirm runs a tier at the operating point to verify it (not with StartAt: the shards
	// cannot agree on an operating point before they are merged).
	Confirm bool
	// noConfirm is the choice to skip it, as given (Params); Check applies it to Confirm.
	noConfirm bool
	// Repeat runs the whole decision this many times with fresh seeds (≥ 1), to measure its
	// run-to-run spread.
	Repeat int
	// Bounded summarises tiers in bounded memory (percentiles within ±0.5 %).
	Bounded bool
	// NoShadow runs an automatic sweep without a shadow queue: every share as measured
	// (package shadow).
	NoShadow bool
	// StartAt is the wall-clock start of the first tier of a sharded sweep: every tier then runs
	// in a fixed slot (Duration + Drain + Cooldown + 1 s) after it.
	StartAt time.Time
	// Given marks the knobs the caller stated (a command line's flags), so that a stated zero
	// is a value, not "take the default": Validate refuses it where zero is not valid, and a
	// stated zero Budget means no budget.
	Given Given
}

// Given says which of a Config's knobs whose zero takes a default were stated.
type Given struct {
	Requests, Duration, TierRequests, MinTierDuration, MaxTierDuration, Drain bool
	Precision, MaxTiers, Repeat, Budget                                       bool
}

// NoBudget reports whether the sweep runs without a budget: a stated zero, or a negative
// Budget.
func (c Config) NoBudget() bool { return c.withDefaults().Budget <= 0 }

// withDefaults fills the zero fields that have a default and were not Given.
func (c Config) withDefaults() Config {
	orDefault(&c.TierRequests, c.Given.TierRequests, DefaultTierRequests)
	orDefault(&c.MinTierDuration, c.Given.MinTierDuration, DefaultMinTierDuration)
	orDefault(&c.MaxTierDuration, c.Given.MaxTierDuration, DefaultMaxTierDuration)
	orDefault(&c.Drain, c.Given.Drain, DefaultDrain)
	orDefault(&c.Precision, c.Given.Precision, DefaultPrecision)
	orDefault(&c.MaxTiers, c.Given.MaxTiers, DefaultMaxTiers)
	orDefault(&c.Repeat, c.Given.Repeat, 1)
	orDefault(&c.Budget, c.Given.Budget, DefaultBudget)
	c.Burstiness = c.Burstiness.OrDefault()
	return c
}

// orDefault sets *v to def when it is zero and was not given.
func orDefault[T comparable](v *T, given bool, def T) {
	var zero T
	if *v == zero && !given {
		*v = def
	}
}

// tierCap is the cap of a sequential tier at rate: the time of TierRequests arrivals, within
// [MinTierDuration, MaxTierDuration]. A confirmation's is planned for the larger of
// ConfirmFactor·TierRequests and need arrivals (what its verdict needs, ConfirmRequests), within
// ConfirmFactor·MaxTierDuration.
func (c Config) tierCap(rate float64, confirm bool, need float64) time.Duration {
	n, hi := float64(c.TierRequests), c.MaxTierDuration
	if confirm {
		n, hi = math.Max(n*ConfirmFactor, need), hi*ConfirmFactor
	}
	d := time.Duration(n / rate * float64(time.Second))
	return min(max(d, c.MinTierDuration), hi)
}

// ConfirmMargin is how many more requests a confirmation plans than the fewest that could
// verify the operating point with no miss at all (ConfirmRequests): room for a few misses and
// for a variance factor above the search's.
const ConfirmMargin = 1.5

// ConfirmRequests is how many requests a confirmation tier plans so that its verdict can be
// decided: a tier with no miss verifies a target share q at confidence γ once its effective
// sample n/f reaches z²·q/(1 − q) (the Wilson bound), with z the two-sided γ quantile and f the
// variance factor of the misses' clustering; f is the median of those the search measured in
// its stationary tiers that met the target (each tier's estimate is noisy, and their largest
// would overstate it; misses cluster alike at the lighter operating point, or less), and
// ConfirmMargin more. It is 0 when no such tier ran.
func ConfirmRequests(search []measure.Summary, p curve.Params) float64 {
	var fs []float64
	for _, s := range search {
		st := s.Steady
		if (s.Role != records.RoleTier && s.Role != "") || st == nil || !st.Stationary || st.CompliantShare < p.TargetShare {
			continue
		}
		fs = append(fs, st.VarianceFactor)
	}
	if len(fs) == 0 {
		return 0
	}
	slices.Sort(fs)
	f := fs[len(fs)/2] // the median, or the upper of the two middle ones
	q := p.TargetShare
	z := distuv.UnitNormal.Quantile(1 - (1-p.Confidence)/2)
	return ConfirmMargin * z * z * f * q / (1 - q)
}

// Validate returns every problem of the configuration at once, each naming its field.
func (c Config) Validate() []error {
	c = c.withDefaults()
	var errs []error
	bad := func(name, format string, a ...any) { errs = append(errs, field.Errorf(name, format, a...)) }
	if c.Schedule == nil && !c.Rates.Auto && len(c.Rates.List) == 0 && !c.Concurrency.Set() {
		bad(FieldRates, "no tier")
	}
	errs = append(errs, c.Concurrency.validate(c)...)
	errs = append(errs, c.validateAxis()...)
	if err := c.Burstiness.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.MaxConcurrency < 0 {
		bad(FieldMaxConcurrency, "must be ≥ 1 (omit it for no cap), got %d", c.MaxConcurrency)
	}
	if c.Requests < 0 || c.Given.Requests && c.Requests == 0 {
		bad(FieldRequests, "must be ≥ 1, got %d", c.Requests)
	}
	if c.Duration < 0 || c.Given.Duration && c.Duration == 0 {
		bad(FieldDuration, "must be > 0, got %v", c.Duration)
	}
	if c.Requests > 0 && c.Duration > 0 {
		bad(FieldDuration, "give a request count or a duration per tier, not both")
	}
	if c.MaxTierDuration < time.Second {
		bad(FieldMaxTierDuration, "must be at least 1s, got %v", c.MaxTierDuration)
	}
	if c.MinTierDuration < time.Second || c.MinTierDuration > c.MaxTierDuration {
		bad(FieldMinTierDuration, "must be at least 1s and at most the %v (%v), got %v", field.Ref(FieldMaxTierDuration), c.MaxTierDuration, c.MinTierDuration)
	}
	if c.TierRequests < 2*measure.MinSteadyRequests {
		bad(FieldTierRequests, "must be at least %d, got %d", 2*measure.MinSteadyRequests, c.TierRequests)
	}
	if c.Drain <= 0 {
		bad(FieldDrain, "must be > 0, got %v", c.Drain)
	}
	if c.Cooldown < 0 {
		bad(FieldCooldown, "must be ≥ 0, got %v", c.Cooldown)
	}
	if !(c.Precision > 0 && c.Precision < 1) {
		bad(FieldPrecision, "must be in (0, 1), got %v", c.Precision)
	}
	if c.Given.Budget && c.Budget < 0 {
		bad(FieldBudget, "must be ≥ 0 (0: no bound), got %v", c.Budget)
	}
	if c.Budget > 0 && c.Budget < 2*c.MinTierDuration {
		bad(FieldBudget, "%v leaves no room for a search and a confirmation of at least the %v (%v) each: give at least %v, or 0 for no bound", c.Budget, field.Ref(FieldMinTierDuration), c.MinTierDuration, 2*c.MinTierDuration)
	}
	if c.MaxTiers < 2 {
		bad(FieldMaxTiers, "must be at least 2 (a search brackets the capacity between two tiers), got %d", c.MaxTiers)
	}
	if c.Repeat < 1 || c.Repeat > 100 {
		bad(FieldRepeat, "must be in [1, 100], got %d", c.Repeat)
	}
	if !c.StartAt.IsZero() && c.Schedule == nil {
		if c.Rates.Auto {
			bad(FieldRates, "a sharded sweep needs explicit rates: auto tiers follow each shard's own results, so shards would diverge")
		}
		if c.Duration == 0 {
			bad(FieldDuration, "a sharded sweep needs fixed-length tiers (a %v), so that every shard starts each tier at the same time", field.Ref(FieldDuration))
		}
		if c.Repeat > 1 {
			bad(FieldRepeat, "a sharded sweep cannot repeat its decision")
		}
		if load := time.Duration(len(c.Rates.List)) * (c.Duration + c.Drain); c.Given.Budget && c.Budget > 0 && c.Duration > 0 && load > c.Budget {
			bad(FieldBudget, "%v is less than the %v a sharded sweep of %d tiers of %v and their drains may take (its tiers run in fixed slots, none can be cut): give at least %v, or 0",
				c.Budget, load, len(c.Rates.List), c.Duration, load)
		}
	}
	if err := c.windowFits(); err != nil {
		errs = append(errs, err)
	}
	if err := c.sizeFits(); err != nil {
		errs = append(errs, err)
	}
	return append(errs, c.Settings.Params.Validate()...)
}

// Memory one planned arrival costs before its tier starts: its offset and its request (264 B
// measured for a synthetic set); and, unless Bounded, its record kept for exact percentiles
// once it ends (~1.3 KB at 128 output tokens: 240 B and 8 B per token gap).
const (
	plannedBytes = 8 + 264
	recordBytes  = 1300
)

// sizeFits refuses a tier that would plan more than MaxDurationRequests arrivals (a count, or
// a duration at the highest rate), with the memory it would take, before anything is made.
func (c Config) sizeFits() error {
	per := plannedBytes
	if !c.Bounded {
		per += recordBytes
	}
	cost := func(n float64) string {
		s := fmt.Sprintf("about %s of memory before the first request", field.Bytes(n*float64(per)))
		if !c.Bounded {
			s += fmt.Sprintf("; %s with %v", field.Bytes(n*plannedBytes), field.Ref(result.FieldBounded))
		}
		return s
	}
	if c.Requests > MaxDurationRequests {
		return field.Errorf(FieldRequests, "%d requests are more than the %d one tier may plan (%s): ask for fewer, or split the load into several runs",
			c.Requests, MaxDurationRequests, cost(float64(c.Requests)))
	}
	if c.Duration <= 0 {
		return nil
	}
	var exp float64
	var what string
	switch sp, ok := c.Schedule.(arrival.Spec); {
	case ok:
		exp, what = sp.Expected(c.Duration), sp.String()
	case c.Schedule == nil && !c.Rates.Auto && len(c.Rates.List) > 0:
		top := 0.0
		for _, r := range c.Rates.List {
			if math.IsInf(r, 1) {
				return field.Errorf(FieldDuration, "a tier at rate inf plans every arrival at once, so a duration does not bound it: give %v, or finite rates", field.Ref(FieldRequests))
			}
			top = max(top, r)
		}
		exp, what = arrival.Spec{Rate: top}.Expected(c.Duration), fmt.Sprintf("the highest rate, %g req/s,", top)
	default:
		return nil
	}
	if exp <= MaxDurationRequests || math.IsInf(exp, 1) {
		return nil // rate inf with a duration is refused where the rate is read
	}
	return field.Errorf(FieldDuration, "%v at %s plans about %.0f arrivals, more than the %d one tier may plan (%s): shorten %v or lower the rate",
		c.Duration, what, exp, MaxDurationRequests, cost(exp), field.Ref(FieldDuration))
}

// windowFits refuses a fixed steady-state window (Measure.Warmup + Measure.Cooldown) that
// leaves nothing of a tier whose length is known before it runs: a fixed Duration, or Requests
// on a steady arrival spec (about n/rate; every request at once at rate inf).
func (c Config) windowFits() error {
	warmup, cooldown := c.Settings.Measure.Warmup, c.Settings.Measure.Cooldown
	w := warmup + cooldown
	if w <= 0 {
		return nil
	}
	var length time.Duration
	var what any
	spec, steady := c.Schedule.(arrival.Spec)
	steady = steady && spec.Ramp == arrival.RampNone
	switch {
	case c.Duration > 0:
		length, what = c.Duration, fmt.Sprintf("%v %v", field.Ref(FieldDuration), c.Duration)
	case steady && c.Requests > 0 && math.IsInf(spec.Rate, 1):
		length, what = 0, fmt.Sprintf("%d requests at rate inf, all planned at once", c.Requests)
	case steady && c.Requests > 0 && spec.Rate > 0:
		length = time.Duration(float64(c.Requests) / spec.Rate * float64(time.Second))
		what = fmt.Sprintf("%d requests at %g req/s, about %v", c.Requests, spec.Rate, length.Round(time.Millisecond))
	default:
		return nil
	}
	if w < length {
		return nil
	}
	return field.Errorf(result.FieldWarmup, "%v, with %v %v, would leave nothing of a tier planned to last %v (%v): shorten the window or lengthen the tier",
		warmup, field.Ref(result.FieldCooldownWindow), cooldown, length.Round(time.Millisecond), what)
}

// rateOrInf is a tier's rate (or its burstiness) as records keep it.
func rateOrInf[F ~float64](r F) records.Rate {
	if math.IsInf(float64(r), 1) {
		return records.Rate(math.Inf(1))
	}
	return records.Rate(r)
}

// WorstCaseLoad is the most load a sweep can put on the target: every tier of every repetition
// to its longest cap, and the confirmation to its own (probes and drains apart), within the
// budget of each repetition.
func (c Config) WorstCaseLoad() time.Duration {
	c = c.withDefaults()
	tiers := c.MaxTiers
	if !c.Rates.Auto {
		tiers = len(c.Rates.List)
	}
	per := c.MaxTierDuration
	if c.Duration > 0 {
		per = c.Duration
	}
	each := time.Duration(tiers)*per + ConfirmFactor*c.MaxTierDuration
	if c.Budget > 0 && c.StartAt.IsZero() {
		each = min(each, c.Budget)
	}
	return time.Duration(c.Repeat) * each
}
