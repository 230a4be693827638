//go:build !linux

package sim

import "time"

// fineSleep sleeps d; without a thread-blocking sleep on this system it is
// time.Sleep, as precise as the runtime's timers.
func fineSleep(d time.Duration) { time.Sleep(d) }
