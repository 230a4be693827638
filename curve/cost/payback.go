package cost

import "fmt"

// Move is the move from one option to another that the seed article's payback rule judges:
// both priced at equal effective volume (the effective output of the option moved from), with
// their extra maintenance per period and the one-time investment of the move. [NewLedger] and the
// capacity plan (package plan) both call [Move.Payback], so that the rule and its words are the
// same wherever a payback is stated.
type Move struct {
	// From and To name the two options in the words ("A", "B").
	From, To string
	// FromCostPerMillion and ToCostPerMillion are the running costs per million effective tokens.
	FromCostPerMillion, ToCostPerMillion float64
	// Volume is the equal effective volume, in million effective tokens per period: what From
	// delivers in one period.
	Volume float64
	// FromMaintenance and ToMaintenance are the recurring extra maintenance costs per period
	// not already part of the running costs.
	FromMaintenance, ToMaintenance float64
	// OneTime is the one-time investment of the move (≥ 0; 0 when none was given).
	OneTime float64
	// HoursPerPeriod is the period's length in hours, named in the words.
	HoursPerPeriod float64
	// Currency labels money amounts; may be empty.
	Currency string
}

// Payback is what the payback rule says of a [Move].
type Payback struct {
	// RunningSaving is the running-cost saving per period at equal effective volume:
	// (FromCostPerMillion − ToCostPerMillion) · Volume. Values within floating-point rounding
	// of zero are exactly 0.
	RunningSaving float64
	// NetSavings is RunningSaving less the extra maintenance of To over From, per period.
	NetSavings float64
	// Periods is OneTime / NetSavings when the net savings are positive (0 when no one-time
	// investment was given), nil otherwise: a move whose net savings are zero or negative never
	// recovers its investment.
	Periods *float64
	// Note says it in words, the same words wherever the rule is applied.
	Note string
}

// Payback applies the seed article's rule: payback period = one-time investment ÷ net savings
// per period, where the net savings are the running-cost difference at equal effective volume
// less the difference in extra maintenance; no payback when the net savings are zero or
// negative.
func (m Move) Payback() Payback {
	fromCost, toCost := m.FromCostPerMillion*m.Volume, m.ToCostPerMillion*m.Volume
	running := snap((m.FromCostPerMillion-m.ToCostPerMillion)*m.Volume, fromCost+toCost)
	maintDiff := m.ToMaintenance - m.FromMaintenance
	net := snap(running-maintDiff, fromCost+toCost+m.FromMaintenance+m.ToMaintenance)
	p := Payback{RunningSaving: running, NetSavings: net}
	p.Periods, p.Note = m.words(running, maintDiff, net)
	return p
}

// words derives Periods and Note.
func (m Move) words(running, maintDiff, net float64) (*float64, string) {
	f := formatter{currency: m.Currency}
	if net > 0 {
		periods := m.OneTime / net
		if m.OneTime == 0 {
			return &periods, fmt.Sprintf("no one-time investment given; moving from %s to %s saves %s per period",
				m.From, m.To, f.money(net))
		}
		return &periods, fmt.Sprintf("the one-time investment of %s is recovered in %s periods of %s h (net savings %s per period)",
			f.money(m.OneTime), f.short(periods), f.short(m.HoursPerPeriod), f.money(net))
	}

	var why string
	switch {
	case running < 0:
		why = fmt.Sprintf("%s costs more per effective token than %s (%s vs %s per million)",
			m.To, m.From, f.money(m.ToCostPerMillion), f.money(m.FromCostPerMillion))
	case running == 0:
		why = fmt.Sprintf("%s costs the same per effective token as %s", m.To, m.From)
	default:
		why = fmt.Sprintf("%s's extra maintenance (%s more per period) eats its running-cost saving of %s per period",
			m.To, f.money(maintDiff), f.money(running))
	}
	if running <= 0 {
		switch {
		case maintDiff > 0:
			why += fmt.Sprintf(", and its extra maintenance is %s more per period", f.money(maintDiff))
		case maintDiff < 0 && net < 0:
			why += fmt.Sprintf("; its lower maintenance (%s less per period) does not make up for it", f.money(-maintDiff))
		}
	}
	state := "zero"
	if net < 0 {
		state = "negative (" + f.money(net) + ")"
	}
	if m.OneTime == 0 {
		return nil, fmt.Sprintf("no one-time investment given; moving from %s to %s would not save: net savings per period are %s because %s",
			m.From, m.To, state, why)
	}
	return nil, fmt.Sprintf("the one-time investment of %s is never recovered: net savings per period are %s because %s",
		f.money(m.OneTime), state, why)
}
