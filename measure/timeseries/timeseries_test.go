package timeseries_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/measure/timeseries"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// sec is s seconds as a duration (exact for the decimals used here).
func sec(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

func ms(v ...float64) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(math.Round(x * 1e6))
	}
	return out
}

// rec is a record with its moments in seconds; a negative moment never came.
func rec(id int, o records.Outcome, planned, dispatched, slot, sent, first, last, end float64, tokens int, itl []time.Duration) records.Record {
	r := records.NewRecord(0, id, sec(planned))
	set := func(d *time.Duration, s float64) {
		if s >= 0 {
			*d = sec(s)
		}
	}
	set(&r.Dispatched, dispatched)
	set(&r.Slot, slot)
	set(&r.Sent, sent)
	set(&r.FirstEvent, first)
	set(&r.First, first)
	set(&r.Last, last)
	set(&r.End, end)
	r.Outcome, r.OutputTokens, r.ITL = o, tokens, itl
	if o == records.HTTPError {
		r.HTTPStatus = 500
	}
	return r
}

// fixture is a tier of seven requests over 3.8 s whose every column is worked out by hand in
// TestOfByHand.
func fixture() []records.Record {
	return []records.Record{
		// ok: in flight [0.25, 3.0), TTFT 500 ms, 5 tokens over [0.75, 2.75], gaps ending at 1.25, 1.75, 2.25, 2.75
		rec(0, records.OK, 0.2, 0.2, 0.2, 0.25, 0.75, 2.75, 3.0, 5, ms(500, 500, 500, 500)),
		// ok: queued in the client [0.5, 1.5), in flight [1.5, 1.7), TTFT 100 ms, one token
		rec(1, records.OK, 0.5, 0.5, 1.5, 1.5, 1.6, 1.6, 1.7, 1, nil),
		// ok: in flight [1.0, 3.4), TTFT 300 ms, 3 tokens over [1.3, 3.3], gaps ending at 2.3, 3.3
		rec(2, records.OK, 1.0, 1.0, 1.0, 1.0, 1.3, 3.3, 3.4, 3, ms(1000, 1000)),
		// http error: in flight [2.0, 2.1)
		rec(3, records.HTTPError, 2.0, 2.0, 2.0, 2.0, -1, -1, 2.1, 0, nil),
		// canceled while waiting for a slot: offered, nothing else
		rec(4, records.Canceled, 2.5, 2.5, -1, -1, -1, -1, -1, 0, nil),
		// canceled after two tokens at 3.55: in flight [3.5, 3.6)
		rec(5, records.Canceled, 3.0, 3.0, 3.0, 3.5, 3.55, 3.55, 3.6, 2, nil),
		// never dispatched: offered only (its planned moment is the tier's last moment)
		rec(6, records.Canceled, 3.8, -1, -1, -1, -1, -1, -1, 0, nil),
	}
}

var nan = math.NaN()

