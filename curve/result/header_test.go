package result_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestSweepScheduleFromValues: a sweep's schedule is printed from parsed values, so every
// spelling of one burstiness (and of one list of rates) is one schedule.
func TestSweepScheduleFromValues(t *testing.T) {
	for _, tc := range []struct {
		rates     string
		spellings []string
		want      string
	}{
		{"1,2,4", []string{"1", "1.0", "1.00", "1e0", " 1 "}, "sweep(1,2,4, burstiness=1)"},
		{"2.0,8", []string{"0.5", ".5", "5e-1", "0.50"}, "sweep(2,8, burstiness=0.5)"},
		{"1:4:geom:3", []string{"inf", "Inf", "INF"}, "sweep(1,2,4, burstiness=inf)"},
	} {
		rates, err := sweep.ParseRates(tc.rates)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range tc.spellings {
			b := math.Inf(1)
			if !strings.EqualFold(strings.TrimSpace(sp), "inf") {
				if b, err = strconv.ParseFloat(strings.TrimSpace(sp), 64); err != nil {
					t.Fatal(err)
				}
			}
			if got := (result.SweepSchedule{Tiers: rates, Burstiness: b}).String(); got != tc.want {
				t.Errorf("rates %s, burstiness %q: %q, want %q", tc.rates, sp, got, tc.want)
			}
		}
	}
}

// TestNewHeader: the header is built from the values given, with the tool's constants, the
// schedule's String, the timeout in seconds, a sim only when there is one (its replicas only
// when more than one), and every name the user or server chose passed through Clean.
func TestNewHeader(t *testing.T) {
	clean := func(s string) string { return strings.ReplaceAll(s, "SECRET", "[REDACTED]") }
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sched := result.SweepSchedule{Tiers: sweep.Rates{List: []float64{1, 2}}, Burstiness: 1}
	for _, tc := range []struct {
		name  string
		run   result.Run
		check func(t *testing.T, h records.Header)
	}{
		{"constants and values", result.Run{Version: "v1", Command: records.CommandSweep, Target: "http://h/v1", Endpoint: "chat",
			Model: "m", Schedule: sched, Seed: 7, MaxConcurrency: 3, Timeout: 1500 * time.Millisecond, Retries: 2, Shard: "1/2", Started: start},
			func(t *testing.T, h records.Header) {
				want := records.Header{Kind: records.KindHeader, Tool: "loadcurve", MetricsVersion: records.MetricsVersion, Version: "v1",
					Command: records.CommandSweep, Target: "http://h/v1", Endpoint: "chat", Model: "m", Arrival: "sweep(1,2, burstiness=1)",
					Seed: 7, MaxConcurrency: 3, TimeoutS: 1.5, Retries: 2, Shard: "1/2", StartWall: start}
				if h.Kind != want.Kind || h.Tool != want.Tool || h.MetricsVersion != want.MetricsVersion || h.Arrival != want.Arrival ||
					h.TimeoutS != want.TimeoutS || h.Command != want.Command || h.Seed != want.Seed || h.Shard != want.Shard ||
					!h.StartWall.Equal(start) || h.Sim != "" || h.SimReplicas != 0 {
					t.Errorf("header %+v, want %+v", h, want)
				}
			}},
		{"names cleaned", result.Run{Model: "mSECRET", Label: "lSECRET", Metadata: records.Metadata{{Key: "kSECRET", Value: "vSECRET"}}, RequestIDPrefix: "pSECRET-", Clean: clean},
			func(t *testing.T, h records.Header) {
				if h.Model != "m[REDACTED]" || h.Label != "l[REDACTED]" || h.Metadata[0].Key != "k[REDACTED]" || h.Metadata[0].Value != "v[REDACTED]" ||
					h.RequestIDPrefix != "p[REDACTED]-" {
					t.Errorf("names not cleaned: %+v", h)
				}
			}},
		{"one sim replica", result.Run{Sim: &result.Sim{Name: "default", Config: []byte(`{}`), Replicas: 1, Balance: "round-robin"}},
			func(t *testing.T, h records.Header) {
				if h.Sim != "default" || string(h.SimConfig) != "{}" || h.SimReplicas != 0 || h.SimBalance != "" {
					t.Errorf("sim: %+v", h)
				}
			}},
		{"sim replicas", result.Run{Sim: &result.Sim{Name: "default ×2 (random)", QueueConfig: []byte(`{"servers":1}`), Replicas: 2, Balance: "random"}},
			func(t *testing.T, h records.Header) {
				if h.SimReplicas != 2 || h.SimBalance != "random" || string(h.SimQueueConfig) != `{"servers":1}` {
					t.Errorf("sim: %+v", h)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, result.NewHeader(tc.run)) })
	}
}
