//go:build linux

package sim

import (
	"syscall"
	"time"
)

// fineSleep sleeps d in the calling OS thread (nanosleep), precise to tens
// of microseconds, where the runtime's timers, which the Linux netpoller
// waits for in whole milliseconds, may wake up to a millisecond late. It
// blocks its thread: use it for the last stretch of a wait only.
func fineSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR: the caller checks the clock and sleeps again
}
