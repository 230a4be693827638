package measure

import (
	"fmt"
	"math"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

// DefaultSketchError is the relative error of the percentiles of NewApproxAccumulator's
// sketches when none is given: 0.5 %, i.e. a p99 TTFT of 200 ms is reported between 199 and
// 201 ms.
const DefaultSketchError = 0.005

// Sketch limits.
const (
	minSketchError = 1e-4 // finer would need more than 300,000 buckets per sign
	maxSketchError = 0.1
	// Magnitudes from 2⁶³ ns up (only a float metric could hold one) share the top bucket.
)

// Sketch summarises a stream of durations in bounded memory with a fixed relative error: a
// histogram with geometrically growing buckets, in the manner of DDSketch (Masson, Rim and Lee,
// VLDB 2019), written for this package. Values are nanoseconds (float64, so fractional values
// such as TPOT fit).
//
// Buckets. A value v ≥ 1 ns is mapped to f(v) = e + (m - 1), where v = m·2^e with m in [1, 2)
// (the float's own exponent and mantissa, so no logarithm is computed: f is log2 made piecewise
// linear), and goes to bucket k = ⌈f(v) / w⌉ with w = γ - 1 and γ = (1+α)/(1-α). f is
// increasing, so bucket k holds the values in (a, b] with a = f⁻¹((k-1)w), b = f⁻¹(kw), and
// b/a ≤ 1 + w = γ: inside one binade b/a = 1 + w/m ≤ 1 + w, and across a power of two the
// ratio only falls. The bucket is read back as r = 2ab/(a+b), whose relative error against any
// value of (a, b] is at most (b-a)/(b+a) = (b/a - 1)/(b/a + 1) ≤ (γ-1)/(γ+1) = α. Negative
// values are kept the same way in a mirrored set of buckets; values with |v| < 1 ns (a
// duration can only be 0 there) are counted as 0 exactly.
//
// Error bound. The value a Sketch reports for rank r of the sorted sample is the read-back value
// of the bucket that holds the true x[r], clamped to the exact [min, max], so it is within a
// relative error α of x[r] (0 stays exact); a percentile interpolates two such values with the
// weights of Percentile (Hyndman–Fan type 7), a convex combination, so for values of one sign
// it is within α of the exact percentile too (floating-point rounding aside). Count, min and
// max are exact; the mean is exact up to rounding (compensated sum); the standard deviation is
// Welford's, exact up to rounding.
//
// Memory is bounded whatever the input: at most ⌈63/w⌉ + 1 buckets of 8 bytes per sign (a
// duration is below 2⁶³ ns), about 6,300 (49 KiB) for α = 0.5 %, and in practice a few thousand
// for latencies from microseconds to minutes. Two sketches with the same α merge exactly
// (Merge).
type Sketch struct {
	alpha, width, invWidth float64 // α, w = γ-1 and 1/w
	maxIndex               int

	pos, neg  sketchStore
	zero      uint64
	count     uint64
	min, max  float64
	sum, comp float64 // Neumaier-compensated sum
	mean, m2  float64 // Welford
}

// sketchStore is a dense run of bucket counts: counts[i] belongs to bucket offset+i.
type sketchStore struct {
	offset int
	counts []uint64
}

// NewSketch returns an empty sketch with relative error alpha, in [1e-4, 0.1].
func NewSketch(alpha float64) (*Sketch, error) {
	if !(alpha >= minSketchError && alpha <= maxSketchError) {
		return nil, fmt.Errorf("sketch: relative error must be in [%g, %g], got %g", minSketchError, maxSketchError, alpha)
	}
	w := (1+alpha)/(1-alpha) - 1
	s := &Sketch{alpha: alpha, width: w, invWidth: 1 / w, min: math.Inf(1), max: math.Inf(-1)}
	s.maxIndex = int(math.Ceil(63 * s.invWidth)) // f(v) < 63 for every v below 2⁶³
	return s, nil
}

// RelativeError is the sketch's α.
func (s *Sketch) RelativeError() float64 { return s.alpha }

// Count is the number of values added.
func (s *Sketch) Count() int { return int(s.count) }

// Buckets is the number of buckets the sketch holds (its memory is 8 bytes each).
func (s *Sketch) Buckets() int { return len(s.pos.counts) + len(s.neg.counts) }

// index is the bucket of a magnitude m ≥ 1: ⌈f(m)/w⌉, capped at maxIndex.
func (s *Sketch) index(m float64) int {
	bits := math.Float64bits(m)
	e := int(bits>>52) - 1023                           // m ≥ 1: a normal float, e ≥ 0
	frac := float64(bits&(1<<52-1)) * (1.0 / (1 << 52)) // m/2^e - 1, exactly
	x := (float64(e) + frac) * s.invWidth               // ≥ 0
	if x >= float64(s.maxIndex) {
		return s.maxIndex
	}
	k := int(x) // x ≥ 0: truncation is the floor
	if float64(k) < x {
		k++
	}
	return k
}

// Add counts one value in nanoseconds. NaN is ignored.
func (s *Sketch) Add(v float64) {
	if v != v { // NaN
		return
	}
	s.count++
	if v < s.min {
		s.min = v
	}
	if v > s.max {
		s.max = v
	}
	s.sum, s.comp = neumaier(s.sum, s.comp, v)
	d := v - s.mean
	s.mean += d / float64(s.count)
	s.m2 += d * (v - s.mean)
	switch {
	case v >= 1:
		s.pos.add(s.index(v), 1)
	case v <= -1:
		s.neg.add(s.index(-v), 1)
	default:
		s.zero++
	}
}

// add counts n values in bucket k, growing the run of buckets to reach it.
func (st *sketchStore) add(k int, n uint64) {
	switch {
	case len(st.counts) == 0:
		st.offset = k
		st.counts = make([]uint64, 1, 64)
	case k < st.offset:
		grown := make([]uint64, len(st.counts)+st.offset-k, cap(st.counts)+st.offset-k)
		copy(grown[st.offset-k:], st.counts)
		st.counts, st.offset = grown, k
	case k >= st.offset+len(st.counts):
		st.counts = append(st.counts, make([]uint64, k-st.offset-len(st.counts)+1)...)
	}
	st.counts[k-st.offset] += n
}

// Merge adds every value of o to s. Both must have the same relative error.
func (s *Sketch) Merge(o *Sketch) error {
	if o.alpha != s.alpha {
		return fmt.Errorf("sketch: cannot merge relative errors %g and %g", s.alpha, o.alpha)
	}
	if o.count == 0 {
		return nil
	}
	for _, pair := range [2][2]*sketchStore{{&s.pos, &o.pos}, {&s.neg, &o.neg}} {
		dst, src := pair[0], pair[1]
		for i, c := range src.counts {
			if c > 0 {
				dst.add(src.offset+i, c)
			}
		}
	}
	s.zero += o.zero
	// Chan et al.'s pairwise update of the Welford moments.
	n1, n2 := float64(s.count), float64(o.count)
	d := o.mean - s.mean
	s.count += o.count
	n := float64(s.count)
	s.mean += d * n2 / n
	s.m2 += o.m2 + d*d*n1*n2/n
	s.sum, s.comp = neumaier(s.sum, s.comp, o.sum)
	s.sum, s.comp = neumaier(s.sum, s.comp, o.comp)
	s.min, s.max = math.Min(s.min, o.min), math.Max(s.max, o.max)
	return nil
}

// valueAt is the estimate of the value of rank r (0-based) of the sorted sample, 0 ≤ r < count.
func (s *Sketch) valueAt(r uint64) float64 {
	if r == 0 {
		return s.min
	}
	if r == s.count-1 {
		return s.max
	}
	var v float64
	seen := uint64(0)
	found := false
	for i := len(s.neg.counts) - 1; i >= 0 && !found; i-- { // most negative first
		if seen += s.neg.counts[i]; seen > r {
			v, found = -s.readBack(s.neg.offset+i), true
		}
	}
	if !found {
		if seen += s.zero; seen > r {
			return 0
		}
	}
	for i := 0; i < len(s.pos.counts) && !found; i++ {
		if seen += s.pos.counts[i]; seen > r {
			v, found = s.readBack(s.pos.offset+i), true
		}
	}
	return math.Min(math.Max(v, s.min), s.max)
}

// readBack is the value bucket k stands for: 2ab/(a+b) for its range (a, b].
func (s *Sketch) readBack(k int) float64 {
	a, b := finv(float64(k-1)*s.width), finv(float64(k)*s.width)
	return 2 * a * b / (a + b)
}

// finv is the inverse of f(v) = e + (m - 1): 2^⌊f⌋ · (1 + f - ⌊f⌋).
func finv(f float64) float64 {
	e := math.Floor(f)
	return math.Ldexp(1+f-e, int(e))
}

// Percentile is the p-th percentile (0–100) with Percentile's interpolation, in nanoseconds,
// within the sketch's relative error of the exact one; NaN when empty or p is out of range.
func (s *Sketch) Percentile(p float64) float64 { return s.percentile(1, p) }

func (s *Sketch) percentile(div, p float64) float64 {
	n := int(s.count)
	i, ok := percentileRank(n, p)
	if !ok {
		return math.NaN()
	}
	if i >= n-1 {
		return s.valueAt(uint64(n-1)) / div
	}
	// The same steps as percentile, on estimated order statistics.
	g := float64(n-1)*(p/100) - float64(i)
	a, b := s.valueAt(uint64(i))/div, s.valueAt(uint64(i+1))/div
	d := b - a
	if g >= 0.5 {
		return b - float64(d*(1-g))
	}
	return a + float64(d*g)
}

// Stats describes the sketch like Describe describes exact values: values divided by div (1e6
// gives milliseconds from nanoseconds), percentiles on the 0–100 scale.
func (s *Sketch) Stats(div float64, percentiles []float64) Stats {
	st := Stats{Count: int(s.count), Mean: math.NaN(), Median: math.NaN(), Std: math.NaN(),
		Percentiles: make(map[string]float64, len(percentiles))}
	for _, p := range percentiles {
		st.Percentiles[PercentileKey(p)] = math.NaN()
	}
	if s.count == 0 {
		return st
	}
	n := s.count
	st.Mean = (s.sum + s.comp) / float64(n) / div
	st.Std = math.Sqrt(max(s.m2, 0)/float64(n)) / div
	if n%2 == 1 {
		st.Median = s.valueAt(n/2) / div
	} else {
		st.Median = (s.valueAt(n/2-1)/div + s.valueAt(n/2)/div) / 2
	}
	for _, p := range percentiles {
		st.Percentiles[PercentileKey(p)] = s.percentile(div, p)
	}
	return st
}

// ApproxAccumulator is Accumulator in bounded memory: the same counts, tokens, throughputs,
// objectives, window and client_bound check, exactly, but each latency metric goes into a
// Sketch instead of an array, so its median and percentiles are within the sketch's relative
// error of the exact ones (its count, mean and standard deviation stay exact up to rounding).
// Memory does not grow with the number of records: a few sketches of at most a few thousand
// buckets each, and room for one record's ITL gaps. Use it where Accumulator would hold more
// values than memory allows (every ITL gap is 8 bytes there: 10 million 32-token requests are
// 2.5 GB of gaps). Like Accumulator, it supports a warmup but not a cooldown.
type ApproxAccumulator struct {
	acc                                    *Accumulator
	ttft, tpot, itl, e2el, cq, e2elCQ, lag *Sketch
	// ttft and itl hold the values of responses without reasoning (their answer's too); these
	// those of responses with reasoning (see Accumulator), merged in by Summary.
	ttftReasoned, ttfaReasoned, itlReasoned, answerReasoned *Sketch
}

// NewApproxAccumulator starts a streaming summary whose percentiles have relative error alpha
// (0 means DefaultSketchError). It fails when opts has a cooldown or alpha is out of range.
func NewApproxAccumulator(opts Options, alpha float64) (*ApproxAccumulator, error) {
	if alpha == 0 {
		alpha = DefaultSketchError
	}
	acc, err := NewAccumulator(opts)
	if err != nil {
		return nil, err
	}
	a := &ApproxAccumulator{acc: acc}
	acc.sessions.alpha = alpha
	for _, sp := range []**Sketch{&a.ttft, &a.tpot, &a.itl, &a.e2el, &a.cq, &a.e2elCQ, &a.lag,
		&a.ttftReasoned, &a.ttfaReasoned, &a.itlReasoned, &a.answerReasoned} {
		if *sp, err = NewSketch(alpha); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// RelativeError is the relative error of the percentiles.
func (a *ApproxAccumulator) RelativeError() float64 { return a.lag.alpha }

// Note says how the summary's statistics were computed, for the output next to it.
func (a *ApproxAccumulator) Note() string {
	return fmt.Sprintf("approximate percentiles: medians and percentiles come from log-bucket sketches and are within ±%g %% (relative) of the exact values; counts, throughputs, means and standard deviations are exact",
		100*a.RelativeError())
}

// Add counts one record: Accumulator.Add, then its metric values move into the sketches.
func (a *ApproxAccumulator) Add(r *records.Record) {
	acc := a.acc
	acc.Add(r)
	drainInto(&acc.ttft, a.ttft)
	drainInto(&acc.ttftReasoned, a.ttftReasoned)
	drainInto(&acc.ttfaReasoned, a.ttfaReasoned)
	drainInto(&acc.itl, a.itl)
	drainInto(&acc.itlReasoned, a.itlReasoned)
	drainInto(&acc.answerReasoned, a.answerReasoned)
	drainInto(&acc.e2el, a.e2el)
	drainInto(&acc.cq, a.cq)
	drainInto(&acc.e2elCQ, a.e2elCQ)
	drainInto(&acc.lag, a.lag)
	for _, v := range acc.tpot {
		a.tpot.Add(v * 1e6) // ms → ns, like the other metrics
	}
	acc.tpot = acc.tpot[:0]
}

// answerStats is the sketched counterpart of answerJob: the statistics of a metric (plain and
// reasoned values) and of its answer's counterpart (plain and answer values).
func answerStats(plain, reasoned, answer *Sketch, ps []float64) (metric, answerMetric Stats) {
	if reasoned.Count() == 0 && answer.Count() == 0 {
		metric = plain.Stats(1e6, ps)
		return metric, metric.clone()
	}
	merged := func(o *Sketch) *Sketch {
		m, _ := NewSketch(plain.alpha) // the alpha of a sketch that exists is valid
		_ = m.Merge(plain)             // same alpha: cannot fail
		_ = m.Merge(o)
		return m
	}
	return merged(reasoned).Stats(1e6, ps), merged(answer).Stats(1e6, ps)
}

func drainInto(xs *[]time.Duration, s *Sketch) {
	for _, v := range *xs {
		s.Add(float64(v))
	}
	*xs = (*xs)[:0]
}

// Summary computes the summary of the records added so far; it may be called again after more
// Adds.
func (a *ApproxAccumulator) Summary(tier records.Tier) Summary {
	s := a.acc.Summary(tier) // every count exact; the metric arrays are empty
	ps := a.acc.opts.Percentiles
	s.TTFT, s.TTFA = answerStats(a.ttft, a.ttftReasoned, a.ttfaReasoned, ps)
	s.TPOT = a.tpot.Stats(1e6, ps)
	s.ITL, s.AnswerITL = answerStats(a.itl, a.itlReasoned, a.answerReasoned, ps)
	s.E2EL = a.e2el.Stats(1e6, ps)
	s.ClientQueueTime = a.cq.Stats(1e6, ps)
	s.E2ELIncludingClientQueue = a.e2elCQ.Stats(1e6, ps)
	s.ScheduleLag = a.lag.Stats(1e6, ps)
	s.PercentileError = a.RelativeError()
	// The lag verdict again, on the sketch's p99 (the exact array is empty); the other
	// client-bound reasons do not depend on percentiles.
	if a.lag.Count() > 0 {
		judgeLag(&s, a.lag.percentile(1e6, 99), ms(a.acc.opts.MaxScheduleLag), a.acc.opts.Objectives, a.acc.obs)
	}
	return s
}