func TestOfByHand(t *testing.T) {
	tests := []struct {
		name  string
		recs  []records.Record
		slice time.Duration
		want  []timeseries.Slice
	}{
		{
			name: "seven requests, 1 s slices", recs: fixture(), slice: time.Second,
			want: []timeseries.Slice{
				// running 0.75: request 0 from 0.25; tokens: request 0's first + 4·0.25/2.
				{Start: 0, Offered: 2, Sent: 1, Running: 0.75, MaxRunning: 1, WaitingClient: 0.5, OutputTokensPerS: 1.5,
					TTFTCount: 1, TTFTP50: 500, TTFTP99: 500, ITLP50: nan, ITLP99: nan},
				// running 1 (req 0) + 0.2 (req 1) + 1 (req 2); max 3 from 1.5 to 1.7;
				// tokens 2 (req 0) + 1 (req 1) + 1 + 2·0.7/2 (req 2); TTFT {100, 300}.
				{Start: sec(1), Offered: 1, Sent: 2, Completed: 1, Running: 2.2, MaxRunning: 3, WaitingClient: 0.5, OutputTokensPerS: 4.7,
					TTFTCount: 2, TTFTP50: 200, TTFTP99: 298, ITLCount: 2, ITLP50: 500, ITLP99: 500},
				// running 1 + 1 + 0.1; max 3 at 2.0 (request 3 starts at the slice's start);
				// tokens 4·0.75/2 + 2·1/2; gaps {500, 500, 1000}.
				{Start: sec(2), Offered: 2, Sent: 1, Errors: 1, Running: 2.1, MaxRunning: 3, OutputTokensPerS: 2.5,
					TTFTP50: nan, TTFTP99: nan, ITLCount: 3, ITLP50: 500, ITLP99: 990},
				// request 0 ends at 3.0, the slice's start: not counted in max_running (1 from 3.0
				// to 3.4, then 1 again from 3.5); running 0.4 + 0.1; tokens 2·0.3/2 + 2.
				{Start: sec(3), Offered: 2, Sent: 1, Completed: 2, Canceled: 1, Running: 0.5, MaxRunning: 1, OutputTokensPerS: 2.3,
					TTFTP50: nan, TTFTP99: nan, ITLCount: 1, ITLP50: 1000, ITLP99: 1000},
			},
		},
		{
			name: "seven requests, 2 s slices", recs: fixture(), slice: 2 * time.Second,
			want: []timeseries.Slice{
				{Start: 0, Offered: 3, Sent: 3, Completed: 1, Running: 2.95 / 2, MaxRunning: 3, WaitingClient: 0.5, OutputTokensPerS: 6.2 / 2,
					TTFTCount: 3, TTFTP50: 300, TTFTP99: 496, ITLCount: 2, ITLP50: 500, ITLP99: 500},
				{Start: sec(2), Offered: 4, Sent: 2, Completed: 2, Errors: 1, Canceled: 1, Running: 2.6 / 2, MaxRunning: 3, OutputTokensPerS: 4.8 / 2,
					TTFTP50: nan, TTFTP99: nan, ITLCount: 4, ITLP50: 750, ITLP99: 1000},
			},
		},
		{
			name: "no records", slice: time.Second,
		},
		{
			name: "everything at T0: one slice", slice: time.Second,
			recs: []records.Record{rec(0, records.OK, 0, 0, 0, 0, 0, 0, 0, 4, nil)},
			want: []timeseries.Slice{{Offered: 1, Sent: 1, Completed: 1, OutputTokensPerS: 4, TTFTCount: 1, ITLP50: nan, ITLP99: nan}},
		},
		{
			// The tier ends on a slice boundary: the end at 2.0 is in the last slice, [1, 2].
			name: "end on a boundary", slice: time.Second,
			recs: []records.Record{rec(0, records.OK, 0, 0, 0, 0.5, 1.0, 2.0, 2.0, 3, ms(1000))},
			want: []timeseries.Slice{
				{Offered: 1, Sent: 1, Running: 0.5, MaxRunning: 1, TTFTP50: nan, TTFTP99: nan, ITLP50: nan, ITLP99: nan},
				{Start: sec(1), Completed: 1, Running: 1, MaxRunning: 1, OutputTokensPerS: 3, TTFTCount: 1, TTFTP50: 500, TTFTP99: 500,
					ITLCount: 1, ITLP50: 1000, ITLP99: 1000},
			},
		},
		{
			// One request ends at 1.0 as the next starts: never two in flight.
			name: "back to back", slice: time.Second,
			recs: []records.Record{
				rec(0, records.StreamError, 0, 0, 0, 0, -1, -1, 1.0, 0, nil),
				rec(1, records.Timeout, 1.0, 1.0, 1.0, 1.0, -1, -1, 1.5, 0, nil),
			},
			want: []timeseries.Slice{
				{Offered: 1, Sent: 1, Running: 1, MaxRunning: 1, TTFTP50: nan, TTFTP99: nan, ITLP50: nan, ITLP99: nan},
				{Start: sec(1), Offered: 1, Sent: 1, Errors: 2, Running: 0.5, MaxRunning: 1, TTFTP50: nan, TTFTP99: nan, ITLP50: nan, ITLP99: nan},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := timeseries.Of(tt.recs, tt.slice)
			if s.Slice != tt.slice {
				t.Errorf("slice %v, want %v", s.Slice, tt.slice)
			}
			if len(s.Slices) != len(tt.want) {
				t.Fatalf("%d slices, want %d: %+v", len(s.Slices), len(tt.want), s.Slices)
			}
			for k, w := range tt.want {
				checkSlice(t, k, s.Slices[k], w, 1e-12)
			}
		})
	}
}

