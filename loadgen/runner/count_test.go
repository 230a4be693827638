package runner_test

import (
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/workloads"
)

func TestRunRequests(t *testing.T) {
	generated := source(t, workloads.KindSynthetic)
	file := source(t, "../../workloads/testdata/requests.jsonl")
	trace := source(t, "mooncake:../../workloads/testdata/mooncake.jsonl")
	if trace.Trace == nil || file.Trace != nil || file.Generated() {
		t.Fatal("the test's sources are not a trace and a file of requests")
	}
	for _, tc := range []struct {
		name   string
		src    *workloads.Source
		n      int
		stated bool
		d      time.Duration
		want   int
	}{
		{"a generated workload keeps the default count", generated, 200, false, 0, 200},
		{"a stated count is kept", file, 7, true, 0, 7},
		{"a file without a count: each of its requests once", file, 200, false, 0, file.Size()},
		{"a file within a duration: the default count", file, 200, false, time.Minute, 200},
		{"a trace without a count: whole", trace, 200, false, 0, 0},
		{"a trace cut to a stated count", trace, 3, true, 0, 3},
		{"no workload", nil, 5, false, 0, 5},
	} {
		if got := runner.RunRequests(tc.src, tc.n, tc.stated, tc.d); got != tc.want {
			t.Errorf("%s: RunRequests = %d, want %d", tc.name, got, tc.want)
		}
	}
}
