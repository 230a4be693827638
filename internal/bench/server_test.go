package bench_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/bench"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

func startServer(t *testing.T, cfg bench.ServerConfig) (*bench.Server, string) {
	t.Helper()
	s, err := bench.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs.URL + "/v1"
}

// TestServerStreamsWhatLoadcurveCounts: the server's streams are valid OpenAI chat streams, as
// loadcurve's own client reads them: every content chunk is an output chunk, the usage message
// gives the token count, [DONE] ends the stream; and the server counts what it sent.
func TestServerStreamsWhatLoadcurveCounts(t *testing.T) {
	tests := []struct {
		name string
		cfg  bench.ServerConfig
	}{
		{"one chunk", bench.ServerConfig{Chunks: 1}},
		{"32 chunks as fast as possible", bench.ServerConfig{Chunks: 32}},
		{"5 chunks 2 ms apart", bench.ServerConfig{Chunks: 5, Gap: 2 * time.Millisecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, url := startServer(t, tc.cfg)
			c, err := loadgen.NewClient(loadgen.Target{BaseURL: url, Model: "bench"}, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const n = 3
			req := workloads.Request{Prompt: "hi", InputTokens: 1, MaxTokens: tc.cfg.Chunks}
			for i := range n {
				rec := records.NewRecord(0, i, 0)
				c.Do(context.Background(), time.Now(), &req, &rec)
				if rec.Outcome != records.OK || rec.Chunks != tc.cfg.Chunks || rec.OutputTokens != tc.cfg.Chunks ||
					rec.OutputTokensSource != records.SourceUsage || rec.FinishReason != "length" {
					t.Fatalf("record %+v", rec)
				}
				if tc.cfg.Gap > 0 {
					if e2el, _ := rec.E2EL(); e2el < time.Duration(tc.cfg.Chunks-1)*tc.cfg.Gap {
						t.Errorf("stream took %v, less than %d gaps of %v", e2el, tc.cfg.Chunks-1, tc.cfg.Gap)
					}
				}
			}
			st := s.Stats()
			if st.Requests != n || st.Chunks != int64(n*tc.cfg.Chunks) || st.Done != n || st.Failed != 0 || st.TTFTSamples != n {
				t.Errorf("stats %+v", st)
			}
			s.Reset()
			if st := s.Stats(); st.Requests != 0 || st.Chunks != 0 || st.Done != 0 || st.TTFTSamples != 0 || st.DeliveredRate != 0 {
				t.Errorf("after reset: %+v", st)
			}
		})
	}
}

// TestServerStallHoldsStreams: under StallPrefix a stream sends one chunk and stays open until
// the client goes away, and the server counts it as held meanwhile.
func TestServerStallHoldsStreams(t *testing.T) {
	s, url := startServer(t, bench.ServerConfig{Chunks: 4})
	root := strings.TrimSuffix(url, "/v1")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, root+bench.StallPrefix+"/v1/chat/completions", strings.NewReader("{}"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: {") {
		t.Fatalf("first line %q, %v", line, err)
	}
	if st := s.Stats(); st.Stalled != 1 || st.Open != 1 || st.Chunks != 1 {
		t.Errorf("while held: %+v", st)
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second) // bounded wait for the handler to see the close
	for s.Stats().Open != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if st := s.Stats(); st.Stalled != 0 || st.Open != 0 {
		t.Errorf("after the client left: %+v", st)
	}
}

// TestServerHTTPEndpoints: stats, reset and models over HTTP.
func TestServerHTTPEndpoints(t *testing.T) {
	_, url := startServer(t, bench.ServerConfig{})
	root := strings.TrimSuffix(url, "/v1")
	tests := []struct {
		method, path string
		status       int
		contains     string
	}{
		{http.MethodGet, "/v1/models", http.StatusOK, `"id":"bench"`},
		{http.MethodPost, "/bench/reset", http.StatusNoContent, ""},
		{http.MethodGet, "/bench/stats", http.StatusOK, `"chunks_per_stream":32`},
		{http.MethodGet, "/nothing", http.StatusNotFound, ""},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest(tc.method, root+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(b.String(), tc.contains) {
			t.Errorf("%s %s: %d %q", tc.method, tc.path, resp.StatusCode, b.String())
		}
		if tc.path == "/bench/stats" {
			var st bench.Stats
			if err := json.Unmarshal([]byte(b.String()), &st); err != nil {
				t.Errorf("stats do not decode: %v", err)
			}
		}
	}
}

func TestNewServerRejectsBadConfig(t *testing.T) {
	for _, cfg := range []bench.ServerConfig{{Chunks: -1}, {Gap: -time.Millisecond}} {
		if _, err := bench.NewServer(cfg); err == nil {
			t.Errorf("NewServer(%+v) succeeded", cfg)
		}
	}
}
