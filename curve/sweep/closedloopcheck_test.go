package sweep_test

import (
	"testing"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/workloads"
)

func TestCheckClosedLoop(t *testing.T) {
	flags := map[string]string{sweep.FieldUsers: "--max-concurrencies", sweep.FieldRates: "--request-rates",
		workloads.FieldThinkDist: "--think-time-dist", sweep.FieldThink: "--think-time"}
	for _, tc := range []struct {
		name        string
		ratesStated bool
		thinkDist   string
		want        []string // rendered with flags
	}{
		{"levels alone", false, "", nil},
		{"a fixed think time, said so", false, workloads.ThinkFixed, nil},
		{"rates too", true, "", []string{"--max-concurrencies: give concurrency levels or --request-rates, not both"}},
		{"drawn think times", false, workloads.ThinkExponential, []string{"--think-time-dist: a closed loop's users think a fixed --think-time"}},
		{"both", true, workloads.ThinkExponential, []string{"--max-concurrencies: give concurrency levels or --request-rates, not both",
			"--think-time-dist: a closed loop's users think a fixed --think-time"}},
	} {
		errs := sweep.CheckClosedLoop(tc.ratesStated, tc.thinkDist)
		if len(errs) != len(tc.want) {
			t.Errorf("%s: CheckClosedLoop = %v, want %q", tc.name, errs, tc.want)
			continue
		}
		for i, e := range errs {
			fe := field.Of(e)
			if fe == nil {
				t.Errorf("%s: %v is not a field error", tc.name, e)
				continue
			}
			if got := fe.Render(func(n string) string { return flags[n] }); got != tc.want[i] {
				t.Errorf("%s: %q, want %q", tc.name, got, tc.want[i])
			}
		}
	}
}
