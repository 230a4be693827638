package sweep_test

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/records"
)

// sec is s seconds as a Duration.
func sec(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// okRecord is an ok record sent at sent whose chunks arrive at first and after each gap.
func okRecord(id int, sent, first float64, gaps ...float64) records.Record {
	r := records.NewRecord(0, id, sec(sent))
	r.Dispatched, r.Slot, r.Sent, r.First = sec(sent), sec(sent), sec(sent), sec(first)
	t := sec(first)
	for _, g := range gaps {
		r.ITL = append(r.ITL, sec(g))
		t += sec(g)
	}
	r.Last, r.End = t, t
	r.Chunks = len(gaps) + 1
	r.OutputTokens = r.Chunks
	return r
}

func shifted(recs []records.Record, by float64) []records.Record {
	out := slices.Clone(recs)
	for i := range out {
		for _, p := range []*time.Duration{&out[i].Planned, &out[i].Dispatched, &out[i].Slot, &out[i].Sent, &out[i].First, &out[i].Last, &out[i].End} {
			if *p != records.Unset {
				*p += sec(by)
			}
		}
	}
	return out
}

// TestPeakOf checks vLLM's two peak figures on hand-computed cases.
func TestPeakOf(t *testing.T) {
	failed := records.NewRecord(0, 90, sec(0.05))
	failed.Sent, failed.End, failed.Outcome, failed.HTTPStatus = sec(0.05), sec(0.06), records.HTTPError, 503
	silent := records.NewRecord(0, 91, 0) // ok, but no chunk: a failure for vLLM
	silent.Sent, silent.End = 0, sec(3)
	base := []records.Record{
		okRecord(0, 0.0, 0.1, 0.4, 0.6),      // chunks 0.1 0.5 1.1, in flight [0, 1.1)
		okRecord(1, 0.2, 0.3, 0.3, 0.3, 0.1), // chunks 0.3 0.6 0.9 1.0, in flight [0.2, 1.0)
		okRecord(2, 1.0, 1.5),                // chunk 1.5, in flight [1.0, 1.5): B is gone when it starts
		failed, silent,
	}
	tests := []struct {
		name string
		recs []records.Record
		want result.Peak
	}{
		{"five chunks in the first second, two in flight at most", base, result.Peak{MaxOutputTokensPerS: 5, MaxConcurrentRequests: 2}},
		{"the seconds count from the earliest successful send", shifted(base, 3.7), result.Peak{MaxOutputTokensPerS: 5, MaxConcurrentRequests: 2}},
		{"simultaneous starts both count", []records.Record{okRecord(0, 1, 1.2), okRecord(1, 1, 1.3), okRecord(2, 1, 2.5)},
			result.Peak{MaxOutputTokensPerS: 2, MaxConcurrentRequests: 3}},
		{"back to back requests are never in flight together", []records.Record{okRecord(0, 0, 0.5), okRecord(1, 0.5, 0.7), okRecord(2, 0.7, 0.9)},
			result.Peak{MaxOutputTokensPerS: 3, MaxConcurrentRequests: 1}},
		{"no successful request", []records.Record{failed, silent}, result.Peak{}},
		{"nothing", nil, result.Peak{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := result.PeakOf(tc.recs); got != tc.want {
				t.Errorf("PeakOf = %+v, want %+v", got, tc.want)
			}
			var a result.PeakAccumulator
			for i := range tc.recs {
				a.Add(&tc.recs[i])
			}
			if got := a.Peak(); got != tc.want {
				t.Errorf("PeakAccumulator = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// vllmPeak is vLLM's computation (serve.py, calculate_metrics) transcribed on float seconds:
// the reference PeakOf must agree with.
func vllmPeak(recs []records.Record) result.Peak {
	type out struct {
		start, ttft, latency float64
		itl                  []float64
	}
	var outs []out
	for _, r := range recs {
		if r.Outcome != records.OK || r.First == records.Unset {
			continue
		}
		o := out{start: r.Sent.Seconds(), ttft: (r.First - r.Sent).Seconds(), latency: (r.Last - r.Sent).Seconds()}
		for _, g := range r.ITL {
			o.itl = append(o.itl, g.Seconds())
		}
		outs = append(outs, o)
	}
	if len(outs) == 0 {
		return result.Peak{}
	}
	minStart, maxEnd := math.Inf(1), math.Inf(-1)
	for _, o := range outs {
		minStart, maxEnd = math.Min(minStart, o.start), math.Max(maxEnd, o.start+o.latency)
	}
	n := int(math.Ceil(maxEnd-minStart)) + 1
	perSecond := make([]int, n)
	type event struct {
		t     float64
		delta int
	}
	var events []event
	for _, o := range outs {
		t := o.start + o.ttft
		times := []float64{t}
		for _, g := range o.itl {
			t += g
			times = append(times, t)
		}
		for _, tt := range times {
			if b := int(tt - minStart); b >= 0 && b < n {
				perSecond[b]++
			}
		}
		events = append(events, event{o.start, 1}, event{o.start + o.latency, -1})
	}
	slices.SortFunc(events, func(a, b event) int {
		if a.t != b.t {
			return map[bool]int{true: -1, false: 1}[a.t < b.t]
		}
		return a.delta - b.delta
	})
	var pk result.Peak
	cur := 0
	for _, e := range events {
		cur += e.delta
		pk.MaxConcurrentRequests = max(pk.MaxConcurrentRequests, cur)
	}
	pk.MaxOutputTokensPerS = float64(slices.Max(perSecond))
	return pk
}

// TestPeakOfAgreesWithVLLM compares PeakOf with vLLM's computation on random tiers, and
// PeaksOfFile (two passes over the file) with both.
func TestPeakOfAgreesWithVLLM(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	dir := t.TempDir()
	path := filepath.Join(dir, result.RecordsName)
	w, err := records.Create(path, records.Header{Kind: records.KindHeader, Tool: "loadcurve", MetricsVersion: records.MetricsVersion})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]result.Peak{}
	for tier := range 6 {
		n := 1 + rng.IntN(200)
		var recs []records.Record
		for id := range n {
			// Sends on whole milliseconds, chunks 10 µs past them for each gap summed: no chunk
			// falls within float rounding of a second's boundary, where the reference's float
			// sums and PeakOf's exact nanoseconds could pick different seconds.
			ms := func(lo, hi int) float64 { return float64(lo+rng.IntN(hi-lo+1)) / 1000 }
			sent := 0.5 + ms(0, 8000)
			gaps := make([]float64, rng.IntN(40))
			for i := range gaps {
				gaps[i] = ms(1, 150) + 1e-5
			}
			r := okRecord(id, sent, sent+ms(5, 900)+1e-5, gaps...)
			r.Tier = tier
			if rng.IntN(10) == 0 {
				r.Outcome, r.Error = records.StreamError, "cut"
			}
			recs = append(recs, r)
		}
		want[tier] = vllmPeak(recs)
		if got := result.PeakOf(recs); got != want[tier] {
			t.Errorf("tier %d: PeakOf = %+v, vLLM's computation %+v", tier, got, want[tier])
		}
		if err := w.WriteTier(records.Tier{Kind: records.KindTier, Tier: tier, Arrival: "test", RequestRate: 1, Burstiness: 1, Planned: n}); err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			if err := w.Write(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := result.PeaksOfFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := records.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole := result.PeaksOf(f)
	for tier, w := range want {
		if got[tier] != w || whole[tier] != w {
			t.Errorf("tier %d: PeaksOfFile %+v, PeaksOf %+v, want %+v", tier, got[tier], whole[tier], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("PeaksOfFile has %d tiers, want %d", len(got), len(want))
	}
}
