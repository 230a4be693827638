package sim

import "time"

// Objectives are the latency objectives an embedded deployment is held to when a sweep of it
// gives none, in its own terms (zero: no objective on that metric): the command that runs the
// sweep turns them into its judging objectives.
type Objectives struct {
	TTFT, TPOT time.Duration
}

// Objectives are the queue's: a first token within the service time plus the time to the first
// token.
func (q QueueConfig) Objectives() Objectives {
	return Objectives{TTFT: q.Service + q.FirstToken}
}
