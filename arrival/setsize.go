package arrival

import (
	"math"
	"time"
)

// SetSize is the number of requests a tier of schedule s needs made before it starts: n when
// n > 0; for an arrival process bounded by within (n = 0), the arrivals it is expected to plan,
// rounded up. It is 0 when the count is not the set's to bound: a replay without n (its trace's
// own requests), or an arrival process whose expected count [Spec.CheckSize] refuses (rate inf,
// or more than MaxArrivals). A caller checks a request set of this size before making it.
func SetSize(s Schedule, n int, within time.Duration) int {
	if sp, ok := s.(Spec); ok && n == 0 && within > 0 {
		exp := sp.Expected(within)
		if math.IsInf(exp, 1) || exp > MaxArrivals {
			return 0 // refused with the schedule
		}
		return int(math.Ceil(exp))
	}
	return max(n, 0)
}
