package timeseries

import (
	"math"
	"slices"
	"time"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// DefaultSlice is the slice length when none is given.
const DefaultSlice = time.Second

// MaxSlices bounds the slices of a series (27.8 hours at DefaultSlice): a longer tier is cut
// into longer slices.
const MaxSlices = 100_000

// Slice is one slice of a tier: its start and what happened in it (see the package
// documentation for each field's rule).
type Slice struct {
	Start time.Duration // from T0

	Offered, Sent, Completed, Errors, Canceled int

	Running       float64 // mean requests in flight
	MaxRunning    int
	WaitingClient float64 // mean requests in the client's queue

	OutputTokensPerS float64

	TTFTCount        int
	TTFTP50, TTFTP99 float64 // ms; NaN when TTFTCount is 0
	ITLCount         int
	ITLP50, ITLP99   float64 // ms; NaN when ITLCount is 0
}

// Series is a tier's slices in time order.
type Series struct {
	Slice  time.Duration
	Slices []Slice
}

// Of computes the series of one tier's records with slices of length slice (DefaultSlice when
// slice ≤ 0). The records are not modified; their ITL slices are read, not copied.
func Of(recs []records.Record, slice time.Duration) Series {
	b := NewBuilder(slice)
	b.reqs = slices.Grow(b.reqs, len(recs))
	for i := range recs {
		b.Add(&recs[i])
	}
	return b.Series()
}

// Builder computes a series from records added one at a time (a records file scanned tier by
// tier), keeping a few durations per request.
type Builder struct {
	slice  time.Duration
	reqs   []req
	latest time.Duration // the latest moment of any record; -1 before the first
}

// req is what a series needs of a record. Moments that never came are negative.
type req struct {
	planned, slot, sent, first, last, end time.Duration
	itl                                   []time.Duration
	tokens                                int
	outcome                               records.Outcome
	issued                                bool
}

// NewBuilder returns a builder of slices of length slice (DefaultSlice when slice ≤ 0).
func NewBuilder(slice time.Duration) *Builder {
	if slice <= 0 {
		slice = DefaultSlice
	}
	return &Builder{slice: slice, latest: -1}
}

// Add counts one record of the tier. The builder keeps r.ITL (not a copy): it must not change
// until Series has returned.
func (b *Builder) Add(r *records.Record) {
	q := req{planned: moment(r.Planned), slot: moment(r.Slot), sent: moment(r.Sent), first: moment(r.First),
		last: moment(r.Last), end: moment(r.End), itl: r.ITL, tokens: r.OutputTokens, outcome: r.Outcome,
		issued: r.Dispatched >= 0}
	b.latest = max(b.latest, q.planned, moment(r.Dispatched), q.slot, q.sent, moment(r.FirstEvent), q.first, q.last, q.end)
	if q.first >= 0 && q.outcome == records.OK {
		t := q.first
		for _, g := range q.itl {
			t = addSat(t, g)
		}
		b.latest = max(b.latest, t)
	}
	b.reqs = append(b.reqs, q)
}

// moment maps every negative offset to records.Unset.
func moment(d time.Duration) time.Duration {
	if d < 0 {
		return records.Unset
	}
	return d
}

// addSat is t+g, saturated at the largest duration.
func addSat(t, g time.Duration) time.Duration {
	if g > 0 && t > math.MaxInt64-g {
		return math.MaxInt64
	}
	return t + g
}

// Series returns the series of the records added so far: no slice without records.
func (b *Builder) Series() Series {
	s := Series{Slice: b.slice}
	if len(b.reqs) == 0 || b.latest < 0 {
		return s
	}
	d := b.slice
	n := ceilDiv(b.latest, d)
	if n > MaxSlices {
		d *= time.Duration(ceilDiv(time.Duration(n), MaxSlices))
		n = ceilDiv(b.latest, d)
	}
	n = max(n, 1)
	s.Slice = d
	c := newCalc(int(n), d)
	for i := range b.reqs {
		c.add(&b.reqs[i])
	}
	s.Slices = c.finish(b.reqs)
	return s
}

// ceilDiv is ⌈a/b⌉ for a ≥ 0, b > 0.
func ceilDiv(a, b time.Duration) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return int64(q)
}

