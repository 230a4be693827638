package bench_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/loadcurve/loadcurve/internal/bench"
)

// childEnv makes the test binary act as a benchmark child: the runner re-executes it with the
// role and the job as its last two arguments, as it re-executes `loadcurve bench` in real use.
const childEnv = "LOADCURVE_BENCH_TEST_CHILD=1"

func TestMain(m *testing.M) {
	if os.Getenv("LOADCURVE_BENCH_TEST_CHILD") == "1" {
		if len(os.Args) < 3 {
			fmt.Fprintln(os.Stderr, "bench test child: want ROLE JOB")
			os.Exit(2)
		}
		n := len(os.Args)
		if err := bench.RunChild(context.Background(), os.Args[n-2], []byte(os.Args[n-1]), os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
