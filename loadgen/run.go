package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// Tier is one tier of load: a precomputed schedule and the requests to send on it.
type Tier struct {
	Index    int                 // tier number, copied into every record
	Shard    int                 // shard index in a sharded run (0 otherwise), copied into every record
	Offsets  []time.Duration     // planned arrivals from T0, non-decreasing (from package arrival)
	Requests []workloads.Request // Requests[i] is sent at Offsets[i]; its ID becomes the record's id
	// When Requests are the turns of sessions (workloads.Sessions), Offsets[k] is the start of
	// the k-th session instead: its first turn is planned then, and each later turn when the
	// turn before it ended plus the turn's think time, sent with the session's history (every
	// earlier turn's messages and the assistant's actual replies) before its own messages. A
	// turn that failed is left out of the history; the session goes on. The concurrency gate
	// admits turns, not sessions, and a session thinking holds no slot.
	MaxConcurrency int // 0 = no cap
	// Limiter is an optional safety ceiling (a token bucket: it starts full and allows bursts).
	// Waiting on it delays dispatch, so it shows as schedule lag, and Result.RateLimited says so.
	Limiter *rate.Limiter
	// Users, when > 0, makes the tier a closed loop of that many users: Offsets (one per user)
	// are the users' starts, and Requests a pool they draw from in order. Each user sends the
	// next request of the pool when its previous response ended plus Think, until the pool is
	// empty or the tier stops; a request nobody drew is not part of the tier (no record), nor
	// is one a user would have sent at or after StopAfter. MaxConcurrency must then be 0.
	Users int
	Think time.Duration
	// StopAfter, when > 0, stops starting requests planned at or after this offset: they are
	// recorded as canceled and never sent. It is the tier's first deadline.
	StopAfter time.Duration
	// Stop, when closed, ends the arrival phase early: requests not yet dispatched are not part
	// of the tier at all (no record; Result.Planned counts those dispatched), while requests
	// already dispatched run on under Grace. A sweep closes it once a tier's verdict is decided.
	Stop <-chan struct{}
	// Grace is the second deadline: how long requests still running (or waiting for a slot) may
	// continue after the tier stopped dispatching — counted from T0+StopAfter when StopAfter
	// stopped it, else from the last dispatch — before they are canceled. 0 = wait until they
	// finish or time out.
	Grace time.Duration
	// Spin, when > 0, makes the dispatcher wake up this long before each deadline and yield in a
	// loop until it passes, instead of relying on the timer alone. Go's timers wake up to about
	// 1 ms late on Linux (the netpoller sleeps in whole milliseconds): measured here, idle, at
	// 200 req/s the schedule lag is ~0.55 ms median and ~1.1 ms p99 with Spin 0, and well under
	// 10 µs median with Spin 1 ms. The price is CPU: up to Spin per request (a whole core once
	// requests are closer than Spin), which a small shared machine may not have to spare.
	Spin time.Duration
	// Retries is how many times a request may be re-sent after an attempt that failed before it
	// received any output, for one of two reasons only: the server answered HTTP 429 or 5xx, or
	// the connection failed (refused, reset or closed before the answer, or after the answer's
	// headers but before the first output-bearing message). Other 4xx answers, timeouts,
	// malformed or error-carrying streams and anything that failed after output are never
	// re-sent. 0, the default, never re-sends: a retry adds load the schedule did not plan.
	// A re-send waits for the answer's Retry-After when it has one, up to MaxRetryWait (no
	// other backoff), each attempt has its own --timeout, and none starts once the run is
	// stopped. The record keeps the last attempt's timings from Sent on (so TTFT and E2EL are
	// the last attempt's; e2el_including_client_queue, from the planned arrival, includes every
	// attempt and wait), counts Attempts, and its Error names the earlier attempts' errors.
	// Retries raise the load the server sees above the schedule's; waits move it later.
	Retries int
}

