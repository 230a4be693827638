package plan

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/loadcurve/loadcurve/internal/field"
)

// DefaultHoursPerMonth is the month used when [Options].HoursPerMonth is 0: 730 hours, an
// average month (8,760 h / 12), as in package cost.
const DefaultHoursPerMonth = 730

// DefaultMaxScale is how far above the forecast [CompareDeployments] looks for break-even levels when
// [Options].MaxScale is 0: up to 100 times the forecast's peak.
const DefaultMaxScale = 100

// Options are the planning settings besides the deployment and the forecast. The operating
// point already holds the headroom, so there is none here.
type Options struct {
	// ScaleUpLag is how long before demand needs them replicas must be started (provisioning,
	// model load, warm-up). 0 means replicas serve the instant they are started. ≥ 0.
	ScaleUpLag time.Duration
	// HoursPerMonth is the length of a month in hours; 0 means DefaultHoursPerMonth.
	HoursPerMonth float64
	// MaxScale bounds [CompareDeployments]'s search for break-even levels: it looks at forecasts up to
	// MaxScale times the given one (below it, down to zero, the search is always complete).
	// 0 means DefaultMaxScale; otherwise finite and ≥ 1.
	MaxScale float64
	// Comparability is what a check of how [CompareDeployments]'s two deployments were measured found
	// (package compare's Check); nil: no check ran, and the comparison's notes say so. Plan
	// does not use it.
	Comparability *Comparability
	// Currency names the money of the deployments' costs ("USD", "EUR"); results and notes
	// state their amounts in it. Empty means none was given: amounts are in cost units. At
	// most MaxCurrencyLen characters, printable, no spaces.
	Currency string
}

// MaxCurrencyLen bounds the length of [Options].Currency.
const MaxCurrencyLen = 16

// CostUnits names money when no currency was given.
const CostUnits = "cost units"

// moneyName is the name of a plan's money: its currency, or CostUnits.
func moneyName(currency string) string {
	if currency == "" {
		return CostUnits
	}
	return currency
}

// money is an amount with its currency: "8760 USD", "8760 cost units".
func money(v float64, currency string) string { return num(v) + " " + moneyName(currency) }

// Validate returns every problem of o at once (nil when valid), each a *field.Error.
func (o Options) Validate() []error {
	var errs []error
	if o.ScaleUpLag < 0 {
		errs = append(errs, field.Errorf(FieldScaleUpLag, "%v: must be ≥ 0, how long before demand needs them replicas must be started", o.ScaleUpLag))
	}
	if h := o.HoursPerMonth; !finite(h) || h < 0 {
		errs = append(errs, field.Errorf(FieldHoursPerMonth, "%s: must be a finite number of hours > 0 (0 means %d)", num(h), DefaultHoursPerMonth))
	}
	if k := o.MaxScale; !finite(k) || (k != 0 && k < 1) {
		errs = append(errs, field.Errorf(FieldMaxScale, "%s: must be a finite factor ≥ 1 (0 means %d)", num(k), DefaultMaxScale))
	}
	if c := o.Currency; utf8.RuneCountInString(c) > MaxCurrencyLen || !utf8.ValidString(c) || strings.IndexFunc(c, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) >= 0 {
		errs = append(errs, field.Sentencef(FieldCurrency, "%v %q: a currency is a short name without spaces (\"USD\", \"EUR\", \"€\"), at most %d characters", field.Ref(FieldCurrency), c, MaxCurrencyLen))
	}
	return errs
}

func (o Options) withDefaults() Options {
	if o.HoursPerMonth == 0 {
		o.HoursPerMonth = DefaultHoursPerMonth
	}
	if o.MaxScale == 0 {
		o.MaxScale = DefaultMaxScale
	}
	return o
}

