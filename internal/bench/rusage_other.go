//go:build !unix

package bench

import "os"

// usage returns the CPU seconds (user, system) of an exited child; the peak RSS is unknown here.
func usage(ps *os.ProcessState) (user, sys float64, maxRSS int64) {
	return ps.UserTime().Seconds(), ps.SystemTime().Seconds(), 0
}
