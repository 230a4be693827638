package shard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Limits on the start time, relative to the clock of the machine that reads it.
const (
	// MaxStartAhead is the furthest ahead a start may be. Further is most likely a time-zone or
	// date mistake; a start can always be chosen closer (minutes are plenty for pods to start).
	MaxStartAhead = time.Hour
	// MaxStartLate is how long after the start a shard may still begin (at once). A shard that
	// arrives later would run shifted against the others, so it refuses instead.
	MaxStartLate = time.Second
)

// Errors of ParseStartAt and StartAt, for errors.Is.
var (
	ErrStartTooFar = errors.New("start time too far ahead")
	ErrStartPassed = errors.New("start time has passed")
)

// ParseStartAt reads the shards' common start time (FieldStartAt): an RFC 3339 time with a zone, e.g.
// "2026-05-01T12:00:00Z" or "2026-05-01T14:00:00.5+02:00". It also checks it against now: no
// more than MaxStartAhead ahead and no more than MaxStartLate past.
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, field.Errorf(FieldStartAt, "%q: want an RFC 3339 time with a zone, e.g. 2026-05-01T12:00:00Z: %w", s, err)
	}
	if err := checkWindow(at, at.Sub(now)); err != nil {
		return time.Time{}, field.Errorf(FieldStartAt, "%s: %w", s, err)
	}
	return at, nil
}

func checkWindow(at time.Time, ahead time.Duration) error {
	switch {
	case ahead > MaxStartAhead:
		return fmt.Errorf("%w: it is %v from now (limit %v): check the date and time zone, or choose a closer start",
			ErrStartTooFar, ahead.Round(time.Second), MaxStartAhead)
	case ahead < -MaxStartLate:
		return fmt.Errorf("%w: it was %v ago (tolerance %v): this shard would run shifted against the others; choose a later start for all shards",
			ErrStartPassed, (-ahead).Round(time.Millisecond), MaxStartLate)
	}
	return nil
}

// StartAt waits until the wall-clock time at, which all shards of a run share, and returns how
// late it returned (>= 0; the timer's wake-up delay, or how far at had passed already). The delay
// is computed once from the wall clock (at carries no monotonic reading) and then slept on the
// monotonic clock, so wall-clock steps during the wait do not move the start; the shards' clocks
// must agree beforehand (NTP), which the merge report's anchor spread checks afterwards.
//
// It fails without waiting when at is more than MaxStartAhead ahead or more than MaxStartLate
// past (wrapping ErrStartTooFar or ErrStartPassed), and returns ctx's error if ctx ends first.
func StartAt(ctx context.Context, at time.Time) (time.Duration, error) {
	at = at.Round(0) // wall clock only, even if the caller passed a time.Now()-derived value
	wait := time.Until(at)
	if err := checkWindow(at, wait); err != nil {
		return 0, fmt.Errorf("start at %s: %w", at.Format(time.RFC3339Nano), err)
	}
	deadline := time.Now().Add(wait) // monotonic from here on
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return 0, fmt.Errorf("waiting for --start-at %s: %w", at.Format(time.RFC3339Nano), ctx.Err())
		}
	} else if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("waiting for --start-at %s: %w", at.Format(time.RFC3339Nano), err)
	}
	return time.Since(deadline), nil
}
