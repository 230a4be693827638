package records_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

func sampleRecord() records.Record {
	r := records.NewRecord(2, 17, 1500*time.Millisecond+3)
	r.Dispatched = r.Planned + 120*time.Microsecond
	r.Slot = r.Dispatched
	r.Sent = r.Slot + 7
	r.Written = r.Sent + 90*time.Microsecond + 3
	r.FirstEvent = r.Sent + 20*time.Millisecond
	r.First = r.FirstEvent + 1
	r.FirstRead = r.First + 4*time.Millisecond + 1
	r.Last = r.First + 90*time.Millisecond
	r.End = r.Last + time.Millisecond
	r.ITL = []time.Duration{30 * time.Millisecond, 30*time.Millisecond + 1, 29999999}
	r.Chunks = 4
	r.InputTokens, r.InputTokensSource = 1024, records.SourceUsage
	r.OutputTokens, r.OutputTokensSource = 8, records.SourceUsage
	r.FinishReason = "length"
	r.Error = "quote \" backslash \\ newline \n ctrl \x01 utf8 é"
	r.Quality = records.QualityFail
	return r
}

func TestRecordRoundTripIsExact(t *testing.T) {
	tests := []struct {
		name string
		rec  records.Record
	}{
		{"full", sampleRecord()},
		{"failed before sending", records.NewRecord(0, 0, 0)},
		{"http error", func() records.Record {
			r := records.NewRecord(0, 3, time.Second)
			r.Outcome, r.HTTPStatus, r.Sent, r.End = records.HTTPError, 503, time.Second, 2*time.Second
			return r
		}()},
		{"long run", func() records.Record {
			r := records.NewRecord(9, 123456, 86399*time.Second+999999999)
			r.Dispatched = r.Planned
			return r
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.rec.AppendJSON(nil)
			if !json.Valid(b) {
				t.Fatalf("invalid JSON: %s", b)
			}
			var got records.Record
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			if !equal(got, tc.rec) {
				t.Errorf("round trip changed the record\n got %+v\nwant %+v\njson %s", got, tc.rec, b)
			}
		})
	}
}

func equal(a, b records.Record) bool {
	if len(a.ITL) != len(b.ITL) {
		return false
	}
	for i := range a.ITL {
		if a.ITL[i] != b.ITL[i] {
			return false
		}
	}
	a.ITL, b.ITL = nil, nil
	return reflect.DeepEqual(a, b)
}

func TestAbsentMomentsAreOmitted(t *testing.T) {
	r := records.NewRecord(0, 1, 0)
	s := string(r.AppendJSON(nil))
	for _, key := range []string{"dispatched_s", "slot_s", "sent_s", "first_s", "last_s", "end_s", "quality_ok"} {
		if strings.Contains(s, key) {
			t.Errorf("%s present in %s", key, s)
		}
	}
	if !strings.Contains(s, `"planned_s":0.000000000`) {
		t.Errorf("planned_s missing: %s", s)
	}
}

func TestDerivedMetrics(t *testing.T) {
	r := records.NewRecord(0, 0, 0)
	r.Dispatched, r.Slot, r.Sent = 1*time.Millisecond, 5*time.Millisecond, 6*time.Millisecond
	r.First, r.Last = 26*time.Millisecond, 126*time.Millisecond
	r.OutputTokens = 11
	check := func(name string, got time.Duration, ok bool, want time.Duration) {
		t.Helper()
		if !ok || got != want {
			t.Errorf("%s = %v (ok=%v), want %v", name, got, ok, want)
		}
	}
	d, ok := r.TTFT()
	check("ttft", d, ok, 20*time.Millisecond)
	d, ok = r.E2EL()
	check("e2el", d, ok, 120*time.Millisecond)
	d, ok = r.TPOT()
	check("tpot", d, ok, 10*time.Millisecond)
	d, ok = r.ScheduleLag()
	check("lag", d, ok, time.Millisecond)
	d, ok = r.ClientQueueTime()
	check("queue", d, ok, 5*time.Millisecond)
	d, ok = r.E2ELIncludingClientQueue()
	check("e2el incl queue", d, ok, 126*time.Millisecond)
	r.OutputTokens = 1
	if _, ok := r.TPOT(); ok {
		t.Error("TPOT defined for a one-token output")
	}
}

