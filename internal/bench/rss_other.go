//go:build !linux

package bench

// currentRSS is unknown outside Linux: the stalled-stream figures then use the peak RSS only.
func currentRSS() int64 { return 0 }

// loadAvg is unknown outside Linux.
func loadAvg() float64 { return 0 }
