package sim

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// serving is a handler served on a listener until Close: what Running, RunningQueue and
// RunningCluster share.
type serving struct {
	what     string       // "sim", "sim queue", "sim cluster": the prefix of its errors
	stop     func()       // stops the handler: in-flight streams fail, no new work
	inflight func() int64 // requests the handler is still answering
	hs       *http.Server
	ln       net.Listener
	done     chan error

	closeOnce sync.Once
	closeErr  error
}

// serve listens on addr and serves h there. On a listen error it stops h.
func serve(what string, h http.Handler, stop func(), inflight func() int64, addr string) (*serving, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		stop()
		return nil, fmt.Errorf("%s: listen on %s: %w", what, addr, err)
	}
	s := &serving{
		what: what, stop: stop, inflight: inflight,
		hs: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 30 * time.Second,
			IdleTimeout:       2 * time.Minute,
		},
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() { s.done <- s.hs.Serve(ln) }()
	return s, nil
}

// URL is the OpenAI base URL, "http://HOST:PORT/v1".
func (s *serving) URL() string { return "http://" + s.ln.Addr().String() + "/v1" }

// Addr is the listening address, "HOST:PORT".
func (s *serving) Addr() string { return s.ln.Addr().String() }

// Close fails in-flight streams, stops the handler (its engine, scheduler or replicas), gives
// the handlers up to 2 s to write their last words (a handler writing to a client that does not
// read may need longer), then closes the listener and every connection. It is safe to call more
// than once.
func (s *serving) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *serving) close() error {
	s.stop()
	deadline := time.Now().Add(2 * time.Second)
	for s.inflight() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	err := s.hs.Close()
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("%s: close: %w", s.what, err)
	}
	return nil
}

// Running is a simulated deployment serving on a listener.
type Running struct {
	*serving
	srv *Server
}

// Start creates a Server for cfg and serves it on addr (for example
// "127.0.0.1:0" for any free loopback port).
func Start(cfg Config, addr string) (*Running, error) {
	srv, err := New(cfg)
	if err != nil {
		return nil, err
	}
	s, err := serve("sim", srv, srv.Close, srv.inflight.Load, addr)
	if err != nil {
		return nil, err
	}
	return &Running{serving: s, srv: srv}, nil
}

// Server is the handler being served, for Stats.
func (r *Running) Server() *Server { return r.srv }
