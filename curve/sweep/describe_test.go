package sweep_test

import (
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure"
)

// flagNames names a sweep's inputs as a command line would.
func flagNames(n string) string {
	return map[string]string{measure.FieldObjectives: "--goodput", result.FieldHeadroom: "--headroom",
		sweep.FieldBudget: "--budget", sweep.FieldMaxTierDuration: "--max-tier-duration"}[n]
}

func TestJudging(t *testing.T) {
	s := result.DefaultSettings()
	none := s
	s.Measure.Objectives = measure.Objectives{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond}
	odd := s
	odd.Params.TargetShare, odd.Params.Confidence, odd.Params.Headroom = 0.995, 0.9, 0.125
	for _, tc := range []struct {
		name  string
		s     result.Settings
		whose string
		named func(string) string
		want  string
	}{
		{"given objectives", s, "", flagNames,
			"judging by ttft:500 tpot:50 for 99 % of requests at 95 % confidence; operating point 20 % below the capacity (--headroom)"},
		{"defaulted objectives say whose", s, "the default for a real target", flagNames,
			"judging by ttft:500 tpot:50 (the default for a real target; --goodput) for 99 % of requests at 95 % confidence; operating point 20 % below the capacity (--headroom)"},
		{"no objective", none, "", flagNames,
			"judging by no latency objective for 99 % of requests at 95 % confidence; operating point 20 % below the capacity (--headroom)"},
		{"fractions of percents", odd, "", flagNames,
			"judging by ttft:500 tpot:50 for 99.5 % of requests at 90 % confidence; operating point 12.5 % below the capacity (--headroom)"},
		{"inputs in the sweep's words", s, "theirs", nil,
			"judging by ttft:500 tpot:50 (theirs; objectives) for 99 % of requests at 95 % confidence; operating point 20 % below the capacity (headroom)"},
	} {
		if got := tc.s.Judging(tc.whose, tc.named); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestBounds(t *testing.T) {
	auto := sweep.Config{Rates: sweep.Rates{Auto: true}, MinTierDuration: 30 * time.Second, MaxTierDuration: 5 * time.Minute,
		TierRequests: 2000, Budget: time.Hour, Settings: result.DefaultSettings()}
	list := auto
	list.Rates = sweep.Rates{List: []float64{1, 2}}
	noBudget := auto
	noBudget.Budget = -1
	fixed := auto
	fixed.Requests = 100
	const head = "each tier runs until its verdict is decided (30s to 5m0s); the sweep stops when it has its answer, "
	for _, tc := range []struct {
		name    string
		c       sweep.Config
		virtual bool
		want    string
	}{
		{"auto: the budget bounds the load", auto, false, head + "at most " + auto.WorstCaseLoad().Round(time.Minute).String() + " of load on the target (--budget)"},
		{"auto on the virtual clock", auto, true, head + "at most " + auto.WorstCaseLoad().Round(time.Minute).String() + " of virtual load (--budget)"},
		{"a list of rates: its tiers' caps, within the budget", list, false, head + "at most " + list.WorstCaseLoad().Round(time.Minute).String() + " of load on the target (the tiers' caps, within the --budget of 1h0m0s)"},
		{"no budget", noBudget, false, head + "at most " + noBudget.WorstCaseLoad().Round(time.Minute).String() + " of load (bound it with --max-tier-duration or --budget)"},
		{"fixed tiers say nothing", fixed, false, ""},
	} {
		if got := tc.c.Bounds(tc.virtual, flagNames); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	if auto.WorstCaseLoad() != time.Hour {
		t.Errorf("an automatic sweep's worst case is its budget, got %v", auto.WorstCaseLoad())
	}
}
