package loadgen_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// TestHostHeaderIsTheRequestsHost: net/http ignores a "Host" entry of a request's header map,
// so `--header "Host: example"` used to be dropped without a word. It must reach the server as
// the request's Host, on the streamed requests (with and without request ids) and on GET /models.
func TestHostHeaderIsTheRequestsHost(t *testing.T) {
	tests := []struct {
		name     string
		headers  http.Header
		idPrefix string
		want     string // "" : the URL's host
	}{
		{name: "no Host header: the URL's host"},
		{name: "Host header", headers: http.Header{"Host": {"example.internal"}}, want: "example.internal"},
		{name: "Host header with a port, request ids on", headers: http.Header{"Host": {"example.internal:8443"}},
			idPrefix: "lc-", want: "example.internal:8443"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			hosts := map[string]string{} // path → Host seen
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				hosts[r.URL.Path] = r.Host
				mu.Unlock()
				if r.URL.Path == "/v1/models" {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprint(w, `{"object":"list","data":[{"id":"m1","object":"model"}]}`)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n")
				fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
				fmt.Fprint(w, "data: [DONE]\n\n")
			}))
			defer srv.Close()
			c, err := loadgen.NewClient(loadgen.Target{BaseURL: srv.URL + "/v1", Headers: tc.headers, RequestIDPrefix: tc.idPrefix}, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := c.ResolveModel(ctx); err != nil {
				t.Fatal(err)
			}
			req := workloads.Request{Prompt: "hello", MaxTokens: 4}
			rec := records.NewRecord(0, req.ID, 0)
			c.Do(ctx, time.Now(), &req, &rec)
			if rec.Outcome != records.OK {
				t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
			}
			want := tc.want
			if want == "" {
				want = srv.Listener.Addr().String()
			}
			mu.Lock()
			defer mu.Unlock()
			for _, path := range []string{"/v1/models", "/v1/chat/completions"} {
				if got, ok := hosts[path]; !ok || got != want {
					t.Errorf("%s: Host %q (seen %v), want %q", path, got, ok, want)
				}
			}
		})
	}
}
