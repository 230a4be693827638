package sweep_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure/records"
)

func TestResumeSameObjectives(t *testing.T) {
	for _, c := range []struct {
		name     string
		header   string // the records header's settings
		given    []string
		recorded []string
		want     []string
		same     bool
	}{
		{"the header's objectives win over the scenario's", `,"settings":{"objectives":"ttft:500 tpot:50"}`,
			[]string{"tpot:50", "ttft:500"}, []string{"ttft:500"}, []string{"ttft:500 tpot:50"}, true},
		{"written otherwise, the same objectives", `,"settings":{"objectives":"ttft:500 tpot:50"}`,
			[]string{"tpot:50,ttft:500"}, nil, []string{"ttft:500 tpot:50"}, true},
		{"another value differs", `,"settings":{"objectives":"ttft:500 tpot:50"}`,
			[]string{"ttft:400", "tpot:50"}, nil, []string{"ttft:500 tpot:50"}, false},
		{"a header without objectives: the scenario's", `,"settings":{"objectives":""}`,
			[]string{"ttft:500"}, []string{"ttft:500"}, []string{"ttft:500"}, true},
		{"no settings in the header, none given nor recorded", "", nil, nil, nil, true},
		{"what does not parse is never the same", "", []string{"ttft:soon"}, []string{"ttft:soon"}, []string{"ttft:soon"}, false},
	} {
		dir := t.TempDir()
		h := `{"kind":"header","tool":"loadcurve","metrics_version":"` + records.MetricsVersion + `","command":"sweep"` + c.header + "}\n"
		if err := os.WriteFile(filepath.Join(dir, result.RecordsName), []byte(h), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := sweep.OpenResume(dir)
		if err != nil {
			t.Fatal(err)
		}
		want, same := r.SameObjectives(c.given, c.recorded)
		if !slices.Equal(want, c.want) || same != c.same {
			t.Errorf("%s: SameObjectives(%q, %q) = %q, %v; want %q, %v", c.name, c.given, c.recorded, want, same, c.want, c.same)
		}
	}
}
