package report_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/loadcurve/loadcurve/internal/racedetector"
)

// TestMain runs the package's tests without the race detector only: the package starts no
// goroutine (it reads results and writes files and pages; cmd/loadcurve's end-to-end tests run
// it under -race beside the concurrent code that produces them), and the detector would cost
// ten times the CPU for nothing it could find. The README's test command runs them in its
// native pass.
func TestMain(m *testing.M) {
	if racedetector.Enabled {
		fmt.Println("report: tests skipped under -race (no goroutines of its own); the test command's native pass runs them")
		os.Exit(0)
	}
	os.Exit(m.Run())
}
