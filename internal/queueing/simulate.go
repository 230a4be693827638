package queueing

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// Config is an M/D/c FIFO queue: Servers slots, every service lasting Service, at most
// QueueLimit requests waiting (0: an unlimited waiting room).
type Config struct {
	Servers    int
	Service    time.Duration
	QueueLimit int
}

// Validate says what is wrong with c: at least one slot, a positive service time, a limit that
// is not negative.
func (c Config) Validate() error {
	var errs []error
	if c.Servers < 1 {
		errs = append(errs, fmt.Errorf("servers %d, must be at least 1", c.Servers))
	}
	if c.Service <= 0 {
		errs = append(errs, fmt.Errorf("service %v, must be positive", c.Service))
	}
	if c.QueueLimit < 0 {
		errs = append(errs, fmt.Errorf("queue limit %d, must not be negative (0: unlimited)", c.QueueLimit))
	}
	return errors.Join(errs...)
}

// Result is the outcome of one request of Simulate, in offsets from T0. A served request has
// Start (when a slot took it) and End (Start + Service); a rejected one (the waiting room was
// full) has End = Arrival and Rejected.
type Result struct {
	Index               int // index in the arrivals
	Arrival, Start, End time.Duration
	Rejected            bool
}

// Wait is the time the request spent waiting for a slot (0 for a rejected one).
func (r Result) Wait() time.Duration {
	if r.Rejected {
		return 0
	}
	return r.Start - r.Arrival
}

// Simulate runs the queue of cfg on a virtual clock for requests arriving at the given offsets
// from T0 (non-decreasing), with Core's rule: FIFO starts, cfg.Servers slots, a request that
// finds cfg.QueueLimit requests waiting rejected at its arrival, and, at equal times, ends of
// service before arrivals.
//
// emit receives each request's result when its outcome is known: at its end of service, or at
// its arrival when rejected; results come in non-decreasing order of that time (results of one
// time in arrival order). When emit returns true the run stops admitting: arrivals later than
// the time of the result just emitted are not part of the run and are never emitted, while the
// requests that arrived by then (waiting ones included) run to completion and are all
// emitted, whatever emit returns from then on. This is how a sweep ends a tier once its
// verdict is known.
//
// It returns an error, before emitting anything, when cfg is invalid or the arrivals decrease.
// It takes O(1) amortised time per request.
func Simulate(cfg Config, arrivals []time.Duration, emit func(Result) bool) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	for i := 1; i < len(arrivals); i++ {
		if arrivals[i] < arrivals[i-1] {
			return fmt.Errorf("queue: arrivals must not decrease: arrival %d at %v is before arrival %d at %v", i, arrivals[i], i-1, arrivals[i-1])
		}
	}
	core := NewCore[int](cfg, nil)
	n := len(arrivals) // arrivals[:n] are part of the run
	stopped := false
	stopAt := func(t time.Duration) {
		stopped = true
		// Arrivals are sorted: keep those at or before t.
		n = sort.Search(n, func(j int) bool { return arrivals[j] > t })
	}
	for i := 0; ; {
		end, busy := core.NextEnd()
		if i < n && (!busy || arrivals[i] < end) {
			t := arrivals[i]
			if core.Arrive(t, i) == Rejected {
				if emit(Result{Index: i, Arrival: t, End: t, Rejected: true}) && !stopped {
					stopAt(t)
				}
			}
			i++
			continue
		}
		if !busy {
			return nil
		}
		done, end, _, _ := core.Release()
		if emit(Result{Index: done, Arrival: arrivals[done], Start: end - cfg.Service, End: end}) && !stopped {
			stopAt(end)
		}
	}
}
