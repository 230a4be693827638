package sweep

import (
	"errors"
	"time"
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

// RecordsLost returns the records file's loss (*RecordsLostError) among err's causes, or nil.
func RecordsLost(err error) *RecordsLostError {
	var lost *RecordsLostError
	if errors.As(err, &lost) {
		return lost
	}
	return nil
}
