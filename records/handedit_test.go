package records_test

import (
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/records"
)

// TestHandEditedRecordsAreRefused: `report` once accepted request lines with negative token
// counts or an end before the send, and derived throughputs and latencies from them. Such a
// line is refused with its line number and what is wrong, as every other bad line is; the
// lines loadcurve writes still read.
func TestHandEditedRecordsAreRefused(t *testing.T) {
	const head = `{"kind":"header","tool":"loadcurve","model":"m"}` + "\n" + `{"kind":"tier","tier":0,"request_rate":4,"planned":2}` + "\n"
	const good = `{"id":0,"tier":0,"outcome":"ok","planned_s":0.5,"dispatched_s":0.5,"sent_s":0.5,"first_event_s":0.6,"first_s":0.6,"last_s":0.9,"end_s":1,"chunks":2,"output_tokens":2,"input_tokens":8}`
	for _, tc := range []struct {
		name, line string
		says       []string // what the error says; nil: read
	}{
		{"as written", good, nil},
		{"a failure before any token", `{"id":0,"tier":0,"outcome":"http_error","planned_s":0.5,"sent_s":0.5,"end_s":0.7,"http_status":503}`, nil},
		{"never sent", `{"id":0,"tier":0,"outcome":"canceled","planned_s":0.5}`, nil},
		{"negative output tokens", strings.Replace(good, `"output_tokens":2`, `"output_tokens":-5`, 1), []string{"line 3:", "output_tokens -5", "counts are >= 0"}},
		{"negative input tokens", strings.Replace(good, `"input_tokens":8`, `"input_tokens":-1`, 1), []string{"line 3:", "input_tokens -1"}},
		{"negative chunks", strings.Replace(good, `"chunks":2`, `"chunks":-2`, 1), []string{"line 3:", "chunks -2"}},
		{"end before sent", strings.Replace(good, `"end_s":1`, `"end_s":0.4`, 1), []string{"line 3:", "end_s 0.4 is before sent_s 0.5"}},
		{"first token before sent", strings.Replace(good, `"first_s":0.6`, `"first_s":0.1`, 1), []string{"line 3:", "first_s 0.1 is before sent_s 0.5"}},
		{"last token after the end", strings.Replace(good, `"last_s":0.9`, `"last_s":1.5`, 1), []string{"line 3:", "end_s 1 is before last_s 1.5"}},
		{"last token before the first", strings.Replace(good, `"last_s":0.9`, `"last_s":0.55`, 1), []string{"line 3:", "last_s 0.55 is before first_s 0.6"}},
		{"written and read, as the socket times them", strings.Replace(good, `"first_s":0.6`, `"written_s":0.51,"first_s":0.6,"first_read_s":0.95`, 1), nil},
		{"written before sent", strings.Replace(good, `"first_s":0.6`, `"written_s":0.45,"first_s":0.6`, 1), []string{"line 3:", "written_s 0.45 is before sent_s 0.5"}},
		{"written after the first token", strings.Replace(good, `"first_s":0.6`, `"written_s":0.7,"first_s":0.6`, 1), []string{"line 3:", "first_s 0.6 is before written_s 0.7"}},
		{"the first token read before it arrived", strings.Replace(good, `"first_s":0.6`, `"first_s":0.6,"first_read_s":0.55`, 1), []string{"line 3:", "first_read_s 0.55"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := records.Read(strings.NewReader(head + tc.line + "\n"))
			if tc.says == nil {
				if err != nil || len(f.Records) != 1 {
					t.Fatalf("%v (%d records): want the line read", err, len(f.Records))
				}
				return
			}
			if err == nil {
				t.Fatalf("read %+v, want a refusal", f.Records)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q lacks %q", err, s)
				}
			}
		})
	}
}
