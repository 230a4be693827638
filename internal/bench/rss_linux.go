//go:build linux

package bench

import (
	"bytes"
	"os"
	"strconv"
)

// currentRSS is the resident set size of this process in bytes (0 when unknown), from
// /proc/self/statm: its second field counts resident pages.
func currentRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// loadAvg is the 1-minute load average, 0 when unknown.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0
	}
	v, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil {
		return 0
	}
	return v
}
