package curve

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// VerdictWords says a verdict in the words of a sweep's tier lines, with what decided it: "meets
// the target", "misses the target", "overloaded: its queue keeps growing" (a tier that never
// settled), "not yet enough requests for a 99 % claim" (uncertain, its share at or above the
// target), "below 99 %, not yet with confidence", "too few requests to judge", "not judged:
// client-bound" (the reason's first words). stable and share are the tier's; reason the
// analysis's (PointVerdict.Reason), for a tier it did not judge.
func VerdictWords(v Verdict, stable bool, share, target float64, reason string) string {
	switch v {
	case VerdictMeets:
		return "meets the target"
	case VerdictFails:
		if !stable {
			return "overloaded: its queue keeps growing"
		}
		return "misses the target"
	case VerdictUncertain:
		if share >= target {
			return fmt.Sprintf("not yet enough requests for a %s claim", pctWords(target))
		}
		return fmt.Sprintf("below %s, not yet with confidence", pctWords(target))
	case VerdictInsufficient:
		return "too few requests to judge"
	case VerdictExcluded:
		why, _, _ := strings.Cut(reason, ":")
		why, _, _ = strings.Cut(why, " (")
		if why == "" {
			return "not judged"
		}
		return "not judged: " + why
	}
	return string(v)
}

// Words is VerdictWords of the point against target.
func (v PointVerdict) Words(target float64) string {
	return VerdictWords(v.Verdict, v.Stable, v.Share, target, v.Reason)
}

// pctWords writes a share as a percentage with two decimals at most ("99 %", "99.5 %").
func pctWords(v float64) string {
	return strconv.FormatFloat(math.Round(10000*v)/100, 'f', -1, 64) + " %"
}

// Count writes a whole number with thousands separated ("7,364"), as the answers write counts.
func Count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
