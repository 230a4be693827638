package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/bench"
	"github.com/loadcurve/loadcurve/measure/records"
)

// runChild runs a child role in this process and decodes its result line.
func runChild(t *testing.T, role string, job bench.Job) bench.ChildResult {
	t.Helper()
	cfg, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := bench.RunChild(context.Background(), role, cfg, &out); err != nil {
		t.Fatal(err)
	}
	var res bench.ChildResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("result %q: %v", out.String(), err)
	}
	return res
}

// TestChildrenSendTheScheduleAndCountIt: the probe and the loadcurve client send every request
// of the same seeded schedule, and what they report agrees with the server's own count. Counts
// only: no timing is asserted.
func TestChildrenSendTheScheduleAndCountIt(t *testing.T) {
	const chunks = 4
	tests := []struct {
		role string
		conc int
	}{
		{bench.RoleProbe, 0},
		{bench.RoleClient, 0},
		{bench.RoleProbe, 2},
		{bench.RoleClient, 2},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/max-concurrency=%d", tc.role, tc.conc), func(t *testing.T) {
			s, url := startServer(t, bench.ServerConfig{Chunks: chunks, Gap: time.Millisecond})
			path := filepath.Join(t.TempDir(), "records.jsonl")
			job := bench.Job{URL: url, Rate: 100, Duration: 300 * time.Millisecond, Seed: 3, MaxTokens: chunks,
				MaxConcurrency: tc.conc, RecordsPath: path}
			res := runChild(t, tc.role, job)
			st := s.Stats()
			if res.Role != tc.role || res.Planned == 0 || res.Sent != res.Planned || res.OK != res.Planned {
				t.Fatalf("result %+v", res)
			}
			if st.Requests != int64(res.Planned) || st.Done != int64(res.Planned) || st.Chunks != int64(chunks*res.Planned) {
				t.Errorf("server saw %+v for %d planned requests", st, res.Planned)
			}
			wantChunks := int64(chunks * res.Planned) // the client counts output chunks
			if tc.role == bench.RoleProbe {
				wantChunks = int64((chunks + 2) * res.Planned) // the probe counts data lines: + usage + [DONE]
			}
			if res.Chunks != wantChunks {
				t.Errorf("chunks %d, want %d", res.Chunks, wantChunks)
			}
			if res.OfferedRate <= 0 || res.RealisedRate <= 0 || res.DeliveredRate <= 0 || res.TTFTP50Ms <= 0 || res.LagP99Ms < res.LagP50Ms {
				t.Errorf("rates or percentiles missing: %+v", res)
			}
			if tc.role == bench.RoleClient {
				f, err := records.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if len(f.Records) != res.Planned || f.Header.Command != "bench" {
					t.Errorf("records file: %d records, header %+v", len(f.Records), f.Header)
				}
			}
		})
	}
}

// TestChildrenSpin: with Job.Spin the probe busy-waits and the client uses loadgen's Tier.Spin;
// both still send the whole schedule (the spin changes when, never whether).
func TestChildrenSpin(t *testing.T) {
	for _, role := range []string{bench.RoleProbe, bench.RoleClient} {
		t.Run(role, func(t *testing.T) {
			s, url := startServer(t, bench.ServerConfig{Chunks: 2})
			res := runChild(t, role, bench.Job{URL: url, Rate: 200, Duration: 200 * time.Millisecond, Seed: 5, MaxTokens: 2,
				Spin: 200 * time.Microsecond})
			if res.Planned == 0 || res.OK != res.Planned || s.Stats().Requests != int64(res.Planned) {
				t.Errorf("result %+v, server %+v", res, s.Stats())
			}
		})
	}
}

// TestChildrenHoldStalledStreams: in stall mode both children hold every stream open until the
// server has them all, read their RSS, then close them.
func TestChildrenHoldStalledStreams(t *testing.T) {
	for _, role := range []string{bench.RoleProbe, bench.RoleClient} {
		t.Run(role, func(t *testing.T) {
			s, url := startServer(t, bench.ServerConfig{Chunks: 4})
			res := runChild(t, role, bench.Job{URL: url, Rate: 500, Stall: 20, MaxTokens: 4,
				HeapProfile: filepath.Join(t.TempDir(), "heap.pprof")})
			if res.Held != 20 || res.Planned != 20 || res.HeldGoroutines < 20 {
				t.Errorf("result %+v", res)
			}
			if st := s.Stats(); st.Requests != 20 {
				t.Errorf("server: %+v", st)
			}
		})
	}
}

func TestRunChildRejectsBadInput(t *testing.T) {
	tests := []struct {
		name, role, cfg string
	}{
		{"unknown role", "nope", `{}`},
		{"not JSON", bench.RoleProbe, `{`},
		{"unknown field", bench.RoleProbe, `{"rat":1}`},
		{"no schedule", bench.RoleProbe, `{"url":"http://127.0.0.1:1/v1","rate":0.001,"duration_ns":1000}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := bench.RunChild(context.Background(), tc.role, []byte(tc.cfg), &bytes.Buffer{}); err == nil {
				t.Error("no error")
			}
		})
	}
}
