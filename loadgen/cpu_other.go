//go:build !unix

package loadgen

import "time"

// processCPU is not read here.
func processCPU() (time.Duration, bool) { return 0, false }
