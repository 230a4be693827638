package curve_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// asAxis makes the saturating sweep's tiers into tiers of the axis: sessions (each tier's
// arrivals started sessions) or closed loops of users (one user per req/s of the tier).
func asAxis(ax curve.Axis) []measure.Summary {
	tiers := saturating()
	for i := range tiers {
		switch ax {
		case curve.AxisSessions:
			tiers[i].Sessions = &measure.Sessions{Sessions: 10, MeanTurns: 1}
		case curve.AxisUsers:
			tiers[i].Users = int(tiers[i].NominalRate)
		}
	}
	return tiers
}

// TestTheAxisOwnsItsUnitAndEncoding: the analysis takes its axis from its tiers, names its
// unit and words from it, writes it in curve.json (left out for the request rate, which older
// files are) and reads it back; its levels are the users of a closed loop, the rates of
// sessions or of requests otherwise. Sessions were an unmarked request rate in curve.json, so
// plan had to find them in the result's notes.
func TestTheAxisOwnsItsUnitAndEncoding(t *testing.T) {
	for _, tc := range []struct {
		axis             curve.Axis
		unit, json, noun string
		open             bool
	}{
		{curve.AxisRate, "req/s", "", "", true},
		{curve.AxisSessions, "sessions/s", `"axis":"sessions"`, "sessions", true},
		{curve.AxisUsers, "users", `"axis":"concurrency"`, "users", false},
	} {
		t.Run(tc.axis.String(), func(t *testing.T) {
			tiers := asAxis(tc.axis)
			a := curve.Analyze(tiers, curve.Params{})
			if a.Axis != tc.axis || curve.SweepAxis(tiers) != tc.axis || curve.AxisOf(tiers[0]) != tc.axis {
				t.Fatalf("axis %v (sweep %v, tier %v), want %v", a.Axis, curve.SweepAxis(tiers), curve.AxisOf(tiers[0]), tc.axis)
			}
			if a.Axis.Unit() != tc.unit || a.Axis.Noun() != tc.noun || a.Axis.Open() != tc.open {
				t.Errorf("unit %q, noun %q, open %v", a.Axis.Unit(), a.Axis.Noun(), a.Axis.Open())
			}
			if a.Capacity == nil || a.OperatingPoint == nil {
				t.Fatalf("no capacity or operating point: %v", a.Notes)
			}
			if got := a.Points[len(a.Points)-1].NominalRate; got != 12 {
				t.Errorf("the heaviest tier stands at %v on the axis, want 12", got)
			}
			b, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			if tc.json == "" && strings.Contains(string(b), `"axis"`) || tc.json != "" && !strings.Contains(string(b), tc.json) {
				t.Errorf("curve.json's axis: want %q in %.200s", tc.json, b)
			}
			var back curve.Analysis
			if err := json.Unmarshal(b, &back); err != nil || back.Axis != tc.axis {
				t.Errorf("read back: axis %v, %v", back.Axis, err)
			}
		})
	}
}

// TestSweepAxisIgnoresClosedProbes: a probe does not make a sweep's axis users, and a tier
// off the sweep's axis is said to be off it.
func TestSweepAxisIgnoresClosedProbes(t *testing.T) {
	tiers := saturating()
	tiers[0].Role, tiers[0].Users = records.RoleProbe, 4
	if ax := curve.SweepAxis(tiers); ax != curve.AxisRate {
		t.Errorf("a closed probe made the axis %v", ax)
	}
	tiers[0].Role = records.RoleTier
	a := curve.Analyze(tiers, curve.Params{})
	if a.Axis != curve.AxisUsers || len(a.Points) != 1 || !strings.Contains(strings.Join(a.Notes, "\n"), "off the concurrency axis") {
		t.Errorf("axis %v, %d points, notes %v", a.Axis, len(a.Points), a.Notes)
	}
}