// Validate returns every problem of the tier at once.
func (t Tier) Validate() []error {
	var errs []error
	if t.Users < 0 || t.Think < 0 {
		errs = append(errs, fmt.Errorf("tier %d: %d users, think time %v: both must be >= 0", t.Index, t.Users, t.Think))
	}
	if t.Users > 0 {
		switch {
		case len(t.Offsets) != t.Users:
			errs = append(errs, fmt.Errorf("tier %d: %d offsets for %d users", t.Index, len(t.Offsets), t.Users))
		case workloads.Sessions(t.Requests) != nil:
			errs = append(errs, fmt.Errorf("tier %d: a closed loop of users sends independent requests, not sessions", t.Index))
		case t.MaxConcurrency != 0:
			errs = append(errs, fmt.Errorf("tier %d: a closed loop of %d users is its own concurrency cap: no --max-concurrency", t.Index, t.Users))
		}
	} else if err := workloads.ValidateSessions(t.Requests); err != nil {
		errs = append(errs, fmt.Errorf("tier %d: %w", t.Index, err))
	} else if sessions := workloads.Sessions(t.Requests); sessions != nil && len(t.Offsets) != len(sessions) {
		errs = append(errs, fmt.Errorf("tier %d: %d offsets for %d sessions", t.Index, len(t.Offsets), len(sessions)))
	} else if sessions == nil && len(t.Offsets) != len(t.Requests) {
		errs = append(errs, fmt.Errorf("tier %d: %d offsets for %d requests", t.Index, len(t.Offsets), len(t.Requests)))
	}
	for i, o := range t.Offsets {
		if o < 0 || (i > 0 && o < t.Offsets[i-1]) {
			errs = append(errs, fmt.Errorf("tier %d: offset %d (%v) is negative or earlier than the one before: offsets must be sorted", t.Index, i, o))
			break
		}
	}
	if t.MaxConcurrency < 0 {
		errs = append(errs, field.Errorf(FieldMaxConcurrency, "must be >= 0, got %d", t.MaxConcurrency))
	}
	if t.StopAfter < 0 || t.Grace < 0 || t.Spin < 0 {
		errs = append(errs, fmt.Errorf("tier %d: StopAfter, Grace and Spin must be >= 0", t.Index))
	}
	if t.Retries < 0 {
		errs = append(errs, field.Errorf(FieldRetries, "must be >= 0, got %d", t.Retries))
	}
	if l := t.Limiter; l != nil && l.Limit() != rate.Inf && (l.Limit() <= 0 || l.Burst() < 1) {
		errs = append(errs, fmt.Errorf("tier %d: the rate limiter (limit %v, burst %d) would never let a request through", t.Index, l.Limit(), l.Burst()))
	}
	return errs
}

// Sink receives the records of a tier, from a single goroutine. Write must copy what it keeps:
// once it returns, Run drops its own reference to the record's ITL gaps, so that a sink that
// keeps no records (a streaming summary) lets a long run hold memory flat.
type Sink interface {
	Write(*records.Record) error
}

var _ Sink = (*records.Writer)(nil)

// Progress is updated while a tier runs, for a progress display that polls it.
type Progress struct {
	Planned    atomic.Int64 // requests in the tier
	Dispatched atomic.Int64 // released by the dispatcher
	InFlight   atomic.Int64 // admitted by the gate and not finished
	Done       atomic.Int64 // dispatched requests that finished, whatever their outcome
	Errors     atomic.Int64 // finished requests whose outcome is not ok
	// Status, when set (before the display starts, never while it runs), says what the display
	// shows after the counters, given the time since the tier started: the caller's own words
	// (a sweep's: how long the tier may still run, the budget used, the time left at most).
	Status func(elapsed time.Duration) string
}

