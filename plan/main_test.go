package plan_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/loadcurve/loadcurve/internal/racedetector"
)

// TestMain runs the package's tests without the race detector only: the package starts no
// goroutine of its own (the concurrency it drives, the simulated deployment's and the client's,
// is tested under -race in theirs and in cmd/loadcurve's end-to-end tests), and the detector
// would cost ten times the CPU for nothing it could find. The README's test command runs them
// in its native pass.
func TestMain(m *testing.M) {
	if racedetector.Enabled {
		fmt.Println("plan: tests skipped under -race (no goroutines of its own); the test command's native pass runs them")
		os.Exit(0)
	}
	os.Exit(m.Run())
}
