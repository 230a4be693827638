package arrival

import (
	"fmt"
	"time"
)

// Schedule is where a tier's arrivals come from: an arrival process ([Spec]) or a recorded one
// ([Replay]). A tier is either count-bound (n requests) or duration-bound (the arrivals planned
// before d, at most max).
type Schedule interface {
	// Arrivals returns the planned offsets from T0, non-decreasing: the first n when n > 0, else
	// those before within (> 0), at most max of them.
	Arrivals(n int, within time.Duration, seed int64, max int) ([]time.Duration, error)
	// String identifies the schedule in result files.
	String() string
}

var (
	_ Schedule = Spec{}
	_ Schedule = Replay{}
)

// Arrivals implements [Schedule] with [Spec.Offsets] (n > 0) or [Spec.OffsetsWithin].
func (s Spec) Arrivals(n int, within time.Duration, seed int64, max int) ([]time.Duration, error) {
	if n > 0 {
		return s.Offsets(n, seed)
	}
	return s.OffsetsWithin(within, seed, max)
}

// Replay is a recorded schedule, such as the arrival times of a trace: it is the same whatever
// the seed.
type Replay struct {
	Offsets []time.Duration // validated with FromOffsets
	Source  string          // where the offsets come from, e.g. a trace file
}

// NewReplay validates offsets (see [FromOffsets]) into a Replay.
func NewReplay(offsets []time.Duration, source string) (Replay, error) {
	off, err := FromOffsets(offsets)
	if err != nil {
		return Replay{}, err
	}
	return Replay{Offsets: off, Source: source}, nil
}

// Arrivals implements [Schedule]: the first n offsets (all when n is 0 or above their number),
// or those before within, at most max. The seed is not used.
func (r Replay) Arrivals(n int, within time.Duration, _ int64, max int) ([]time.Duration, error) {
	off := r.Offsets
	switch {
	case n > 0:
		off = off[:min(n, len(off))]
	case within > 0:
		k := 0
		for k < len(off) && off[k] < within && (max <= 0 || k < max) {
			k++
		}
		off = off[:k]
	}
	if len(off) == 0 {
		return nil, fmt.Errorf("arrival: the replay of %s plans no arrival", r.Source)
	}
	return off, nil
}

// String is "trace(SOURCE)".
func (r Replay) String() string { return "trace(" + r.Source + ")" }