// checkSlice compares every column: counts exactly, numbers within tol (relative, absolute
// below 1), NaN with NaN.
func checkSlice(t *testing.T, k int, got, want timeseries.Slice, tol float64) {
	t.Helper()
	ints := []struct {
		name      string
		got, want int
	}{
		{"offered", got.Offered, want.Offered}, {"sent", got.Sent, want.Sent}, {"completed", got.Completed, want.Completed},
		{"errors", got.Errors, want.Errors}, {"canceled", got.Canceled, want.Canceled}, {"max_running", got.MaxRunning, want.MaxRunning},
		{"ttft_n", got.TTFTCount, want.TTFTCount}, {"itl_n", got.ITLCount, want.ITLCount},
	}
	if got.Start != want.Start {
		t.Errorf("slice %d: start %v, want %v", k, got.Start, want.Start)
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("slice %d: %s %d, want %d", k, c.name, c.got, c.want)
		}
	}
	floats := []struct {
		name      string
		got, want float64
	}{
		{"running", got.Running, want.Running}, {"waiting_client", got.WaitingClient, want.WaitingClient},
		{"output_tokens_per_s", got.OutputTokensPerS, want.OutputTokensPerS},
		{"ttft_p50_ms", got.TTFTP50, want.TTFTP50}, {"ttft_p99_ms", got.TTFTP99, want.TTFTP99},
		{"itl_p50_ms", got.ITLP50, want.ITLP50}, {"itl_p99_ms", got.ITLP99, want.ITLP99},
	}
	for _, c := range floats {
		if !near(c.got, c.want, tol) {
			t.Errorf("slice %d: %s %v, want %v", k, c.name, c.got, c.want)
		}
	}
}

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestRunningIsExact: the time integrals are integer nanoseconds, so a mean that is a
// fraction with the slice as denominator comes out as that fraction.
func TestRunningIsExact(t *testing.T) {
	recs := []records.Record{rec(0, records.OK, 0, 0, 0, 0.1, -1, -1, 0.4, 0, nil)}
	recs[0].End = recs[0].Sent + time.Second/3
	s := timeseries.Of(recs, time.Second)
	if want := float64(time.Second/3) / 1e9; s.Slices[0].Running != want {
		t.Errorf("running %v, want exactly %v", s.Slices[0].Running, want)
	}
}

// TestDefaultSlice: a slice ≤ 0 is DefaultSlice.
func TestDefaultSlice(t *testing.T) {
	if s := timeseries.Of(fixture(), 0); s.Slice != timeseries.DefaultSlice || len(s.Slices) != 4 {
		t.Errorf("slice %v with %d slices, want %v with 4", s.Slice, len(s.Slices), timeseries.DefaultSlice)
	}
}

// TestMaxSlices: a tier too long for MaxSlices slices gets the smallest whole multiple of the
// slice that fits.
func TestMaxSlices(t *testing.T) {
	end := float64(2*timeseries.MaxSlices) + 0.5 // seconds
	recs := []records.Record{
		rec(0, records.OK, 0, 0, 0, 0, 1, 1, 1.5, 1, nil),
		rec(1, records.OK, end-1, end-1, end-1, end-1, end-0.5, end-0.5, end, 1, nil),
	}
	s := timeseries.Of(recs, time.Second)
	if s.Slice != 3*time.Second || len(s.Slices) > timeseries.MaxSlices {
		t.Fatalf("slice %v with %d slices, want 3s and at most %d", s.Slice, len(s.Slices), timeseries.MaxSlices)
	}
	completed := 0
	for _, x := range s.Slices {
		completed += x.Completed
	}
	if completed != 2 || s.Slices[len(s.Slices)-1].Completed != 1 {
		t.Errorf("completions %d (last slice %d), want 2 (1)", completed, s.Slices[len(s.Slices)-1].Completed)
	}
}

// TestBuilderIsOf: records added one at a time give Of's series.
func TestBuilderIsOf(t *testing.T) {
	recs := randomTier(rand.New(rand.NewPCG(7, 7)), 300)
	b := timeseries.NewBuilder(time.Second)
	for i := range recs {
		b.Add(&recs[i])
	}
	got, want := b.Series(), timeseries.Of(recs, time.Second)
	if len(got.Slices) != len(want.Slices) {
		t.Fatalf("%d slices, want %d", len(got.Slices), len(want.Slices))
	}
	for k := range want.Slices {
		checkSlice(t, k, got.Slices[k], want.Slices[k], 0)
	}
}

