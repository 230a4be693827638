package cost

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/loadcurve/loadcurve/internal/field"
)

// DefaultHoursPerPeriod is the period used when [Params].HoursPerPeriod is 0:
// 730 hours, an average month (8,760 h / 12).
const DefaultHoursPerPeriod = 730

// zeroTolerance is the relative size below which a net saving (or a
// running-cost difference) counts as exactly zero: the amounts are products
// and quotients of a handful of float64 values, whose rounding error is a few
// parts in 10¹⁶, so anything below 10⁻¹² of the amounts involved is rounding,
// not money. Without it a break-even case could print a payback of 10¹⁵ periods.
const zeroTolerance = 1e-12

// Params are the ledger's settings besides the two options.
type Params struct {
	// Currency labels money amounts (e.g. "USD"); may be empty.
	Currency string
	// HoursPerPeriod is the length of one period in hours; 0 means
	// DefaultHoursPerPeriod. Must otherwise be finite and > 0.
	HoursPerPeriod float64
	// OneTime is the one-time investment of moving from A to B (migration,
	// first acceptance); finite and ≥ 0. 0 means none was given.
	OneTime float64
	// Tokens names the tokens the throughputs count, as the texts say them:
	// "" (or "output") for output tokens, "input" for an embeddings endpoint,
	// whose effective tokens are the input tokens of compliant requests.
	Tokens string
}

// OptionResult is one option with its derived figures.
type OptionResult struct {
	Option Option
	// EffectiveThroughput is RawThroughput · CompliantShare, tokens per second.
	EffectiveThroughput float64
	// CostPerMillionEffective is the running cost per million effective tokens.
	CostPerMillionEffective float64
	// CostPerPeriod is the running cost per period at equal task volume: the
	// cost of producing A's effective output (A's EffectiveThroughput for
	// HoursPerPeriod hours) at this option's cost per effective token. For A it
	// is A's CostPerHour · HoursPerPeriod. Maintenance is not included.
	CostPerPeriod float64
}

// Ledger is the economic comparison of option B against option A.
type Ledger struct {
	Currency       string
	HoursPerPeriod float64
	OneTime        float64
	Tokens         string // what the tokens count (Params.Tokens): "" for output, "input"
	A, B           OptionResult
	// BvsAUnitCostChange is C_B/C_A − 1 for the costs per effective token:
	// +0.056 means B costs 5.6 % more per effective token.
	BvsAUnitCostChange float64
	// BreakEvenCompliantShare is s* = BreakEvenEffectiveThroughput / raw_B:
	// the compliant share at which B's unit cost equals A's. It may exceed 1,
	// in which case B cannot break even (a note says so).
	BreakEvenCompliantShare float64
	// BreakEvenEffectiveThroughput is cost_B · Q_A / cost_A, tokens per second.
	BreakEvenEffectiveThroughput float64
	// NetSavingsPerPeriod is the saving of moving from A to B at equal task
	// volume (A's effective output over one period):
	//   (C_A − C_B) · Q_A · 3600 · HoursPerPeriod / 10⁶ − (maint_B − maint_A),
	// that is A.CostPerPeriod − B.CostPerPeriod − (maint_B − maint_A).
	// Positive means B saves money. Values within floating-point rounding of
	// zero are stored as exactly 0.
	NetSavingsPerPeriod float64
	// PaybackPeriods is OneTime / NetSavingsPerPeriod when the net savings are
	// positive (0 when no one-time investment was given), nil otherwise. Never
	// negative.
	PaybackPeriods *float64
	// PaybackNote always says, in words, whether and when the one-time
	// investment is recovered, or why it never is.
	PaybackNote string
	// Notes are further remarks (never nil): the definitions used, and
	// warnings such as a break-even share above 100 %.
	Notes []string
}

// Validate returns the problems of p, each naming its field ("hours-per-period", "one-time").
func (p Params) Validate() []error {
	var errs []error
	if h := p.HoursPerPeriod; math.IsNaN(h) || math.IsInf(h, 0) || h < 0 {
		errs = append(errs, field.Errorf(FieldHoursPerPeriod, "hours per period = %g: must be a finite number > 0", h))
	}
	if math.IsNaN(p.OneTime) || math.IsInf(p.OneTime, 0) || p.OneTime < 0 {
		errs = append(errs, field.Errorf(FieldOneTime, "one-time investment = %g: must be a finite number ≥ 0", p.OneTime))
	}
	if p.Tokens != "" && p.Tokens != "output" && p.Tokens != "input" {
		errs = append(errs, field.Errorf("tokens", "tokens = %q: must be output or input", p.Tokens))
	}
	return errs
}

