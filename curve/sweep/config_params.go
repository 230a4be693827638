package sweep

import (
	"fmt"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// FieldNoConfirm names the choice to skip the confirmation tier (Config.Confirm).
const FieldNoConfirm = "no confirmation"

// DefaultConfig is a sweep's configuration before its user says anything: automatic rates, the
// documented defaults of its tiers and its search, a confirmation, one decision.
func DefaultConfig() Config {
	return Config{Rates: Rates{Auto: true}, TierRequests: DefaultTierRequests, MinTierDuration: DefaultMinTierDuration,
		MaxTierDuration: DefaultMaxTierDuration, Drain: DefaultDrain, Budget: DefaultBudget, Precision: DefaultPrecision,
		MaxTiers: DefaultMaxTiers, Confirm: true, Repeat: 1}
}

// Params declares the knobs of a sweep, bound to c (DefaultConfig: the defaults): the tiers
// (rates as ParseRates reads them, or concurrency levels as ParseConcurrencies reads them), a
// fixed length of every tier or the bounds of a tier that runs until decided, the drain and the
// pause between tiers, the automatic search's budget, precision and most tiers, the
// confirmation, the repeats. Read them back with Check.
func (c *Config) Params() []param.Param {
	untilDecided := "none: tiers run until decided"
	return []param.Param{
		param.Var(FieldRates, ratesText{&c.Rates}, "tiers: a list 1,2,4,8; a range LO:HI:geom:N or LO:HI:lin:N; or auto (probe saturation, then search the capacity)"),
		param.Var(FieldUsers, usersText{&c.Concurrency}, fmt.Sprintf("closed-loop tiers instead of rates: concurrency levels 1,2,4,8 (users, each sending its next request when the last one ended, after %v) or auto (search the capacity in users)", field.Ref(FieldThink))),
		param.Int(FieldRequests, &c.Requests, "fixed tiers of this many requests instead of tiers that run until their verdict is decided (vLLM's --num-prompts)").Default(untilDecided),
		param.Duration(FieldDuration, &c.Duration, "fixed tiers of this length instead of tiers that run until their verdict is decided (sharded sweeps need it)").Default(untilDecided),
		param.Int(FieldTierRequests, &c.TierRequests, fmt.Sprintf("a tier that runs until decided is planned for this many arrivals at most (within the %v and the %v)", field.Ref(FieldMinTierDuration), field.Ref(FieldMaxTierDuration))),
		param.Duration(FieldMinTierDuration, &c.MinTierDuration, "shortest cap of a tier that runs until decided"),
		param.Duration(FieldMaxTierDuration, &c.MaxTierDuration, fmt.Sprintf("longest cap of a tier that runs until decided (the confirmation may run three times as long, for three times %v)", field.Ref(FieldTierRequests))),
		param.Duration(FieldDrain, &c.Drain, "after a tier's arrivals, how long its stragglers may run before they are canceled, so no tier's tail leaks into the next"),
		param.Duration(FieldCooldown, &c.Cooldown, "pause between tiers"),
		param.Duration(FieldBudget, &c.Budget, "the most load the sweep puts on the target (probes, search, listed tiers and confirmation, drains included): tiers are shortened to fit, or not run, and it says so; the answer is the best it earned in that time; 0: no bound"),
		param.Float(FieldPrecision, &c.Precision, "auto: the search wants tiers within this relative distance on either side of its capacity estimate"),
		param.Int(FieldMaxTiers, &c.MaxTiers, "auto: most tiers of the search (probes and the confirmation apart)"),
		param.Bool(FieldNoConfirm, &c.noConfirm, "do not run the tier that verifies the operating point"),
		param.Int(FieldRepeat, &c.Repeat, "run the whole decision this many times with fresh seeds, and report the run-to-run spread of the capacity"),
	}
}

// Check returns the configuration the params (Params, applied) read and every problem of it
// (Validate): the knobs given are marked Given (a stated zero is a value, not "take the
// default"); concurrency levels given replace the rates; a confirmation skipped is not run.
// Tiers given that did not read (rates or levels: their params said why) are not refused again
// as no tier at all.
func (c Config) Check(ps []param.Param) (Config, []error) {
	given := func(name string) bool { return param.IsGiven(ps, name) }
	unread := given(FieldRates) && !c.Rates.Auto && len(c.Rates.List) == 0 || given(FieldUsers) && !c.Concurrency.Set()
	c.Given = Given{Requests: given(FieldRequests), Duration: given(FieldDuration), TierRequests: given(FieldTierRequests),
		MinTierDuration: given(FieldMinTierDuration), MaxTierDuration: given(FieldMaxTierDuration), Drain: given(FieldDrain),
		Precision: given(FieldPrecision), MaxTiers: given(FieldMaxTiers), Repeat: given(FieldRepeat), Budget: given(FieldBudget)}
	if given(FieldUsers) {
		c.Rates = Rates{}
	} else {
		c.Concurrency = Concurrency{}
	}
	if c.noConfirm {
		c.Confirm = false
	}
	var errs []error
	for _, e := range c.Validate() {
		if fe := field.Of(e); unread && fe != nil && fe.Name == FieldRates {
			continue
		}
		errs = append(errs, e)
	}
	return c, errs
}

// ratesText reads and writes Rates as ParseRates does.
type ratesText struct{ p *Rates }

func (t ratesText) String() string { return t.p.String() }
func (t ratesText) Set(s string) (err error) {
	*t.p, err = ParseRates(s)
	return err
}

// usersText reads and writes a Concurrency's levels as ParseConcurrencies does; its think
// time is another input's.
type usersText struct{ p *Concurrency }

func (t usersText) String() string {
	if t.p.Auto {
		return "auto"
	}
	return levelsText(t.p.Levels)
}
func (t usersText) Set(s string) error {
	c, err := ParseConcurrencies(s)
	c.Think = t.p.Think
	*t.p = c
	return err
}
