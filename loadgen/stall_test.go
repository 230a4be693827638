package loadgen_test

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// The stall watch. The wall-clock bounds of these tests allow slack for the scheduling delays of
// a loaded machine (see slack), but a shared CI machine can stop this process for longer (for
// hundreds of milliseconds), and then no upper bound holds, whatever the client does. The watch
// tells such a machine apart from a slow client: one goroutine naps 1 ms at a time and keeps
// every nap that overslept by more than a millisecond, with when it ended; a nap still running
// late counts too, since the goroutine that checks may run before the watch after a stall. A
// test that bounds wall-clock times runs the watch (watchStalls) and checks through
// betweenOrStalled.

type stall struct {
	end  time.Time
	late time.Duration
}

const stallNap = time.Millisecond

var stallWatch struct {
	mu     sync.Mutex
	users  int // tests running the watch now
	stop   chan struct{}
	done   chan struct{}
	stalls []stall   // oldest first, the last minute's
	napped time.Time // when the nap in progress began (zero: none)
}

// watchStalls runs the stall watch until t ends; tests running at the same time share it.
func watchStalls(t *testing.T) {
	w := &stallWatch
	w.mu.Lock()
	if w.users == 0 {
		w.stop, w.done = make(chan struct{}), make(chan struct{})
		go watch(w.stop, w.done)
	}
	w.users++
	w.mu.Unlock()
	t.Cleanup(func() {
		w.mu.Lock()
		w.users--
		if w.users > 0 {
			w.mu.Unlock()
			return
		}
		stop, done := w.stop, w.done
		w.mu.Unlock()
		close(stop)
		<-done
	})
}

func watch(stop, done chan struct{}) {
	defer close(done)
	w := &stallWatch
	for {
		select {
		case <-stop:
			w.mu.Lock()
			w.napped = time.Time{}
			w.mu.Unlock()
			return
		default:
		}
		t0 := time.Now()
		w.mu.Lock()
		w.napped = t0
		w.mu.Unlock()
		time.Sleep(stallNap)
		end := time.Now()
		w.mu.Lock()
		if late := end.Sub(t0) - stallNap; late > time.Millisecond {
			old := 0
			for old < len(w.stalls) && end.Sub(w.stalls[old].end) > time.Minute {
				old++
			}
			w.stalls = append(w.stalls[old:], stall{end: end, late: late})
		}
		w.mu.Unlock()
	}
}

// worstStall is the longest stall the watch saw end after since (0 when it was not running).
func worstStall(since time.Time) time.Duration {
	w := &stallWatch
	w.mu.Lock()
	defer w.mu.Unlock()
	var worst time.Duration
	if !w.napped.IsZero() {
		worst = time.Since(w.napped) - stallNap // the nap in progress
	}
	for _, s := range w.stalls {
		if s.end.After(since) {
			worst = max(worst, s.late)
		}
	}
	return worst
}

// stallLimit is the longest stall the upper bounds can absorb: half their slack.
const stallLimit = slack / 2

// errorfUnlessStalled reports the failure of a wall-clock check that a stall of this process
// since since could explain: an error, unless the stall watch saw one longer than limit; then the
// check is not judged, and the log says so. The test must run the stall watch (watchStalls).
func errorfUnlessStalled(t *testing.T, since time.Time, limit time.Duration, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if s := worstStall(since); s > limit {
		t.Logf("not judged, this process stalled for %v meanwhile (more than the %v the check absorbs): %s", s, limit, msg)
		return
	}
	t.Error(msg)
}

// betweenOrStalled checks lo <= got <= hi for a wall-clock measurement that has just ended. The
// lower bound is exact (see slack). Past hi is an error, unless this process stalled for more
// than stallLimit while the measurement ran.
func betweenOrStalled(t *testing.T, what string, got, lo, hi time.Duration) {
	t.Helper()
	switch {
	case got < lo:
		t.Errorf("%s = %v, want in [%v, %v]", what, got, lo, hi)
	case got > hi:
		errorfUnlessStalled(t, time.Now().Add(-got-time.Second), stallLimit, "%s = %v, want in [%v, %v]", what, got, lo, hi)
	}
}
