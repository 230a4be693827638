package workloads_test

import (
	"testing"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/workloads"
)

func TestSetRequests(t *testing.T) {
	t.Parallel()
	file, generated := fileAndGenerated(t)
	for _, tc := range []struct {
		name   string
		src    *workloads.Source
		n      int
		stated bool
		want   int
		bad    bool
	}{
		{"a generated set of the default size", generated, workloads.DefaultSetRequests, false, workloads.DefaultSetRequests, false},
		{"a generated set of a stated size", generated, 7, true, 7, false},
		{"all of a file's", file, workloads.DefaultSetRequests, false, file.Size(), false},
		{"at most a stated count of a file's", file, 2, true, 2, false},
		{"no source read: the count alone", nil, 3, true, 3, false},
		{"zero", generated, 0, true, 0, true},
		{"negative, no source", nil, -3, true, -3, true},
	} {
		n, err := workloads.SetRequests(tc.src, tc.n, tc.stated)
		if fe := field.Of(err); tc.bad != (fe != nil && fe.Name == workloads.FieldSetRequests) || err != nil && !tc.bad {
			t.Errorf("%s: error %v, want refused %v", tc.name, err, tc.bad)
		}
		if !tc.bad && n != tc.want {
			t.Errorf("%s: %d requests, want %d", tc.name, n, tc.want)
		}
	}
}

// fileAndGenerated are two sources of the default settings: a file's requests
// (testdata/requests.jsonl) and generated ones.
func fileAndGenerated(t *testing.T) (file, generated *workloads.Source) {
	t.Helper()
	opts := workloads.DefaultSettings().Options
	var errs []error
	if file, errs = workloads.NewSource("testdata/requests.jsonl", opts, ""); len(errs) > 0 {
		t.Fatal(errs)
	}
	if generated, errs = workloads.NewSource(workloads.KindSynthetic, opts, ""); len(errs) > 0 {
		t.Fatal(errs)
	}
	return file, generated
}
