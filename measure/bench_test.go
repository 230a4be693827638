package measure_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// benchRecords makes n records at 100 requests/s with 8 ITL gaps each; one in 50 fails.
func benchRecords(n int) []records.Record {
	rng := rand.New(rand.NewPCG(1, 2))
	rs := make([]records.Record, n)
	gaps := make([]time.Duration, 8*n) // one backing array, like a decoder would not, but cheap to build
	for i := range rs {
		planned := time.Duration(i) * 10 * time.Millisecond
		r := records.NewRecord(0, i, planned)
		r.Dispatched = planned + time.Duration(rng.IntN(200_000))
		r.Slot, r.Sent = r.Dispatched, r.Dispatched+time.Microsecond
		r.First = r.Sent + 20*time.Millisecond + time.Duration(rng.IntN(200_000_000))
		r.ITL = gaps[8*i : 8*i+8 : 8*i+8]
		t := r.First
		for j := range r.ITL {
			r.ITL[j] = 5*time.Millisecond + time.Duration(rng.IntN(40_000_000)) // ns resolution, like real gaps
			t += r.ITL[j]
		}
		r.FirstEvent, r.Last, r.End = r.First, t, t+time.Millisecond
		r.InputTokens, r.OutputTokens, r.Chunks = 512, 9+rng.IntN(4), 9
		if i%50 == 0 {
			r.Outcome = records.StreamError
		}
		rs[i] = r
	}
	return rs
}

func BenchmarkSummarize1M(b *testing.B) {
	const n = 1_000_000
	rs := benchRecords(n)
	opts := measure.Options{Objectives: measure.Objectives{TTFT: 200 * time.Millisecond, TPOT: 30 * time.Millisecond}}
	info := records.Tier{Planned: n, RequestRate: 100, Burstiness: 1}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		measure.Summarize(rs, info, opts)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
