package sweep_test

import (
	"reflect"
	"testing"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

func TestRunNamingParamsKeepEveryPairWhole(t *testing.T) {
	var r sweep.RunNaming
	given := map[string][]string{sweep.FieldLabel: {"a", "b"}, sweep.FieldMetadata: {"tp=1,2", "pp=2"}}
	if errs := param.Apply(r.Params(), func(f string) ([]string, bool) { v, ok := given[f]; return v, ok }); len(errs) > 0 {
		t.Fatal(errs)
	}
	want := sweep.RunNaming{Label: "b", Metadata: []string{"tp=1,2", "pp=2"}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got %+v, want %+v", r, want)
	}
	if md, errs := sweep.ParseMetadata(r.Metadata); len(errs) > 0 || len(md) != 2 {
		t.Errorf("ParseMetadata = %v, %v", md, errs)
	}
}

// TestRunNamingCheck: a good label and pairs give the metadata in order; each problem is a
// sentence that names its input (the label, the metadata) once, the pair by position.
func TestRunNamingCheck(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    sweep.RunNaming
		md   int
		errs []string
	}{
		{"good", sweep.RunNaming{Label: "base", Metadata: []string{"tp=2", "pp=1"}}, 2, nil},
		{"control character", sweep.RunNaming{Label: "a\x01b"}, 0, []string{"label: has a control character"}},
		{"bad pairs", sweep.RunNaming{Metadata: []string{"x", "tp=1", "tp=2"}}, 1, []string{
			`metadata #1: no '=' in "x": want KEY=VALUE, e.g. tp=2`,
			`metadata #3: key "tp" given twice (#2 and #3): give each key once`}},
	} {
		md, errs := tt.r.Check()
		var got []string
		for _, e := range errs {
			got = append(got, field.Of(e).Render(nil))
		}
		if len(md) != tt.md || !reflect.DeepEqual(got, tt.errs) {
			t.Errorf("%s: %d pairs, errors %q; want %d, %q", tt.name, len(md), got, tt.md, tt.errs)
		}
	}
}
