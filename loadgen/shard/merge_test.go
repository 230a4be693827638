package shard_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/measure/records"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestMergeEqualsTheSingleRun(t *testing.T) {
	for _, k := range []int{1, 2, 3, 7} {
		t.Run("k="+strconvI(k), func(t *testing.T) {
			single := singleRun(t, 50)
			anchors := make([]time.Duration, k) // perfectly synchronised shards
			files := split(single, k, anchors)
			slices.Reverse(files) // the order of the arguments does not matter
			merged, rep, err := shard.Merge(files)
			if err != nil {
				t.Fatal(err)
			}
			want := *single
			want.Records = withShards(single, k)
			assertSameFile(t, merged, &want)
			if rep.Count != k || len(rep.Shards) != k || len(rep.Tiers) != 2 || len(rep.Warnings) != 0 {
				t.Errorf("report: count %d, %d shards, %d tiers, warnings %q; want %d, %d, 2, none", rep.Count, len(rep.Shards), len(rep.Tiers), rep.Warnings, k, k)
			}
			for _, tr := range rep.Tiers {
				if tr.Planned != 50 || tr.Records != 50 || tr.AnchorSpreadMs != 0 || tr.ClockWarning {
					t.Errorf("tier %d: planned %d, records %d, spread %v ms, warning %v; want 50, 50, 0, false", tr.Tier, tr.Planned, tr.Records, tr.AnchorSpreadMs, tr.ClockWarning)
				}
			}
		})
	}
}

func strconvI(i int) string { return string(rune('0' + i)) }

// assertSameFile compares two records files field by field (times with Equal).
func assertSameFile(t *testing.T, got, want *records.File) {
	t.Helper()
	gh, wh := got.Header, want.Header
	if !gh.StartWall.Equal(wh.StartWall) {
		t.Errorf("header start_wall %v, want %v", gh.StartWall, wh.StartWall)
	}
	gh.StartWall, wh.StartWall = time.Time{}, time.Time{}
	if len(gh.ExtraBody) == 0 && len(wh.ExtraBody) == 0 {
		gh.ExtraBody, wh.ExtraBody = nil, nil
	}
	if !reflect.DeepEqual(gh, wh) {
		t.Errorf("header\n got %+v\nwant %+v", gh, wh)
	}
	if len(got.Tiers) != len(want.Tiers) {
		t.Fatalf("%d tiers, want %d", len(got.Tiers), len(want.Tiers))
	}
	for i := range got.Tiers {
		g, w := got.Tiers[i], want.Tiers[i]
		if !g.StartWall.Equal(w.StartWall) {
			t.Errorf("tier %d start_wall %v, want %v", i, g.StartWall, w.StartWall)
		}
		g.StartWall, w.StartWall = time.Time{}, time.Time{}
		if g != w {
			t.Errorf("tier %d\n got %+v\nwant %+v", i, g, w)
		}
	}
	if len(got.Records) != len(want.Records) {
		t.Fatalf("%d records, want %d", len(got.Records), len(want.Records))
	}
	for i := range got.Records {
		if !reflect.DeepEqual(got.Records[i], want.Records[i]) {
			t.Fatalf("record %d\n got %+v\nwant %+v", i, got.Records[i], want.Records[i])
		}
	}
}

func TestMergeHeaderAndAnchors(t *testing.T) {
	single := singleRun(t, 30)
	single.Header.MaxConcurrency = 8
	anchors := []time.Duration{4 * time.Millisecond, 0, 25 * time.Millisecond}
	merged, rep, err := shard.Merge(split(single, 3, anchors))
	if err != nil {
		t.Fatal(err)
	}
	if merged.Header.Shard != "" || merged.Header.MaxConcurrency != 24 || !merged.Header.StartWall.Equal(base) {
		t.Errorf("merged header: shard %q, max concurrency %d, start %v; want \"\", 3×8 = 24, the earliest %v",
			merged.Header.Shard, merged.Header.MaxConcurrency, merged.Header.StartWall, base)
	}
	for _, tr := range rep.Tiers {
		if tr.AnchorSpreadMs != 25 || !tr.ClockWarning {
			t.Errorf("tier %d: anchor spread %v ms, warning %v; want 25 and a warning above 10 ms", tr.Tier, tr.AnchorSpreadMs, tr.ClockWarning)
		}
		offs := []shard.Millis{tr.Shards[0].AnchorOffsetMs, tr.Shards[1].AnchorOffsetMs, tr.Shards[2].AnchorOffsetMs}
		if !slices.Equal(offs, []shard.Millis{4, 0, 25}) {
			t.Errorf("tier %d: anchor offsets %v ms, want [4 0 25] (by shard index)", tr.Tier, offs)
		}
	}
	if !containsAll(strings.Join(rep.Warnings, "\n"), "tier 0: the shards' wall-clock anchors spread 25 ms", "at least that uncertain") {
		t.Errorf("warnings %q lack the clock-spread warning", rep.Warnings)
	}
}

