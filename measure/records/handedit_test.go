package records_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/measure/records"
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

// TestHostileRecordsFilesAreRefusedBriefly: a records file made to cost its reader (values of
// 100 kB where loadcurve writes a word) is refused with the line and
// what is wrong in a message of at most a few hundred bytes: the value is quoted cut, never
// whole.
func TestHostileRecordsFilesAreRefusedBriefly(t *testing.T) {
	const head = `{"kind":"header","tool":"loadcurve","model":"m"}` + "\n" + `{"kind":"tier","tier":0,"request_rate":4,"planned":2}` + "\n"
	big := strings.Repeat("x", 100_000)
	for _, tc := range []struct {
		name, file string
		says       []string
	}{
		{"a kind of 10 MB", head + `{"kind":"` + big + `"}` + "\n", []string{"line 3: unknown kind \"xxxx", "…(100000 bytes)"}},
		{"a tool of 10 MB", `{"kind":"header","tool":"` + big + `"}` + "\n", []string{"line 1: header: tool \"xxx", "not a loadcurve records file"}},
		{"a metric-definition version of 10 MB", `{"kind":"header","metric_definition_version":"` + big + `"}` + "\n", []string{"line 1: header: metric-definition version \"xxx"}},
		{"an outcome of 10 MB", head + `{"id":0,"tier":0,"outcome":"` + big + `"}` + "\n", []string{"line 3:", "unknown outcome \"xxx"}},
		{"a gap of 10 MB", head + `{"id":0,"tier":0,"outcome":"ok","planned_s":0,"itl_ms":[1,1` + strings.Repeat("1", 100_000) + `]}` + "\n", []string{"line 3:", "is not a number"}},
		{"a rate of 10 MB", `{"kind":"header","tool":"loadcurve"}` + "\n" + `{"kind":"tier","tier":0,"request_rate":"` + big + `","planned":2}` + "\n", []string{"line 2:", "rate: want a number or \"inf\""}},
		{"a metadata key of 10 MB", `{"kind":"header","tool":"loadcurve","metadata":{"` + big + `":1}}` + "\n", []string{"line 1:", "metadata: \"xxx"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := records.Read(strings.NewReader(tc.file))
			if err == nil {
				t.Fatal("read, want a refusal")
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%.300q lacks %q", err, s)
				}
			}
			if len(err.Error()) > 400 {
				t.Errorf("a message of %d bytes", len(err.Error()))
			}
		})
	}
}

// TestAnEndlessLineIsRefused: a records file whose line never ends is refused once the line
// passes the bound on a line (lowered here from records.MaxLineLen to 1 MiB), having read
// little more than that (the reader would otherwise hold the whole file).
func TestAnEndlessLineIsRefused(t *testing.T) {
	defer records.SetMaxLineLen(1 << 20)()
	src := &endless{}
	_, err := records.Read(io.MultiReader(strings.NewReader(`{"kind":"header","tool":"loadcurve"}`+"\n"+`{"kind":"tier","note":"`), src))
	var long *records.LineTooLongError
	if !errors.As(err, &long) || !strings.Contains(err.Error(), "line 2: longer than 1 MiB") {
		t.Fatalf("%v, want line 2 refused as too long", err)
	}
	if src.n > 2<<20 {
		t.Errorf("%d bytes read of an endless line", src.n)
	}
}

// endless reads as an endless run of 'a's.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], aaaa)
	}
	e.n += n
	return n, nil
}

var aaaa = []byte(strings.Repeat("a", 64<<10))
