package sweep_test

import (
	"context"
	"errors"
	"testing"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure/records"
)

// hookedRunner counts the tiers it runs.
type hookedRunner struct{ tiers int }

func (c *hookedRunner) RunTier(_ context.Context, p sweep.Plan, _ sweep.Sink, _ <-chan struct{}) (records.Tier, error) {
	c.tiers++
	return p.Tier, nil
}

// TestBeforeFirstTier: the hook runs once, before the first tier and never again; when it fails,
// that tier is not run and the error is the tier's.
func TestBeforeFirstTier(t *testing.T) {
	var calls, tiersAtCall int
	inner := &hookedRunner{}
	r := sweep.BeforeFirstTier(inner, func() error { calls++; tiersAtCall = inner.tiers; return nil })
	for range 3 {
		if _, err := r.RunTier(context.Background(), sweep.Plan{}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 || tiersAtCall != 0 || inner.tiers != 3 {
		t.Errorf("hook called %d times (after %d tiers), %d tiers run; want 1, 0, 3", calls, tiersAtCall, inner.tiers)
	}
	failing := &hookedRunner{}
	full := errors.New("disk full")
	r = sweep.BeforeFirstTier(failing, func() error { return full })
	if _, err := r.RunTier(context.Background(), sweep.Plan{}, nil, nil); !errors.Is(err, full) || failing.tiers != 0 {
		t.Errorf("a failing hook: %v, %d tiers run; want %v and none", err, failing.tiers, full)
	}
}