// NewLedger builds the ledger of b against a. Invalid options or parameters are
// reported all at once. It also fails when A costs nothing per hour (a
// relative comparison against a free option is undefined) or when either
// option has zero effective throughput (its unit cost is unbounded).
func NewLedger(a, b Option, p Params) (Ledger, error) {
	var errs []error
	for _, o := range []struct {
		role string
		opt  Option
	}{{"A", a}, {"B", b}} {
		v := o.opt
		if v.Name == "" {
			v.Name = o.role
		}
		errs = append(errs, v.Validate()...)
	}
	errs = append(errs, p.Validate()...)
	hours := p.HoursPerPeriod
	if hours == 0 {
		hours = DefaultHoursPerPeriod
	}
	if len(errs) > 0 {
		return Ledger{}, fmt.Errorf("cost ledger: %w", errors.Join(errs...))
	}
	if a.CostPerHour == 0 {
		return Ledger{}, errors.New("cost ledger: option A costs 0 per hour, so B cannot be compared against it relatively")
	}
	ca, err := a.CostPerMillionEffective()
	if err != nil {
		return Ledger{}, fmt.Errorf("cost ledger, option A: %w", err)
	}
	cb, err := b.CostPerMillionEffective()
	if err != nil {
		return Ledger{}, fmt.Errorf("cost ledger, option B: %w", err)
	}

	qa := a.EffectiveThroughput()
	// Million effective tokens that A produces in one period: the common task
	// volume at which both options are priced.
	volume := qa * secondsPerHour * hours / perMillion
	l := Ledger{
		Currency:       p.Currency,
		HoursPerPeriod: hours,
		OneTime:        p.OneTime,
		Tokens:         p.Tokens,
		A: OptionResult{Option: a, EffectiveThroughput: qa,
			CostPerMillionEffective: ca, CostPerPeriod: ca * volume},
		B: OptionResult{Option: b, EffectiveThroughput: b.EffectiveThroughput(),
			CostPerMillionEffective: cb, CostPerPeriod: cb * volume},
		BvsAUnitCostChange: cb/ca - 1,
	}
	l.BreakEvenEffectiveThroughput = b.CostPerHour * qa / a.CostPerHour
	l.BreakEvenCompliantShare = l.BreakEvenEffectiveThroughput / b.RawThroughput

	pb := Move{From: "A", To: "B", FromCostPerMillion: ca, ToCostPerMillion: cb, Volume: volume,
		FromMaintenance: a.Maintenance, ToMaintenance: b.Maintenance, OneTime: p.OneTime,
		HoursPerPeriod: hours, Currency: p.Currency}.Payback()
	l.NetSavingsPerPeriod, l.PaybackPeriods, l.PaybackNote = pb.NetSavings, pb.Periods, pb.Note
	l.Notes = notes(l)
	return l, nil
}

// snap returns 0 for x within rounding of zero relative to scale.
func snap(x, scale float64) float64 {
	if math.Abs(x) <= zeroTolerance*math.Abs(scale) {
		return 0
	}
	return x
}

func notes(l Ledger) []string {
	f := l.formatter()
	n := []string{
		fmt.Sprintf("net savings are at equal task volume: A's effective %s (%s tok/s for %s h per period), priced at each option's cost per effective token, minus the difference in extra maintenance",
			l.Counted(), f.tok(l.A.EffectiveThroughput), f.short(l.HoursPerPeriod)),
		"the break-even line compares running costs only; the one-time investment is not in it",
	}
	if l.BreakEvenCompliantShare > 1 {
		n = append(n, fmt.Sprintf("B can never break even with A: it would need %s tok/s effective, %s of its raw throughput",
			f.tok(l.BreakEvenEffectiveThroughput), f.pct(l.BreakEvenCompliantShare)))
	}
	return n
}