// ProgressLine returns a progress display for a terminal: for each tier (label, p) it redraws
// "label done/planned done, in flight, failed, seconds" and p's Status on one line of w four
// times a second, until the returned stop function is called. A line wider than width runes
// (0: no limit) is cut there, so that it never wraps and every redraw overwrites the last.
func ProgressLine(w io.Writer, width int) func(label string, p *Progress) (stop func()) {
	return func(label string, p *Progress) func() {
		done := make(chan struct{})
		var wg sync.WaitGroup
		start := time.Now()
		draw := func() {
			elapsed := time.Since(start)
			line := fmt.Sprintf("%s  %d/%d done, %d in flight, %d failed, %.1fs",
				label, p.Done.Load(), p.Planned.Load(), p.InFlight.Load(), p.Errors.Load(), elapsed.Seconds())
			if p.Status != nil {
				if st := p.Status(elapsed); st != "" {
					line += " · " + st
				}
			}
			if r := []rune(line); width > 0 && len(r) > width-1 {
				line = string(r[:width-2]) + "…"
			}
			fmt.Fprintf(w, "\r%s\x1b[K", line) // the rest of the line erased: a shorter line leaves nothing behind
		}
		wg.Go(func() {
			t := time.NewTicker(250 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					draw()
				case <-done:
					draw()
					fmt.Fprintln(w)
					return
				}
			}
		})
		return func() { close(done); wg.Wait() }
	}
}

// Result sums up a tier run. The records are the detail.
type Result struct {
	T0         time.Time // the schedule's zero (with its monotonic reading)
	StartWall  time.Time // T0 as wall-clock time, for the records header
	Planned    int       // requests of the tier: len(Requests), or those dispatched before Stop closed
	Dispatched int       // arrivals of Offsets dispatched (sessions started, for sessions)
	// StoppedEarly: Stop closed before the schedule ran out, at ArrivalsEnd after T0.
	StoppedEarly bool
	// ArrivalsEnd is when the arrival phase ended, from T0: when Stop closed or StopAfter passed,
	// else the last request's dispatch.
	ArrivalsEnd time.Duration
	Canceled    int    // records with outcome canceled, dispatched or not
	RateLimited bool   // the limiter delayed at least one dispatch: the load was not the schedule's
	Stopped     string // why some requests did not run to their end ("" when none was stopped)
	SinkErr     error  // the first error of the sink; dispatching stopped there
}

// Run sends one tier: it dispatches every request at T0+Offsets[i], admits them through the
// max-concurrency gate in planned order, streams them with c, and hands exactly one record per
// planned request to sink. Cancelling ctx stops dispatching and cancels requests in flight; their
// records (with whatever they received) are still written before Run returns. The error is only
// for an invalid tier; everything that happened during the run is in the records and the Result.
func Run(ctx context.Context, c *Client, tier Tier, sink Sink, progress *Progress) (Result, error) {
	if c == nil || sink == nil {
		return Result{}, errors.New("run: a client and a sink are required")
	}
	if errs := tier.Validate(); len(errs) > 0 {
		return Result{}, fmt.Errorf("run: %w", errors.Join(errs...))
	}
	if progress == nil {
		progress = new(Progress)
	}
	n := len(tier.Offsets)
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	r := &run{
		c: c, tier: &tier, ctx: runCtx, done: runCtx.Done(), progress: progress,
		out: make(chan *records.Record, len(tier.Requests)),
	}
	r.initSessions()
	progress.Planned.Store(int64(len(tier.Requests)))

	writerDone := make(chan struct{})
	go r.writeRecords(sink, cancelRun, writerDone)

	r.t0 = time.Now()
	res := Result{T0: r.t0, StartWall: r.t0.Round(0), Planned: len(tier.Requests)}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	next, stoppedByTime := r.dispatch(timer, &res)
	res.Dispatched = next
	phaseEnd := time.Since(r.t0)
	switch {
	case next < n && r.stoppedEarly:
		res.StoppedEarly = true
	case next < n:
		msg := "not started: " + causeText(runCtx)
		if stoppedByTime {
			phaseEnd = tier.StopAfter
			msg = fmt.Sprintf("not started: planned at or after the tier's stop time (%v)", tier.StopAfter)
			res.Stopped = msg
		}
		r.recordNotStarted(next, msg)
	}
	res.ArrivalsEnd = phaseEnd
	r.waitStragglers(timer, phaseEnd, cancelRun)
	r.recordStillQueued()
	close(r.out)
	<-writerDone
	if r.turnStopped.Load() {
		res.StoppedEarly = true // Stop closed while sessions (or users) were thinking
	}
	if tier.Users > 0 {
		res.Planned = int(r.made.Load()) // a closed loop planned what its users sent
		progress.Planned.Store(int64(res.Planned))
		// Its arrival phase ended with the last request a user sent, or at StopAfter when
		// that stopped them.
		res.ArrivalsEnd = time.Duration(r.lastPlanned.Load())
		if r.capped.Load() {
			res.ArrivalsEnd, res.Stopped = tier.StopAfter, fmt.Sprintf("the users stopped at the tier's stop time (%v)", tier.StopAfter)
		}
	}
	if res.StoppedEarly {
		// Requests never dispatched (later sessions, later turns) are not part of the tier.
		res.Planned = int(r.made.Load())
		progress.Planned.Store(int64(res.Planned))
	}

	res.SinkErr, res.Canceled = r.sinkErr, r.canceled
	if runCtx.Err() != nil && res.Stopped == "" && (res.Canceled > 0 || next < n) {
		res.Stopped = causeText(runCtx)
	}
	return res, nil
}

