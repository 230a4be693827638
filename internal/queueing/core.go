package queueing

import "time"

// fifo is a first-in first-out queue on a slice; pops are amortised O(1).
type fifo[T any] struct {
	buf  []T
	head int
}

func (f *fifo[T]) len() int    { return len(f.buf) - f.head }
func (f *fifo[T]) push(x T)    { f.buf = append(f.buf, x) }
func (f *fifo[T]) front() T    { return f.buf[f.head] }
func (f *fifo[T]) empty() bool { return f.head == len(f.buf) }

func (f *fifo[T]) pop() T {
	x := f.buf[f.head]
	var zero T
	f.buf[f.head] = zero
	f.head++
	switch {
	case f.head == len(f.buf):
		f.buf, f.head = f.buf[:0], 0
	case f.head >= 64 && 2*f.head >= len(f.buf):
		n := copy(f.buf, f.buf[f.head:])
		clear(f.buf[n:])
		f.buf, f.head = f.buf[:n], 0
	}
	return x
}

// inService is a request holding a slot and the end of its service.
type inService[T any] struct {
	item T
	end  time.Duration
}

// Outcome is what happens to a request when it arrives.
type Outcome int

const (
	Started  Outcome = iota // a slot was free: service starts at the arrival
	Queued                  // all slots busy: it waits
	Rejected                // the waiting room was full
)

// Core is the state of the M/D/c FIFO queue, shared by the embedded
// deployment's HTTP queue and the virtual-time model (Simulate) so that both
// follow one rule. Times are offsets from a common origin. The caller processes
// events in time order; at equal times, services end before requests
// arrive (a request arriving exactly when a slot frees behind an empty
// waiting room starts at once, and one arriving when the freed slot goes to
// the head of the waiting room counts that head as in service).
//
// Service is deterministic, so requests end in the order they started:
// the in-service set is a FIFO too, and its front ends first.
type Core[T any] struct {
	servers int
	limit   int // 0: unlimited waiting room
	service time.Duration
	busy    fifo[inService[T]]
	wait    fifo[T]
	nWait   int // requests waiting; wait may also hold some that left
	// left reports the waiting requests that left (see Abandon); nil when
	// none ever do.
	left func(T) bool
}

// NewCore is the empty queue of cfg (which the caller validated); left, when
// not nil, reports the waiting requests that left (see Abandon).
func NewCore[T any](cfg Config, left func(T) bool) *Core[T] {
	return &Core[T]{servers: cfg.Servers, limit: cfg.QueueLimit, service: cfg.Service, left: left}
}

// Running is the number of requests in service.
func (c *Core[T]) Running() int { return c.busy.len() }

// Waiting is the number of requests waiting for a slot.
func (c *Core[T]) Waiting() int { return c.nWait }

// NextEnd is the end of the earliest service, if any request is in service.
func (c *Core[T]) NextEnd() (time.Duration, bool) {
	if c.busy.empty() {
		return 0, false
	}
	return c.busy.front().end, true
}

// Arrive admits x at time t (no earlier than every event processed so far).
func (c *Core[T]) Arrive(t time.Duration, x T) Outcome {
	if c.busy.len() < c.servers {
		// A free slot implies that nobody waits (release hands freed slots
		// to the waiting room first).
		c.busy.push(inService[T]{x, t + c.service})
		return Started
	}
	if c.limit > 0 && c.nWait >= c.limit {
		return Rejected
	}
	c.wait.push(x)
	c.nWait++
	return Queued
}

// Release ends the earliest service (the caller checked NextEnd) and hands
// the slot to the head of the waiting room, whose service starts at that
// end time.
func (c *Core[T]) Release() (done T, end time.Duration, next T, started bool) {
	s := c.busy.pop()
	for c.nWait > 0 {
		x := c.wait.pop()
		if c.left != nil && c.left(x) {
			continue
		}
		c.nWait--
		c.busy.push(inService[T]{x, s.end + c.service})
		return s.item, s.end, x, true
	}
	return s.item, s.end, next, false
}

// Abandon records that one waiting request left the waiting room; the
// caller marks it so that left reports it, and Release skips it.
func (c *Core[T]) Abandon() { c.nWait-- }
