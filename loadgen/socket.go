package loadgen

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// The client times a request where the operating system can say when its bytes moved, not only
// when the client's goroutines ran: on a busy machine a goroutine may wait milliseconds for a
// CPU after the bytes it reads have arrived, and that wait is the client's, not the server's.
//
//   - Every connection the client dials is a timedConn. A write stamps, before it starts, the
//     moment the request's bytes were handed to the socket (the request's written moment is the
//     last such stamp before its response: its last bytes).
//   - A read stamps the moment its bytes arrived: on Linux the kernel's receive timestamp of the
//     data (SO_TIMESTAMPNS, the last segment the read took), elsewhere the moment the read
//     returned. The stream reader takes each line's moment from the read that brought its last
//     byte, so the client's own delay in reading no longer counts as the server's latency.
//
// The kernel's timestamps are on the real-time clock; each is turned into a monotonic reading
// at once, as the read's return time less how long before it (on the real-time clock) the data
// arrived, so an adjustment of the clock between two reads never moves a moment.

// clockBase is the zero of the monotonic nanoseconds a timedConn stores.
var clockBase = time.Now()

func sinceBase(t time.Time) int64 { return int64(t.Sub(clockBase)) }

// maxRxDelay bounds the delay a kernel timestamp may claim before a read returned: a larger one
// (the real-time clock stepped between the two readings) is not believed, and the read's own
// return time is used.
const maxRxDelay = time.Minute

// timedConn is a client connection that stamps its writes and reads (see above).
type timedConn struct {
	net.Conn
	rx    rxReader     // nil: the read's return time is its moment
	wrote atomic.Int64 // the start of the last write, ns since clockBase; 0: none yet
	read  atomic.Int64 // the arrival of the last read's bytes, ns since clockBase; 0: none yet
	// readAt is the return time of the last read, ns since clockBase: with read, the client's
	// own delay in reading it.
	readAt atomic.Int64
}

// rxReader reads from a connection with the kernel's receive timestamp of the data.
type rxReader interface {
	// readRx reads into p and returns when the data arrived (zero when the kernel did not say).
	readRx(p []byte) (n int, arrived time.Time, err error)
}

func (c *timedConn) Write(p []byte) (int, error) {
	c.wrote.Store(sinceBase(time.Now()))
	return c.Conn.Write(p)
}

func (c *timedConn) Read(p []byte) (int, error) {
	if c.rx == nil {
		n, err := c.Conn.Read(p)
		if n > 0 {
			now := sinceBase(time.Now())
			c.readAt.Store(now)
			c.read.Store(now)
		}
		return n, err
	}
	n, arrived, err := c.rx.readRx(p)
	if n > 0 {
		now := time.Now()
		at := now
		if !arrived.IsZero() {
			// now.Round(0) drops the monotonic reading: the difference is on the real-time
			// clock, as the kernel's stamp is.
			if d := now.Round(0).Sub(arrived); d >= 0 && d <= maxRxDelay {
				at = now.Add(-d)
			}
		}
		c.readAt.Store(sinceBase(now))
		c.read.Store(sinceBase(at))
	}
	return n, err
}

// dialTimed dials with d and wraps the connection in a timedConn, with kernel receive
// timestamps where the system gives them.
func dialTimed(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &timedConn{Conn: c, rx: kernelStamps(c)}, nil
	}
}

// timedOf is the timedConn under a connection the transport handed a request (a TLS connection
// wraps one), or nil.
func timedOf(c net.Conn) *timedConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	t, _ := c.(*timedConn)
	return t
}

// sockTrace finds the connection a request was sent on (httptrace's GotConn): one per request
// in flight, pooled.
type sockTrace struct {
	trace httptrace.ClientTrace
	conn  *timedConn
}

var sockTraces = sync.Pool{New: func() any {
	st := &sockTrace{}
	st.trace.GotConn = func(info httptrace.GotConnInfo) { st.conn = timedOf(info.Conn) }
	return st
}}

// socketClock is a request's view of its connection's stamps, as offsets from the tier's T0.
type socketClock struct {
	conn *timedConn // nil: no stamps (the moment a line was read is its moment)
	base int64      // T0 in ns since clockBase
}

func newSocketClock(conn *timedConn, t0 time.Time) socketClock {
	return socketClock{conn: conn, base: sinceBase(t0)}
}

// written is the offset of the start of the last write on the connection (ok false without one).
func (s socketClock) written() (time.Duration, bool) {
	if s.conn == nil {
		return 0, false
	}
	w := s.conn.wrote.Load()
	return time.Duration(w - s.base), w != 0
}

// arrived is when the bytes of the connection's last read arrived, and when the client read them,
// as offsets from T0 (ok false without a read).
func (s socketClock) arrived() (arrived, read time.Duration, ok bool) {
	if s.conn == nil {
		return 0, 0, false
	}
	a, r := s.conn.read.Load(), s.conn.readAt.Load()
	return time.Duration(a - s.base), time.Duration(r - s.base), a != 0
}
