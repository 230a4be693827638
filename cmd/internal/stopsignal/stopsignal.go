// Package stopsignal turns a command-line program's stop signals into one request to stop. The
// first SIGINT or SIGTERM is the request. Signals that repeat it are the same request: more
// SIGTERMs (GNU timeout sends one to the process, then one to its group), or a SIGINT within
// ForceAfter of it (a signal sent to a process group reaches every process at once). Only a
// second Ctrl-C, later than that, forces.
package stopsignal

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// ForceAfter is how long after a stop request a second Ctrl-C must come to force: sooner, it is
// the same request (delivered to the process group, or a double press).
const ForceAfter = 500 * time.Millisecond

// Watch calls stop on the first SIGINT or SIGTERM, and force on every SIGINT that comes
// ForceAfter or more after it; it ignores the signals that repeat the request. Until the
// returned function is called, the process is not stopped by those signals otherwise.
func Watch(stop, force func()) (unwatch func()) {
	sigs := make(chan os.Signal, 4)
	done := make(chan struct{})
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		var stopping time.Time
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				switch {
				case stopping.IsZero():
					stopping = time.Now()
					stop()
				case sig == os.Interrupt && time.Since(stopping) >= ForceAfter:
					force()
				}
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}
