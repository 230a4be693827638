package plan_test

import (
	"slices"
	"testing"

	"github.com/loadcurve/loadcurve/plan"
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
