package sim

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ServeOn serves h (a Server, a Queue) on ln, a listener the caller opened, until ctx is done;
// then it closes the listener and every connection, and returns the close's error. A server that
// fails first returns its error, as "sim server: …". It is the standalone deployment's loop;
// Start and its kin serve an embedded one.
func ServeOn(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("sim server: %w", err)
	case <-ctx.Done():
		return hs.Close()
	}
}
