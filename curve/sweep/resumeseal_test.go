package sweep_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure/records"
)

// interruptedSweep writes the records of a sweep of the four-slot queue interrupted in its
// tier 2 (tiers 0 and 1 finished) and returns the file's lines.
func interruptedSweep(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	w, err := records.Create(filepath.Join(dir, result.RecordsName), records.Header{Command: records.CommandSweep, Seed: 1,
		Settings: &records.Settings{Objectives: "ttft:500", TargetShare: 0.99}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cut := &fileRunner{QueueRunner: virtual.QueueRunner{Config: fourSlots.Queue}, w: w, cancel: cancel, cancelTier: 2, cancelAfter: 10}
	if _, err := (&sweep.Executor{Config: sweepFor(fourSlots, 1), Runner: cut}).Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want canceled", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, result.RecordsName))
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(string(b), "\n")
}

// TestResumeRefusesEditedTiers: a resume checks every finished tier it keeps against the seal
// of its closing line before anything runs (issue 39: deleting 10 of a finished tier's 21
// records, or editing the header's objective, was resumed silently, and the decision made
// from the edited records). Each edit is refused in one line naming the tier and what
// changed, and the file is left as it was; an edit of the interrupted tier, which a resume
// discards, is not refused; a file written before tiers were sealed is resumed with a
// warning that says its tiers are not checked.
func TestResumeRefusesEditedTiers(t *testing.T) {
	lines := interruptedSweep(t)
	// where is the index of the n-th line matching pattern.
	where := func(pattern string, n int) int {
		re := regexp.MustCompile(pattern)
		for i, l := range lines {
			if re.MatchString(l) {
				if n == 0 {
					return i
				}
				n--
			}
		}
		t.Fatalf("no line %d matching %s", n, pattern)
		return -1
	}
	tier1 := where(`^\{"kind":"tier","tier":1,`, 0)
	rec1 := where(`^\{"id":\d+,"tier":1,`, 0)
	end1 := where(`^\{"kind":"tier_end","tier":1,`, 0)
	rec2 := where(`^\{"id":\d+,"tier":2,`, 0)
	if end1-rec1 < 21 {
		t.Fatalf("tier 1 holds %d records, want at least 21", end1-rec1)
	}
	edit := func(f func(l []string) []string) string {
		return strings.Join(f(append([]string(nil), lines...)), "")
	}
	replace := func(i int, old, new string) string {
		return edit(func(l []string) []string {
			if !strings.Contains(l[i], old) {
				t.Fatalf("line %d does not hold %q: %s", i, old, l[i])
			}
			l[i] = strings.Replace(l[i], old, new, 1)
			return l
		})
	}
	noSeal := regexp.MustCompile(`,"seal":\{[^}]*\}`)
	tests := []struct {
		name string
		file string
		want string // in the refusal; "" when the resume is accepted
		warn string // in the accepted resume's warnings
	}{
		{"as written", edit(func(l []string) []string { return l }), "", ""},
		{"10 of tier 1's records deleted", edit(func(l []string) []string { return append(l[:rec1], l[rec1+10:]...) }),
			"tier 1 was changed after it finished: its closing line counts", ""},
		{"a record of tier 1 changed", replace(rec1+3, `"outcome":"ok"`, `"outcome":"http_error"`), "tier 1 was changed after it finished: its", ""},
		{"tier 1's seed changed", edit(func(l []string) []string {
			l[tier1] = regexp.MustCompile(`"seed":-?\d+`).ReplaceAllString(l[tier1], `"seed":99`)
			return l
		}), "tier 1 was changed after it finished", ""},
		{"the header's objective edited", replace(0, "ttft:500", "ttft:5000"), "tier 0 was changed after it finished: the header (line 1)", ""},
		{"the header's seed edited", replace(0, `"seed":1,`, `"seed":2,`), "the header (line 1) is not the one it was written under", ""},
		{"tier 1's seal removed", edit(func(l []string) []string { l[end1] = noSeal.ReplaceAllString(l[end1], ""); return l }),
			"tier 1 was changed after it finished: its closing line has no seal", ""},
		{"the interrupted tier's records edited: discarded anyway", edit(func(l []string) []string { return append(l[:rec2], l[rec2+3:]...) }), "", ""},
		{"an older loadcurve's file", noSeal.ReplaceAllString(strings.Join(lines, ""), ""), "", "tiers 0-1 were written by an older loadcurve"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, result.RecordsName)
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := sweep.OpenResume(dir)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(r.Kept) != 2 {
					t.Errorf("kept %d tiers, want 2", len(r.Kept))
				}
				if got := strings.Join(r.Warnings, "\n"); tc.warn != "" && !strings.Contains(got, tc.warn) || tc.warn == "" && strings.Contains(got, "older loadcurve") {
					t.Errorf("warnings %q, want %q", got, tc.warn)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line saying %q", err, tc.want)
			}
			if after, _ := os.ReadFile(path); string(after) != tc.file {
				t.Error("the refused resume changed records.jsonl")
			}
		})
	}
}

// TestDiscardAfterACutLineAndAChangedFile: a file whose finished tiers are followed only by a
// line cut by a kill (no tier to discard: the executor once panicked on r.Dropped[0] here) is
// resumed, the cut line kept aside; a file that changed after it was read is not truncated.
func TestDiscardAfterACutLineAndAChangedFile(t *testing.T) {
	lines := interruptedSweep(t)
	var whole []string // the header and the finished tiers
	for _, l := range lines {
		if strings.HasPrefix(l, `{"kind":"tier","tier":2,`) {
			break
		}
		whole = append(whole, l)
	}
	kept := strings.Join(whole, "")
	dir := t.TempDir()
	path := filepath.Join(dir, result.RecordsName)
	if err := os.WriteFile(path, []byte(kept+`{"kind":"tier","tier":2,"ro`), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := sweep.OpenResume(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kept) != 2 || len(r.Dropped) != 0 {
		t.Fatalf("kept %d, dropped %d: want 2 kept, none dropped", len(r.Kept), len(r.Dropped))
	}
	_ = r.Describe() // says no tier was interrupted, without a dropped tier to name
	if err := r.Discard(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != kept {
		t.Errorf("records.jsonl after the discard is not the finished tiers alone (%d bytes, want %d)", len(b), len(kept))
	}
	if r.SavedTo == "" {
		t.Error("the cut line was not kept aside")
	}

	// Another process appends after the file was read: the resume does not cut what it wrote.
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err = sweep.OpenResume(dir); err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(`{"id":999,"tier":2,"outcome":"ok","planned_s":1}` + "\n")
	fh.Close()
	before, _ := os.ReadFile(path)
	if err := r.Discard(); err == nil || !strings.Contains(err.Error(), "another process is writing it") {
		t.Fatalf("Discard after the file changed: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the file was changed")
	}
}