// Result is the capacity plan of one deployment for one forecast.
type Result struct {
	Deployment Deployment `json:"deployment"`
	// HoursPerMonth, PeriodHours and ScaleUpLagSeconds echo the settings used.
	HoursPerMonth float64 `json:"hours_per_month"`
	// Currency names the money of every cost here ([Options].Currency); empty: cost units.
	Currency          string  `json:"currency,omitempty"`
	PeriodHours       float64 `json:"period_hours"`
	ScaleUpLagSeconds float64 `json:"scale_up_lag_seconds"`

	// Forecast says where the forecast comes from when that is worth stating (a trace's
	// buckets); Warnings what a planner must know about it (a peak that depends on the bucket).
	Forecast string   `json:"forecast,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// PeakRate and MeanRate are the forecast's highest and time-weighted mean demand, req/s.
	PeakRate float64 `json:"peak_rate"`
	MeanRate float64 `json:"mean_rate"`
	// PeakReplicas is N = ⌈PeakRate / OperatingRate⌉, and PeakReplicasFormula that arithmetic
	// written out ("N = ⌈peak / operating rate⌉ = ⌈120 / 9.75⌉ = 13").
	PeakReplicas        int    `json:"peak_replicas"`
	PeakReplicasFormula string `json:"peak_replicas_formula"`
	// LoadPerReplicaAtPeak is PeakRate / PeakReplicas, req/s: what each replica carries at peak
	// under the scale-out assumption.
	LoadPerReplicaAtPeak float64 `json:"load_per_replica_at_peak"`
	// UtilisationOfCapacityAtPeak is LoadPerReplicaAtPeak / Capacity; null when the capacity
	// is unknown. When the capacity is only a lower bound (Deployment.CapacityIsLowerBound) this
	// is an upper bound of the utilisation: at most this share of the capacity.
	// is unknown.
	UtilisationOfCapacityAtPeak *float64 `json:"utilisation_of_capacity_at_peak"`
	// UtilisationOfOperatingPointAtPeak is LoadPerReplicaAtPeak / OperatingRate, ≤ 1.
	UtilisationOfOperatingPointAtPeak float64 `json:"utilisation_of_operating_point_at_peak"`

	// RequestsPerMonth is the forecast's requests over a month; the tokens are
	// RequestsPerMonth × the deployment's tokens per request.
	RequestsPerMonth        float64 `json:"requests_per_month"`
	EffectiveTokensPerMonth float64 `json:"effective_tokens_per_month"`
	RawTokensPerMonth       float64 `json:"raw_tokens_per_month"`

	// Static runs PeakReplicas all the time; Following scales with the profile.
	Static    Provisioning `json:"static"`
	Following Provisioning `json:"following"`

	// Timeline is one period of the forecast as steps, each holding until the next one's
	// start (the last until the end of the period): the demand and the replicas running
	// when following the profile.
	Timeline []Step `json:"timeline"`
	// Notes state the rules used, in words, with the numbers.
	Notes []string `json:"notes"`
}

// Provisioning is one way of running replicas for the forecast, and what it costs.
type Provisioning struct {
	// Rule is how many replicas run, as a formula.
	Rule string `json:"rule"`
	// MeanReplicas is the time-weighted mean number of replicas running.
	MeanReplicas         float64 `json:"mean_replicas"`
	ReplicaHoursPerMonth float64 `json:"replica_hours_per_month"`
	// CostPerMonth is ReplicaHoursPerMonth × CostPerHour.
	CostPerMonth float64 `json:"cost_per_month"`
	// CostPerMillionEffectiveTokens is CostPerMonth / (EffectiveTokensPerMonth / 10⁶): every
	// replica-hour paid, idle or busy, over the compliant tokens the forecast demands.
	CostPerMillionEffectiveTokens float64 `json:"cost_per_million_effective_tokens"`
	// CostPerMillionRawTokens is the same over every output token.
	CostPerMillionRawTokens float64 `json:"cost_per_million_raw_tokens"`
	// OperatingPointUse is the requests served over what the paid replica-hours could carry
	// at the operating point: 1 − OperatingPointUse of the paid capacity idles.
	OperatingPointUse float64 `json:"operating_point_use"`
}

// Step is one step of a [Result]'s timeline.
type Step struct {
	// TSeconds is the step's start, seconds from the start of the period.
	TSeconds float64 `json:"t_seconds"`
	// Demand is the forecast's rate, req/s.
	Demand float64 `json:"demand"`
	// Replicas is how many replicas run when following the profile.
	Replicas int `json:"replicas"`
}

const (
	secondsPerHour = 3600
	perMillion     = 1e6
	// wholeTolerance: a ratio within this relative distance of a whole number counts as that
	// number, so that ⌈1.1 / 0.1⌉ is 11 (the division gives 11.000000000000002), not 12.
	wholeTolerance = 1e-9
)

// replicas is max(1, ⌈rate / operatingRate⌉), the replicas a demand of rate req/s needs.
func replicas(rate, operatingRate float64) int {
	q := rate / operatingRate
	if r := math.Round(q); math.Abs(q-r) <= wholeTolerance*math.Max(1, r) {
		q = r
	}
	return max(1, int(math.Ceil(q)))
}

// profile is a validated forecast cut into pieces for one scale-up lag.
type profile struct {
	period      time.Duration
	pieces      []piece
	peak        float64
	description string
	warnings    []string
}

func newProfile(f Forecast, lag time.Duration) profile {
	return profile{period: f.Period, pieces: f.pieces(lag), peak: f.Peak(), description: f.Description, warnings: f.Warnings}
}

// scaled is the profile of the forecast with every rate times k (the maximum over a window
// scales with the rates, so the pieces stay where they are).
func (p profile) scaled(k float64) profile {
	q := profile{period: p.period, pieces: make([]piece, len(p.pieces)), peak: p.peak * k, description: p.description, warnings: p.warnings}
	for i, pc := range p.pieces {
		pc.demand *= k
		pc.ready *= k
		q.pieces[i] = pc
	}
	return q
}

// Plan is the capacity plan of deployment d for forecast f: the replicas at the peak, the
// monthly cost of running them all the time and of following the profile, and the cost per
// million effective tokens of each (see the package documentation for the rules). It fails
// on an invalid deployment (no operating rate, a cost ≤ 0, ...), an invalid forecast (no
// points, negative rates, ...) or a forecast with no demand at all, naming every problem.
func Plan(d Deployment, f Forecast, o Options) (Result, error) {
	if err := check(f, o, 1, d); err != nil {
		return Result{}, fmt.Errorf("plan: %w", err)
	}
	o = o.withDefaults()
	return plan(d, newProfile(f, o.ScaleUpLag), o), nil
}

// MaxReplicas bounds the replicas a plan counts: a forecast that needs more of a deployment (at
// the largest scale looked at) is refused, not counted in an int that would overflow (a --peak
// of 1e20 once planned 1 replica). A billion replicas is far beyond any real fleet; a forecast
// that needs more is almost surely in the wrong unit.
const MaxReplicas = 1_000_000_000

// check validates the inputs, every problem at once; scale is the largest multiple of the
// forecast the caller plans for (1, or CompareDeployments's MaxScale).
func check(f Forecast, o Options, scale float64, ds ...Deployment) error {
	var errs []error
	for _, d := range ds {
		errs = append(errs, d.Validate()...)
	}
	ferrs := f.Validate()
	errs = append(errs, ferrs...)
	if len(ferrs) == 0 && f.Peak() == 0 {
		errs = append(errs, errors.New("forecast: no demand: every rate is 0, so there are no tokens to price"))
	}
	if len(ferrs) == 0 {
		for _, d := range ds {
			if !(finite(d.OperatingRate) && d.OperatingRate > 0) {
				continue // Validate said so
			}
			// Written so that an infinite or NaN quotient is refused too.
			if n := f.Peak() * scale / d.OperatingRate; !(n <= MaxReplicas) {
				at, name := "", d.Name
				if name == "" {
					name = "the deployment"
				}
				if scale != 1 {
					at = fmt.Sprintf(" (%s times the peak of %s req/s, the highest level compared)", num(scale), num(f.Peak()))
				}
				errs = append(errs, fmt.Errorf("forecast: a peak of %s req/s%s needs %s replicas of %s at its operating rate of %s req/s, more than the %s a plan counts: is the forecast in requests per second?",
					num(f.Peak()*scale), at, num(n), name, num(d.OperatingRate), num(MaxReplicas)))
			}
		}
	}
	errs = append(errs, o.Validate()...)
	return errors.Join(errs...)
}

// plan computes the result from valid inputs; o has its defaults.
func plan(d Deployment, p profile, o Options) Result {
	periodH := p.period.Hours()
	perMonth := o.HoursPerMonth / periodH
	r := Result{
		Deployment:        d,
		HoursPerMonth:     o.HoursPerMonth,
		Currency:          o.Currency,
		PeriodHours:       periodH,
		ScaleUpLagSeconds: o.ScaleUpLag.Seconds(),
		PeakRate:          p.peak,
		Forecast:          p.description,
		Warnings:          p.warnings,
	}

	var requests, replicaHours float64 // over one period
	for _, pc := range p.pieces {
		dur := pc.end - pc.start
		n := replicas(pc.ready, d.OperatingRate)
		requests += pc.demand * dur.Seconds()
		replicaHours += float64(n) * dur.Hours()
		if k := len(r.Timeline); k > 0 && r.Timeline[k-1].Demand == pc.demand && r.Timeline[k-1].Replicas == n {
			continue
		}
		r.Timeline = append(r.Timeline, Step{TSeconds: pc.start.Seconds(), Demand: pc.demand, Replicas: n})
	}
	r.MeanRate = requests / p.period.Seconds()
	r.RequestsPerMonth = requests * perMonth
	r.EffectiveTokensPerMonth = r.RequestsPerMonth * d.CompliantTokensPerRequest
	r.RawTokensPerMonth = r.RequestsPerMonth * d.RawTokensPerRequest

	n := replicas(p.peak, d.OperatingRate)
	r.PeakReplicas = n
	r.PeakReplicasFormula = fmt.Sprintf("N = ⌈peak / operating rate⌉ = ⌈%s / %s⌉ = %d", num(p.peak), num(d.OperatingRate), n)
	r.LoadPerReplicaAtPeak = p.peak / float64(n)
	if d.Capacity > 0 {
		u := r.LoadPerReplicaAtPeak / d.Capacity
		r.UtilisationOfCapacityAtPeak = &u
	}
	r.UtilisationOfOperatingPointAtPeak = r.LoadPerReplicaAtPeak / d.OperatingRate

	provision := func(rule string, replicaHoursPerPeriod float64) Provisioning {
		v := Provisioning{Rule: rule, MeanReplicas: replicaHoursPerPeriod / periodH,
			ReplicaHoursPerMonth: replicaHoursPerPeriod * perMonth}
		v.CostPerMonth = v.ReplicaHoursPerMonth * d.CostPerHour
		v.CostPerMillionEffectiveTokens = v.CostPerMonth / (r.EffectiveTokensPerMonth / perMillion)
		v.CostPerMillionRawTokens = v.CostPerMonth / (r.RawTokensPerMonth / perMillion)
		v.OperatingPointUse = requests / (replicaHoursPerPeriod * secondsPerHour * d.OperatingRate)
		return v
	}
	r.Static = provision(fmt.Sprintf("N = %d replicas all the time", n), float64(n)*periodH)
	rule := "replicas(t) = max(1, ⌈rate(t) / operating rate⌉)"
	if o.ScaleUpLag > 0 {
		rule = fmt.Sprintf("replicas(t) = max(1, ⌈max rate over [t, t+%s] / operating rate⌉)", fmtDuration(o.ScaleUpLag))
	}
	r.Following = provision(rule, replicaHours)
	r.Notes = notes(r)
	return r
}

func notes(r Result) []string {
	d := r.Deployment
	ns := []string{
		fmt.Sprintf("scale-out assumption: requests spread evenly over the replicas, each seeing rate/N with the burstiness measured at the operating point, so %d replicas carry the %s req/s peak at %s req/s each (the operating point is %s req/s; it already holds the headroom)",
			r.PeakReplicas, num(r.PeakRate), num(r.LoadPerReplicaAtPeak), num(d.OperatingRate)),
	}
	if r.ScaleUpLagSeconds > 0 {
		ns = append(ns, fmt.Sprintf("following the profile, replicas start %s before the demand that needs them and stop as soon as it falls; at least one always runs",
			fmtDuration(time.Duration(r.ScaleUpLagSeconds*float64(time.Second)))))
	} else {
		ns = append(ns, "following the profile, replicas start the instant demand needs them (no scale-up lag) and stop as soon as it falls; at least one always runs")
	}
	ns = append(ns, fmt.Sprintf("a month is %s h: the %s h profile repeats %s times",
		num(r.HoursPerMonth), num(r.PeriodHours), num(r.HoursPerMonth/r.PeriodHours)))
	for _, v := range []struct {
		name string
		p    Provisioning
	}{{"static", r.Static}, {"following", r.Following}} {
		ns = append(ns, fmt.Sprintf("%s: %s replica-hours a month cost %s and deliver %s M effective tokens: %s per million, counting the %.1f %% of paid capacity that idles",
			v.name, num(v.p.ReplicaHoursPerMonth), money(v.p.CostPerMonth, r.Currency), num(r.EffectiveTokensPerMonth/perMillion),
			money(v.p.CostPerMillionEffectiveTokens, r.Currency), 100*(1-v.p.OperatingPointUse)))
	}
	ns = append(ns, tokensNote(d))
	if u := r.UtilisationOfCapacityAtPeak; u != nil {
		if d.CapacityIsLowerBound {
			ns = append(ns, fmt.Sprintf("at the peak each replica runs at most %.1f %% of its capacity: the sweep showed only that the capacity is at least %s req/s (every tier it judged met the objectives), so the true share may be lower",
				100**u, num(d.Capacity)))
		} else {
			ns = append(ns, fmt.Sprintf("at the peak each replica runs at %.1f %% of its capacity (%s req/s)", 100**u, num(d.Capacity)))
		}
	}
	return ns
}

// tokensNote says where the tokens per request come from.
func tokensNote(d Deployment) string {
	c := d.Tokens
	if c == nil {
		return fmt.Sprintf("tokens per request are those at the operating point (%s compliant of %s raw; given, or estimated from throughputs, not counted); a replica that carries less load is assumed to comply at least as often",
			num(d.CompliantTokensPerRequest), num(d.RawTokensPerRequest))
	}
	return fmt.Sprintf("tokens per request are counted in the records (%s): %d of %d requests complied (%.2f %%), with %s output tokens each on average, so a request demanded delivers %s effective tokens and %s raw; a replica that carries less load is assumed to comply at least as often",
		strings.Join(c.Windows, ", "), c.Compliant, c.Requests, 100*c.CompliantShare(), num(c.TokensPerCompliantRequest()),
		num(d.CompliantTokensPerRequest), num(d.RawTokensPerRequest))
}

// fmtDuration is d without zero trailing units: "30m", "1h", "1h30m".
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
