package report

import (
	"math"
	"strconv"
	"strings"
)

// NaNText is what [FormatFloat] prints for NaN, the value of a quantity that
// is undefined (for example TPOT when no request produced two tokens).
const NaNText = "—"

// FormatFloat formats v in fixed-point notation with digits digits after the
// decimal point, the one number format used by tables and plot labels.
// A negative digits gives the shortest representation that reads back as v.
// +Inf prints as "inf" (the spelling of an unbounded request rate on the
// command line), -Inf as "-inf" and NaN as [NaNText]. A value that rounds to
// zero prints without a minus sign ("0.00", never "-0.00").
func FormatFloat(v float64, digits int) string {
	switch {
	case math.IsNaN(v):
		return NaNText
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	if digits < 0 {
		digits = -1
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.HasPrefix(s, "-") && strings.Trim(s[1:], "0.") == "" {
		s = s[1:]
	}
	return s
}

// formatShort formats v with a number of decimals suited to its magnitude
// (three significant figures for values below 100, none above) and without
// trailing zeros. It is used for labels inside plots, where space is short.
func formatShort(v float64) string {
	a := math.Abs(v)
	digits := 0
	switch {
	case a == 0 || a >= 100:
		digits = 0
	case a >= 10:
		digits = 1
	case a >= 1:
		digits = 2
	default:
		// Three significant figures below 1: 0.123, 0.0123.
		digits = 2 - int(math.Floor(math.Log10(a)))
	}
	s := FormatFloat(v, digits)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
