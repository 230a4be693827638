package loadgen

import (
	"context"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/racedetector"
)

// pair dials a loopback connection through dialTimed and returns both ends.
func pair(t *testing.T) (client *timedConn, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := dialTimed(&net.Dialer{Timeout: 5 * time.Second})(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*timedConn), s
}

// A read is timed when its bytes arrived, not when the client, late, read them: on Linux the
// kernel's receive timestamp puts the arrival between the server's stamps around its write,
// however long the client slept before reading; elsewhere the read's return is its moment.
// (The kernel may turn its timestamps on a moment after the first socket asks: the first
// packets of a process then come unstamped and are timed by their read, so a few tries.)
func TestReadIsTimedWhenItsBytesArrived(t *testing.T) {
	c, s := pair(t)
	const late = 30 * time.Millisecond
	buf := make([]byte, 64)
	var before, after time.Time
	var arrived, read time.Duration
	for try := 0; try < 5; try++ {
		before = time.Now()
		if _, err := s.Write([]byte("data: {}\n\n")); err != nil {
			t.Fatal(err)
		}
		after = time.Now()
		time.Sleep(late)
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		var ok bool
		if arrived, read, ok = newSocketClock(c, before).arrived(); !ok {
			t.Fatal("the read left no stamp")
		}
		if read < late {
			t.Errorf("the read returned %v after the write began, want at least the %v slept", read, late)
		}
		if runtime.GOOS != "linux" || arrived != read {
			break
		}
	}
	if runtime.GOOS != "linux" {
		if arrived != read {
			t.Errorf("without kernel stamps the arrival (%v) is the read's return (%v)", arrived, read)
		}
		return
	}
	if c.rx == nil {
		t.Fatal("no kernel receive timestamps on a Linux TCP connection")
	}
	// The stamp is on the real-time clock, turned into a monotonic reading: allow for the two
	// clocks' readings a microsecond apart, generously.
	const slack = time.Millisecond
	if hi := after.Sub(before) + slack; arrived < -slack || arrived > hi {
		t.Errorf("the bytes arrived %v after the write began, want within [0, %v] (the write took %v)", arrived, hi, after.Sub(before))
	}
	if read-arrived < late-slack {
		t.Errorf("the client read them %v after they arrived, want at least the %v it slept", read-arrived, late)
	}
}

// The client's writes stamp their start, and a request's written moment is the last one.
func TestWriteStampsItsStart(t *testing.T) {
	c, s := pair(t)
	t0 := time.Now()
	clock := newSocketClock(c, t0)
	if _, ok := clock.written(); ok {
		t.Fatal("a connection that wrote nothing has a written moment")
	}
	go io.Copy(io.Discard, s) //nolint:errcheck // until the connection closes
	for range 2 {
		if _, err := c.Write([]byte("POST / HTTP/1.1\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	w, ok := clock.written()
	if !ok || w < 0 || w > time.Since(t0) {
		t.Errorf("written %v (ok %v), want within [0, %v]", w, ok, time.Since(t0))
	}
}

// A read allocates nothing: it runs once per chunk or so of every stream.
func TestTimedReadAllocatesNothing(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	c, s := pair(t)
	msg := []byte("data: {\"choices\":[]}\n\n")
	buf := make([]byte, 4096)
	n := testing.AllocsPerRun(50, func() {
		if _, err := s.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("a write and a timed read allocate %.1f times, want 0", n)
	}
}

// A line's moment is its bytes' arrival only when that lies between the stream's previous
// moment (sent, for the first line) and the client's reading of it: a stamp after the read, or
// before what came before it (the real-time clock stepped), is not believed, and the read's
// return is the moment. Either way a latency is never longer than timed at the read, and the
// moments never run backwards.
func TestMomentIsBelievedOnlyInOrder(t *testing.T) {
	const sec = time.Second
	for _, tc := range []struct {
		name                 string
		stamped              bool
		floor, arrived, read time.Duration // offsets from T0; the client reads the line at 10 s
		wantArrival          bool
	}{
		{"no stamp: the read", false, 0, 0, 0, false},
		{"arrived before it was read", true, 9 * sec, 9500 * time.Millisecond, 9600 * time.Millisecond, true},
		{"arrived at the previous moment", true, 9 * sec, 9 * sec, 9600 * time.Millisecond, true},
		{"arrived before the previous moment", true, 9 * sec, 8 * sec, 9600 * time.Millisecond, false},
		{"arrived before the request was sent", true, 9 * sec, -sec, 9600 * time.Millisecond, false},
		{"arrived after it was read", true, 9 * sec, 11 * sec, 9600 * time.Millisecond, false},
		{"the connection read after the stream did", true, 9 * sec, 9500 * time.Millisecond, 11 * sec, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now().Add(-10 * sec)
			s := streamState{t0: t0, floor: tc.floor}
			if tc.stamped {
				c := &timedConn{}
				base := sinceBase(t0)
				c.read.Store(base + int64(tc.arrived))
				c.readAt.Store(base + int64(tc.read))
				s.clock = newSocketClock(c, t0)
			}
			got := s.moment()
			if got > s.readAt {
				t.Errorf("moment %v after the read %v", got, s.readAt)
			}
			if got < tc.floor {
				t.Errorf("moment %v before the previous one %v", got, tc.floor)
			}
			if tc.wantArrival && got != tc.arrived {
				t.Errorf("moment %v, want the arrival %v", got, tc.arrived)
			}
			if !tc.wantArrival && got != s.readAt {
				t.Errorf("moment %v, want the read %v", got, s.readAt)
			}
			if s.floor != got {
				t.Errorf("the next line's floor is %v, want this moment %v", s.floor, got)
			}
		})
	}
}
