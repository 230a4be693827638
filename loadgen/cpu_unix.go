//go:build unix

package loadgen

import (
	"syscall"
	"time"
)

// processCPU is this process's user plus system CPU time so far; false when getrusage fails.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