func TestFileRoundTripAndTruncatedLastLine(t *testing.T) {
	var buf bytes.Buffer
	w := records.NewWriter(&buf, time.Hour)
	h := records.Header{Command: "run", Target: "http://127.0.0.1:1/v1", Seed: 7, StartWall: time.Unix(1700000000, 0).UTC()}
	if err := w.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTier(records.Tier{Tier: 0, RequestRate: records.Rate(math.Inf(1)), Burstiness: 1, Planned: 2}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteServerMetrics(0, map[string]float64{"prefix_cache_hit_rate": 0.5}); err != nil {
		t.Fatal(err)
	}
	r1, r2 := sampleRecord(), records.NewRecord(0, 1, time.Second)
	r1.Tier = 0
	for _, r := range []*records.Record{&r1, &r2} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	end := records.TierEnd{Tier: 0, Planned: 2, ArrivalsEndS: 1.5, Reason: records.EndedSchedule}
	if err := w.WriteTierEnd(end); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	full := buf.String()
	f, err := records.Read(strings.NewReader(full))
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.Seed != 7 || f.Header.MetricsVersion != records.MetricsVersion || len(f.Records) != 2 || len(f.Warnings) != 0 {
		t.Fatalf("unexpected file: %+v", f)
	}
	end.Kind = records.KindTierEnd
	if got := f.Tiers[0].End; got == nil || got.Seal == nil || got.Seal.Records != 2 {
		t.Errorf("closing line read back as %+v: want it sealed, with its 2 records", got)
	} else if got.Seal = nil; *got != end {
		t.Errorf("closing line read back as %+v, want %+v", got, end)
	}
	if got := f.Tiers[0].ArrivalsEnd(); got != 1500*time.Millisecond {
		t.Errorf("ArrivalsEnd = %v, want 1.5s", got)
	}
	if got := string(f.ServerMetrics[0]); got != `{"prefix_cache_hit_rate":0.5}` {
		t.Errorf("server metrics of tier 0 = %s", got)
	}
	if !math.IsInf(float64(f.Tiers[0].RequestRate), 1) {
		t.Errorf("inf rate did not survive: %v", f.Tiers[0].RequestRate)
	}
	// A kill -9 in the middle of the last line (the closing line): that line is dropped with a
	// warning, and the tier is read without its end, with a second warning.
	cut := full[:len(full)-10]
	f, err = records.Read(strings.NewReader(cut))
	if err != nil {
		t.Fatalf("truncated file rejected: %v", err)
	}
	if len(f.Records) != 2 || len(f.Warnings) != 2 || f.Tiers[0].End != nil {
		t.Errorf("want 2 records, no end and 2 warnings, got %d, %+v and %v", len(f.Records), f.Tiers[0].End, f.Warnings)
	}
}

// TestReadValidatesAcrossLines: every reader goes through one validation, which refuses files that
// were edited or merged wrongly instead of miscounting them.
func TestReadValidatesAcrossLines(t *testing.T) {
	const hdr = `{"kind":"header","tool":"loadcurve","metric_definition_version":"loadcurve-metrics/2"}` + "\n"
	const tier0 = `{"kind":"tier","tier":0,"request_rate":4,"burstiness":1,"planned":2}` + "\n"
	const req0 = `{"id":0,"tier":0,"outcome":"ok","planned_s":0.1}` + "\n"
	const req1 = `{"id":1,"tier":0,"outcome":"ok","planned_s":0.2}` + "\n"
	tests := []struct{ name, in, want string }{
		{"duplicate tier line", hdr + tier0 + tier0, "tier 0 is declared twice"},
		{"negative planned", hdr + `{"kind":"tier","tier":0,"planned":-1}` + "\n", "planned -1 is negative"},
		{"negative rate", hdr + `{"kind":"tier","tier":0,"request_rate":-2,"planned":1}` + "\n", "is not a rate"},
		{"record of an undeclared tier", hdr + tier0 + `{"id":0,"tier":3,"outcome":"ok","planned_s":0}` + "\n", "no tier line declared"},
		{"duplicate id", hdr + tier0 + req0 + req0, "request 0 of tier 0 appears twice"},
		{"more records than planned", hdr + `{"kind":"tier","tier":0,"planned":1}` + "\n" + req0 + req1, "more records than the 1 it planned"},
		{"unknown metric version", `{"kind":"header","tool":"loadcurve","metric_definition_version":"loadcurve-metrics/99"}` + "\n", "loadcurve-metrics/99"},
		{"another tool", `{"kind":"header","tool":"vegeta"}` + "\n", `tool "vegeta"`},
		{"end before its tier", hdr + `{"kind":"tier_end","tier":0,"planned":0}` + "\n", "no tier line declared"},
		{"end planning more", hdr + tier0 + `{"kind":"tier_end","tier":0,"planned":3}` + "\n", "tier_end plans 3"},
		{"end below its records", hdr + tier0 + req0 + req1 + `{"kind":"tier_end","tier":0,"planned":1}` + "\n", "2 records came before it"},
		{"closed twice", hdr + tier0 + `{"kind":"tier_end","tier":0,"planned":2}` + "\n" + `{"kind":"tier_end","tier":0,"planned":2}` + "\n", "closed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := records.Read(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
			// Scan is the same reader: it refuses the same files.
			_, serr := records.Scan(strings.NewReader(tc.in), records.Visitor{})
			if serr == nil || serr.Error() != err.Error() {
				t.Errorf("Scan: %v, Read: %v", serr, err)
			}
		})
	}
	// A version-1 file still reads; a tier that stopped early plans what its closing line says.
	ok := `{"kind":"header","tool":"loadcurve","metric_definition_version":"loadcurve-metrics/1"}` + "\n" + tier0 + req0 +
		`{"kind":"tier_end","tier":0,"planned":1,"arrivals_end_s":0.15,"reason":"decided"}` + "\n"
	f, err := records.Read(strings.NewReader(ok))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Tiers[0].PlannedRequests(); got != 1 || f.Tiers[0].Planned != 2 {
		t.Errorf("planned %d (tier line %d), want 1 (2)", got, f.Tiers[0].Planned)
	}
}

