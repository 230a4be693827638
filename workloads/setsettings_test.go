package workloads_test

import (
	"testing"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/workloads"
)

// TestSetSettings: what is not given is the default size (all of a file's), seed 0 and no
// file; a size given is the set's, of a file at most that many; a size < 1 is refused, named
// as the set's size.
func TestSetSettings(t *testing.T) {
	t.Parallel()
	file, generated := fileAndGenerated(t)
	for _, tc := range []struct {
		name  string
		src   *workloads.Source
		given map[string]string
		want  workloads.SetSettings
		size  int
		bad   bool
	}{
		{"defaults, generated", generated, nil, workloads.SetSettings{Requests: workloads.DefaultSetRequests}, workloads.DefaultSetRequests, false},
		{"defaults, a file: all of it", file, nil, workloads.SetSettings{Requests: workloads.DefaultSetRequests}, file.Size(), false},
		{"given", generated, map[string]string{workloads.FieldSetRequests: "7", workloads.FieldSetSeed: "-2", workloads.FieldSetOut: "set.jsonl"},
			workloads.SetSettings{Requests: 7, Seed: -2, Out: "set.jsonl"}, 7, false},
		{"a count of a file's", file, map[string]string{workloads.FieldSetRequests: "2"}, workloads.SetSettings{Requests: 2}, 2, false},
		{"zero", file, map[string]string{workloads.FieldSetRequests: "0"}, workloads.SetSettings{}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := workloads.DefaultSetSettings()
			ps := s.Params()
			if errs := param.Apply(ps, func(f string) ([]string, bool) {
				v, ok := tc.given[f]
				if !ok {
					return nil, false
				}
				return []string{v}, true
			}); len(errs) > 0 {
				t.Fatal(errs)
			}
			if s != tc.want {
				t.Errorf("settings %+v, want %+v", s, tc.want)
			}
			n, err := s.Size(tc.src, ps)
			if fe := field.Of(err); tc.bad != (fe != nil && fe.Name == workloads.FieldSetRequests) {
				t.Errorf("error %v, want refused %v", err, tc.bad)
			}
			if !tc.bad && n != tc.size {
				t.Errorf("%d requests, want %d", n, tc.size)
			}
		})
	}
}
