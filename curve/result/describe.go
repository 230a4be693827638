package result

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/loadcurve/loadcurve/measure"
)

// The line a sweep or a run starts with, saying how it judges. Inputs are named by name (as
// field.Error.Render names them: a command line passes its flags).

// Judging says how a sweep with settings s judges a tier: "judging by ttft:500 for 99 % of
// requests at 95 % confidence; operating point 20 % below the capacity (headroom)". When the
// objectives were not given, whose says whose they are ("ttft:500 (the default for a real
// target; objectives)"); "" when they were given.
func (s Settings) Judging(whose string, name func(string) string) string {
	name = OrSelf(name)
	objs := s.Measure.Objectives.String()
	if objs == "" {
		objs = "no latency objective"
	}
	if whose != "" {
		objs += " (" + whose + "; " + name(measure.FieldObjectives) + ")"
	}
	p := s.Params
	return fmt.Sprintf("judging by %s for %s of requests at %s confidence; operating point %s below the capacity (%s)",
		objs, pctWords(p.TargetShare), pctWords(p.Confidence), pctWords(p.Headroom), name(FieldHeadroom))
}

// JudgingTier is Judging for a run of one tier, which has no operating point: "judging by
// ttft:100 tpot:0.75 (the embedded deployment's own; objectives) for 99 % of requests at 95 %
// confidence".
func (s Settings) JudgingTier(whose string, name func(string) string) string {
	j := s.Judging(whose, name)
	if i := strings.LastIndex(j, "; operating point"); i >= 0 {
		j = j[:i]
	}
	return j
}

// pctWords writes a fraction as a percentage ("99 %", "20 %").
func pctWords(v float64) string { return strconv.FormatFloat(100*v, 'g', 4, 64) + " %" }

// OrSelf is name, or the identity when name is nil: what a describing function names an
// input with when its caller gives no way (a command line passes its flags).
func OrSelf(name func(string) string) func(string) string {
	if name == nil {
		return func(s string) string { return s }
	}
	return name
}