// calc holds the per-slice accumulators of one series: difference arrays (cover*: how many
// intervals span slice k whole, as +1 at the first such slice and −1 after the last) beside the
// partial contributions.
type calc struct {
	n     int
	d     time.Duration
	rows  []Slice
	run   []int64 // ns of requests in flight within the slice, from the partial overlaps
	wait  []int64
	runC  []int32 // cover difference arrays, length n+1
	waitC []int32
	tok   []float64 // tokens, partial overlaps and first tokens
	tokD  []float64 // tokens per whole slice covered, difference array, length n+1
	tokC  []int32
	ttftN []int // values per slice, then offsets
	itlN  []int
}

func newCalc(n int, d time.Duration) *calc {
	c := &calc{n: n, d: d, rows: make([]Slice, n), run: make([]int64, n), wait: make([]int64, n),
		runC: make([]int32, n+1), waitC: make([]int32, n+1), tok: make([]float64, n), tokD: make([]float64, n+1),
		tokC: make([]int32, n+1), ttftN: make([]int, n+1), itlN: make([]int, n+1)}
	for k := range c.rows {
		c.rows[k].Start = time.Duration(k) * d
	}
	return c
}

// at is the slice holding moment t (t ≥ 0), the last one for t at or past the end.
func (c *calc) at(t time.Duration) int {
	k := t / c.d
	if k >= time.Duration(c.n) {
		return c.n - 1
	}
	return max(int(k), 0)
}

// span adds the interval [a, b) to the time integral part/cover.
func (c *calc) span(part []int64, cover []int32, a, b time.Duration) {
	if a < 0 || b <= a {
		return
	}
	ka, kb := c.at(a), c.at(b)
	if ka == kb {
		part[ka] += int64(b - a)
		return
	}
	part[ka] += int64(time.Duration(ka+1)*c.d - a)
	part[kb] += int64(b - time.Duration(kb)*c.d)
	cover[ka+1]++
	cover[kb]--
}

func (c *calc) add(q *req) {
	rows := c.rows
	if q.planned >= 0 {
		rows[c.at(q.planned)].Offered++
	}
	if q.sent >= 0 {
		rows[c.at(q.sent)].Sent++
	}
	if q.end >= 0 {
		k := c.at(q.end)
		switch {
		case q.outcome == records.OK:
			rows[k].Completed++
		case !q.issued:
		case q.outcome == records.Canceled:
			rows[k].Canceled++
		default:
			rows[k].Errors++
		}
	}
	if q.sent >= 0 && q.end >= 0 {
		c.span(c.run, c.runC, q.sent, q.end)
	}
	if q.planned >= 0 && q.slot >= 0 {
		c.span(c.wait, c.waitC, q.planned, q.slot)
	}
	if q.issued {
		c.tokens(q)
	}
	if q.outcome == records.OK && q.first >= 0 {
		if q.sent >= 0 {
			c.ttftN[c.at(q.first)+1]++
		}
		t := q.first
		for _, g := range q.itl {
			t = addSat(t, g)
			c.itlN[c.at(t)+1]++
		}
	}
}

// tokens spreads q's output tokens: the first at first, the others evenly over (first, last]
// (all at first when last is missing or not after it), as measure's steady state counts them.
func (c *calc) tokens(q *req) {
	if q.tokens <= 0 || q.first < 0 {
		return
	}
	kf := c.at(q.first)
	c.tok[kf]++
	rest := float64(q.tokens - 1)
	if rest <= 0 {
		return
	}
	last := q.last
	if last <= q.first {
		c.tok[kf] += rest
		return
	}
	kl := c.at(last)
	if kl == kf {
		c.tok[kf] += rest
		return
	}
	length := float64(last - q.first)
	c.tok[kf] += rest * float64(time.Duration(kf+1)*c.d-q.first) / length
	c.tok[kl] += rest * float64(last-time.Duration(kl)*c.d) / length
	if kl > kf+1 {
		v := rest * float64(c.d) / length
		c.tokD[kf+1] += v
		c.tokD[kl] -= v
		c.tokC[kf+1]++
		c.tokC[kl]--
	}
}

