package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/bench"
)

// TestRunEndToEnd runs the whole benchmark at a tiny scale with real child processes (this test
// binary, re-executed as each child) and checks the plumbing: every phase ran, the server saw
// every planned request, the figures that come from rusage are there, and the report renders.
// It asserts counts and the presence of figures, never a timing. (The spin roles only change
// the child's job; TestChildrenSpin covers them in-process.)
func TestRunEndToEnd(t *testing.T) {
	o := bench.QuickOptions()
	o.Exec = []string{os.Args[0]}
	// Under -race, each child would sleep 1 s at exit (ThreadSanitizer's atexit_sleep_ms).
	o.Env = []string{childEnv, "GORACE=atexit_sleep_ms=0"}
	o.Rates = []float64{50}
	o.Duration = 200 * time.Millisecond
	o.Chunks = 4
	o.ChunkGap = time.Millisecond
	o.Streams = 20
	o.StreamOpenRate = 500
	o.LightRate = 20
	o.LightDuration = 200 * time.Millisecond
	o.ProfileDir = t.TempDir()
	var progress bytes.Buffer
	o.Progress = &progress
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := bench.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	phases := map[string]int{}
	for _, m := range rep.Measurements {
		phases[m.Phase+"/"+m.Role]++
		if m.Phase == "stall" {
			if m.Child.Held != 20 || m.Child.MaxRSS <= 0 || m.Child.BaselineRSS <= 0 {
				t.Errorf("stall %s: %+v", m.Role, m.Child)
			}
			continue
		}
		if m.Server.Requests != int64(m.Child.Planned) || m.Child.OK != m.Child.Planned {
			t.Errorf("%s %s: planned %d, server saw %d, %d ok", m.Phase, m.Role, m.Child.Planned, m.Server.Requests, m.Child.OK)
		}
		if m.Server.Chunks != int64(4*m.Child.Planned) || m.CPUPerChunkUs <= 0 || m.Child.CPUUserS+m.Child.CPUSysS <= 0 {
			t.Errorf("%s %s: %d chunks, %v µs CPU per chunk", m.Phase, m.Role, m.Server.Chunks, m.CPUPerChunkUs)
		}
	}
	want := map[string]int{"light/probe": 1, "light/loadcurve": 1, "rate/probe": 1, "rate/loadcurve": 1, "stall/probe": 1, "stall/loadcurve": 1}
	for k, n := range want {
		if phases[k] != n {
			t.Errorf("%s ran %d times, want %d (all: %v)", k, phases[k], n, phases)
		}
	}
	if len(rep.Rates) != 2 || rep.Rates[0].CPURatio <= 0 || len(rep.Light) != 2 || len(rep.Stall) != 2 {
		t.Errorf("rows: %+v %+v %+v", rep.Rates, rep.Light, rep.Stall)
	}
	if strings.Count(progress.String(), "\n") != len(rep.Measurements) {
		t.Errorf("progress: %q", progress.String())
	}
	profiles, _ := os.ReadDir(o.ProfileDir)
	if len(profiles) != 4 { // 2 CPU profiles of rate runs, 2 heap profiles of stall runs
		t.Errorf("%d profiles written", len(profiles))
	}

	var table, js bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Goals (issue 7)", "TTFT against the server's clock", "Memory per open stream", "loadcurve"} {
		if !strings.Contains(table.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, table.String())
		}
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back bench.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Measurements) != len(rep.Measurements) {
		t.Fatalf("JSON round trip: %v", err)
	}
	again := bench.NewReport(back.Options, back.Machine, back.Measurements)
	if len(again.Goals) != len(rep.Goals) || again.Goals[0] != rep.Goals[0] {
		t.Errorf("a report rebuilt from its JSON differs: %+v vs %+v", again.Goals, rep.Goals)
	}
}

func TestOptionsValidate(t *testing.T) {
	valid := bench.QuickOptions()
	valid.Exec = []string{"x"}
	if errs := valid.Validate(); len(errs) != 0 {
		t.Fatalf("quick options invalid: %v", errs)
	}
	tests := []struct {
		name string
		edit func(*bench.Options)
	}{
		{"no exec", func(o *bench.Options) { o.Exec = nil }},
		{"zero rate", func(o *bench.Options) { o.Rates = []float64{0} }},
		{"negative concurrency", func(o *bench.Options) { o.Concurrencies = []int{-1} }},
		{"no repeats", func(o *bench.Options) { o.Repeats = 0 }},
		{"no chunks", func(o *bench.Options) { o.Chunks = 0 }},
		{"streams without open rate", func(o *bench.Options) { o.StreamOpenRate = 0 }},
		{"light rate without duration", func(o *bench.Options) { o.LightDuration = 0 }},
		{"negative spin", func(o *bench.Options) { o.Spin = -1 }},
	}
	for _, tc := range tests {
		o := valid
		tc.edit(&o)
		if errs := o.Validate(); len(errs) == 0 {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	o := valid
	o.Exec, o.Repeats, o.Chunks = nil, 0, 0
	if errs := o.Validate(); len(errs) != 3 {
		t.Errorf("want every problem at once, got %v", errs)
	}
}