// writeRecords hands every record to the sink, from this one goroutine. After a sink error the
// run is stopped (nothing more could be recorded) and the remaining records are dropped.
func (r *run) writeRecords(sink Sink, cancelRun context.CancelCauseFunc, done chan<- struct{}) {
	defer close(done)
	for rec := range r.out {
		if rec.Outcome == records.Canceled {
			r.canceled++
		}
		if r.sinkErr != nil {
			continue
		}
		if err := sink.Write(rec); err != nil {
			r.sinkErr = err
			cancelRun(&stopCause{msg: "canceled: writing records failed: " + err.Error()})
		}
		rec.ITL = nil // the sink has what it keeps; from here only the sink may hold the record
	}
}

// recordNotStarted records the arrivals from index from on (requests, or every turn of
// sessions), never dispatched: only Planned is set. A closed loop's users that never started
// planned nothing.
func (r *run) recordNotStarted(from int, msg string) {
	t := r.tier
	if t.Users > 0 {
		return
	}
	if r.sessions != nil {
		for k := from; k < len(r.sessions); k++ {
			r.turnsNotStarted(r.sessions[k][0], t.Offsets[k], msg)
		}
		return
	}
	for i := from; i < len(t.Offsets); i++ {
		rec := r.newRecord(i, t.Offsets[i])
		rec.Outcome, rec.Error = records.Canceled, msg
		r.out <- rec
	}
}

// newRecord makes the record of request i, planned at planned.
func (r *run) newRecord(i int, planned time.Duration) *records.Record {
	t := r.tier
	rec := new(records.Record)
	*rec = records.NewRecord(t.Index, t.Requests[i].ID, planned)
	rec.Shard = t.Shard
	rec.Session, rec.Turn, rec.SessionID = t.Requests[i].Session, t.Requests[i].Turn, t.Requests[i].SessionID
	r.made.Add(1)
	return rec
}

// waitStragglers waits for every dispatched request to end; with a Grace, it cancels those still
// running (or waiting for a slot) at phaseEnd+Grace. This is the tier's second deadline.
func (r *run) waitStragglers(timer *time.Timer, phaseEnd time.Duration, cancelRun context.CancelCauseFunc) {
	allDone := make(chan struct{})
	go func() { r.wg.Wait(); close(allDone) }()
	if g := r.tier.Grace; g > 0 {
		timer.Reset(max(phaseEnd+g-time.Since(r.t0), 0))
		select {
		case <-allDone:
		case <-r.done:
		case <-timer.C:
			cancelRun(&stopCause{msg: fmt.Sprintf("canceled: the tier's drain deadline passed (grace %v after dispatching stopped)", g), drain: g})
		}
		timer.Stop()
	}
	<-allDone
}

