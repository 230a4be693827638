package sweep

import (
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/workloads"
)

// CheckClosedLoop refuses, naming the input, what a sweep of users (Config.Concurrency) cannot
// also be given: rates (ratesStated; the tiers are concurrency levels or rates, not both), and
// a think time drawn from a distribution other than fixed (thinkDist, as package workloads
// names them: a closed loop's users think Concurrency.Think each).
func CheckClosedLoop(ratesStated bool, thinkDist string) []error {
	var errs []error
	if ratesStated {
		errs = append(errs, field.Errorf(FieldUsers, "give concurrency levels or %v, not both", field.Ref(FieldRates)))
	}
	if thinkDist != "" && thinkDist != workloads.ThinkFixed {
		errs = append(errs, field.Errorf(workloads.FieldThinkDist, "a closed loop's users think a fixed %v", field.Ref(FieldThink)))
	}
	return errs
}
