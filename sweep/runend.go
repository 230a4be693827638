package sweep

import (
	"errors"
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/records"
)

// RunDrainUnbounded is the drain of a run that waits for all its stragglers: a day.
const RunDrainUnbounded = 24 * time.Hour

// RunDrain is the drain of a run (one tier, Config.Schedule) whose requests time out after
// timeout (0: never). A run has no next tier to protect, so its stragglers may run until their
// own timeout, plus a second. A run of sessions waits for every session's turns (a day at
// most): its arrival phase ends when the last session starts, but its later turns come after
// think times and the turns before them, each bounded by the timeout, which is per request (a
// drain of timeout + 1 s once canceled 18 of 80 turns with a think time of 2 s and a timeout of
// 3 s).
func RunDrain(timeout time.Duration, sessions bool) time.Duration {
	if timeout <= 0 || sessions {
		return RunDrainUnbounded
	}
	return timeout + time.Second
}

// CutShortError says that a tier of a run, not interrupted, did not run to its end: requests
// canceled by the drain deadline, or never sent. Its records and summary are written (and say
// which); the exit status must say it too.
type CutShortError struct {
	Tier     int
	Canceled int // the tier's requests canceled before they ended
	Planned  int
}

func (e *CutShortError) Error() string {
	return fmt.Sprintf("the run did not run to its end: %d of %d planned requests were canceled before they ended (each record's error says why, e.g. the drain deadline after the arrivals; summary.json has \"complete\": false)",
		e.Canceled, e.Planned)
}

// CutShort returns a *CutShortError for the first tier of r whose summary is not complete, or
// nil when every tier ran to its end. Only a run that was not interrupted asks: an interrupted
// one is incomplete by its own account.
func (r *Result) CutShort() error {
	for _, t := range r.Tiers {
		s := t.Summary
		if s.Complete {
			continue
		}
		return &CutShortError{Tier: t.Tier.Tier, Canceled: s.Outcomes[records.Canceled.String()], Planned: s.Planned}
	}
	return nil
}

// RecordsLost returns the records file's loss (*RecordsLostError) among err's causes, or nil.
func RecordsLost(err error) *RecordsLostError {
	var lost *RecordsLostError
	if errors.As(err, &lost) {
		return lost
	}
	return nil
}

// ClientBoundWarnings warn, a line for each tier whose summary found it client-bound (the
// client's own lag shaped the load: measure.Summary.ClientBound), that its latencies describe
// the client as much as the server.
func (r *Result) ClientBoundWarnings() []string {
	var out []string
	for _, t := range r.Tiers {
		if t.Summary.ClientBound {
			out = append(out, fmt.Sprintf("tier %d is CLIENT-BOUND: %s. Its latencies describe this client as much as the server.",
				t.Tier.Tier, t.Summary.ClientBoundReason))
		}
	}
	return out
}