// randomTier is n requests over about 20 s with every outcome, unset moments, ITL gaps that add
// up to last − first, and times in whole nanoseconds that fall anywhere.
func randomTier(rng *rand.Rand, n int) []records.Record {
	dur := func(s float64) time.Duration { return time.Duration(rng.Int64N(int64(s * 1e9))) }
	recs := make([]records.Record, 0, n)
	for i := range n {
		planned := dur(20)
		r := records.NewRecord(0, i, planned)
		if rng.IntN(20) == 0 { // never dispatched
			r.Outcome = records.Canceled
			recs = append(recs, r)
			continue
		}
		r.Dispatched = planned + dur(0.01)
		r.Outcome = records.Outcomes()[rng.IntN(8)%5]          // ok more often
		if r.Outcome == records.Canceled && rng.IntN(3) == 0 { // canceled in the client's queue
			recs = append(recs, r)
			continue
		}
		r.Slot = r.Dispatched + dur(2)*time.Duration(rng.IntN(2))
		r.Sent = r.Slot + dur(0.005)
		end := r.Sent + dur(0.3)
		if r.Outcome == records.OK || rng.IntN(2) == 0 {
			r.First = r.Sent + dur(1.5)
			r.FirstEvent = r.First
			chunks := rng.IntN(40)
			t := r.First
			for range chunks {
				g := dur(0.2)
				r.ITL = append(r.ITL, g)
				t += g
			}
			r.Last = t
			r.Chunks = chunks + 1
			r.OutputTokens = r.Chunks * (1 + rng.IntN(3))
			end = r.Last + dur(0.05)
		}
		r.End = end
		recs = append(recs, r)
	}
	return recs
}

// TestProperties: on random tiers and slice lengths, the series adds up to the tier: every
// planned request is offered once, every ok request completes once, every token is received
// once, every TTFT and gap is in one slice, and the time integrals sum to the requests' time
// in flight and queued. And every column matches a direct per-slice computation.
func TestProperties(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 16))
		recs := randomTier(rng, 1+rng.IntN(400))
		slice := []time.Duration{time.Second, 250 * time.Millisecond, 1700 * time.Millisecond, 3 * time.Second, 7919 * time.Microsecond}[seed%5]
		s := timeseries.Of(recs, slice)

		var ok, ttfts, gaps int
		var tokens float64
		var flight, queued time.Duration
		for _, r := range recs {
			if r.Outcome == records.OK {
				ok++
				if r.First != records.Unset {
					ttfts++
					gaps += len(r.ITL)
				}
			}
			if r.Dispatched != records.Unset && r.First != records.Unset {
				tokens += float64(r.OutputTokens)
			}
			if r.Sent != records.Unset && r.End != records.Unset {
				flight += r.End - r.Sent
			}
			if r.Slot != records.Unset {
				queued += r.Slot - r.Planned
			}
		}
		var offered, completed, nTTFT, nITL int
		var gotTokens, gotFlight, gotQueued float64
		for _, x := range s.Slices {
			offered += x.Offered
			completed += x.Completed
			nTTFT += x.TTFTCount
			nITL += x.ITLCount
			gotTokens += x.OutputTokensPerS * s.Slice.Seconds()
			gotFlight += x.Running * float64(s.Slice)
			gotQueued += x.WaitingClient * float64(s.Slice)
		}
		if offered != len(recs) || completed != ok || nTTFT != ttfts || nITL != gaps {
			t.Errorf("seed %d: offered %d completed %d ttft_n %d itl_n %d, want %d %d %d %d", seed, offered, completed, nTTFT, nITL, len(recs), ok, ttfts, gaps)
		}
		if !near(gotTokens, tokens, 1e-9) {
			t.Errorf("seed %d: Σ output_tokens_per_s·slice = %v, want %v", seed, gotTokens, tokens)
		}
		if !near(gotFlight, float64(flight), 1e-12) || !near(gotQueued, float64(queued), 1e-12) {
			t.Errorf("seed %d: Σ running·slice = %v ns, want %v; Σ waiting_client·slice = %v ns, want %v", seed, gotFlight, float64(flight), gotQueued, float64(queued))
		}
		want := direct(recs, s.Slice, len(s.Slices))
		for k := range want {
			checkSlice(t, k, s.Slices[k], want[k], 1e-9)
		}
	}
}

