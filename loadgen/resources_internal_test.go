package loadgen

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// failingDial is a transport whose every request fails the way a dial does when the process has
// run out of err (EMFILE: too many open files).
type failingDial struct{ err syscall.Errno }

func (f failingDial) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", f.err)}
}

// TestLocalResourceErrorsAreTheClients: running out of file descriptors or local ports is
// recorded as the client's failure (so the summary marks the tier client-bound), and is not
// retried; a refused connection stays the server's.
func TestLocalResourceErrorsAreTheClients(t *testing.T) {
	for _, tt := range []struct {
		errno  syscall.Errno
		client bool
	}{{syscall.EMFILE, true}, {syscall.ENFILE, true}, {syscall.EADDRNOTAVAIL, true}, {syscall.ECONNREFUSED, false}} {
		c, err := NewClient(Target{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, 1)
		if err != nil {
			t.Fatal(err)
		}
		c.hc.Transport = failingDial{tt.errno}
		req := workloads.Request{ID: 1, Prompt: "p", InputTokens: 1, MaxTokens: 4}
		rec := records.NewRecord(0, 1, 0)
		c.Do(context.Background(), time.Now(), &req, &rec)
		c.Close()
		isClient := strings.HasPrefix(rec.Error, records.ClientResourcesPrefix)
		if rec.Outcome != records.StreamError || isClient != tt.client {
			t.Errorf("%v: outcome %v, error %q; the client's: %v, want %v", tt.errno, rec.Outcome, rec.Error, isClient, tt.client)
		}
		if retryable(&rec) == tt.client {
			t.Errorf("%v: retryable %v", tt.errno, retryable(&rec))
		}
	}
}
