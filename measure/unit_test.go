package measure_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// embeddingRecords is a tier of n embeddings requests, one every 10 ms, each of 100 input tokens
// (by the usage) answered in 20 ms, or 60 ms for every fourth; the last one fails.
func embeddingRecords(n int) []records.Record {
	recs := make([]records.Record, n)
	for i := range recs {
		r := records.NewRecord(0, i, time.Duration(i)*10*time.Millisecond)
		r.Dispatched, r.Sent = r.Planned, r.Planned
		r.End = r.Sent + 20*time.Millisecond
		if i%4 == 3 {
			r.End = r.Sent + 60*time.Millisecond
		}
		r.InputTokens, r.InputTokensSource, r.HTTPStatus = 100, records.SourceUsage, 200
		r.Last = r.End // the answer's only piece (loadgen's documents)
		if i == n-1 {
			r.Outcome, r.Error, r.HTTPStatus, r.Last = records.HTTPError, "HTTP 500", 500, records.Unset
		}
		recs[i] = r
	}
	return recs
}

// TestSummaryCountsTheUnit: under UnitInputTokens (an embeddings endpoint) the raw and
// compliant token counts and throughputs, whole-tier and steady-state, count the input tokens
// of the ok requests, delivered at their end; E2EL objectives judge them; the summary says its
// unit, in JSON too. Under the default unit the same records count no tokens (they stream none).
func TestSummaryCountsTheUnit(t *testing.T) {
	const n = 200
	obj, err := measure.ParseGoodput([]string{"e2el:50"})
	if err != nil {
		t.Fatal(err)
	}
	tier := records.Tier{Tier: 0, RequestRate: 100, Burstiness: 1, Planned: n}
	for _, tc := range []struct {
		unit                records.Unit
		raw, compliant      int
		wantUnit            records.Unit
		positiveThroughputs bool
	}{
		{records.UnitInputTokens, (n - 1) * 100, 150 * 100, records.UnitInputTokens, true},
		{"", 0, 0, "", false},
		{records.UnitOutputTokens, 0, 0, "", false},
	} {
		s := measure.Summarize(embeddingRecords(n), tier, measure.Options{Objectives: obj, Unit: tc.unit})
		if s.RawOutputTokens != tc.raw || s.CompliantOutputTokens != tc.compliant || s.Unit != tc.wantUnit {
			t.Errorf("unit %q: raw %d compliant %d unit %q, want %d %d %q", tc.unit, s.RawOutputTokens, s.CompliantOutputTokens, s.Unit, tc.raw, tc.compliant, tc.wantUnit)
		}
		if s.GoodRequests != 150 || s.TotalOutputTokens != 0 || s.TotalInputTokens != (n-1)*100 {
			t.Errorf("unit %q: %d good, %d output and %d input tokens", tc.unit, s.GoodRequests, s.TotalOutputTokens, s.TotalInputTokens)
		}
		raw, compliant, steady := s.Throughputs()
		if !steady {
			t.Errorf("unit %q: no steady state", tc.unit)
		}
		if got := raw > 0 && compliant > 0; got != tc.positiveThroughputs || compliant > raw || math.IsNaN(raw) {
			t.Errorf("unit %q: throughputs raw %v compliant %v", tc.unit, raw, compliant)
		}
		if tc.positiveThroughputs {
			// 100 tokens every 10 ms, a quarter of them late: about 10,000 raw and 7,500 compliant per second.
			if math.Abs(raw-10000) > 500 || math.Abs(compliant/raw-0.75) > 0.05 {
				t.Errorf("throughputs raw %v compliant %v", raw, compliant)
			}
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back measure.Summary
		if err := json.Unmarshal(b, &back); err != nil || back.Unit != s.Unit {
			t.Errorf("unit %q: JSON round trip gave %q (%v)", tc.unit, back.Unit, err)
		}
	}
}
