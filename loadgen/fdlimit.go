package loadgen

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