// direct computes every column the slow way, slice by slice and request by request.
func direct(recs []records.Record, d time.Duration, n int) []timeseries.Slice {
	at := func(t time.Duration) int { return min(int(t/d), n-1) }
	set := func(t time.Duration) bool { return t != records.Unset }
	overlap := func(a, b time.Duration, k int) time.Duration {
		lo, hi := time.Duration(k)*d, time.Duration(k+1)*d
		return max(0, min(b, hi)-max(a, lo))
	}
	out := make([]timeseries.Slice, n)
	for k := range out {
		x := &out[k]
		x.Start = time.Duration(k) * d
		var flight, queued time.Duration
		var tokens float64
		var ttft, itl []float64
		instants := []time.Duration{x.Start}
		for _, r := range recs {
			issued := set(r.Dispatched)
			if at(r.Planned) == k {
				x.Offered++
			}
			if set(r.Sent) && at(r.Sent) == k {
				x.Sent++
			}
			if set(r.End) && at(r.End) == k {
				switch {
				case r.Outcome == records.OK:
					x.Completed++
				case !issued:
				case r.Outcome == records.Canceled:
					x.Canceled++
				default:
					x.Errors++
				}
			}
			if set(r.Sent) && set(r.End) {
				flight += overlap(r.Sent, r.End, k)
				for _, t := range []time.Duration{r.Sent, r.End} {
					if at(t) == k {
						instants = append(instants, t)
					}
				}
			}
			if set(r.Slot) {
				queued += overlap(r.Planned, r.Slot, k)
			}
			if issued && set(r.First) && r.OutputTokens > 0 {
				if at(r.First) == k {
					tokens++
				}
				rest := float64(r.OutputTokens - 1)
				if r.Last > r.First {
					tokens += rest * float64(overlap(r.First, r.Last, k)) / float64(r.Last-r.First)
				} else if at(r.First) == k {
					tokens += rest
				}
			}
			if r.Outcome == records.OK && set(r.First) {
				if at(r.First) == k {
					ttft = append(ttft, float64(r.First-r.Sent)/1e6)
				}
				t := r.First
				for _, g := range r.ITL {
					t += g
					if at(t) == k {
						itl = append(itl, float64(g)/1e6)
					}
				}
			}
		}
		for _, t := range instants {
			c := 0
			for _, r := range recs {
				if set(r.Sent) && set(r.End) && r.Sent <= t && t < r.End {
					c++
				}
			}
			x.MaxRunning = max(x.MaxRunning, c)
		}
		x.Running, x.WaitingClient = float64(flight)/float64(d), float64(queued)/float64(d)
		x.OutputTokensPerS = tokens / d.Seconds()
		st := measure.Describe(ttft, []float64{50, 99})
		x.TTFTCount, x.TTFTP50, x.TTFTP99 = len(ttft), st.Percentiles["p50"], st.Percentiles["p99"]
		st = measure.Describe(itl, []float64{50, 99})
		x.ITLCount, x.ITLP50, x.ITLP99 = len(itl), st.Percentiles["p50"], st.Percentiles["p99"]
	}
	return out
}

// TestCSVGolden pins the CSV of the hand-worked tier.
func TestCSVGolden(t *testing.T) {
	var b bytes.Buffer
	if err := timeseries.Of(fixture(), time.Second).WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "fixture.csv")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("CSV differs from %s (-update rewrites it):\n%s\nwant:\n%s", golden, b.Bytes(), want)
	}
}

func TestJSON(t *testing.T) {
	s := timeseries.Of(fixture()[:2], 500*time.Millisecond)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		SliceS float64          `json:"slice_s"`
		Slices []map[string]any `json:"slices"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if got.SliceS != 0.5 || len(got.Slices) != len(s.Slices) {
		t.Fatalf("slice_s %v with %d slices, want 0.5 with %d:\n%s", got.SliceS, len(got.Slices), len(s.Slices), b)
	}
	for i, m := range got.Slices {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		want := slices.Sorted(slices.Values(timeseries.Columns))
		if !slices.Equal(keys, want) {
			t.Fatalf("slice %d keys %v, want %v", i, keys, want)
		}
	}
	first := got.Slices[0]
	if first["t_s"] != 0.0 || first["offered"] != 1.0 || first["ttft_p50_ms"] != nil {
		t.Errorf("first slice %v: want t_s 0, offered 1, ttft_p50_ms null", first)
	}
	if got.Slices[1]["t_s"] != 0.5 || got.Slices[1]["ttft_p50_ms"] != 500.0 {
		t.Errorf("second slice %v: want t_s 0.5, ttft_p50_ms 500", got.Slices[1])
	}
}

// BenchmarkOf: a tier of 100,000 requests of 20 chunks each over about 20 s.
func BenchmarkOf(b *testing.B) {
	recs := randomTier(rand.New(rand.NewPCG(1, 2)), 100_000)
	b.ReportAllocs()
	for b.Loop() {
		timeseries.Of(recs, time.Second)
	}
}
