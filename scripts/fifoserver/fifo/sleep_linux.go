//go:build linux

package fifo

import (
	"syscall"
	"time"
)

// fineSleep sleeps d in the calling thread (nanosleep), precise to tens of microseconds.
func fineSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR: the caller checks the clock and sleeps again
}
