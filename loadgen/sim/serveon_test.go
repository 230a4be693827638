package sim_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// TestServeOn: the handler answers on the listener until the context ends, which closes the
// server without an error; a listener that fails ends it with the server's error.
func TestServeOn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "up") })
	go func() { done <- sim.ServeOn(ctx, ln, h) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "up" {
		t.Errorf("answer %q", body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeOn after the context ended: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeOn did not return when the context ended")
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("the listener is still open")
	}

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	if err := sim.ServeOn(context.Background(), closed, h); err == nil || !strings.HasPrefix(err.Error(), "sim server: ") {
		t.Errorf("ServeOn on a closed listener = %v, want the server's error", err)
	}
}
