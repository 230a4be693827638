package scenario_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/internal/scenario"
)

// TestParse: each entry with its line, nulls as unset, lists as values; what a plain decoder
// would read silently wrong is refused or marked.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []scenario.Entry
		wantErr    string // a refusal of the file; its line in errLine
		errLine    int
	}{
		// An empty file, or null alone, sets nothing.
		{name: "empty", body: ""},
		{name: "only null", body: "~\n"},
		{name: "only comments", body: "# nothing here\n"},
		{name: "a value and a list", body: "seed: 7\ngoodput: [ttft:500, tpot:50]\n", want: []scenario.Entry{
			{Name: "seed", NameOK: true, Line: 1, ValueLine: 1, Values: []string{"7"}},
			{Name: "goodput", NameOK: true, Line: 2, ValueLine: 2, Values: []string{"ttft:500", "tpot:50"}},
		}},
		// null, ~ and nothing are YAML's null; a quoted "null" is the text.
		{name: "nulls", body: "a: null\nb: ~\nc:\nd: \"null\"\n", want: []scenario.Entry{
			{Name: "a", NameOK: true, Line: 1, ValueLine: 1, Null: true},
			{Name: "b", NameOK: true, Line: 2, ValueLine: 2, Null: true},
			{Name: "c", NameOK: true, Line: 3, ValueLine: 3, Null: true},
			{Name: "d", NameOK: true, Line: 4, ValueLine: 4, Values: []string{"null"}},
		}},
		// A block list's value starts on the next line.
		{name: "a block list", body: "header:\n  - \"A: 1\"\n  - \"B: 2\"\n", want: []scenario.Entry{
			{Name: "header", NameOK: true, Line: 1, ValueLine: 2, Values: []string{"A: 1", "B: 2"}},
		}},
		// Leading and trailing separators hold one document.
		{name: "separators around one document", body: "---\nseed: 4\n---\n", want: []scenario.Entry{
			{Name: "seed", NameOK: true, Line: 2, ValueLine: 2, Values: []string{"4"}},
		}},
		{name: "a second document", body: "seed: 3\n---\nrate: 100\n", wantErr: "one document expected: a second one starts here", errLine: 3},
		{name: "a second document that is not YAML", body: "seed: 3\n---\nrate: [1\n", wantErr: "one document expected, and what follows the first '---' is not YAML either"},
		{name: "not YAML", body: "seed: [1\n", wantErr: "did not find expected"},
		{name: "a list at the top", body: "- 1\n- 2\n", wantErr: "want a mapping of flag names to values (request-rates: auto), got a list", errLine: 1},
		{name: "a value at the top", body: "7\n", wantErr: "got a value", errLine: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scenario.Parse([]byte(tc.body))
			if tc.wantErr != "" {
				var se *scenario.Error
				if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.wantErr) || se.Line != tc.errLine {
					t.Fatalf("error %v (%#v), want %q on line %d", err, se, tc.wantErr, tc.errLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestParseMarksBadEntries: a malformed key or value is returned with the entry, for the caller
// to report with the file's other problems, and the entries after it are still read.
func TestParseMarksBadEntries(t *testing.T) {
	body := "goodput: {ttft: 5}\n[a, b]: 1\nlabels: [x, null]\nnested: [[1]]\nseed: 2\n"
	got, err := scenario.Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("%d entries, want 5: %+v", len(got), got)
	}
	for i, want := range []string{"want a value or a list of values, got a mapping", "", "a list may not hold null (line 3)", "a list may hold values only, got a list on line 4", ""} {
		e := got[i]
		if (want == "") != (e.ValueErr == nil) || (want != "" && !strings.Contains(e.ValueErr.Error(), want)) {
			t.Errorf("entry %d (%s): value error %v, want %q", i, e.Name, e.ValueErr, want)
		}
	}
	if got[1].NameOK || !got[0].NameOK || got[1].Line != 2 {
		t.Errorf("a list as a key: NameOK %v on line %d, want false on line 2", got[1].NameOK, got[1].Line)
	}
	if got[4].Name != "seed" || !reflect.DeepEqual(got[4].Values, []string{"2"}) {
		t.Errorf("the entry after the bad ones: %+v", got[4])
	}
}

// TestEncodeRoundTrip: what Encode writes, Parse reads back to the same text, whatever YAML
// would otherwise take it for (true, null, a number written with a unit, a colon, a quote).
func TestEncodeRoundTrip(t *testing.T) {
	settings := []scenario.Setting{
		{Name: "num-requests", Values: []string{"12"}},
		{Name: "request-rate", Values: []string{"inf"}},
		{Name: "quiet", Values: []string{"true"}},
		{Name: "label", Values: []string{"null"}},
		{Name: "model", Values: []string{"~"}},
		{Name: "duration", Values: []string{"1m30s"}},
		{Name: "extra-body", Values: []string{`{"a": "b: c", "q": "'"}`}},
		{Name: "seed", Values: []string{"0x10"}},
		{Name: "goodput", Values: []string{"ttft:500", "tpot:50"}, List: true},
		{Name: "metadata", List: true},
	}
	b, err := scenario.Encode(scenario.Resolved{Comments: []string{"first", "second"}, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "# first\n# second\n") {
		t.Errorf("the head:\n%s", b)
	}
	got, err := scenario.Parse(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if len(got) != len(settings) {
		t.Fatalf("%d entries read back, want %d:\n%s", len(got), len(settings), b)
	}
	for i, s := range settings {
		if got[i].Name != s.Name || got[i].Null || !reflect.DeepEqual(got[i].Values, s.Values) {
			t.Errorf("%s: read back %+v, want %q\n%s", s.Name, got[i], s.Values, b)
		}
	}
	// Numbers and booleans are written bare, so that the file reads as typed.
	for _, want := range []string{"num-requests: 12\n", "quiet: true\n", `label: "null"`, `- "ttft:500"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the file lacks %q:\n%s", want, b)
		}
	}
}

// TestEncodeEmptyAndBad: an empty scenario is an empty mapping; a single setting without
// exactly one value is refused rather than written as something else.
func TestEncodeEmptyAndBad(t *testing.T) {
	b, err := scenario.Encode(scenario.Resolved{Comments: []string{"c"}})
	if err != nil || string(b) != "# c\n{}\n" {
		t.Errorf("empty: %q, %v", b, err)
	}
	if got, err := scenario.Parse(b); err != nil || len(got) != 0 {
		t.Errorf("empty read back: %+v, %v", got, err)
	}
	if _, err := scenario.Encode(scenario.Resolved{Settings: []scenario.Setting{{Name: "seed", Values: []string{"1", "2"}}}}); err == nil || !strings.Contains(err.Error(), "seed has 2 values") {
		t.Errorf("two values of a single setting: %v", err)
	}
}

// TestBoundsCheckedBeforeParsing: a scenario file larger than MaxFileSize (or a device that never
// ends) is refused before it is read whole, and one of more than MaxItems lines and list items
// before it is decoded (the YAML decoder's nodes cost ~200 bytes of memory per byte of such a
// file); files at the bounds are read.
func TestBoundsCheckedBeforeParsing(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		path    string // a file to write content to, or a device
		content string
		want    string // a substring of the error; "" to read it
	}{
		{name: "larger than the bound", content: "seed: 1\n" + strings.Repeat("#", scenario.MaxFileSize), want: "1.0 MiB, more than a scenario file holds (at most 1 MiB)"},
		{name: "a device that never ends", path: "/dev/zero", want: "more than 1 MiB, more than a scenario file holds"},
		{name: "too many lines", content: strings.Repeat("# comment\n", scenario.MaxItems), want: "10001 lines and list items, more than a scenario holds (at most 10000)"},
		{name: "too many list items", content: "header: [" + strings.Repeat("a,", scenario.MaxItems) + "a]", want: "lines and list items, more than a scenario holds"},
		{name: "at the bounds", content: "seed: 1\n" + strings.Repeat("#", scenario.MaxFileSize-9-scenario.MaxItems+2) + strings.Repeat("\n", scenario.MaxItems-2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
				if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if _, err := os.Stat(path); err != nil {
				t.Skip(err)
			}
			b, err := scenario.ReadFile(path)
			if err == nil {
				_, err = scenario.Parse(b)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
