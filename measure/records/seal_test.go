package records_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

// sealedFile writes a records file of two tiers as a run writes it: tier 0 of 3 requests with
// its server metrics, tier 1 of 21; both tiers plan 25, so that a line added to either is not
// refused by Scan's own checks and only its seal can tell.
func sealedFile(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	w := records.NewWriter(&buf, time.Hour)
	h := records.Header{Command: records.CommandSweep, Seed: 7, Settings: &records.Settings{Objectives: "ttft:500"}}
	if err := w.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	for tier, n := range []int{3, 21} {
		if err := w.WriteTier(records.Tier{Tier: tier, RequestRate: 4, Burstiness: 1, Seed: 11, Planned: 25}); err != nil {
			t.Fatal(err)
		}
		for id := range n {
			r := records.NewRecord(tier, id, time.Duration(id)*time.Millisecond)
			r.Outcome, r.OutputTokens, r.OutputTokensSource = records.OK, 8, records.SourceUsage
			if err := w.Write(&r); err != nil {
				t.Fatal(err)
			}
		}
		if tier == 0 {
			if err := w.WriteServerMetrics(0, map[string]float64{"kv_cache_usage": 0.25}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteTierEnd(records.TierEnd{Tier: tier, Planned: 25, ArrivalsEndS: 1, Reason: records.EndedSchedule}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// scanSeals scans a file with Seals and returns each tier's state and difference.
func scanSeals(t *testing.T, file string) ([2]records.SealState, [2]string) {
	t.Helper()
	seals := records.NewSeals()
	if _, err := records.Scan(strings.NewReader(file), records.Visitor{Seals: seals}); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	var states [2]records.SealState
	var what [2]string
	for tier := range states {
		st, e := seals.State(tier)
		states[tier] = st
		if e != nil {
			what[tier] = e.Error()
		}
	}
	return states, what
}

// TestSealsTellEveryEdit: every finished tier's closing line seals its lines and the header
// (issue 39: deleting 10 of a finished tier's 21 records, or editing the header's objective,
// was resumed silently). Each edit breaks the seal of the tier it touched, saying what
// changed; an untouched tier stays whole; a file without seals (an older loadcurve's) is
// unsealed, not broken; line endings an editor changed are not an edit.
func TestSealsTellEveryEdit(t *testing.T) {
	file := sealedFile(t)
	lines := strings.SplitAfter(file, "\n")
	// line indexes: 0 header, 1 tier 0, 2-4 its records, 5 its server metrics, 6 its end,
	// 7 tier 1, 8-28 its records, 29 its end.
	if !strings.Contains(lines[29], `"tier_end"`) || !strings.Contains(lines[7], `"kind":"tier","tier":1`) {
		t.Fatalf("unexpected layout:\n%s", file)
	}
	edit := func(f func(l []string) []string) string {
		return strings.Join(f(append([]string(nil), lines...)), "")
	}
	noSeal := regexp.MustCompile(`,"seal":\{[^}]*\}`)
	W, B, U := records.Whole, records.Broken, records.Unsealed
	tests := []struct {
		name   string
		file   string
		states [2]records.SealState
		what   string // in the broken tier's difference
	}{
		{"as written", file, [2]records.SealState{W, W}, ""},
		{"10 of tier 1's 21 records deleted (the issue's)", edit(func(l []string) []string { return append(l[:8], l[18:]...) }),
			[2]records.SealState{W, B}, "tier 1 was changed after it finished: its closing line counts 21 request lines, the file holds 11"},
		{"a record added to tier 1", edit(func(l []string) []string {
			return append(l[:29], append([]string{`{"id":24,"tier":1,"outcome":"ok","planned_s":0.5}` + "\n"}, l[29:]...)...)
		}), [2]records.SealState{W, B}, "counts 21 request lines, the file holds 22"},
		{"a record's outcome changed", edit(func(l []string) []string {
			l[12] = strings.Replace(l[12], `"outcome":"ok"`, `"outcome":"timeout"`, 1)
			return l
		}), [2]records.SealState{W, B}, "a line of it (its tier line, a request line or its server metrics) is not as it was written"},
		{"a record's output tokens changed", edit(func(l []string) []string {
			l[3] = strings.Replace(l[3], `"output_tokens":8`, `"output_tokens":80`, 1)
			return l
		}), [2]records.SealState{B, W}, "tier 0 was changed"},
		{"two records swapped", edit(func(l []string) []string { l[9], l[10] = l[10], l[9]; return l }),
			[2]records.SealState{W, B}, "not as it was written"},
		{"tier 1's seed changed", edit(func(l []string) []string {
			l[7] = strings.Replace(l[7], `"seed":11`, `"seed":12`, 1)
			return l
		}), [2]records.SealState{W, B}, "not as it was written"},
		{"tier 0's server metrics changed", edit(func(l []string) []string {
			l[5] = strings.Replace(l[5], "0.25", "0.75", 1)
			return l
		}), [2]records.SealState{B, W}, "not as it was written"},
		{"the header's objective edited", edit(func(l []string) []string {
			l[0] = strings.Replace(l[0], "ttft:500", "ttft:5000", 1)
			return l
		}), [2]records.SealState{B, B}, "the header (line 1) is not the one it was written under"},
		{"a record of tier 0 after its closing line", edit(func(l []string) []string {
			return append(l[:7], append([]string{`{"id":20,"tier":0,"outcome":"ok","planned_s":0.5}` + "\n"}, l[7:]...)...)
		}), [2]records.SealState{B, W}, "a request line of it follows its closing line"},
		{"the seals removed (an older loadcurve's file)", noSeal.ReplaceAllString(file, ""), [2]records.SealState{U, U}, ""},
		{"line endings made CRLF by an editor", strings.ReplaceAll(file, "\n", "\r\n"), [2]records.SealState{W, W}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			states, what := scanSeals(t, tc.file)
			if states != tc.states {
				t.Fatalf("states %v (%q), want %v", states, what, tc.states)
			}
			for tier, st := range states {
				if st != records.Broken && what[tier] != "" || st == records.Broken && !strings.Contains(what[tier], tc.what) {
					t.Errorf("tier %d: %q, want it to say %q", tier, what[tier], tc.what)
				}
			}
		})
	}
}

// TestAppendSealsUnderTheFilesHeader: tiers appended to a records file (a resumed sweep's) are
// sealed under the header the file holds, as if one Writer had written the whole file: the
// file is byte for byte the one a single Writer makes.
func TestAppendSealsUnderTheFilesHeader(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.jsonl"), filepath.Join(dir, "two.jsonl")
	h := records.Header{Command: records.CommandSweep, Seed: 3, StartWall: time.Unix(1700000000, 0).UTC()}
	tier := func(w *records.Writer, n int) {
		t.Helper()
		if err := w.WriteTier(records.Tier{Tier: n, RequestRate: 2, Burstiness: 1, Planned: 2}); err != nil {
			t.Fatal(err)
		}
		for id := range 2 {
			r := records.NewRecord(n, id, time.Duration(id)*time.Second)
			if err := w.Write(&r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteTierEnd(records.TierEnd{Tier: n, Planned: 2, ArrivalsEndS: 1, Reason: records.EndedSchedule}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := records.Create(one, h)
	if err != nil {
		t.Fatal(err)
	}
	tier(w, 0)
	tier(w, 1)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w, err = records.Create(two, h); err != nil {
		t.Fatal(err)
	}
	tier(w, 0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w, err = records.Append(two); err != nil {
		t.Fatal(err)
	}
	tier(w, 1)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(one)
	b, _ := os.ReadFile(two)
	if !bytes.Equal(a, b) {
		t.Fatalf("appended file differs from the one written at once:\n%s\n%s", a, b)
	}
	if !strings.Contains(string(b), `"seal":{"records":2,"lines":"sha256:`) || !strings.Contains(string(b), `,"header":"sha256:`) {
		t.Errorf("no seal in:\n%s", b)
	}
	states, what := scanSeals(t, string(b))
	if states != [2]records.SealState{records.Whole, records.Whole} {
		t.Errorf("states %v: %v", states, what)
	}
	if _, err := records.Append(filepath.Join(dir, "none.jsonl")); err == nil {
		t.Error("Append of a file that does not exist: no error")
	}
}
