package sweep

import (
	"time"

	"github.com/loadcurve/loadcurve/measure"
)

// DefaultObjectives are the objectives of a sweep of a real target that gives none (--goodput
// ttft:2000 tpot:100): a sweep without objectives cannot place a knee. The embedded deployment
// has its own (its clock runs faster than a real one's: sim.ProfileObjectives,
// sim.QueueConfig.Objectives). They are printed with every result.
var DefaultObjectives = measure.Objectives{TTFT: 2 * time.Second, TPOT: 100 * time.Millisecond}
