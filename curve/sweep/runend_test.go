package sweep_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

func TestRunDrain(t *testing.T) {
	for _, tc := range []struct {
		name     string
		timeout  time.Duration
		sessions bool
		want     time.Duration
	}{
		{"no timeout: the stragglers may run a day", 0, false, sweep.RunDrainUnbounded},
		{"a timeout: until it, and a second", 3 * time.Second, false, 4 * time.Second},
		{"sessions wait for every turn, whatever the timeout", 3 * time.Second, true, sweep.RunDrainUnbounded},
		{"sessions without a timeout", 0, true, sweep.RunDrainUnbounded},
	} {
		if got := sweep.RunDrain(tc.timeout, tc.sessions); got != tc.want {
			t.Errorf("%s: RunDrain(%v, %v) = %v, want %v", tc.name, tc.timeout, tc.sessions, got, tc.want)
		}
	}
}

func TestCutShort(t *testing.T) {
	tier := func(n int, complete bool, canceled, planned int) result.TierResult {
		return result.TierResult{Tier: records.Tier{Tier: n}, Summary: measure.Summary{Complete: complete, Planned: planned,
			Outcomes: map[string]int{records.Canceled.String(): canceled}}}
	}
	for _, tc := range []struct {
		name  string
		tiers []result.TierResult
		want  *result.CutShortError
	}{
		{"no tier", nil, nil},
		{"every tier complete", []result.TierResult{tier(1, true, 0, 10), tier(2, true, 0, 10)}, nil},
		{"the first incomplete tier is named", []result.TierResult{tier(1, true, 0, 10), tier(2, false, 18, 80), tier(3, false, 1, 5)},
			&result.CutShortError{Tier: 2, Canceled: 18, Planned: 80}},
	} {
		err := (&result.Result{Tiers: tc.tiers}).CutShort()
		var got *result.CutShortError
		errors.As(err, &got)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: CutShort() = %v, want %+v", tc.name, err, tc.want)
		}
	}
	err := (&result.Result{Tiers: []result.TierResult{tier(1, false, 18, 80)}}).CutShort()
	if !strings.HasPrefix(err.Error(), "the run did not run to its end: 18 of 80 planned requests were canceled") {
		t.Errorf("CutShort() says %q", err)
	}
}

func TestRecordsLost(t *testing.T) {
	lost := &sweep.RecordsLostError{Err: errors.New("no space left on device")}
	if got := sweep.RecordsLost(fmt.Errorf("tier 3: %w", lost)); got != lost {
		t.Errorf("RecordsLost(wrapped) = %v, want the loss", got)
	}
	if got := sweep.RecordsLost(errors.Join(errors.New("other"), lost)); got != lost {
		t.Errorf("RecordsLost(joined) = %v, want the loss", got)
	}
	if got := sweep.RecordsLost(errors.New("other")); got != nil {
		t.Errorf("RecordsLost(other) = %v, want nil", got)
	}
}

func TestClientBoundWarnings(t *testing.T) {
	tier := func(n int, bound bool, why string) result.TierResult {
		return result.TierResult{Tier: records.Tier{Tier: n}, Summary: measure.Summary{ClientBound: bound, ClientBoundReason: why}}
	}
	res := &result.Result{Tiers: []result.TierResult{tier(0, false, ""), tier(1, true, "schedule lag p99 12 ms"), tier(2, true, "lag")}}
	got := res.ClientBoundWarnings()
	want := []string{"tier 1 is CLIENT-BOUND: schedule lag p99 12 ms. Its latencies describe this client as much as the server.",
		"tier 2 is CLIENT-BOUND: lag. Its latencies describe this client as much as the server."}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ClientBoundWarnings = %q, want %q", got, want)
	}
	if got := (&result.Result{Tiers: []result.TierResult{tier(0, false, "")}}).ClientBoundWarnings(); got != nil {
		t.Errorf("no client-bound tier: %q", got)
	}
}
