package result

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

// Peak holds the two peak figures vLLM's benchmark client writes into its result
// (max_output_tokens_per_s, max_concurrent_requests), computed from a tier's records the way
// vLLM's serve.py computes them from its requests' timings (calculate_metrics, vLLM's main
// branch of 2025-26). Both count the tier's successful requests only: ok records that streamed
// output (vLLM counts a request that received no chunk as failed).
type Peak struct {
	// MaxOutputTokensPerS is the largest number of output chunks that arrived within one
	// second, the seconds counted from the earliest send among those requests: each chunk
	// (the first at First, the others First plus the running sum of the ITL gaps) counts once,
	// as in vLLM, which counts streamed messages here, not the usage's tokens.
	MaxOutputTokensPerS float64
	// MaxConcurrentRequests is the largest number of those requests in flight at once, each
	// from Sent to Last (vLLM's start_time to start_time + latency), counting a request that
	// ends at the moment another starts as gone (half-open intervals).
	MaxConcurrentRequests int
}

// peakSpan is one counted request's time in flight.
type peakSpan struct{ sent, last time.Duration }

// peakCounter computes a Peak: the spans first, then, once their origin is known, the chunks.
type peakCounter struct {
	spans   []peakSpan
	buckets []int // chunks per second from the earliest send; nil until prepare
}

// counts reports whether r is one of vLLM's successful requests.
func counts(r *records.Record) bool {
	return r.Outcome == records.OK && r.Sent != records.Unset && r.First != records.Unset && r.Last != records.Unset
}

func (p *peakCounter) addSpan(r *records.Record) {
	if counts(r) {
		p.spans = append(p.spans, peakSpan{r.Sent, r.Last})
	}
}

// origin is the earliest send of the counted requests.
func (p *peakCounter) origin() time.Duration {
	o := p.spans[0].sent
	for _, s := range p.spans[1:] {
		o = min(o, s.sent)
	}
	return o
}

// prepare makes the per-second buckets: ceil(latest end − earliest send) + 1 of them, as vLLM.
func (p *peakCounter) prepare() {
	if len(p.spans) == 0 {
		return
	}
	o, end := p.origin(), p.spans[0].last
	for _, s := range p.spans[1:] {
		end = max(end, s.last)
	}
	n := int((end-o+time.Second-1)/time.Second) + 1
	p.buckets = make([]int, n)
}

// addChunks counts r's chunks in their seconds (after prepare).
func (p *peakCounter) addChunks(r *records.Record, o time.Duration) {
	if counts(r) {
		p.chunks(r.First, r.ITL, o)
	}
}

// chunks counts the chunks at first and after each gap of itl.
func (p *peakCounter) chunks(first time.Duration, itl []time.Duration, o time.Duration) {
	if p.buckets == nil {
		return
	}
	t := first
	p.count(t - o)
	for _, g := range itl {
		t += g
		p.count(t - o)
	}
}

func (p *peakCounter) count(since time.Duration) {
	if b := int(since / time.Second); since >= 0 && b < len(p.buckets) {
		p.buckets[b]++
	}
}

// peak is the result once every chunk is counted.
func (p *peakCounter) peak() Peak {
	var pk Peak
	for _, n := range p.buckets {
		pk.MaxOutputTokensPerS = max(pk.MaxOutputTokensPerS, float64(n))
	}
	// A sweep over the starts and the ends, both sorted; at equal times the end goes first.
	starts := make([]time.Duration, len(p.spans))
	ends := make([]time.Duration, len(p.spans))
	for i, s := range p.spans {
		starts[i], ends[i] = s.sent, s.last
	}
	slices.Sort(starts)
	slices.Sort(ends)
	cur, j := 0, 0
	for _, s := range starts {
		for j < len(ends) && ends[j] <= s {
			j++
			cur--
		}
		cur++
		pk.MaxConcurrentRequests = max(pk.MaxConcurrentRequests, cur)
	}
	return pk
}

// PeakAccumulator computes a tier's Peak from its records handed one at a time. It keeps, per
// successful request, its send, first and last moments and its ITL gaps (shared with the record,
// not copied): it is meant for a run whose records are in memory anyway.
type PeakAccumulator struct {
	c    peakCounter
	kept []keptChunks
}

type keptChunks struct {
	first time.Duration
	itl   []time.Duration
}

// Add counts one record. It keeps r's ITL slice: its gaps must not change afterwards.
func (a *PeakAccumulator) Add(r *records.Record) {
	if !counts(r) {
		return
	}
	a.c.addSpan(r)
	a.kept = append(a.kept, keptChunks{r.First, r.ITL})
}

// Peak is the tier's Peak; zero when no request succeeded.
func (a *PeakAccumulator) Peak() Peak {
	if len(a.c.spans) == 0 {
		return Peak{}
	}
	a.c.prepare()
	o := a.c.origin()
	for _, k := range a.kept {
		a.c.chunks(k.first, k.itl, o)
	}
	pk := a.c.peak()
	a.c.buckets = nil
	return pk
}

// PeakOf is the Peak of one tier's records.
func PeakOf(recs []records.Record) Peak {
	var c peakCounter
	for i := range recs {
		c.addSpan(&recs[i])
	}
	if len(c.spans) == 0 {
		return Peak{}
	}
	c.prepare()
	o := c.origin()
	for i := range recs {
		c.addChunks(&recs[i], o)
	}
	return c.peak()
}

// PeaksOf is the Peak of every tier of a records file read whole.
func PeaksOf(f *records.File) map[int]Peak {
	byTier := map[int][]records.Record{}
	for _, r := range f.Records {
		byTier[r.Tier] = append(byTier[r.Tier], r)
	}
	out := make(map[int]Peak, len(f.Tiers))
	for _, t := range f.Tiers {
		out[t.Tier] = PeakOf(byTier[t.Tier])
	}
	return out
}

// PeaksOfFile is the Peak of every tier of the records file at path, read twice one line at a
// time (the spans, then the chunks): it holds 16 bytes per successful request and one counter
// per second of each tier, whatever the file's size.
func PeaksOfFile(path string) (map[int]Peak, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("peaks of %s: %w", path, err)
	}
	defer fh.Close()
	p, err := peaksOf(fh)
	if err != nil {
		return nil, fmt.Errorf("peaks of %s: %w", path, err)
	}
	return p, nil
}

// peaksOf is PeaksOfFile on an open file: it reads it twice from its start, the spans first.
func peaksOf(fh io.ReadSeeker) (map[int]Peak, error) {
	counters := map[int]*peakCounter{}
	scan := func(rec func(*records.Record)) error {
		if _, err := fh.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := records.Scan(fh, records.Visitor{
			Tier: func(t records.Tier) error {
				if counters[t.Tier] == nil {
					counters[t.Tier] = &peakCounter{}
				}
				return nil
			},
			Record: func(r *records.Record) error { rec(r); return nil },
		})
		return err
	}
	if err := scan(func(r *records.Record) { counters[r.Tier].addSpan(r) }); err != nil {
		return nil, err
	}
	origins := map[int]time.Duration{}
	for tier, c := range counters {
		if len(c.spans) > 0 {
			c.prepare()
			origins[tier] = c.origin()
		}
	}
	if err := scan(func(r *records.Record) { counters[r.Tier].addChunks(r, origins[r.Tier]) }); err != nil {
		return nil, err
	}
	out := make(map[int]Peak, len(counters))
	for tier, c := range counters {
		out[tier] = Peak{}
		if len(c.spans) > 0 {
			out[tier] = c.peak()
		}
	}
	return out, nil
}
