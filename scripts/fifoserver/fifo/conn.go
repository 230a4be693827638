package fifo

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// On a busy machine the server's goroutines run late, and a request can wait in the server's
// socket before its handler starts: that wait is the server's, so the log times a request from
// when its bytes arrived, not only from when the handler ran. Listen's connections stamp every
// read with the kernel's receive timestamp of its data (Linux; elsewhere the read's return), and
// a request's rx_s is that of the read that brought the end of its body.

// Listener wraps ln so that its connections stamp their reads; serve with ConnContext.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return &stampListener{Listener: ln, base: s.base}
}

// ConnContext is the http.Server's ConnContext that lets a handler find its connection's stamps.
func (s *Server) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if sc, ok := c.(*stampConn); ok {
		return context.WithValue(ctx, connKey{}, sc)
	}
	return ctx
}

type connKey struct{}

type stampListener struct {
	net.Listener
	base time.Time
}

func (l *stampListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &stampConn{Conn: c, rx: kernelStamps(c), base: l.base}, nil
}

// stampConn stamps its reads: last is when the bytes of the last read arrived, as an offset from
// the server's base (0: no read yet).
type stampConn struct {
	net.Conn
	rx   rxReader
	base time.Time
	last atomic.Int64
}

// rxReader reads with the kernel's receive timestamp of the data (zero when it did not say).
type rxReader interface {
	readRx(p []byte) (int, time.Time, error)
}

func (c *stampConn) Read(p []byte) (int, error) {
	if c.rx == nil {
		n, err := c.Conn.Read(p)
		if n > 0 {
			c.last.Store(int64(time.Since(c.base)))
		}
		return n, err
	}
	n, arrived, err := c.rx.readRx(p)
	if n > 0 {
		now := time.Now()
		at := now
		// The stamp is on the real-time clock: the delay is taken on it, then from the
		// monotonic reading of now. A delay beyond a minute is a clock step, not believed.
		if d := now.Round(0).Sub(arrived); !arrived.IsZero() && d >= 0 && d <= time.Minute {
			at = now.Add(-d)
		}
		c.last.Store(int64(at.Sub(c.base)))
	}
	return n, err
}

// lastRead is when the bytes of the connection's last read arrived (false without a stamped
// connection).
func lastRead(ctx context.Context) (time.Duration, bool) {
	c, ok := ctx.Value(connKey{}).(*stampConn)
	if !ok {
		return 0, false
	}
	v := c.last.Load()
	return time.Duration(v), v != 0
}
