package sweep_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure/records"
)

func TestParseMetadata(t *testing.T) {
	for _, tc := range []struct {
		pairs []string
		want  records.Metadata
		errs  []string // each error's text, in order
	}{
		{[]string{" tp = 2", "gpu=H100=sxm"}, records.Metadata{{Key: "tp", Value: "2"}, {Key: "gpu", Value: "H100=sxm"}}, nil},
		{[]string{"tp"}, nil, []string{`#1: no '=' in "tp": want KEY=VALUE, e.g. tp=2`}},
		{[]string{" =x"}, nil, []string{"#1: empty key before '=': want KEY=VALUE, e.g. tp=2"}},
		{[]string{"a=1", "b=2", "a=3"}, records.Metadata{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}},
			[]string{`#3: key "a" given twice (#1 and #3): give each key once`}},
		{[]string{"k\x1b=1"}, nil, []string{"#1: the key has a control character"}},
		{[]string{"mean_ttft_ms=1"}, nil, []string{`#1: "mean_ttft_ms" is a key of summary.json or of vLLM's result file, beside which the metadata is written: choose another key`}},
	} {
		got, errs := sweep.ParseMetadata(tc.pairs)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || len(errs) != len(tc.errs) {
			t.Errorf("%q: %v %v, want %v %q", tc.pairs, got, errs, tc.want, tc.errs)
			continue
		}
		for i, e := range errs {
			if e.Error() != tc.errs[i] {
				t.Errorf("%q: error %d %q, want %q", tc.pairs, i, e, tc.errs[i])
			}
		}
	}
}

func TestCheckName(t *testing.T) {
	for s, want := range map[string]string{
		"run 7, tp=2":                        "",
		strings.Repeat("x", sweep.MaxName):   "",
		strings.Repeat("x", sweep.MaxName+1): "is 257 bytes long, more than 256",
		"a\xffb":                             "is not valid UTF-8",
		"a\nb":                               "has a control character",
	} {
		if got := sweep.CheckName(s); got != want {
			t.Errorf("CheckName(%.20q) = %q, want %q", s, got, want)
		}
	}
}
