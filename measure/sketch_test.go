package measure_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// within reports whether got is within relative error alpha of want. The sketch's bound is
// deterministic (see measure.Sketch): every estimated order statistic is within alpha of the
// true one, and a percentile is a convex combination of two of them. The only slack allowed is
// floating-point rounding in ln, pow and the interpolation, a few ulps: 1e-12 relative.
func within(got, want, alpha float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= (alpha+1e-12)*math.Abs(want)
}

var sketchPercentiles = []float64{0, 0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 100}

func TestSketchPercentilesWithinRelativeError(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	tests := []struct {
		name  string
		alpha float64
		n     int
		draw  func() float64 // nanoseconds
	}{
		{"uniform 1 ms to 1 s, 0.5 %", 0.005, 50_000, func() float64 { return float64(time.Millisecond) + rng.Float64()*float64(time.Second) }},
		{"log-normal latencies (heavy tail), 0.5 %", 0.005, 50_000, func() float64 { return math.Exp(17 + 1.5*rng.NormFloat64()) }},
		{"whole nanoseconds 0 to 20 (many ties and zeros), 1 %", 0.01, 10_000, func() float64 { return float64(rng.IntN(21)) }},
		{"eleven decades, 2 %", 0.02, 20_000, func() float64 { return math.Pow(10, 11*rng.Float64()) }},
		{"negative and zero values, 0.5 %", 0.005, 10_000, func() float64 { return -float64(rng.IntN(1_000_000)) }},
		{"one value repeated", 0.005, 1_000, func() float64 { return 12_345_678 }},
		{"a single value", 0.005, 1, func() float64 { return 42_000 }},
		{"two values", 0.001, 2, func() float64 { return float64(1 + rng.IntN(1e9)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := measure.NewSketch(tc.alpha)
			if err != nil {
				t.Fatal(err)
			}
			xs := make([]float64, tc.n)
			for i := range xs {
				xs[i] = tc.draw()
				s.Add(xs[i])
			}
			slices.Sort(xs)
			if s.Count() != tc.n {
				t.Fatalf("count %d, want %d", s.Count(), tc.n)
			}
			for _, p := range sketchPercentiles {
				got, want := s.Percentile(p), measure.Percentile(xs, p)
				if !within(got, want, tc.alpha) {
					t.Errorf("p%g = %v, exact %v: relative error %.3g > %g", p, got, want, math.Abs(got-want)/math.Abs(want), tc.alpha)
				}
			}
			exact := measure.Describe(slices.Clone(xs), sketchPercentiles)
			st := s.Stats(1, sketchPercentiles)
			if !within(st.Median, exact.Median, tc.alpha) {
				t.Errorf("median %v, exact %v", st.Median, exact.Median)
			}
			// Mean (compensated sum) and std (Welford) are exact up to rounding: 1e-9 relative
			// is far above their rounding error for these sizes and far below any real error.
			if !within(st.Mean, exact.Mean, 1e-9) {
				t.Errorf("mean %v, exact %v", st.Mean, exact.Mean)
			}
			if math.Abs(st.Std-exact.Std) > 1e-9*math.Max(math.Abs(exact.Mean), 1) {
				t.Errorf("std %v, exact %v", st.Std, exact.Std)
			}
		})
	}
}

// TestSketchEveryBucketWithinRelativeError reads single values back through the median of
// {0.8v, v, 1.2v}, so that the clamping to the exact min and max does not help: powers of two and
// their neighbours (where the bucket mapping changes binade), and values spread over every
// magnitude a duration can have.
func TestSketchEveryBucketWithinRelativeError(t *testing.T) {
	var vs []float64
	for e := 1; e < 62; e++ {
		p := math.Ldexp(1, e)
		vs = append(vs, p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)), 1.5*p, 1.999*p)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20_000 {
		vs = append(vs, math.Exp2(1+61*rng.Float64()))
	}
	for _, alpha := range []float64{1e-4, 0.005, 0.1} {
		for _, v := range vs {
			s, _ := measure.NewSketch(alpha)
			s.Add(0.8 * v)
			s.Add(v)
			s.Add(1.2 * v)
			if got := s.Percentile(50); !within(got, v, alpha) {
				t.Fatalf("α=%g: %v read back as %v (relative error %.3g)", alpha, v, got, math.Abs(got-v)/v)
			}
		}
	}
}

func TestSketchMemoryIsBounded(t *testing.T) {
	const alpha = 0.005
	s, _ := measure.NewSketch(alpha)
	// Every magnitude a duration can have, on both signs: the worst case for the bucket count.
	for e := 0.0; e <= 63; e += 0.001 {
		v := math.Exp2(e)
		s.Add(v)
		s.Add(-v)
	}
	w := (1+alpha)/(1-alpha) - 1
	perSign := int(math.Ceil(63/w)) + 1 // see measure.Sketch
	if s.Buckets() > 2*perSign {
		t.Fatalf("%d buckets for α=%g, bound %d", s.Buckets(), alpha, 2*perSign)
	}
	t.Logf("worst case: %d buckets (%d KiB) for α=%g", s.Buckets(), s.Buckets()*8/1024, alpha)
}

