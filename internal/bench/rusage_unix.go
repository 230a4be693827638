//go:build unix

package bench

import (
	"os"
	"runtime"
	"syscall"
)

// usage returns the CPU seconds (user, system) and the peak RSS in bytes of an exited child.
func usage(ps *os.ProcessState) (user, sys float64, maxRSS int64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return ps.UserTime().Seconds(), ps.SystemTime().Seconds(), 0
	}
	maxRSS = int64(ru.Maxrss)
	if runtime.GOOS != "darwin" { // Linux and the BSDs count kilobytes, macOS bytes
		maxRSS *= 1024
	}
	return ps.UserTime().Seconds(), ps.SystemTime().Seconds(), maxRSS
}
