package sweep

import (
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
)

// The lines a sweep starts with, saying how it judges and what bounds it. Inputs are named by
// name (as field.Error.Render names them: a command line passes its flags).

// Bounds says, for a sweep whose tiers run until their verdict is decided (neither Requests nor
// Duration), how long a tier runs and the most load the whole sweep may put on the target
// (WorstCaseLoad, and whether the budget or the tiers' caps bound it; virtual: on the virtual
// clock); "" for a sweep of fixed tiers.
func (c Config) Bounds(virtual bool, name func(string) string) string {
	if c.Requests != 0 || c.Duration != 0 {
		return ""
	}
	name = result.OrSelf(name)
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
