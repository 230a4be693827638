package loadgen

import (
	"time"
)

// take draws the next request of a closed loop's pool: its index, or -1 when the pool is empty.
func (r *run) take() int {
	i := r.pool.Add(1) - 1
	if i >= int64(len(r.tier.Requests)) {
		return -1
	}
	return int(i)
}

// nextOfUser sends a closed-loop user's next request once its previous response, which ended at
// prevEnd, is followed by the tier's think time; the user retires when the pool is empty or the
// tier stops. Called as a goroutine counted in r.wg.
func (r *run) nextOfUser(prevEnd time.Duration) {
	defer r.wg.Done()
	t := r.tier
	planned := r.followUp(prevEnd, t.Think)
	if t.StopAfter > 0 && planned >= t.StopAfter {
		r.capped.Store(true)
		return // the tier's time is up: what the user would send next is not part of it
	}
	if r.waitFollowUp(planned) != followUpDue {
		return // the user retires with the tier or the run
	}
	i := r.take()
	if i < 0 {
		return
	}
	for {
		last := r.lastPlanned.Load()
		if int64(planned) <= last || r.lastPlanned.CompareAndSwap(last, int64(planned)) {
			break
		}
	}
	r.dispatchAt(i, planned)
}
