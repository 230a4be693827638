package sim

import (
	"fmt"
	"time"
)

// Objectives are the latency objectives the queue's deployment is held to when a sweep of it
// gives none, in --goodput syntax: a first token within the service time plus the time to the
// first token.
func (q QueueConfig) Objectives() string {
	return fmt.Sprintf("ttft:%g", float64(q.Service+q.FirstToken)/float64(time.Millisecond))
}
