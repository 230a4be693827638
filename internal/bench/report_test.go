package bench_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/internal/bench"
)

// rateRun is a measurement at a rate: role, repeat, schedule and server figures.
func rateRun(role string, rate float64, repeat int, planned, served int, serverRate, cpuUs, lag50, lag99 float64) bench.Measurement {
	return bench.Measurement{Phase: "rate", Role: role, Rate: rate, Repeat: repeat,
		Child:         bench.ChildResult{Planned: planned, OfferedRate: rate, DeliveredRate: serverRate, LagP50Ms: lag50, LagP99Ms: lag99},
		Server:        bench.Stats{Requests: int64(served), DeliveredRate: serverRate},
		CPUPerChunkUs: cpuUs}
}

func goalStatus(rep *bench.Report, prefix string) string {
	for _, g := range rep.Goals {
		if strings.HasPrefix(g.Goal, prefix) {
			return g.Status
		}
	}
	return "missing"
}

func TestNewReportMediansAndRatios(t *testing.T) {
	opts := bench.ReportOptions{Rates: []float64{1000}, Repeats: 3}
	ms := []bench.Measurement{
		// Probe and loadcurve, three repeats; loadcurve's CPU ratio per repeat: 1.2, 2.0, 1.4.
		rateRun(bench.NameProbe, 1000, 0, 10000, 10000, 1000, 20, 0.3, 1.5),
		rateRun(bench.NameLoadcurve, 1000, 0, 10000, 10000, 995, 24, 0.4, 2.0),
		rateRun(bench.NameProbe, 1000, 1, 10000, 10000, 1000, 10, 0.3, 1.5),
		rateRun(bench.NameLoadcurve, 1000, 1, 10000, 9800, 1000, 20, 0.5, 9.0),
		rateRun(bench.NameProbe, 1000, 2, 10000, 10000, 1000, 30, 0.3, 1.5),
		rateRun(bench.NameLoadcurve, 1000, 2, 10000, 10000, 985, 42, 0.6, 3.0),
	}
	rep := bench.NewReport(opts, bench.Machine{}, ms)
	var lc bench.RateRow
	for _, r := range rep.Rates {
		if r.Role == bench.NameLoadcurve {
			lc = r
		}
	}
	tests := []struct {
		name      string
		got, want float64
	}{
		{"runs", float64(lc.Runs), 3},
		// Per-run delivered ratios: min(995/1000, 1) = 0.995; min(1, 0.98) = 0.98; 0.985.
		{"delivered ratio (median of per-run minima)", lc.DeliveredRatio, 0.985},
		{"CPU per chunk (median)", lc.CPUPerChunkUs, 24},
		{"CPU ratio (median of same-repeat ratios)", lc.CPURatio, 1.4},
		{"lag p50 (median)", lc.LagP50Ms, 0.5},
		{"lag p99 (median)", lc.LagP99Ms, 3.0},
		{"server requests (median)", lc.ServerRequests, 10000},
	}
	for _, tc := range tests {
		if math.Abs(tc.got-tc.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if s := goalStatus(rep, "delivered rate at 1,000"); s != bench.GoalNotMet {
		t.Errorf("delivered goal: %s", s)
	}
	if s := goalStatus(rep, "CPU per chunk at 1000"); s != bench.GoalMet {
		t.Errorf("CPU goal: %s", s)
	}
	if s := goalStatus(rep, "schedule_lag at 500"); s != bench.GoalNotMeasured {
		t.Errorf("lag goal without a 500 req/s run: %s", s)
	}
}

func TestGoals(t *testing.T) {
	light := func(role string, client, server float64) bench.Measurement {
		return bench.Measurement{Phase: "light", Role: role, Rate: 20,
			Child: bench.ChildResult{TTFTP50Ms: client}, Server: bench.Stats{TTFTP50Ms: server}}
	}
	stall := func(role string, held int64, perStream float64) bench.Measurement {
		return bench.Measurement{Phase: "stall", Role: role, Child: bench.ChildResult{Held: held}, RSSPerStreamKiB: perStream}
	}
	tests := []struct {
		name   string
		ms     []bench.Measurement
		prefix string
		want   string
	}{
		{"lag met", []bench.Measurement{rateRun(bench.NameLoadcurve, 500, 0, 100, 100, 500, 10, 0.5, 2.5)}, "schedule_lag at 500", bench.GoalMet},
		{"lag p99 over", []bench.Measurement{rateRun(bench.NameLoadcurve, 500, 0, 100, 100, 500, 10, 0.2, 2.6)}, "schedule_lag at 500", bench.GoalNotMet},
		{"spin p99 met", []bench.Measurement{rateRun(bench.NameSpin, 500, 0, 100, 100, 500, 10, 0.01, 0.15)}, "stretch", bench.GoalMet},
		{"spin not run", nil, "stretch", bench.GoalNotMeasured},
		{"TTFT overhead met", []bench.Measurement{light(bench.NameLoadcurve, 0.6, 0.1)}, "TTFT overhead", bench.GoalMet},
		{"TTFT overhead over", []bench.Measurement{light(bench.NameLoadcurve, 0.7, 0.1)}, "TTFT overhead", bench.GoalNotMet},
		{"streams met", []bench.Measurement{stall(bench.NameLoadcurve, 10000, 39.9)}, "10,000 concurrent", bench.GoalMet},
		{"streams over", []bench.Measurement{stall(bench.NameLoadcurve, 10000, 40.1)}, "10,000 concurrent", bench.GoalNotMet},
		{"too few streams to tell", []bench.Measurement{stall(bench.NameLoadcurve, 200, 30)}, "10,000 concurrent", bench.GoalNotMeasured},
		{"delivered met", []bench.Measurement{rateRun(bench.NameLoadcurve, 1000, 0, 1000, 1000, 990, 10, 0.1, 1)}, "delivered rate at 1,000", bench.GoalMet},
		{"summary agrees", []bench.Measurement{rateRun(bench.NameLoadcurve, 1000, 0, 1000, 1000, 990, 10, 0.1, 1)}, "summary's delivered", bench.GoalMet},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := bench.NewReport(bench.ReportOptions{Rates: []float64{500, 1000}}, bench.Machine{}, tc.ms)
			if got := goalStatus(rep, tc.prefix); got != tc.want {
				t.Errorf("%q: %s, want %s (%+v)", tc.prefix, got, tc.want, rep.Goals)
			}
			var b bytes.Buffer
			if err := rep.WriteTable(&b); err != nil {
				t.Fatal(err)
			}
		})
	}
}
