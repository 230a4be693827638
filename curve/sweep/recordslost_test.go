package sweep_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure/records"
)

// losingRunner runs tiers on a virtual queue and reports, from tier failAt on, that its records
// file is full: the tier itself is whole.
type losingRunner struct {
	virtual.QueueRunner
	failAt int
}

func (l *losingRunner) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	t, err := l.QueueRunner.RunTier(ctx, p, sink, stop)
	if err == nil && l.Tiers > l.failAt {
		err = &sweep.RecordsLostError{Err: syscall.ENOSPC}
	}
	return t, err
}

// TestRecordsLostKeepsTheTier: when the records file fills up during a tier, the sweep keeps that
// tier (its records reached the summary), stops, and returns the result with the error.
func TestRecordsLostKeepsTheTier(t *testing.T) {
	r := &losingRunner{QueueRunner: virtual.QueueRunner{Config: fourSlots.Queue}, failAt: 1}
	res, err := (&sweep.Executor{Config: defaultSweep(3), Runner: r}).Run(context.Background())
	var lost *sweep.RecordsLostError
	if !errors.As(err, &lost) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("error %v, want the records loss", err)
	}
	if res == nil || len(res.Tiers) != 2 || r.Tiers != 2 {
		t.Fatalf("%v tiers in the result after %d run: want both, and no tier after the loss", res, r.Tiers)
	}
	if last := res.Tiers[1].Summary; last.Recorded == 0 || last.Recorded != last.Planned {
		t.Errorf("the tier of the loss: %d of %d planned recorded in its summary", last.Recorded, last.Planned)
	}
}
