//go:build unix

package stopsignal_test

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/cmd/internal/stopsignal"
)

// TestOneRequestThenForce sends this process the signals of a stop: the first stops; repeated
// SIGTERMs and a SIGINT within ForceAfter are the same request; a later SIGTERM never forces; a
// later SIGINT does.
func TestOneRequestThenForce(t *testing.T) {
	var stops, forces atomic.Int32
	unwatch := stopsignal.Watch(func() { stops.Add(1) }, func() { forces.Add(1) })
	defer unwatch()
	send := func(sig syscall.Signal) {
		t.Helper()
		if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
	}
	// waitFor waits for n to reach want; settle gives a signal that should change nothing the
	// time it would take.
	waitFor := func(n *atomic.Int32, want int32, what string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); n.Load() < want && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if got := n.Load(); got != want {
			t.Fatalf("%s: %d calls, want %d", what, got, want)
		}
	}
	settle := func() { time.Sleep(50 * time.Millisecond) }

	send(syscall.SIGTERM)
	waitFor(&stops, 1, "stop after the first SIGTERM")
	send(syscall.SIGTERM)
	send(syscall.SIGINT) // the group's copy of a Ctrl-C, within ForceAfter
	settle()
	if stops.Load() != 1 || forces.Load() != 0 {
		t.Fatalf("repeated request: %d stops, %d forces; want 1 and 0", stops.Load(), forces.Load())
	}
	time.Sleep(stopsignal.ForceAfter)
	send(syscall.SIGTERM) // never forces
	settle()
	if forces.Load() != 0 {
		t.Fatal("a later SIGTERM forced")
	}
	send(syscall.SIGINT)
	waitFor(&forces, 1, "force after a later SIGINT")
	if stops.Load() != 1 {
		t.Errorf("%d stops, want 1", stops.Load())
	}
}