func TestWriteFileRoundTrip(t *testing.T) {
	f := &records.File{
		Header: records.Header{Kind: records.KindHeader, Tool: "loadcurve", MetricsVersion: records.MetricsVersion, Command: records.CommandSweep,
			Seed: 3, Settings: &records.Settings{Objectives: "ttft:500", Percentiles: []float64{50, 99}, TargetShare: 0.99, Headroom: 0.2, Confidence: 0.95}},
		Tiers: []records.Tier{
			{Kind: records.KindTier, Tier: 0, Role: records.RoleProbe, RequestRate: records.Rate(math.Inf(1)), Burstiness: 1, Planned: 1,
				End: &records.TierEnd{Kind: records.KindTierEnd, Tier: 0, Planned: 1, Reason: records.EndedSchedule}},
			{Kind: records.KindTier, Tier: 1, Role: records.RoleTier, RequestRate: 4, Burstiness: 1, Planned: 2, MaxDurationS: 60,
				End: &records.TierEnd{Kind: records.KindTierEnd, Tier: 1, Planned: 2, ArrivalsEndS: 0.5, Reason: records.EndedDecided}},
		},
		Records:       []records.Record{records.NewRecord(0, 0, 0), records.NewRecord(1, 0, time.Second/4), records.NewRecord(1, 1, time.Second/2)},
		ServerMetrics: map[int]json.RawMessage{1: json.RawMessage(`{"x":1}`)},
	}
	path := t.TempDir() + "/records.jsonl"
	if err := records.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	back, err := records.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	back.Header.StartWall = f.Header.StartWall
	for i, want := range []int{1, 2} { // the records of each tier, sealed by WriteFile's Writer
		if e := back.Tiers[i].End; e == nil || e.Seal == nil || e.Seal.Records != want {
			t.Fatalf("tier %d's closing line %+v: want it sealed with %d records", i, e, want)
		}
		back.Tiers[i].End.Seal = nil
	}
	if !reflect.DeepEqual(back, f) {
		t.Errorf("round trip changed the file:\n got %+v\nwant %+v", back, f)
	}
}

