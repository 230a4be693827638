package loadgen

import (
	"fmt"

	"github.com/loadcurve/loadcurve/internal/field"
)

// FDReserve is the file descriptors kept for everything but the streams: the records and
// result files, the metrics scraper, idle pooled connections, the embedded sim's listener.
const FDReserve = 64

// StreamsWithin is how many streams a process allowed limit open files can hold at once: the
// limit less FDReserve, halved when the embedded deployment runs in the same process (it holds
// the server's end of every stream); at most 0.
func StreamsWithin(limit uint64, embedded bool) int {
	n := int(min(limit, 1<<30)) - FDReserve
	if embedded {
		n /= 2
	}
	return max(n, 0)
}

// CheckStreams says whether a cap of maxConcurrency streams (0: no cap) fits in the files a
// process allowed limit open files may hold (StreamsWithin; embedded: the embedded deployment
// runs in the same process). A cap beyond them is refused, as a field error of the cap; no cap
// under a limit below 16,384 files is a warning, whose text refers to the cap with field.Ref.
// A limit of 0 (unknown: OpenFileLimit) checks nothing.
func CheckStreams(limit uint64, maxConcurrency int, embedded bool) (warning string, err error) {
	if limit == 0 {
		return "", nil
	}
	usable := StreamsWithin(limit, embedded)
	switch {
	case maxConcurrency > usable:
		return "", field.Sentencef(FieldMaxConcurrency, "%v %d needs a connection each, and this process may open %d files, enough for %d streams: raise the limit (ulimit -n) or lower %v",
			field.Ref(FieldMaxConcurrency), maxConcurrency, limit, usable, field.Ref(FieldMaxConcurrency))
	case maxConcurrency == 0 && limit < 1<<14:
		return fmt.Sprintf("this process may open %d files: without %v, requests in flight beyond about %d fail as the client's and mark their tier client-bound",
			limit, field.Ref(FieldMaxConcurrency), usable), nil
	}
	return "", nil
}
