package sweep_test

import (
	"reflect"
	"testing"

	"github.com/loadcurve/loadcurve/param"
	"github.com/loadcurve/loadcurve/sweep"
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
