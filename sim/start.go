package sim

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Running is a simulated deployment serving on a listener.
type Running struct {
	srv  *Server
	hs   *http.Server
	ln   net.Listener
	done chan error

	closeOnce sync.Once
	closeErr  error
}

// Start creates a Server for cfg and serves it on addr (for example
// "127.0.0.1:0" for any free loopback port).
func Start(cfg Config, addr string) (*Running, error) {
	srv, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("sim: listen on %s: %w", addr, err)
	}
	r := &Running{
		srv: srv,
		hs: &http.Server{
			Handler:           srv,
			ReadHeaderTimeout: 30 * time.Second,
			IdleTimeout:       2 * time.Minute,
		},
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() { r.done <- r.hs.Serve(ln) }()
	return r, nil
}

// URL is the OpenAI base URL, "http://HOST:PORT/v1".
func (r *Running) URL() string { return "http://" + r.ln.Addr().String() + "/v1" }

// Addr is the listening address, "HOST:PORT".
func (r *Running) Addr() string { return r.ln.Addr().String() }

// Server is the handler being served, for Stats.
func (r *Running) Server() *Server { return r.srv }

// Close fails in-flight streams, stops the engine, gives the handlers up to
// 2 s to write their last words (a handler writing to a client that does not
// read may need longer), then closes the listener and every connection. It
// is safe to call more than once.
func (r *Running) Close() error {
	r.closeOnce.Do(func() { r.closeErr = r.close() })
	return r.closeErr
}

func (r *Running) close() error {
	r.srv.Close()
	deadline := time.Now().Add(2 * time.Second)
	for r.srv.inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	err := r.hs.Close()
	if serr := <-r.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("sim: close: %w", err)
	}
	return nil
}
