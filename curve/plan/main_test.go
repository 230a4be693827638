package plan_test

import (
	"os"
	"testing"

	"github.com/loadcurve/loadcurve/internal/racedetector"
)

// TestMain runs plan's tests natively only: plan starts no goroutine (the concurrency its
// rehearsal drives, the simulated deployment's and the client's, is tested under -race in
// theirs and in cmd/loadcurve's end-to-end tests).
func TestMain(m *testing.M) {
	os.Exit(racedetector.RunNatively(m, "plan", "it starts no goroutine"))
}
