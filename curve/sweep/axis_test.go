package sweep_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure/records"
)

// countingRunner counts the tiers it is asked to run, and runs none.
type countingRunner struct{ tiers int }

func (r *countingRunner) RunTier(_ context.Context, p sweep.Plan, _ sweep.Sink, _ <-chan struct{}) (records.Tier, error) {
	r.tiers++
	return p.Tier, nil
}

// TestAxisRefusesClosedLoopOfSessions: the axis is checked against the workload before any
// tier: users with sessions is refused by Validate (naming the concurrency levels) and Run
// asks its runner for nothing; each alone is a valid sweep on its axis.
func TestAxisRefusesClosedLoopOfSessions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    sweep.Config
		axis   curve.Axis
		refuse bool
	}{
		{"users and sessions", sweep.Config{Concurrency: sweep.Concurrency{Levels: []int{1, 2}}, Sessions: true, Requests: 20}, curve.AxisUsers, true},
		{"users", sweep.Config{Concurrency: sweep.Concurrency{Levels: []int{1, 2}}, Requests: 20}, curve.AxisUsers, false},
		{"rates of sessions", sweep.Config{Rates: sweep.Rates{List: []float64{1, 2}}, Sessions: true, Requests: 20}, curve.AxisSessions, false},
		{"rates", sweep.Config{Rates: sweep.Rates{List: []float64{1, 2}}, Requests: 20}, curve.AxisRate, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cfg.Axis(); got != tc.axis {
				t.Errorf("axis %v, want %v", got, tc.axis)
			}
			var refused error
			for _, err := range tc.cfg.Validate() {
				if strings.Contains(err.Error(), "not sessions") {
					refused = err
				}
			}
			if (refused != nil) != tc.refuse {
				t.Fatalf("refused: %v, want refused %v (%v)", refused, tc.refuse, tc.cfg.Validate())
			}
			if !tc.refuse {
				return
			}
			if field.Of(refused) == nil {
				t.Errorf("%v does not name its field", refused)
			}
			r := &countingRunner{}
			if _, err := (&sweep.Executor{Config: tc.cfg, Runner: r}).Run(context.Background()); err == nil || r.tiers != 0 {
				t.Errorf("Run: %v after %d tiers, want refused before any", err, r.tiers)
			}
		})
	}
}

// TestPlanRequestsFollowTheAxis: an open tier's request set holds one request per arrival, a
// closed loop's the pool its users draw from (what the runner and a resume's fingerprint
// check must both build).
func TestPlanRequestsFollowTheAxis(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    sweep.Plan
		want int
	}{
		{"open", sweep.Plan{Offsets: make([]time.Duration, 5), Pool: 40}, 5},
		{"closed", sweep.Plan{Tier: records.Tier{Users: 3}, Offsets: make([]time.Duration, 3), Pool: 40}, 40},
	} {
		if got := tc.p.Requests(); got != tc.want {
			t.Errorf("%s: %d requests, want %d", tc.name, got, tc.want)
		}
	}
}
