package report_test

import (
	"os"
	"testing"

	"github.com/loadcurve/loadcurve/internal/racedetector"
)

// TestMain runs report's tests natively only: report starts no goroutine (it reads results and
// writes files and pages; cmd/loadcurve's end-to-end tests run it under -race beside the
// concurrent code that produces them).
func TestMain(m *testing.M) {
	os.Exit(racedetector.RunNatively(m, "report", "it starts no goroutine"))
}