// recordStillQueued records the dispatched requests still waiting for a slot when the run was
// stopped. It runs after every worker has exited.
func (r *run) recordStillQueued() {
	for _, q := range r.queue[r.head:] {
		rec := q.rec
		rec.Outcome, rec.Error = records.Canceled, "canceled while waiting for a concurrency slot: "+causeText(r.ctx)
		r.progress.Done.Add(1)
		r.progress.Errors.Add(1)
		r.out <- rec
	}
}

// causeText says why a run context ended.
func causeText(ctx context.Context) string {
	cause := context.Cause(ctx)
	var sc *stopCause
	if errors.As(cause, &sc) {
		return sc.msg
	}
	if cause == nil {
		return "the run was stopped"
	}
	return "canceled: the run was stopped (" + cause.Error() + ")"
}

// run is the state of one Run call.
type run struct {
	c        *Client
	tier     *Tier
	ctx      context.Context
	done     <-chan struct{}
	t0       time.Time
	progress *Progress
	// stoppedEarly: the dispatcher saw Tier.Stop closed.
	stoppedEarly bool
	// Records are made at dispatch and live until the writer has handed them to the sink: memory
	// follows the requests in flight, not the length of the tier.
	out      chan *records.Record // one slot per planned request: a send never blocks
	sinkErr  error                // the sink's first error; read after the writer is done
	canceled int                  // records written as canceled; read after the writer is done
	wg       sync.WaitGroup

	made        atomic.Int64 // records made
	pool        atomic.Int64 // a closed loop's next request to draw
	lastPlanned atomic.Int64 // a closed loop's latest planned request (nanoseconds from T0)
	capped      atomic.Bool  // a closed loop's user stopped at StopAfter
	turnStopped atomic.Bool  // a session's next turn found Tier.Stop closed

	// Sessions (nil for independent requests): each session's range of Requests, the session
	// of each request, and each session's history so far. A session's turns run one after
	// another, so its history is only ever touched by one goroutine at a time.
	sessions  [][2]int
	sessionOf []int32
	history   []sessionHistory

	// The gate: running requests and the FIFO of dispatched requests waiting for a slot.
	mu      sync.Mutex
	running int
	queue   []queued
	head    int
}

// queued is a dispatched request waiting for a concurrency slot.
type queued struct {
	i   int
	rec *records.Record
}

func (r *run) stopped() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// dispatch releases requests at their planned offsets. It returns the index of the first request
// it did not dispatch (n when all were), and whether StopAfter was the reason.
func (r *run) dispatch(timer *time.Timer, res *Result) (next int, stoppedByTime bool) {
	t := r.tier
	for k, planned := range t.Offsets {
		if t.StopAfter > 0 && planned >= t.StopAfter {
			return k, true
		}
		if !r.sleepUntil(timer, planned) {
			return k, false
		}
		if t.Limiter != nil {
			delayed, ok := r.waitLimiter(timer)
			res.RateLimited = res.RateLimited || delayed
			if !ok {
				return k, false
			}
		}
		i := k
		switch {
		case r.sessions != nil:
			i = r.sessions[k][0] // the session's first turn
		case t.Users > 0:
			if i = r.take(); i < 0 {
				return len(t.Offsets), false // the pool is empty: the remaining users have nothing to send
			}
		}
		r.dispatchAt(i, planned)
	}
	return len(t.Offsets), false
}

