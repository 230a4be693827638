package racedetector

import (
	"fmt"
	"testing"
)

// RunNatively is the TestMain of a package whose tests run without the race detector only: it
// runs them (m.Run) natively, and under -race runs none, saying why (the package's name and its
// reason). For a package that starts no goroutine, where the detector costs ten times the CPU
// for nothing it could find; the README's test command runs it in its native pass.
func RunNatively(m *testing.M, pkg, why string) int {
	if Enabled {
		fmt.Printf("%s: tests skipped under -race (%s); the test command's native pass runs them\n", pkg, why)
		return 0
	}
	return m.Run()
}
