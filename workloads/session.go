package workloads

import (
	"fmt"
	"math"
	"time"
)

// Think is the request's think time (ThinkMS) as a duration.
func (r *Request) Think() time.Duration {
	return time.Duration(math.Round(r.ThinkMS * 1e6))
}

// Sessions returns the requests' sessions as index ranges [start, end) into reqs, in order, or
// nil when the requests are not turns of sessions. It assumes ValidateSessions holds.
func Sessions(reqs []Request) [][2]int {
	if len(reqs) == 0 || reqs[0].Session == 0 {
		return nil
	}
	var out [][2]int
	start := 0
	for i := 1; i <= len(reqs); i++ {
		if i == len(reqs) || reqs[i].Turn == 1 {
			out = append(out, [2]int{start, i})
			start = i
		}
	}
	return out
}

// ValidateSessions checks the session structure of reqs: either no request is a turn, or every
// one is; each session's turns are together, numbered 1, 2, … in order; a first turn has no
// think time and a later one a finite, non-negative one; sessions are not repeated.
func ValidateSessions(reqs []Request) error {
	if len(reqs) == 0 || (reqs[0].Session == 0 && reqs[0].Turn == 0) {
		for i := range reqs {
			if reqs[i].Session != 0 || reqs[i].Turn != 0 {
				return fmt.Errorf("request %d is a turn of session %d but request 0 is not a turn: a set is all sessions or none", i, reqs[i].Session)
			}
		}
		return nil
	}
	seen := make(map[int]bool)
	for i := range reqs {
		r := &reqs[i]
		switch {
		case r.Session < 1 || r.Turn < 1:
			return fmt.Errorf("request %d: session %d, turn %d: both must be >= 1 in a set of sessions", i, r.Session, r.Turn)
		case r.Turn == 1 && seen[r.Session]:
			return fmt.Errorf("request %d: session %d starts again: a session's turns must be together", i, r.Session)
		case r.Turn > 1 && (i == 0 || reqs[i-1].Session != r.Session || reqs[i-1].Turn != r.Turn-1):
			return fmt.Errorf("request %d: turn %d of session %d does not follow turn %d of that session", i, r.Turn, r.Session, r.Turn-1)
		case r.Turn == 1 && r.ThinkMS != 0:
			return fmt.Errorf("request %d: turn 1 of session %d has a think time: only later turns wait for the one before", i, r.Session)
		case !(r.ThinkMS >= 0) || math.IsInf(r.ThinkMS, 1) || r.ThinkMS > maxThinkMS:
			return fmt.Errorf("request %d: think time %v ms must be in [0, %g] ms", i, r.ThinkMS, float64(maxThinkMS))
		}
		seen[r.Session] = true
	}
	return nil
}

// maxThinkMS bounds a think time: one day.
const maxThinkMS = 24 * 3600 * 1000
