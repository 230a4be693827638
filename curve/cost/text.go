package cost

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text renders the ledger as a table followed by sentences that say the same
// in words, for a terminal.
func (l Ledger) Text() string {
	f := l.formatter()
	var sb strings.Builder

	head := fmt.Sprintf("Cost ledger: B against A (period %s h", f.num(l.HoursPerPeriod, 0))
	if l.Currency != "" {
		head += ", currency " + l.Currency
	}
	sb.WriteString(head + ")\n\n")

	rows := [][3]string{
		{"", "A", "B"},
		{"name", l.A.Option.Name, l.B.Option.Name},
		{"cost per hour", f.num(l.A.Option.CostPerHour, 2), f.num(l.B.Option.CostPerHour, 2)},
		{"raw " + l.Counted() + " throughput (tok/s)", f.tok(l.A.Option.RawThroughput), f.tok(l.B.Option.RawThroughput)},
		{"compliant token share", f.pct(l.A.Option.CompliantShare), f.pct(l.B.Option.CompliantShare)},
		{"effective throughput (tok/s)", f.tok(l.A.EffectiveThroughput), f.tok(l.B.EffectiveThroughput)},
		{"cost per million " + l.EffectiveTokens(), f.moneyNum(l.A.CostPerMillionEffective), f.moneyNum(l.B.CostPerMillionEffective)},
		{"running cost per period at A's effective volume", f.num(l.A.CostPerPeriod, 2), f.num(l.B.CostPerPeriod, 2)},
		{"extra maintenance per period", f.num(l.A.Option.Maintenance, 2), f.num(l.B.Option.Maintenance, 2)},
	}
	writeTable(&sb, rows)
	sb.WriteString("\n")

	sb.WriteString(l.unitCostSentence(f) + "\n")
	sb.WriteString(l.breakEvenSentence(f) + "\n")
	fmt.Fprintf(&sb, "Net savings of moving from A to B at equal task volume: %s per period.\n", f.money(l.NetSavingsPerPeriod))
	fmt.Fprintf(&sb, "Payback: %s.\n", l.PaybackNote)
	if len(l.Notes) > 0 {
		sb.WriteString("Notes:\n")
		for _, n := range l.Notes {
			sb.WriteString("- " + n + "\n")
		}
	}
	return sb.String()
}

// unitCostSentence says how B's cost per effective token compares with A's and
// puts the hourly-cost and raw-throughput differences beside it: "despite" for
// those that point the other way, "with" for the rest.
func (l Ledger) unitCostSentence(f formatter) string {
	ch := l.BvsAUnitCostChange
	var s string
	switch {
	case f.pctRounds0(ch) && ch != 0:
		s = "B costs about the same per effective token as A"
	case ch == 0:
		s = "B costs the same per effective token as A"
	case ch > 0:
		s = fmt.Sprintf("B costs %s more per effective token than A", f.pct(ch))
	default:
		s = fmt.Sprintf("B costs %s less per effective token than A", f.pct(-ch))
	}

	type clause struct {
		text     string
		favoursB int // +1 favours B, -1 favours A, 0 neutral
	}
	rel := func(b, a float64, what, up, down string, upFavoursB bool) clause {
		r := b/a - 1
		if f.pctRounds0(r) {
			return clause{"about the same " + what, 0}
		}
		fav := 1
		if (r > 0) != upFavoursB {
			fav = -1
		}
		if r > 0 {
			return clause{f.pct(r) + " " + up + " " + what, fav}
		}
		return clause{f.pct(-r) + " " + down + " " + what, fav}
	}
	clauses := []clause{
		rel(l.B.Option.CostPerHour, l.A.Option.CostPerHour, "hourly cost", "higher", "lower", false),
		rel(l.B.Option.RawThroughput, l.A.Option.RawThroughput, "raw throughput", "higher", "lower", true),
	}
	outcome := 0 // +1: B better per effective token
	if ch < 0 && !f.pctRounds0(ch) {
		outcome = 1
	} else if ch > 0 && !f.pctRounds0(ch) {
		outcome = -1
	}
	var despite, with []string
	for _, c := range clauses {
		if outcome != 0 && c.favoursB == -outcome {
			despite = append(despite, c.text)
		} else {
			with = append(with, c.text)
		}
	}
	if len(despite) > 0 {
		s += " despite " + strings.Join(despite, " and ")
		if len(with) > 0 {
			s += ", with " + strings.Join(with, " and ")
		}
	} else {
		s += " with " + strings.Join(with, " and ")
	}
	s += fmt.Sprintf(" (%s vs %s per million %s). ",
		f.money(l.B.CostPerMillionEffective), f.money(l.A.CostPerMillionEffective), l.EffectiveTokens())
	s += fmt.Sprintf("Effective "+l.Counted()+" is %s tok/s for A (%s of %s) and %s tok/s for B (%s of %s).",
		f.tok(l.A.EffectiveThroughput), f.pct(l.A.Option.CompliantShare), f.tok(l.A.Option.RawThroughput),
		f.tok(l.B.EffectiveThroughput), f.pct(l.B.Option.CompliantShare), f.tok(l.B.Option.RawThroughput))
	return s
}