// finish resolves the accumulators into the slices.
func (c *calc) finish(reqs []req) []Slice {
	d := int64(c.d)
	sec := c.d.Seconds()
	var runC, waitC, tokC int64
	tokD := 0.0
	for k := range c.rows {
		r := &c.rows[k]
		runC += int64(c.runC[k])
		waitC += int64(c.waitC[k])
		tokC += int64(c.tokC[k])
		tokD += c.tokD[k]
		if tokC == 0 {
			tokD = 0 // no whole-slice spread is open: the sum is exactly 0, rounding aside
		}
		r.Running = float64(c.run[k]+runC*d) / float64(d)
		r.WaitingClient = float64(c.wait[k]+waitC*d) / float64(d)
		r.OutputTokensPerS = (c.tok[k] + tokD) / sec
	}
	c.maxRunning(reqs)
	c.percentiles(reqs)
	return c.rows
}

// maxRunning sets each slice's largest count of requests in flight, sweeping the sent and end
// moments in time order. At one instant, ends go before starts, and a slice's count is read
// after all the events of an instant: a request ending when another starts is not counted
// twice, and one that ended at a slice's start does not count in it.
func (c *calc) maxRunning(reqs []req) {
	var starts, ends []time.Duration
	for i := range reqs {
		if q := &reqs[i]; q.sent >= 0 && q.end > q.sent {
			starts, ends = append(starts, q.sent), append(ends, q.end)
		}
	}
	slices.Sort(starts)
	slices.Sort(ends)
	cur, k, touched := 0, 0, false // touched: slice k's maximum has been started
	for i, j := 0, 0; i < len(starts) || j < len(ends); {
		var t time.Duration
		switch {
		case j == len(ends):
			t = starts[i]
		case i == len(starts):
			t = ends[j]
		default:
			t = min(starts[i], ends[j])
		}
		for kt := c.at(t); k < kt; k++ {
			if !touched {
				c.rows[k].MaxRunning = cur
			}
			touched = false
		}
		if !touched && t > c.rows[k].Start {
			c.rows[k].MaxRunning = cur // in flight from the slice's start to t
		}
		touched = true
		for ; j < len(ends) && ends[j] == t; j++ {
			cur--
		}
		for ; i < len(starts) && starts[i] == t; i++ {
			cur++
		}
		c.rows[k].MaxRunning = max(c.rows[k].MaxRunning, cur)
	}
	for ; k < c.n; k++ {
		if !touched {
			c.rows[k].MaxRunning = cur
		}
		touched = false
	}
}

// percentiles gathers each slice's TTFT and ITL values (in ms) into one buffer per metric,
// slice by slice (a counting sort on the slice), sorts each slice's values and reads them.
func (c *calc) percentiles(reqs []req) {
	ttft, ttftAt := c.buffer(c.ttftN)
	itl, itlAt := c.buffer(c.itlN)
	for i := range reqs {
		q := &reqs[i]
		if q.outcome != records.OK || q.first < 0 {
			continue
		}
		if q.sent >= 0 {
			k := c.at(q.first)
			ttft[ttftAt[k]] = float64(q.first-q.sent) / 1e6
			ttftAt[k]++
		}
		t := q.first
		for _, g := range q.itl {
			t = addSat(t, g)
			k := c.at(t)
			itl[itlAt[k]] = float64(g) / 1e6
			itlAt[k]++
		}
	}
	for k := range c.rows {
		r := &c.rows[k]
		r.TTFTCount, r.TTFTP50, r.TTFTP99 = describe(ttft[c.ttftN[k]:c.ttftN[k+1]])
		r.ITLCount, r.ITLP50, r.ITLP99 = describe(itl[c.itlN[k]:c.itlN[k+1]])
	}
}

// buffer turns counts (value counts of slice k at k+1) into offsets in place and returns a
// buffer for every value and a cursor per slice.
func (c *calc) buffer(counts []int) ([]float64, []int) {
	for k := 1; k < len(counts); k++ {
		counts[k] += counts[k-1]
	}
	return make([]float64, counts[len(counts)-1]), slices.Clone(counts[:len(counts)-1])
}

// describe sorts xs and returns its count, p50 and p99 (NaN when empty).
func describe(xs []float64) (int, float64, float64) {
	slices.Sort(xs)
	return len(xs), measure.Percentile(xs, 50), measure.Percentile(xs, 99)
}