// optionJSON and ledgerJSON are the ledger's JSON form, with snake_case keys.
type optionJSON struct {
	Name                    string  `json:"name"`
	CostPerHour             float64 `json:"cost_per_hour"`
	RawThroughput           float64 `json:"raw_throughput"`
	CompliantShare          float64 `json:"compliant_share"`
	EffectiveThroughput     float64 `json:"effective_throughput"`
	CostPerMillionEffective float64 `json:"cost_per_million_effective"`
	Maintenance             float64 `json:"maintenance"`
	CostPerPeriod           float64 `json:"cost_per_period"`
}

type ledgerJSON struct {
	Currency                     string     `json:"currency"`
	HoursPerPeriod               float64    `json:"hours_per_period"`
	A                            optionJSON `json:"a"`
	B                            optionJSON `json:"b"`
	BvsAUnitCostChange           float64    `json:"b_vs_a_unit_cost_change"`
	BreakEvenCompliantShare      float64    `json:"break_even_compliant_share"`
	BreakEvenEffectiveThroughput float64    `json:"break_even_effective_throughput"`
	NetSavingsPerPeriod          float64    `json:"net_savings_per_period"`
	OneTime                      float64    `json:"one_time"`
	PaybackPeriods               *float64   `json:"payback_periods"`
	PaybackNote                  string     `json:"payback_note"`
	Notes                        []string   `json:"notes"`
	Tokens                       string     `json:"tokens,omitempty"`
}

// MarshalJSON encodes the ledger with snake_case keys:
// currency, hours_per_period, a, b (each: name, cost_per_hour, raw_throughput,
// compliant_share, effective_throughput, cost_per_million_effective, maintenance,
// cost_per_period),
// b_vs_a_unit_cost_change, break_even_compliant_share,
// break_even_effective_throughput, net_savings_per_period, one_time,
// payback_periods (number or null), payback_note, notes, and tokens ("input"
// for input tokens; absent for output tokens).
func (l Ledger) MarshalJSON() ([]byte, error) {
	conv := func(r OptionResult) optionJSON {
		return optionJSON{r.Option.Name, r.Option.CostPerHour, r.Option.RawThroughput, r.Option.CompliantShare,
			r.EffectiveThroughput, r.CostPerMillionEffective, r.Option.Maintenance, r.CostPerPeriod}
	}
	notes := l.Notes
	if notes == nil {
		notes = []string{}
	}
	b, err := json.Marshal(ledgerJSON{l.Currency, l.HoursPerPeriod, conv(l.A), conv(l.B), l.BvsAUnitCostChange,
		l.BreakEvenCompliantShare, l.BreakEvenEffectiveThroughput, l.NetSavingsPerPeriod,
		l.OneTime, l.PaybackPeriods, l.PaybackNote, notes, l.Tokens})
	if err != nil {
		return nil, fmt.Errorf("encoding cost ledger: %w", err)
	}
	return b, nil
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (l *Ledger) UnmarshalJSON(data []byte) error {
	var in ledgerJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("decoding cost ledger: %w", err)
	}
	conv := func(o optionJSON) OptionResult {
		return OptionResult{Option: Option{Name: o.Name, CostPerHour: o.CostPerHour, RawThroughput: o.RawThroughput, CompliantShare: o.CompliantShare,
			Maintenance: o.Maintenance}, EffectiveThroughput: o.EffectiveThroughput, CostPerMillionEffective: o.CostPerMillionEffective,
			CostPerPeriod: o.CostPerPeriod}
	}
	*l = Ledger{Currency: in.Currency, HoursPerPeriod: in.HoursPerPeriod, A: conv(in.A), B: conv(in.B),
		BvsAUnitCostChange: in.BvsAUnitCostChange, BreakEvenCompliantShare: in.BreakEvenCompliantShare,
		BreakEvenEffectiveThroughput: in.BreakEvenEffectiveThroughput, NetSavingsPerPeriod: in.NetSavingsPerPeriod,
		OneTime: in.OneTime, PaybackPeriods: in.PaybackPeriods, PaybackNote: in.PaybackNote, Notes: in.Notes, Tokens: in.Tokens}
	return nil
}

// Counted is what the ledger's tokens count, as its texts say it: "output" or "input".
func (l Ledger) Counted() string {
	if l.Tokens == "" {
		return "output"
	}
	return l.Tokens
}

// EffectiveTokens names the effective tokens: "effective tokens", or "effective input
// tokens" when they are not output tokens.
func (l Ledger) EffectiveTokens() string {
	if l.Counted() == "output" {
		return "effective tokens"
	}
	return "effective " + l.Counted() + " tokens"
}