func TestMergeReportFlags(t *testing.T) {
	single := singleRun(t, 150)
	files := split(single, 3, make([]time.Duration, 3))
	// Shard 2's client fell behind by 20 ms on every request of tier 1.
	for i := range files[2].Records {
		if r := &files[2].Records[i]; r.Tier == 1 {
			r.Dispatched = r.Planned + 20*time.Millisecond
		}
	}
	// A gateway throttled shard 1 in tier 0: 25 of its 50 requests got 429.
	n429 := 0
	for i := range files[1].Records {
		if r := &files[1].Records[i]; r.Tier == 0 && r.Outcome == records.OK && n429 < 25 {
			r.Outcome, r.HTTPStatus, r.First, r.Last, r.FirstEvent = records.HTTPError, 429, records.Unset, records.Unset, records.Unset
			n429++
		}
	}
	// Shard 0 was interrupted in tier 1: its last 5 records are missing.
	var kept []records.Record
	dropped := 0
	for i := len(files[0].Records) - 1; i >= 0; i-- {
		if r := files[0].Records[i]; r.Tier == 1 && dropped < 5 {
			dropped++
			continue
		}
		kept = append(kept, files[0].Records[i])
	}
	slices.Reverse(kept)
	files[0].Records = kept

	_, rep, err := shard.Merge(files)
	if err != nil {
		t.Fatal(err)
	}
	t0, t1 := rep.Tiers[0], rep.Tiers[1]
	if !t1.Shards[2].ClientBound || t1.Shards[2].ScheduleLagP99Ms != 20 || t1.Shards[0].ClientBound || t0.Shards[2].ClientBound {
		t.Errorf("client-bound flags: tier 1 shard 2 %v (p99 %v ms), tier 1 shard 0 %v, tier 0 shard 2 %v; want only tier 1 shard 2, at 20 ms",
			t1.Shards[2].ClientBound, t1.Shards[2].ScheduleLagP99Ms, t1.Shards[0].ClientBound, t0.Shards[2].ClientBound)
	}
	// Tier 0: every 17th id fails everywhere (3 of 50 per shard); shard 1 fails 3+25 of 50. One-sided
	// z = (28/50 − 6/100)/√(p̂(1−p̂)(1/50+1/100)) with p̂ = 34/150: z ≈ 6.9 > 4 for shard 1; the other
	// shards fail less than the rest pool, which is never flagged.
	if !t0.Shards[1].FailureOutlier || t0.Shards[0].FailureOutlier || t0.Shards[2].FailureOutlier || t0.Shards[1].HTTP429 != 25 {
		t.Errorf("failure outliers in tier 0: %v %v %v (429s of shard 1: %d); want only shard 1, with 25",
			t0.Shards[0].FailureOutlier, t0.Shards[1].FailureOutlier, t0.Shards[2].FailureOutlier, t0.Shards[1].HTTP429)
	}
	if t1.Shards[1].FailureOutlier {
		t.Error("tier 1 has the same failure share in every shard, yet shard 1 is flagged")
	}
	if t1.Records != 145 || t1.Shards[0].Records != 45 || t1.Shards[0].Planned != 50 {
		t.Errorf("tier 1: %d records, shard 0 %d of %d planned; want 145, 45 of 50", t1.Records, t1.Shards[0].Records, t1.Shards[0].Planned)
	}
	all := strings.Join(rep.Warnings, "\n")
	if !containsAll(all, "tier 1: shard 2/3 was CLIENT-BOUND", "tier 0: shard 1/3 failed 28 of 50 requests, the other shards 6 of 100",
		"tier 1: #1 (shard 0/3) has 45 records for 50 planned requests: it was interrupted") {
		t.Errorf("warnings:\n%s", all)
	}

	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden", buf.Bytes())
	if _, err := json.Marshal(rep); err != nil {
		t.Errorf("the report does not encode as JSON: %v", err)
	}
}

