package fifo

import (
	"context"
	"sync/atomic"
	"time"
)

// fineMargin is the last stretch of a wait slept with nanosleep, on its own thread: the runtime's
// timers may wake up a millisecond late. At most maxFine goroutines do so at once.
const (
	fineMargin = 1500 * time.Microsecond
	maxFine    = 8
)

var fine atomic.Int32

// sleepUntil sleeps to base + at.
func sleepUntil(base time.Time, at time.Duration) { sleepUntilCtx(context.Background(), base, at) }

// sleepUntilCtx sleeps to base + at, or until ctx is done (false).
func sleepUntilCtx(ctx context.Context, base time.Time, at time.Duration) bool {
	due := base.Add(at)
	if d := time.Until(due) - fineMargin; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
	if fine.Add(1) <= maxFine {
		for d := time.Until(due); d > 0; d = time.Until(due) {
			fineSleep(d)
		}
	} else if d := time.Until(due); d > 0 {
		time.Sleep(d)
	}
	fine.Add(-1)
	return ctx.Err() == nil
}