func TestSketchMergeEqualsOneSketch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	whole, _ := measure.NewSketch(0.01)
	parts := make([]*measure.Sketch, 3)
	for i := range parts {
		parts[i], _ = measure.NewSketch(0.01)
	}
	for i := range 30_000 {
		v := math.Exp(12+2*rng.NormFloat64()) * float64(1-2*(i%7/6)) // some negatives
		whole.Add(v)
		parts[i%3].Add(v)
	}
	merged, _ := measure.NewSketch(0.01)
	for _, p := range parts {
		if err := merged.Merge(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range sketchPercentiles {
		if a, b := merged.Percentile(p), whole.Percentile(p); a != b {
			t.Errorf("p%g: merged %v, one sketch %v", p, a, b)
		}
	}
	ms, ws := merged.Stats(1e6, nil), whole.Stats(1e6, nil)
	if ms.Count != ws.Count || !within(ms.Mean, ws.Mean, 1e-12) || !within(ms.Std, ws.Std, 1e-9) {
		t.Errorf("merged %+v, one sketch %+v", ms, ws)
	}
	other, _ := measure.NewSketch(0.02)
	if err := merged.Merge(other); err == nil {
		t.Error("merging sketches of different relative errors succeeded")
	}
}

func TestNewSketchRejectsBadError(t *testing.T) {
	for _, a := range []float64{0, -0.01, 0.5, math.NaN(), 1e-5} {
		if _, err := measure.NewSketch(a); err == nil {
			t.Errorf("NewSketch(%v) succeeded", a)
		}
	}
	if _, err := measure.NewApproxAccumulator(measure.Options{Cooldown: time.Second}, 0); err == nil {
		t.Error("a cooldown was accepted by the streaming summary")
	}
}

func TestSketchEmpty(t *testing.T) {
	s, _ := measure.NewSketch(0.01)
	st := s.Stats(1e6, []float64{50, 99})
	if st.Count != 0 || !math.IsNaN(st.Mean) || !math.IsNaN(st.Median) || !math.IsNaN(st.Percentiles["p99"]) {
		t.Errorf("empty sketch: %+v", st)
	}
	if !math.IsNaN(s.Percentile(50)) {
		t.Error("empty sketch has a median")
	}
}

// stripStats removes the latency statistics and the number in the client_bound reason (the
// sketch's p99), leaving every count, token sum and rate.
// figures matches the numbers of a reason.
var figures = regexp.MustCompile(`[0-9][0-9.e+]*`)

func stripStats(s measure.Summary) string {
	s.TTFT, s.TPOT, s.ITL, s.E2EL = measure.Stats{}, measure.Stats{}, measure.Stats{}, measure.Stats{}
	s.ClientQueueTime, s.E2ELIncludingClientQueue, s.ScheduleLag = measure.Stats{}, measure.Stats{}, measure.Stats{}
	s.TTFA, s.AnswerITL = measure.Stats{}, measure.Stats{}
	s.PercentileError = 0 // checked on its own
	// The lag's p99 and the window the lag is judged over (a median) are percentiles, within
	// the sketch's error: compare the reasons without their figures.
	s.ClientBoundReason = figures.ReplaceAllString(s.ClientBoundReason, "#")
	s.ClientBoundThreshold = 0
	s.ScheduleLagNote = strconv.FormatBool(s.ScheduleLagNote != "")
	st := s.Steady
	s.Steady = nil
	if st != nil {
		return fmt.Sprintf("%+v %+v", s, *st) // fmt prints NaN as NaN on both sides and maps in key order
	}
	return fmt.Sprintf("%+v", s)
}

func TestApproxAccumulatorMatchesSummarize(t *testing.T) {
	const alpha = 0.005
	recs := benchRecords(20_000)
	// Some client-bound lag, so the client_bound check is exercised on the sketch's p99: the
	// dispatcher holds the first ten of every forty arrivals (10 ms apart) and releases them
	// together, which makes the releases far burstier than planned.
	for i := range recs {
		if k := i % 40; k < 10 {
			recs[i].Dispatched = recs[i-k+9].Planned + time.Duration(k)*time.Microsecond
		}
	}
	opts := measure.Options{Objectives: measure.Objectives{TTFT: 150 * time.Millisecond, TPOT: 25 * time.Millisecond},
		Percentiles: []float64{50, 90, 99, 99.9}, Warmup: 2 * time.Second}
	info := records.Tier{Planned: len(recs), RequestRate: 100, Burstiness: 1}
	exact := measure.Summarize(recs, info, opts)
	acc, err := measure.NewApproxAccumulator(opts, alpha)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		acc.Add(&recs[i])
	}
	approx := acc.Summary(info)
	if a, e := stripStats(approx), stripStats(exact); a != e {
		t.Fatalf("counts differ:\napprox %s\nexact  %s", a, e)
	}
	if !exact.ClientBound {
		t.Fatal("test data should be client-bound")
	}
	metrics := []struct {
		name          string
		approx, exact measure.Stats
	}{
		{"ttft", approx.TTFT, exact.TTFT}, {"tpot", approx.TPOT, exact.TPOT}, {"itl", approx.ITL, exact.ITL},
		{"e2el", approx.E2EL, exact.E2EL}, {"client_queue_time", approx.ClientQueueTime, exact.ClientQueueTime},
		{"e2el_including_client_queue", approx.E2ELIncludingClientQueue, exact.E2ELIncludingClientQueue},
		{"schedule_lag", approx.ScheduleLag, exact.ScheduleLag},
	}
	for _, m := range metrics {
		if m.approx.Count != m.exact.Count || m.exact.Count == 0 {
			t.Errorf("%s: count %d, exact %d", m.name, m.approx.Count, m.exact.Count)
		}
		if !within(m.approx.Mean, m.exact.Mean, 1e-9) || !within(m.approx.Std, m.exact.Std, 1e-6) {
			t.Errorf("%s: mean %v std %v, exact %v %v", m.name, m.approx.Mean, m.approx.Std, m.exact.Mean, m.exact.Std)
		}
		if !within(m.approx.Median, m.exact.Median, alpha) {
			t.Errorf("%s: median %v, exact %v", m.name, m.approx.Median, m.exact.Median)
		}
		for k, want := range m.exact.Percentiles {
			if got := m.approx.Percentiles[k]; !within(got, want, alpha) {
				t.Errorf("%s: %s %v, exact %v", m.name, k, got, want)
			}
		}
	}
	if acc.Note() == "" || acc.RelativeError() != alpha || approx.PercentileError != alpha || exact.PercentileError != 0 {
		t.Errorf("the note or the relative error is missing: approx %v, exact %v", approx.PercentileError, exact.PercentileError)
	}
}