func TestMergeRefusals(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(fs []*records.File) []*records.File
		is     []error
		want   []string // substrings of the error
	}{
		{
			name:   "missing shard",
			mutate: func(fs []*records.File) []*records.File { return fs[:2] },
			is:     []error{shard.ErrMissingShard},
			want:   []string{"shard 2/3 of 3 missing (have 0/3 from #1, 1/3 from #2)"},
		},
		{
			name:   "two missing",
			mutate: func(fs []*records.File) []*records.File { return fs[1:2] },
			is:     []error{shard.ErrMissingShard},
			want:   []string{"shards 0/3, 2/3 of 3 missing (have 1/3 from #1)"},
		},
		{
			name:   "duplicate shard",
			mutate: func(fs []*records.File) []*records.File { return []*records.File{fs[0], fs[1], fs[1], fs[2]} },
			is:     []error{shard.ErrDuplicateShard},
			want:   []string{"shard 1/3 is given 2 times: #2, #3"},
		},
		{
			name:   "duplicate instead of a missing one",
			mutate: func(fs []*records.File) []*records.File { return []*records.File{fs[0], fs[1], fs[1]} },
			is:     []error{shard.ErrDuplicateShard, shard.ErrMissingShard},
			want:   []string{"shard 1/3 is given 2 times: #2, #3", "shard 2/3 of 3 missing (have 0/3 from #1)"},
		},
		{
			name: "different seed",
			mutate: func(fs []*records.File) []*records.File {
				fs[1].Header.Seed = 8
				return fs
			},
			is:   []error{shard.ErrMixedRuns},
			want: []string{`seed differs: "7" in #1, #3; "8" in #2`},
		},
		{
			name: "different workload and model",
			mutate: func(fs []*records.File) []*records.File {
				fs[2].Header.Workload = "random(input=11, output=3, range=0, seed=7)"
				fs[2].Header.Model = "other"
				return fs
			},
			is:   []error{shard.ErrMixedRuns},
			want: []string{`model differs: "m" in #1, #2; "other" in #3`, `workload differs: "random(input=10`},
		},
		{
			name: "different shard count",
			mutate: func(fs []*records.File) []*records.File {
				fs[2].Header.Shard = "2/4"
				return fs
			},
			is:   []error{shard.ErrMixedRuns},
			want: []string{"the shard count k differs: k=3 in #1, #2; k=4 in #3"},
		},
		{
			name: "a single-machine run among shards",
			mutate: func(fs []*records.File) []*records.File {
				fs[0].Header.Shard = ""
				return fs
			},
			is:   []error{shard.ErrNotShard},
			want: []string{"#1: its header names no shard"},
		},
		{
			name: "unreadable shard",
			mutate: func(fs []*records.File) []*records.File {
				fs[0].Header.Shard = "first"
				return fs
			},
			is:   []error{shard.ErrNotShard},
			want: []string{`#1: header shard "first": not a shard of the form i/k`},
		},
		{
			name: "tier with another rate",
			mutate: func(fs []*records.File) []*records.File {
				fs[1].Tiers[1].RequestRate = 99
				return fs
			},
			is:   []error{shard.ErrMixedRuns},
			want: []string{`tier 1 request rate differs: "40" in #1, #3; "99" in #2`},
		},
		{
			name: "tier with another request set",
			mutate: func(fs []*records.File) []*records.File {
				fs[2].Tiers[0].WorkloadFingerprint = "sha256:other"
				return fs
			},
			is:   []error{shard.ErrMixedRuns},
			want: []string{`tier 0 request-set fingerprint differs: "sha256:tier0" in #1, #2; "sha256:other" in #3`},
		},
		{
			name: "shard stopped before the last tier",
			mutate: func(fs []*records.File) []*records.File {
				fs[1].Tiers = fs[1].Tiers[:1]
				fs[1].Records = fs[1].Records[:0]
				return fs
			},
			is:   []error{shard.ErrMissingShard},
			want: []string{"tier 1 is missing from #2 (shard 1/3) (present in #1 (shard 0/3), #3 (shard 2/3))"},
		},
		{
			name: "global count in a shard's tier line",
			mutate: func(fs []*records.File) []*records.File {
				fs[0].Tiers[0].Planned = 45 // the global count
				return fs
			},
			is: []error{shard.ErrInconsistent},
			want: []string{"tier 0: #1 (shard 0/3) plans 45 requests, but a global set of 75 (the sum over the shards) gives shard 0/3 25",
				"tier 0: #2 (shard 1/3) plans 15 requests, but a global set of 75"},
		},
		{
			name: "record in the wrong shard",
			mutate: func(fs []*records.File) []*records.File {
				r := fs[1].Records[0] // id 1 or 4, ... of shard 1
				r.Shard = 0
				fs[0].Records = append(fs[0].Records, r)
				return fs
			},
			is:   []error{shard.ErrInconsistent},
			want: []string{"#1 (shard 0/3): 1 record(s) do not fit shard 0/3", "belongs to shard 1/3"},
		},
		{
			name: "record twice",
			mutate: func(fs []*records.File) []*records.File {
				fs[2].Records = append(fs[2].Records, fs[2].Records[3])
				return fs
			},
			is:   []error{shard.ErrInconsistent},
			want: []string{"appears twice (also in #3)"},
		},
		{
			name: "records that name another shard",
			mutate: func(fs []*records.File) []*records.File {
				for i := range fs[2].Records {
					fs[2].Records[i].Shard = 0
				}
				return fs
			},
			is:   []error{shard.ErrInconsistent},
			want: []string{"#3 (shard 2/3): 31 record(s) do not fit shard 2/3", "says shard 0", "and 28 more"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Tier 0 has 45 requests (15 per shard), tier 1 has 50 (17, 17, 16).
			files := split(resize(t, 45, 50), 3, make([]time.Duration, 3))
			merged, _, err := shard.Merge(tt.mutate(files))
			if err == nil {
				t.Fatalf("merged %d records; want a refusal", len(merged.Records))
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("error is not %v:\n%v", target, err)
				}
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error lacks %q:\n%v", s, err)
				}
			}
		})
	}
}

