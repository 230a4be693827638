package plan_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/plan"
)

// trials of two deployments' rehearsals, as Rehearse returns them one after the other: A's plan
// of 3 replicas holds and 2 fail; B's plan of 1 fails and 2 hold.
var twoRehearsals = []plan.Trial{
	{Deployment: "A", Replicas: 3, Planned: true, PeakRate: 30, RealisedRate: 29.8, Verdict: "meets the objectives", TargetShare: 0.99, Share: 0.995, ShareLo: 0.991, ShareHi: 0.998},
	{Deployment: "A", Replicas: 2, PeakRate: 30, RealisedRate: 30.1, Verdict: "fails the objectives", TargetShare: 0.99, Share: 0.8, ShareLo: 0.78, ShareHi: 0.82},
	{Deployment: "B", Replicas: 1, Planned: true, PeakRate: 30, RealisedRate: 30, Verdict: "fails the objectives", TargetShare: 0.99, Share: 0.5, ShareLo: 0.45, ShareHi: 0.55},
	{Deployment: "B", Replicas: 2, PeakRate: 30, RealisedRate: 30, Verdict: "meets the objectives", TargetShare: 0.99, Share: 0.999, ShareLo: 0.995, ShareHi: 1},
}

// TestTrialGroups: each deployment's trials are one group, starting at its planned count; a
// list that does not start with a planned trial still has a first group.
func TestTrialGroups(t *testing.T) {
	for _, tc := range []struct {
		name   string
		trials []plan.Trial
		sizes  []int
	}{
		{"none", nil, nil},
		{"two deployments", twoRehearsals, []int{2, 2}},
		{"one planned trial", twoRehearsals[:1], []int{1}},
		{"no planned trial first", twoRehearsals[1:], []int{1, 2}},
	} {
		var sizes []int
		for _, g := range plan.TrialGroups(tc.trials) {
			sizes = append(sizes, len(g))
		}
		if !reflect.DeepEqual(sizes, tc.sizes) {
			t.Errorf("%s: groups of %v, want %v", tc.name, sizes, tc.sizes)
		}
	}
}

// TestDocumentRoundTrip: plan.json holds the trials and one conclusion per deployment
// rehearsed, and reads back to the same document; without a rehearsal it has neither key.
func TestDocumentRoundTrip(t *testing.T) {
	d := plan.Document{Plans: []plan.Result{{}}}
	d.SetRehearsals(twoRehearsals)
	if len(d.Conclusions) != 2 || d.Conclusions[0] != plan.Conclusion(twoRehearsals[:2]) || d.Conclusions[1] != plan.Conclusion(twoRehearsals[2:]) {
		t.Fatalf("conclusions %q", d.Conclusions)
	}
	b, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), "}\n") || !strings.Contains(string(b), "\n  \"rehearsal_conclusions\": [") {
		t.Errorf("plan.json's layout:\n%s", b)
	}
	var back plan.Document
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Rehearsals, d.Rehearsals) || !reflect.DeepEqual(back.Conclusions, d.Conclusions) {
		t.Errorf("read back:\n%+v\nwant\n%+v", back, d)
	}
	b, err = plan.Document{Plans: []plan.Result{{}}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"rehearsals", "rehearsal_conclusions", "comparison"} {
		if strings.Contains(string(b), `"`+key+`"`) {
			t.Errorf("a plan without a rehearsal or B holds %q:\n%s", key, b)
		}
	}
}
