package records_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/loadcurve/loadcurve/measure/records"
)

// FuzzRead: Read never panics on any file, and every request line it accepts can be written
// back: the record's own encoding (AppendJSON) is valid JSON that decodes to a record encoding
// to the same bytes. A records file that loadcurve reads but cannot write back would break
// merge and report.
func FuzzRead(f *testing.F) {
	var good bytes.Buffer
	w := records.NewWriter(&good, time.Hour)
	if err := w.WriteHeader(records.Header{Target: "http://127.0.0.1:8000/v1", Model: "m", Seed: 1}); err != nil {
		f.Fatal(err)
	}
	if err := w.WriteTier(records.Tier{Tier: 0, RequestRate: 4, Burstiness: 1, Planned: 2}); err != nil {
		f.Fatal(err)
	}
	r := records.NewRecord(0, 0, time.Second)
	r.Dispatched, r.Slot, r.Sent, r.FirstEvent, r.First, r.Last, r.End = time.Second, time.Second, time.Second+1, 2*time.Second, 2*time.Second, 3*time.Second, 3*time.Second
	r.ITL, r.Chunks, r.OutputTokens, r.OutputTokensSource, r.FinishReason, r.HTTPStatus = []time.Duration{time.Second}, 2, 2, records.SourceUsage, "length", 200
	if err := w.Write(&r); err != nil {
		f.Fatal(err)
	}
	r2 := records.NewRecord(0, 1, 2*time.Second)
	r2.Outcome, r2.Error, r2.Attempts, r2.Quality = records.HTTPError, "HTTP 503: \"busy\"\n", 3, records.QualityFail
	if err := w.Write(&r2); err != nil {
		f.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		f.Fatal(err)
	}
	header, _, _ := strings.Cut(good.String(), "\n")
	for _, s := range []string{
		good.String(),
		good.String()[:good.Len()-9], // a truncated last line
		header + "\n" + `{"id":0,"outcome":"ok","planned_s":-0.5,"itl_ms":[1e-9,-3]}` + "\n",
		header + "\n" + `{"id":0,"outcome":"nope","planned_s":0}` + "\n",
		header + "\n" + `{"kind":"tier","request_rate":"inf"}` + "\n",
		header + "\n" + header + "\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := records.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if file.Header.Kind != records.KindHeader {
			t.Fatalf("accepted a file whose first line is not a header: %+v", file.Header)
		}
		for i := range file.Records {
			rec := &file.Records[i]
			line := rec.AppendJSON(nil)
			var back records.Record
			if err := json.Unmarshal(line, &back); err != nil {
				t.Fatalf("record %d read back as %+v encodes to %s, which does not decode: %v", i, *rec, line, err)
			}
			if !utf8.ValidString(rec.Error) || !utf8.ValidString(rec.FinishReason) {
				back.Error, back.FinishReason = rec.Error, rec.FinishReason
			}
			if again := back.AppendJSON(nil); !bytes.Equal(again, line) {
				t.Fatalf("record %d does not round-trip:\n%s\n%s", i, line, again)
			}
		}
	})
}
