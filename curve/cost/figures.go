package cost

import (
	"fmt"

	"github.com/loadcurve/loadcurve/curve"
)

// Measured returns o with the raw throughput and compliant token share of figures a result
// measured (at its operating point, or at a tier), its name saying where they come from:
// "A (12.3 req/s, confirmation tier 4)".
func (o Option) Measured(f curve.Figures) Option {
	o.RawThroughput, o.CompliantShare = f.RawOutputThroughput, f.CompliantTokenShare()
	o.Name += fmt.Sprintf(" (%.3g req/s, %s)", float64(f.Rate), f.Source)
	return o
}
