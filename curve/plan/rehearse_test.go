package plan_test

import (
	"slices"
	"testing"

	"github.com/loadcurve/loadcurve/curve/plan"
)

// TestRehearse: the planned count first; a failed plan tries more replicas until one meets (at
// most three); one fewer last, when there is more than one.
func TestRehearse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		planned int
		meets   int // the fewest replicas that meet
		uncert  bool
		want    []int
	}{
		{"holds, tight below", 3, 3, false, []int{3, 2}},
		{"holds with room", 3, 1, false, []int{3, 2}},
		{"one replica: nothing below", 1, 1, false, []int{1}},
		{"fails: one more holds", 3, 4, false, []int{3, 4, 2}},
		{"fails: three more do not hold", 2, 9, false, []int{2, 3, 4, 5, 1}},
		{"uncertain: not a failure", 3, 3, true, []int{3, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tried []int
			trials, err := plan.Rehearse(tc.planned, func(n int) (plan.Trial, error) {
				tried = append(tried, n)
				v := "fails"
				switch {
				case tc.uncert:
					v = "uncertain"
				case n >= tc.meets:
					v = "meets"
				}
				return plan.Trial{Replicas: n, Verdict: v}, nil
			})
			if err != nil || !slices.Equal(tried, tc.want) || len(trials) != len(tc.want) || !trials[0].Planned {
				t.Fatalf("tried %v, want %v (%v)", tried, tc.want, err)
			}
			for _, tr := range trials[1:] {
				if tr.Planned {
					t.Errorf("%d replicas marked as the plan", tr.Replicas)
				}
			}
		})
	}
}

// TestConclusion: what a rehearsal means for its plan, in each case Rehearse can produce.
func TestConclusion(t *testing.T) {
	tr := func(n int, v string, share, hi float64) plan.Trial {
		return plan.Trial{Deployment: "A", Replicas: n, Verdict: v, TargetShare: 0.99, Share: share, ShareHi: hi, Reason: "why"}
	}
	for _, tc := range []struct {
		name   string
		trials []plan.Trial
		want   string
	}{
		{"tight", []plan.Trial{tr(3, "meets", 1, 1), tr(2, "fails", 0.956, 0.9846)},
			"A: the plan holds and is tight: 3 replicas meet the objectives, 2 replicas fail them."},
		{"tight at two", []plan.Trial{tr(2, "meets", 1, 1), tr(1, "fails (unstable)", 0.07, 0.1)},
			"A: the plan holds and is tight: 2 replicas meet the objectives, 1 replica fails them."},
		{"room", []plan.Trial{tr(3, "meets", 1, 1), tr(2, "meets", 0.999, 1)},
			"A: the plan holds with room: 2 replicas meet the objectives too (the plan assumes each replica sees the peak's burstiness; a balancer that smooths it, such as round-robin, needs fewer)."},
		{"one replica", []plan.Trial{tr(1, "meets", 1, 1)}, "A: the plan holds: 1 replica meets the objectives."},
		{"fewer uncertain", []plan.Trial{tr(3, "meets", 1, 1), tr(2, "uncertain", 0.995, 1)},
			"A: the plan holds: 3 replicas meet the objectives; 2 replicas: uncertain."},
		{"fails, one more holds", []plan.Trial{tr(3, "fails", 0.956, 0.9846), tr(4, "meets", 1, 1), tr(2, "fails (unstable)", 0.2, 0.3)},
			"A: the plan fails its rehearsal: 3 replicas served 95.60 % compliant against the 99.00 % target (3.40 points short; its interval reaches 98.46 %). 4 replicas meet the objectives: plan 4."},
		{"fails, nothing holds", []plan.Trial{tr(2, "fails", 0.5, 0.6), tr(3, "fails", 0.6, 0.7), tr(4, "uncertain", 0.98, 0.995), tr(5, "fails", 0.9, 0.95), tr(1, "fails", 0, 0.1)},
			"A: the plan fails its rehearsal: 2 replicas served 50.00 % compliant against the 99.00 % target (49.00 points short; its interval reaches 60.00 %), and no count up to 5 met the objectives: the operating point does not hold at this scale (sweep again)."},
		{"uncertain", []plan.Trial{tr(3, "uncertain", 0.995, 1), tr(2, "fails", 0.9, 0.95)},
			"A: the rehearsal of 3 replicas was uncertain: a longer tier (--tier-requests, --max-tier-duration) would decide."},
		{"excluded", []plan.Trial{tr(3, "excluded", 0.995, 1)}, "A: the rehearsal of 3 replicas gave no verdict (excluded): why."},
		{"nothing", nil, ""},
	} {
		if got := plan.Conclusion(tc.trials); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
