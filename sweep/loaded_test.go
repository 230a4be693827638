package sweep_test

import (
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/result"
)

// TestFiguresAt: a named tier gives that tier's steady-state figures; none gives the priced
// figures, which a sweep without an operating point does not have.
func TestFiguresAt(t *testing.T) {
	r := &result.Result{Header: records.Header{Command: records.CommandSweep}}
	r.Analysis.Points = []curve.PointVerdict{{Tier: 2, Rate: 5, RawOutputThroughput: 100, CompliantOutputThroughput: 80}}
	for _, tc := range []struct {
		tier   int
		source string // of the figures; "" refused
		err    string
	}{
		{2, "tier 2, steady state", ""},
		{3, "", "no curve tier 3"},
		{-1, "", "no operating point"},
	} {
		f, err := r.FiguresAt(tc.tier)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("tier %d: error %v, want %q", tc.tier, err, tc.err)
		case tc.err == "" && (err != nil || f.Source != tc.source || f.RawOutputThroughput != 100):
			t.Errorf("tier %d: %+v, %v; want %q", tc.tier, f, err, tc.source)
		}
	}
}

// TestReadPeaks: a run's peaks come from its records in memory; a sweep has none to read.
func TestReadPeaks(t *testing.T) {
	f := &records.File{Header: records.Header{Command: records.CommandRun}, Tiers: []records.Tier{{Tier: 0}}}
	run := &result.Loaded{File: f, Result: &result.Result{Header: f.Header}}
	if err := run.ReadPeaks(); err != nil || len(run.Result.Peaks) != 1 {
		t.Errorf("run: peaks %v, error %v; want one tier's", run.Result.Peaks, err)
	}
	sw := &result.Loaded{Path: "/nonexistent/records.jsonl", Result: &result.Result{Header: records.Header{Command: records.CommandSweep}}}
	if err := sw.ReadPeaks(); err != nil || sw.Result.Peaks != nil {
		t.Errorf("sweep: peaks %v, error %v; want none", sw.Result.Peaks, err)
	}
	bounded := &result.Loaded{Path: "/nonexistent/records.jsonl", Result: &result.Result{Header: f.Header}}
	if err := bounded.ReadPeaks(); err == nil {
		t.Error("a run read in bounded memory whose file is gone: no error")
	}
}
