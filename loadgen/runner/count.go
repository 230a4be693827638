package runner

import (
	"time"

	"github.com/loadcurve/loadcurve/workloads"
)

// RunRequests is the number of requests of a run of src asked for n requests (stated: n was
// given, not defaulted) or for d. A stated count is kept. Without one, a trace is replayed
// whole (0: the schedule's every arrival), and the requests of a file are each sent once when
// no duration bounds the run; otherwise n, the default count of a generated workload, is kept.
func RunRequests(src *workloads.Source, n int, stated bool, d time.Duration) int {
	switch {
	case stated || src == nil:
		return n
	case src.Trace != nil:
		return 0
	case !src.Generated() && d == 0:
		return src.Size()
	}
	return n
}
