package servermetrics_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sm "github.com/loadcurve/loadcurve/measure/servermetrics"
)

func TestDefaultURL(t *testing.T) {
	tests := []struct{ base, want string }{
		{"http://h:8000/v1", "http://h:8000/metrics"},
		{"http://h:8000/v1/", "http://h:8000/metrics"},
		{"http://h:8000", "http://h:8000/metrics"},
		{"http://h:8000/", "http://h:8000/metrics"},
		{"https://gw.example/llm/v1", "https://gw.example/llm/metrics"}, // a path prefix is kept
		{"http://127.0.0.1:4000/v1?x=1#f", "http://127.0.0.1:4000/metrics"},
		{"  http://h/v1  ", "http://h/metrics"},
		{"h:8000/v1", "h:8000/metrics"}, // no scheme: plain string surgery
	}
	for _, tt := range tests {
		if got := sm.DefaultURL(tt.base); got != tt.want {
			t.Errorf("DefaultURL(%q) = %q, want %q", tt.base, got, tt.want)
		}
	}
}

func TestScrape(t *testing.T) {
	body := readFixture(t, "sim.txt")
	var accept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept = r.Header.Get("Accept")
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	got, err := sm.NewScraper(srv.URL+"/metrics", nil, "loadcurve-sim").Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got[sm.NameGenerationTokens] != 1200 || got[sm.NameRequestsReceived] != 11 || len(got) != 10 {
		t.Errorf("Scrape = %v", got)
	}
	if !strings.HasPrefix(accept, "text/plain;version=0.0.4") {
		t.Errorf("Accept = %q, want the classic text format first", accept)
	}
}

// closedAddr returns a loopback address nobody listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// hangingServer accepts scrapes and never answers until the client leaves
// or the test ends; entered receives one value per scrape received.
func hangingServer(t *testing.T) (srv *httptest.Server, entered chan struct{}) {
	t.Helper()
	entered = make(chan struct{}, 100)
	quit := make(chan struct{})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-quit:
		}
	}))
	t.Cleanup(func() {
		close(quit)
		srv.Close()
	})
	return srv, entered
}

func TestScrapeErrors(t *testing.T) {
	page := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/metrics"
	}
	hanging, _ := hangingServer(t)
	tests := []struct {
		name, url string
		wantErr   []string
	}{
		{"unreachable", "http://" + closedAddr(t) + "/metrics", []string{"scrape", "connection refused"}},
		{"404", page(http.StatusNotFound, `{"detail":"Not Found"}`), []string{"HTTP 404 Not Found", "Not Found"}},
		{"500", page(http.StatusInternalServerError, "boom"), []string{"HTTP 500", `"boom"`}},
		{"garbage body", page(http.StatusOK, "hello, world\n"), []string{"parse text format", "/metrics"}},
		{"empty body", page(http.StatusOK, ""), []string{"no metrics"}},
		{"no answer", hanging.URL + "/metrics", []string{"no complete answer within 100ms"}},
		{"bad URL", "::not a url", []string{"scrape: not a valid URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sm.NewScraper(tt.url, nil, "").WithTimeout(100 * time.Millisecond)
			got, err := s.Scrape(context.Background())
			if err == nil {
				t.Fatalf("Scrape = %v, want an error", got)
			}
			t.Log(err)
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