// resize builds a single run whose tier 0 has n0 requests and tier 1 n1.
func resize(t *testing.T, n0, n1 int) *records.File {
	a, b := singleRun(t, n0), singleRun(t, n1)
	f := &records.File{Header: a.Header, Tiers: []records.Tier{a.Tiers[0], b.Tiers[1]}}
	for _, r := range a.Records {
		if r.Tier == 0 {
			f.Records = append(f.Records, r)
		}
	}
	for _, r := range b.Records {
		if r.Tier == 1 {
			f.Records = append(f.Records, r)
		}
	}
	return f
}

func TestMergeRefusesNothing(t *testing.T) {
	if _, _, err := shard.Merge(nil); !errors.Is(err, shard.ErrMissingShard) {
		t.Errorf("Merge(nil) error %v, want ErrMissingShard", err)
	}
}

func TestWriteFileRoundTrip(t *testing.T) {
	single := singleRun(t, 40)
	merged, _, err := shard.Merge(split(single, 3, []time.Duration{0, time.Millisecond, 2 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "records.jsonl")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := shard.WriteFile(path, merged); err != nil {
		t.Fatal(err)
	}
	back, err := records.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	assertSameFile(t, back, merged)
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file is left behind: %v", err)
	}
}

func TestReadInputs(t *testing.T) {
	dir := t.TempDir()
	files := split(singleRun(t, 12), 3, make([]time.Duration, 3))
	for i, f := range files {
		d := filepath.Join(dir, "shard-"+strconvI(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := shard.WriteFile(filepath.Join(d, result.RecordsName), f); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		args    []string
		want    []string // names relative to dir
		wantErr string
	}{
		{"pattern", []string{filepath.Join(dir, "shard-*")}, []string{"shard-0/records.jsonl", "shard-1/records.jsonl", "shard-2/records.jsonl"}, ""},
		{"dirs and a file", []string{filepath.Join(dir, "shard-2"), filepath.Join(dir, "shard-0", "records.jsonl")}, []string{"shard-2/records.jsonl", "shard-0/records.jsonl"}, ""},
		{"pattern matching nothing", []string{filepath.Join(dir, "nope-*")}, nil, "no file or directory matches"},
		{"missing directory", []string{filepath.Join(dir, "shard-9")}, nil, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := shard.ReadInputs(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range in {
				rel, _ := filepath.Rel(dir, x.Name)
				got = append(got, filepath.ToSlash(rel))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("read %v, want %v", got, tt.want)
			}
		})
	}
	in, err := shard.ReadInputs([]string{filepath.Join(dir, "shard-*")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := shard.MergeInputs(in, shard.Options{}); err != nil {
		t.Errorf("merging the files read back: %v", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update after checking):\n%s", path, got)
	}
}