// TestApproxAccumulatorAddDoesNotAllocate: in steady state a record costs no memory at all,
// which is what makes the summary's memory independent of the number of records.
func TestApproxAccumulatorAddDoesNotAllocate(t *testing.T) {
	acc, err := measure.NewApproxAccumulator(measure.Options{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	recs := benchRecords(1000)
	for i := range recs { // warm up: the sketches reach their buckets, the ITL buffer its size
		acc.Add(&recs[i])
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		acc.Add(&recs[i%len(recs)])
		i++
	})
	if allocs != 0 {
		t.Fatalf("Add allocates %v times per record in steady state", allocs)
	}
}

// BenchmarkApproxSummary10M summarises 10 million 32-token requests (31 ITL gaps each, 310
// million gaps) with ApproxAccumulator, generating the records on the fly so that only the
// summary's own memory is measured. The exact Accumulator would hold 8 bytes per gap and per
// other sample: (31 + 6) × 8 B × 10⁷ ≈ 3 GB. Run with -benchtime 1x.
func BenchmarkApproxSummary10M(b *testing.B) {
	const n = 10_000_000
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		acc, err := measure.NewApproxAccumulator(measure.Options{}, 0)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		r := records.NewRecord(0, 0, 0)
		r.ITL = make([]time.Duration, 31)
		for i := range n {
			planned := time.Duration(i) * 100 * time.Microsecond
			r.ID, r.Planned = i, planned
			r.Dispatched = planned + time.Duration(rng.IntN(500_000))
			r.Slot, r.Sent = r.Dispatched, r.Dispatched+time.Microsecond
			r.First = r.Sent + 20*time.Millisecond + time.Duration(rng.IntN(200_000_000))
			t := r.First
			for j := range r.ITL {
				r.ITL[j] = 5*time.Millisecond + time.Duration(rng.IntN(40_000_000))
				t += r.ITL[j]
			}
			r.FirstEvent, r.Last, r.End = r.First, t, t+time.Millisecond
			r.InputTokens, r.OutputTokens, r.Chunks = 512, 32, 32
			acc.Add(&r)
		}
		s := acc.Summary(records.Tier{Planned: n, RequestRate: 10_000, Burstiness: 1})
		runtime.ReadMemStats(&after)
		if s.Completed != n || s.ITL.Count != 31*n {
			b.Fatalf("completed %d, ITL count %d", s.Completed, s.ITL.Count)
		}
		b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "heap-bytes-after")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc), "bytes-allocated")
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
	}
}

// BenchmarkSketchAdd is the cost of one value.
func BenchmarkSketchAdd(b *testing.B) {
	s, _ := measure.NewSketch(measure.DefaultSketchError)
	rng := rand.New(rand.NewPCG(1, 2))
	vs := make([]float64, 4096)
	for i := range vs {
		vs[i] = math.Exp(17 + 1.5*rng.NormFloat64())
	}
	i := 0
	for b.Loop() {
		s.Add(vs[i&4095])
		i++
	}
}