func (l Ledger) breakEvenSentence(f formatter) string {
	if l.BreakEvenCompliantShare > 1 {
		return fmt.Sprintf("B cannot break even with A: it would need %s tok/s effective, a compliant share of %s, more than its raw throughput of %s tok/s.",
			f.tok(l.BreakEvenEffectiveThroughput), f.pct(l.BreakEvenCompliantShare), f.tok(l.B.Option.RawThroughput))
	}
	s := fmt.Sprintf("B breaks even with A at a compliant share of %s (%s tok/s effective); ",
		f.pct(l.BreakEvenCompliantShare), f.tok(l.BreakEvenEffectiveThroughput))
	share := l.B.Option.CompliantShare
	switch {
	case share < l.BreakEvenCompliantShare:
		s += fmt.Sprintf("at %s, B is below that line.", f.pct(share))
	case share > l.BreakEvenCompliantShare:
		s += fmt.Sprintf("at %s, B is above that line.", f.pct(share))
	default:
		s += fmt.Sprintf("at %s, B is exactly on that line.", f.pct(share))
	}
	return s
}

// writeTable writes rows with the first column left-aligned and the others
// right-aligned, two spaces apart.
func writeTable(sb *strings.Builder, rows [][3]string) {
	var w [3]int
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		line := r[0] + strings.Repeat(" ", w[0]-utf8.RuneCountInString(r[0]))
		for i := 1; i < len(r); i++ {
			line += "  " + strings.Repeat(" ", w[i]-utf8.RuneCountInString(r[i])) + r[i]
		}
		sb.WriteString(strings.TrimRight(line, " ") + "\n")
	}
}

// formatter renders numbers for humans: thousands separators, percentages
// with one decimal at most, money with two decimals and the currency.
type formatter struct{ currency string }

func (l Ledger) formatter() formatter { return formatter{currency: l.Currency} }

// num formats x with the given decimals and thousands separators.
func (formatter) num(x float64, decimals int) string {
	s := strconv.FormatFloat(math.Abs(x), 'f', decimals, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if x < 0 && strings.Trim(s, "0.") != "" {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

// short formats x with at most two decimals, trailing zeros dropped
// ("2.5", "730").
func (f formatter) short(x float64) string {
	s := f.num(x, 2)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// tok formats a throughput in tokens per second: whole tokens from 100 up,
// otherwise enough decimals to keep three significant digits.
func (f formatter) tok(x float64) string {
	switch a := math.Abs(x); {
	case a >= 100 || a == 0:
		return f.num(x, 0)
	case a >= 10:
		return f.num(x, 1)
	default:
		return f.num(x, 2)
	}
}

// moneyNum formats an amount with two decimals, or more (up to six) when it
// is below 1 so that three significant digits remain.
func (f formatter) moneyNum(x float64) string {
	d := 2
	for a := math.Abs(x); a != 0 && a < 1 && d < 6 && a*math.Pow(10, float64(d)) < 100; d++ {
	}
	return f.num(x, d)
}

// money is moneyNum followed by the currency, when there is one.
func (f formatter) money(x float64) string {
	if f.currency == "" {
		return f.moneyNum(x)
	}
	return f.moneyNum(x) + " " + f.currency
}

// pct formats a share or relative change (0.056) as a percentage ("5.6 %"),
// one decimal, with a trailing ".0" dropped.
func (f formatter) pct(x float64) string {
	s := f.num(x*100, 1)
	s = strings.TrimSuffix(s, ".0")
	return s + " %"
}

// pctRounds0 reports whether x shows as "0 %".
func (f formatter) pctRounds0(x float64) bool { return math.Abs(x*100) < 0.05 }
