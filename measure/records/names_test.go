package records_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

// TestReadStripsControlCharacters: a records file whose header or records hold control
// characters and escape sequences (written by hand, by an older version, or a server's words)
// is read without them, so that report, compare and merge show none of them.
func TestReadStripsControlCharacters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	h := records.Header{Command: "run", Target: "http://127.0.0.1:1/v1", Model: "org/m\x00\x1b[31mred\nfake\u2028line",
		Label: "l\x1b]0;title\x07", Metadata: records.Metadata{{Key: "k\r", Value: "v\x9b2J"}}, StartWall: time.Unix(1700000000, 0).UTC()}
	w, err := records.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTier(records.Tier{Tier: 0, RequestRate: 1, Burstiness: 1, Planned: 1}); err != nil {
		t.Fatal(err)
	}
	r := records.NewRecord(0, 0, 0)
	r.Outcome, r.FinishReason, r.Error = records.HTTPError, "stop\x1b[2J", "HTTP 500: boom\nloadcurve: fake line"
	if err := w.Write(&r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := records.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{f.Header.Model, f.Header.Label, f.Header.Metadata[0].Key, f.Header.Metadata[0].Value}
	for _, rec := range f.Records {
		texts = append(texts, rec.FinishReason, rec.Error)
	}
	for _, s := range texts {
		if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x2028 }) {
			t.Errorf("read %q", s)
		}
	}
	if f.Header.Model != "org/m red fake line" || len(f.Records) != 1 || f.Records[0].Error != "HTTP 500: boom loadcurve: fake line" {
		t.Errorf("model %q, records %+v", f.Header.Model, f.Records)
	}
	_ = os.Remove(path)
}