// sleepUntil waits for the absolute deadline T0+at on the one reused timer (and, with Spin, yields
// in a loop for the last stretch). It reports false when the run was stopped first.
func (r *run) sleepUntil(timer *time.Timer, at time.Duration) bool {
	spin := r.tier.Spin
	for {
		select {
		case <-r.tier.Stop:
			r.stoppedEarly = true
			return false
		default:
		}
		d := at - time.Since(r.t0)
		if d <= 0 {
			return !r.stopped()
		}
		if d <= spin {
			for time.Since(r.t0) < at {
				if r.stopped() {
					return false
				}
				runtime.Gosched()
			}
			return true
		}
		timer.Reset(d - spin)
		select {
		case <-timer.C:
		case <-r.done:
			timer.Stop()
			return false
		case <-r.tier.Stop:
			timer.Stop()
			r.stoppedEarly = true
			return false
		}
	}
}

// waitLimiter takes a token from the tier's limiter, waiting for it on the dispatcher's timer.
func (r *run) waitLimiter(timer *time.Timer) (delayed, ok bool) {
	now := time.Now()
	rsv := r.tier.Limiter.ReserveN(now, 1)
	if !rsv.OK() {
		return false, false // excluded by Tier.Validate
	}
	d := rsv.DelayFrom(now)
	if d <= 0 {
		return false, true
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return true, true
	case <-r.done:
		timer.Stop()
		rsv.Cancel()
		return true, false
	}
}

// admit is the gate's entrance, called by the dispatcher: it never blocks. Without a free slot
// the request joins the FIFO and the next finishing request's goroutine will run it.
func (r *run) admit(i int, rec *records.Record) {
	if limit := r.tier.MaxConcurrency; limit > 0 {
		r.mu.Lock()
		if r.running >= limit {
			r.queue = append(r.queue, queued{i, rec})
			r.mu.Unlock()
			return
		}
		r.running++
		r.mu.Unlock()
	}
	rec.Slot = rec.Dispatched
	r.wg.Add(1)
	go r.worker(queued{i, rec})
}

// worker runs request q, then, with a cap, keeps its slot for the next queued request.
func (r *run) worker(q queued) {
	defer r.wg.Done()
	for q.rec != nil {
		r.one(q.i, q.rec)
		q = r.next()
	}
}

// next hands the finishing request's slot to the head of the queue (returned), or frees it
// (a zero queued).
func (r *run) next() queued {
	if r.tier.MaxConcurrency == 0 {
		return queued{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.head < len(r.queue) && !r.stopped() {
		q := r.queue[r.head]
		r.queue[r.head] = queued{} // the record is the worker's now
		r.head++
		if r.head == len(r.queue) {
			r.queue, r.head = r.queue[:0], 0
		}
		q.rec.Slot = time.Since(r.t0)
		return q
	}
	r.running--
	return queued{}
}

func (r *run) one(i int, rec *records.Record) {
	p := r.progress
	p.InFlight.Add(1)
	req := &r.tier.Requests[i]
	var k int
	if r.sessions != nil {
		k = int(r.sessionOf[i])
		req = r.history[k].turn(req)
	}
	res := r.send(rec, req)
	p.InFlight.Add(-1)
	p.Done.Add(1)
	if rec.Outcome != records.OK {
		p.Errors.Add(1)
	}
	if r.tier.Users > 0 {
		r.wg.Add(1) // before this request's worker is done: the run waits for the user's next
		go r.nextOfUser(rec.End)
	}
	if r.sessions != nil {
		if rec.Outcome == records.OK {
			r.history[k].add(&r.tier.Requests[i], res.reply, rec.OutputTokens)
		}
		if i+1 < r.sessions[k][1] {
			r.wg.Add(1) // before this turn's worker is done: the run waits for the next turn
			go r.nextTurn(i+1, rec.End)
		} else {
			r.history[k] = sessionHistory{} // the session is over: memory follows the sessions in flight
		}
	}
	r.out <- rec
}

// send runs one request into rec and, with Tier.Retries, re-sends it while the last attempt is
// retryable and the run goes on. Each attempt starts from a fresh record that keeps only what
// the run set before sending (id, tier, shard, planned, dispatched, slot, session, turn).
func (r *run) send(rec *records.Record, req *workloads.Request) doResult {
	res := r.c.do(r.ctx, r.t0, req, rec)
	if r.tier.Retries == 0 {
		return res
	}
	var earlier []string
	for len(earlier) < r.tier.Retries && retryable(rec) && !r.stopped() {
		if !r.wait(min(res.retryAfter, MaxRetryWait)) {
			break // stopped while waiting: the last attempt stands
		}
		earlier = append(earlier, rec.Error)
		prev := *rec
		*rec = records.NewRecord(prev.Tier, prev.ID, prev.Planned)
		rec.Shard, rec.Dispatched, rec.Slot = prev.Shard, prev.Dispatched, prev.Slot
		rec.Session, rec.Turn, rec.SessionID = prev.Session, prev.Turn, prev.SessionID
		res = r.c.do(r.ctx, r.t0, req, rec)
	}
	rec.Attempts = len(earlier) + 1
	if len(earlier) > 0 {
		rec.Error = withEarlierErrors(rec.Error, earlier)
	}
	return res
}

// MaxRetryWait bounds how long a re-send waits for a Retry-After: a load test cannot pause a
// request for minutes without its tier ending around it.
const MaxRetryWait = 5 * time.Second

// wait waits d, or until the run is canceled or stopped; it reports whether the whole wait
// passed with the run still going.
func (r *run) wait(d time.Duration) bool { return waitFor(r.ctx, r.done, d) && !r.stopped() }

// waitFor waits d, or until ctx is done or stop is closed (a nil stop never is); it reports
// whether ctx is still live afterwards. The re-sends of Run and of the preflight wait with it.
func waitFor(ctx context.Context, stop <-chan struct{}, d time.Duration) bool {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-stop:
		}
	}
	return ctx.Err() == nil
}

