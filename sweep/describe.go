package sweep

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/measure"
)

// The lines a sweep starts with, saying how it judges and what bounds it. Inputs are named by
// name (as field.Error.Render names them: a command line passes its flags).

// Judging says how a sweep with settings s judges a tier: "judging by ttft:500 for 99 % of
// requests at 95 % confidence; operating point 20 % below the capacity (headroom)". When the
// objectives were not given, whose says whose they are ("ttft:500 (the default for a real
// target; objectives)"); "" when they were given.
func (s Settings) Judging(whose string, name func(string) string) string {
	name = orSelf(name)
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

// Bounds says, for a sweep whose tiers run until their verdict is decided (neither Requests nor
// Duration), how long a tier runs and the most load the whole sweep may put on the target
// (WorstCaseLoad, and whether the budget or the tiers' caps bound it; virtual: on the virtual
// clock); "" for a sweep of fixed tiers.
func (c Config) Bounds(virtual bool, name func(string) string) string {
	if c.Requests != 0 || c.Duration != 0 {
		return ""
	}
	name = orSelf(name)
	worst := c.WorstCaseLoad().Round(time.Minute)
	load := "of load on the target"
	if virtual {
		load = "of virtual load"
	}
	bound := fmt.Sprintf("at most %s %s (%s)", worst, load, name(FieldBudget))
	if d := c.withDefaults(); worst < d.Budget*time.Duration(d.Repeat) {
		bound = fmt.Sprintf("at most %s %s (the tiers' caps, within the %s of %v)", worst, load, name(FieldBudget), d.Budget)
	}
	if c.NoBudget() {
		bound = fmt.Sprintf("at most %s of load (bound it with %s or %s)", worst, name(FieldMaxTierDuration), name(FieldBudget))
	}
	return fmt.Sprintf("each tier runs until its verdict is decided (%v to %v); the sweep stops when it has its answer, %s",
		c.MinTierDuration, c.MaxTierDuration, bound)
}

// pctWords writes a fraction as a percentage ("99 %", "20 %").
func pctWords(v float64) string { return strconv.FormatFloat(100*v, 'g', 4, 64) + " %" }

// orSelf is name, or the identity when name is nil.
func orSelf(name func(string) string) func(string) string {
	if name == nil {
		return func(s string) string { return s }
	}
	return name
}