func TestReadRejectsBadFiles(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "no header line"},
		{"no header", `{"id":1,"outcome":"ok","planned_s":0}` + "\n", "line 1"},
		{"garbage in the middle", `{"kind":"header"}` + "\nnot json\n" + `{"id":1,"outcome":"ok","planned_s":0}` + "\n", "line 2"},
		{"bad outcome", `{"kind":"header"}` + "\n" + `{"id":1,"outcome":"fine","planned_s":0}` + "\n", "unknown outcome"},
		{"missing id", `{"kind":"header"}` + "\n" + `{"outcome":"ok","planned_s":0}` + "\n", `no "id"`},
		{"two headers", `{"kind":"header"}` + "\n" + `{"kind":"header"}` + "\n", "second header"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := records.Read(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	r := sampleRecord()
	r.ITL = make([]time.Duration, 127)
	for i := range r.ITL {
		r.ITL[i] = time.Duration(i) * 12345
	}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = r.AppendJSON(buf[:0])
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkScan reads a file of 1,000 records of 127 ITL gaps each (what `report` does).
func BenchmarkScan(b *testing.B) {
	var buf bytes.Buffer
	w := records.NewWriter(&buf, time.Hour)
	if err := w.WriteHeader(records.Header{Command: "run"}); err != nil {
		b.Fatal(err)
	}
	if err := w.WriteTier(records.Tier{Tier: 2, RequestRate: 4, Burstiness: 1, Planned: 1000}); err != nil {
		b.Fatal(err)
	}
	r := sampleRecord()
	r.ITL = make([]time.Duration, 127)
	for i := range r.ITL {
		r.ITL[i] = 10*time.Millisecond + time.Duration(i)*12345
	}
	for i := range 1000 {
		r.ID = i
		if err := w.Write(&r); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if _, err := records.Scan(bytes.NewReader(data), records.Visitor{Record: func(*records.Record) error { n++; return nil }}); err != nil || n != 1000 {
			b.Fatalf("%d records, %v", n, err)
		}
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// syncBuffer is a bytes.Buffer safe for the flusher goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestAutoFlushWritesBufferedRecordsWithoutFurtherWrites(t *testing.T) {
	var out syncBuffer
	w := records.NewWriter(&out, 20*time.Millisecond)
	w.AutoFlush()
	defer w.Close()
	r := records.NewRecord(0, 1, 0)
	if err := w.Write(&r); err != nil {
		t.Fatal(err)
	}
	// The write itself did not flush (the interval had not passed since the writer was made);
	// the background flusher must, within a few intervals, with nothing else written.
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(out.String(), `"id":1`) {
		if time.Now().After(deadline) {
			t.Fatal("a buffered record was not flushed by the background flusher")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestScanVisitsEveryObjectInOrder: Scan hands over what Read collects, in file order, skips the
// kinds without a function, and stops at a visitor's error naming the line.
func TestScanVisitsEveryObjectInOrder(t *testing.T) {
	var buf bytes.Buffer
	w := records.NewWriter(&buf, time.Hour)
	if err := w.WriteHeader(records.Header{Command: "sweep", Seed: 3}); err != nil {
		t.Fatal(err)
	}
	for tier := range 2 {
		if err := w.WriteTier(records.Tier{Tier: tier, RequestRate: records.Rate(tier + 1), Burstiness: 1, Planned: 2}); err != nil {
			t.Fatal(err)
		}
		for id := range 2 {
			r := sampleRecord()
			r.Tier, r.ID = tier, id
			if err := w.Write(&r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteServerMetrics(tier, map[string]int{"tier": tier}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var seq []string
	v := records.Visitor{
		Header: func(h records.Header) error { seq = append(seq, "header "+string(h.Command)); return nil },
		Tier:   func(tr records.Tier) error { seq = append(seq, fmt.Sprintf("tier %d", tr.Tier)); return nil },
		Record: func(r *records.Record) error {
			if len(r.ITL) == 0 {
				return errors.New("record without its gaps")
			}
			seq = append(seq, fmt.Sprintf("record %d/%d", r.Tier, r.ID))
			return nil
		},
		ServerMetrics: func(m records.ServerMetrics) error {
			seq = append(seq, fmt.Sprintf("metrics %d %s", m.Tier, m.Metrics))
			return nil
		},
	}
	warnings, err := records.Scan(strings.NewReader(buf.String()), v)
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "tier(s) 0, 1 have no closing line") {
		t.Fatalf("scan: %v, warnings %v", err, warnings)
	}
	want := []string{"header sweep", "tier 0", "record 0/0", "record 0/1", `metrics 0 {"tier":0}`,
		"tier 1", "record 1/0", "record 1/1", `metrics 1 {"tier":1}`}
	if !slices.Equal(seq, want) {
		t.Errorf("visited\n%q\nwant\n%q", seq, want)
	}

	seq = nil
	if _, err := records.Scan(strings.NewReader(buf.String()), records.Visitor{Tier: v.Tier}); err != nil || len(seq) != 2 {
		t.Errorf("tiers only: %v, visited %q", err, seq)
	}

	stop := errors.New("enough")
	_, err = records.Scan(strings.NewReader(buf.String()), records.Visitor{Record: func(*records.Record) error { return stop }})
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("visitor error: %v, want it wrapped with line 3", err)
	}
}

// BenchmarkWrite writes a request line of 127 ITL gaps (~1.3 kB) as a tier's records are written:
// encoded, hashed into the tier's seal, buffered.
func BenchmarkWrite(b *testing.B) {
	w := records.NewWriter(io.Discard, time.Hour)
	if err := w.WriteTier(records.Tier{Tier: 0, RequestRate: 4, Burstiness: 1, Planned: 1}); err != nil {
		b.Fatal(err)
	}
	r := sampleRecord()
	r.Tier = 0
	r.ITL = make([]time.Duration, 127)
	for i := range r.ITL {
		r.ITL[i] = 10*time.Millisecond + time.Duration(i)*12345
	}
	b.SetBytes(int64(len(r.AppendJSON(nil)) + 1))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(&r); err != nil {
			b.Fatal(err)
		}
	}
}