// retryable reports whether a finished attempt may be re-sent (see Tier.Retries): no output
// came, and the server answered 429 or 5xx, or the connection failed.
func retryable(rec *records.Record) bool {
	if rec.First != records.Unset || rec.Chunks > 0 {
		return false // never after output
	}
	switch rec.Outcome {
	case records.HTTPError:
		s := rec.HTTPStatus
		return s == http.StatusTooManyRequests || (s >= 500 && s <= 599)
	case records.StreamError:
		if strings.HasPrefix(rec.Error, records.ClientResourcesPrefix) {
			return false // the client's own limit: a re-send would only add to it
		}
		if rec.HTTPStatus == 0 {
			return true // no HTTP answer at all: refused, reset or closed before the headers
		}
		// After the headers: only a connection that broke or closed, not a malformed or
		// error-carrying event, an over-long line, or a JSON answer to a streaming request.
		// These prefixes are the client's own texts (stream.go); TestRetryRules pins them.
		return rec.HTTPStatus/100 == 2 &&
			(strings.HasPrefix(rec.Error, brokenConnPrefix) || strings.HasPrefix(rec.Error, noDonePrefix))
	}
	return false
}

const (
	brokenConnPrefix = "stream broken: connection " // a read error: reset, or closed mid-response
	noDonePrefix     = "stream ended without data: [DONE]"
)

// Bounds of the earlier attempts' errors kept in a retried request's Error.
const (
	maxEarlierShown = 3  // earlier attempts listed; the rest are counted
	maxEarlierLen   = 80 // bytes of each listed error
)

// withEarlierErrors appends a brief list of the earlier attempts' errors to the last attempt's
// error (empty when it succeeded), keeping the whole within maxErrorLen.
func withEarlierErrors(last string, earlier []string) string {
	var b strings.Builder
	b.WriteString("earlier attempts: ")
	for k, e := range earlier {
		if k == maxEarlierShown {
			fmt.Fprintf(&b, "; and %d more", len(earlier)-k)
			break
		}
		if k > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "#%d %s", k+1, truncate(e, maxEarlierLen))
	}
	summary := b.String()
	if last == "" {
		return summary
	}
	return truncate(last, maxErrorLen-len(summary)-len(" ()")) + " (" + summary + ")"
}
