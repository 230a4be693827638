package plan_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
)

// TestComparabilityOf: two results are planned against each other only under the same
// objectives, and the check says what else differs, as compare's does.
func TestComparabilityOf(t *testing.T) {
	a, _ := virtualSweep(t, 2*time.Second)
	withSeed := func(seed int64) *result.Result { r := *a; r.Header.Seed = seed; return &r }
	withObjective := func(d time.Duration) *result.Result {
		r := *a
		r.Settings.Measure.Objectives = measure.Objectives{TTFT: d}
		return &r
	}
	for _, tc := range []struct {
		name      string
		b         *result.Result
		objective bool   // refused: the objectives differ
		differs   string // a difference found, "" none
	}{
		{"the same result: nothing differs", a, false, ""},
		{"another seed: the schedule differs", withSeed(a.Header.Seed + 1), false, "seed"},
		{"other objectives: refused", withObjective(time.Second), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := plan.ComparabilityOf(a, tc.b)
			var od *plan.ObjectivesDiffer
			if got := errors.As(err, &od); got != tc.objective {
				t.Fatalf("error %v, want objectives refused: %v", err, tc.objective)
			}
			if tc.objective {
				if k != nil || !strings.Contains(err.Error(), "different objectives") || od.A == od.B {
					t.Errorf("refusal %v (%+v), comparability %v", err, od, k)
				}
				return
			}
			if tc.differs == "" && len(k.Differences) > 0 {
				t.Errorf("differences %q, want none", k.Differences)
			}
			if tc.differs != "" && !strings.Contains(strings.Join(k.Differences, "\n"), tc.differs) {
				t.Errorf("differences %q lack %q", k.Differences, tc.differs)
			}
		})
	}
}

// TestReadProfileFile: a profile's problems are named by the file's path and line; a file that
// is not there says so.
func TestReadProfileFile(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.csv"), filepath.Join(dir, "bad.csv")
	for path, text := range map[string]string{good: "time,rate\n00:00,10\n12:00,40\n", bad: "time,rate\n00:00,10\n06:00,-3\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := plan.ReadProfileFile(good)
	if err != nil || f.Peak() != 40 {
		t.Errorf("good profile: peak %v, error %v; want 40", f.Peak(), err)
	}
	if _, err := plan.ReadProfileFile(bad); err == nil || !strings.Contains(err.Error(), bad+":3:") {
		t.Errorf("bad profile: error %v, want it named %s:3:", err, bad)
	}
	if _, err := plan.ReadProfileFile(filepath.Join(dir, "none.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing profile: error %v, want os.ErrNotExist", err)
	}
}

// TestFromTrace: a trace's arrivals make the forecast; a workload without arrival times, or a
// bucket that counts nothing, is a *TraceError naming the trace; a trace that cannot be read
// is workloads' error as it is.
func TestFromTrace(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "azure.csv")
	text := "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	for i := 0; i < 120; i++ { // two arrivals a second for a minute
		text += "2023-11-16 18:00:" + twoDigits(i/2) + "." + []string{"0", "5"}[i%2] + ",10,10\n"
	}
	if err := os.WriteFile(trace, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := plan.FromTrace(trace, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Peak(); p < 1.9 || p > 2.1 {
		t.Errorf("peak %v req/s, want 2", p)
	}
	for _, tc := range []struct {
		spec   string
		bucket time.Duration
		notA   bool // ErrNotATrace
		traceE bool // a *TraceError
	}{
		{filepath.Join("..", "..", "workloads", "testdata", "requests.jsonl"), time.Minute, true, true},
		{trace, 0, false, true},
		{filepath.Join(t.TempDir(), "none.csv"), time.Minute, false, false},
	} {
		_, err := plan.FromTrace(tc.spec, tc.bucket)
		var te *plan.TraceError
		if err == nil || errors.Is(err, plan.ErrNotATrace) != tc.notA || errors.As(err, &te) != tc.traceE {
			t.Errorf("%s, bucket %v: error %v (not a trace: want %v; a TraceError: want %v)", tc.spec, tc.bucket, err, tc.notA, tc.traceE)
		}
		if te != nil && !strings.HasPrefix(err.Error(), tc.spec+": ") {
			t.Errorf("%s: %q does not name the trace first", tc.spec, err)
		}
	}
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// TestNewDocument: one deployment is planned alone, two A against B, and the document's file
// reads back as it was encoded.
func TestNewDocument(t *testing.T) {
	d := plan.Deployment{Name: "A", OperatingRate: 60, CompliantTokensPerRequest: 100, RawTokensPerRequest: 100, CostPerHour: 1}
	e := d
	e.Name, e.CostPerHour = "B", 2
	f := plan.PeakForecast(100)
	for _, tc := range []struct {
		ds          []plan.Deployment
		plans       int
		comparison  bool
		wantRefused bool
	}{
		{[]plan.Deployment{d}, 1, false, false},
		{[]plan.Deployment{d, e}, 2, true, false},
		{nil, 0, false, true},
		{[]plan.Deployment{d, e, d}, 0, false, true},
	} {
		doc, err := plan.NewDocument(f, plan.Options{}, tc.ds...)
		if (err != nil) != tc.wantRefused || len(doc.Plans) != tc.plans || (doc.Comparison != nil) != tc.comparison {
			t.Errorf("%d deployments: %d plans, comparison %v, error %v", len(tc.ds), len(doc.Plans), doc.Comparison != nil, err)
			continue
		}
		if tc.wantRefused {
			continue
		}
		if doc.Plans[0].PeakReplicas != 2 {
			t.Errorf("%d deployments: A's peak replicas %d, want 2 (100 req/s at 60 each)", len(tc.ds), doc.Plans[0].PeakReplicas)
		}
		path := filepath.Join(t.TempDir(), "plan.json")
		if err := doc.Write(path); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		want, _ := doc.Encode()
		if err != nil || string(got) != string(want) {
			t.Errorf("plan.json differs from Encode (error %v)", err)
		}
	}
	if err := (plan.Document{}).Write(filepath.Join(t.TempDir(), "none", "plan.json")); err == nil || !strings.Contains(err.Error(), "write plan.json") {
		t.Errorf("write into a missing directory: %v", err)
	}
}
