package sim

import (
	"sync"
	"sync/atomic"
	"time"
)

// Sequence states, packed with the generated-token count into
// sequence.progress so the handler reads both in one atomic load.
const (
	stateRunning = 0
	stateDone    = 1
	stateFailed  = 2
	stateBits    = 2
)

// maxCatchUp bounds how far behind its absolute step schedule the engine
// may fall before it restarts the schedule from now (a schedule reset).
// Within it, late steps are caught up: tokens arrive late (and, when the
// machine is overloaded, handlers write several chunks per flush) but the
// step clock, and so the modelled throughput, keeps its rate.
const maxCatchUp = 250 * time.Millisecond

// sequence is one request inside the engine.
type sequence struct {
	// Set before submission, then read-only.
	promptLen int
	blocks    []uint64 // chained hashes of the prompt's full blocks
	maxOut    int      // max_tokens capped by the context
	target    int      // tokens to generate (maxOut, or fewer on early stop)
	arrival   time.Time
	notify    chan struct{} // capacity 1: "progress changed"

	canceled atomic.Bool
	progress atomic.Uint64 // generated<<stateBits | state
	cached   atomic.Int64  // prompt tokens found in the prefix cache at first admission

	// Engine goroutine only.
	generated int  // tokens generated so far
	computed  int  // context tokens whose KV is computed
	prefillTo int  // context to compute before the next token
	held      int  // KV tokens allocated to this sequence
	sched     int  // tokens scheduled this step
	decoding  bool // this step decodes (else prefills)
	seen      bool // admitted before (prefix-cache counters count once)
	firstOut  bool // first token emitted
}

// yield is the number of tokens the step ending s's prefill produces: the
// first token alone, or after a recompute a whole chunk of k, so chunk
// boundaries stay at 1, 1+k, 1+2k, … (see chunkEnd).
func (s *sequence) yield(k int) int {
	if !s.firstOut {
		return 1
	}
	return min(k, s.target-s.generated)
}

// chunkEnd is the end of the chunk that starts at token from: the first
// chunk is token 0 alone, then chunks of k tokens, the last one cut at
// target.
func chunkEnd(from, k, target int) int {
	if from == 0 {
		return 1
	}
	return min(from+k, target)
}

func (s *sequence) load() (generated, state int) {
	p := s.progress.Load()
	return int(p >> stateBits), int(p & (1<<stateBits - 1))
}

func (s *sequence) publish(state int) {
	s.progress.Store(uint64(s.generated)<<stateBits | uint64(state))
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// deque is a FIFO with push-front (for preempted sequences).
type deque struct {
	buf        []*sequence
	head, size int
}

func (q *deque) len() int { return q.size }

func (q *deque) grow() {
	n := max(16, 2*len(q.buf))
	b := make([]*sequence, n)
	for i := 0; i < q.size; i++ {
		b[i] = q.buf[(q.head+i)%len(q.buf)]
	}
	q.buf, q.head = b, 0
}

func (q *deque) pushBack(s *sequence) {
	if q.size == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.size)%len(q.buf)] = s
	q.size++
}

func (q *deque) pushFront(s *sequence) {
	if q.size == len(q.buf) {
		q.grow()
	}
	q.head = (q.head - 1 + len(q.buf)) % len(q.buf)
	q.buf[q.head] = s
	q.size++
}

func (q *deque) front() *sequence { return q.buf[q.head] }

func (q *deque) popFront() *sequence {
	s := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return s
}

// filter keeps the sequences for which keep returns true, in order.
func (q *deque) filter(keep func(*sequence) bool) {
	n := q.size
	for i := 0; i < n; i++ {
		s := q.popFront()
		if keep(s) {
			q.pushBack(s)
		}
	}
}

// engine is the continuous-batching model. One goroutine (loop) owns the
// scheduling state; handlers talk to it through submit and the sequence's
// atomics.
type engine struct {
	cfg   Config
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex // guards inbox, closed
	inbox []*sequence
	spare []*sequence
	shut  bool

	// Engine goroutine only.
	running    []*sequence // in admission order
	waiting    deque
	cache      *prefixCache
	kvHeld     int
	batch      []*sequence
	finished   []*sequence // finished in the last applied step
	progressed []*sequence // gained tokens in the last applied step, not finished

	// Published for Stats and /metrics.
	nRunning, nWaiting, kvUsed atomic.Int64
	peakRunning, peakKV        atomic.Int64
	steps, genTokens           atomic.Int64
	resets                     atomic.Int64
	promptTokens, preemptions  atomic.Int64
	prefixQueries, prefixHits  atomic.Int64
	successLength, successStop atomic.Int64
	lateness                   latenessLog
	latenessHist               *histogram
	ttftHist                   *histogram
}

func newEngine(cfg Config) *engine {
	e := &engine{
		cfg:          cfg,
		wake:         make(chan struct{}, 1),
		stop:         make(chan struct{}),
		done:         make(chan struct{}),
		latenessHist: newHistogram(latenessBuckets),
		ttftHist:     newHistogram(ttftBuckets),
	}
	if cfg.PrefixCacheBlocks > 0 {
		e.cache = newPrefixCache(cfg.PrefixCacheBlocks)
	}
	return e
}

// submit hands s to the engine; false when the engine has shut down.
func (e *engine) submit(s *sequence) bool {
	e.mu.Lock()
	if e.shut {
		e.mu.Unlock()
		return false
	}
	e.inbox = append(e.inbox, s)
	e.mu.Unlock()
	e.poke()
	return true
}

// cancel asks the engine to drop s at its next step boundary.
func (e *engine) cancel(s *sequence) {
	if !s.canceled.Swap(true) {
		e.poke()
	}
}

func (e *engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// inboxLen is the number of submitted sequences the engine has not seen yet.
func (e *engine) inboxLen() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.inbox)
}

// drain moves new submissions to the waiting queue and drops canceled
// sequences everywhere.
func (e *engine) drain() {
	e.mu.Lock()
	in := e.inbox
	e.inbox = e.spare[:0]
	e.mu.Unlock()
	for i, s := range in {
		if !s.canceled.Load() {
			e.waiting.pushBack(s)
		}
		in[i] = nil
	}
	e.spare = in
	kept := e.running[:0]
	for _, s := range e.running {
		if s.canceled.Load() {
			e.kvHeld -= s.held
			s.held = 0
			continue
		}
		kept = append(kept, s)
	}
	clear(e.running[len(kept):])
	e.running = kept
	e.waiting.filter(func(s *sequence) bool { return !s.canceled.Load() })
}

// plan preempts if needed, schedules the running sequences, admits waiting
// ones, and returns the step's modelled duration.
func (e *engine) plan() time.Duration {
	k := e.cfg.TokensPerChunk
	e.batch = e.batch[:0]

	// Decode growth: each decoder needs KV for the tokens it yields now.
	need := 0
	for _, s := range e.running {
		s.decoding = s.computed >= s.prefillTo
		if s.decoding {
			s.sched = min(k, s.target-s.generated)
			if w := s.promptLen + s.generated + s.sched - s.held; w > 0 {
				need += w
			}
		}
	}
	e.preemptFor(need)
	budget := e.scheduleRunning(e.cfg.MaxBatchedTokens)
	e.admit(budget)
	d := e.stepTime()

	n := int64(len(e.running))
	if n > e.peakRunning.Load() {
		e.peakRunning.Store(n)
	}
	if kv := int64(e.kvHeld); kv > e.peakKV.Load() {
		e.peakKV.Store(kv)
	}
	return d
}

// preemptFor preempts the newest running sequences (recompute) until the decoders' growth need
// fits the KV left, or one sequence is left: its KV is freed and it goes back to the front of
// the queue; tokens already streamed stay.
func (e *engine) preemptFor(need int) {
	for need > e.cfg.KVCacheTokens-e.kvHeld && len(e.running) > 1 {
		v := e.running[len(e.running)-1]
		e.running[len(e.running)-1] = nil
		e.running = e.running[:len(e.running)-1]
		if v.decoding {
			if w := v.promptLen + v.generated + v.sched - v.held; w > 0 {
				need -= w
			}
		}
		e.kvHeld -= v.held
		v.held, v.computed, v.prefillTo = 0, 0, v.promptLen+v.generated
		e.waiting.pushFront(v)
		e.preemptions.Add(1)
	}
}

// scheduleRunning puts the running sequences in the batch, decoders first (one token of the
// budget each, their KV grown), then prefill chunks from what the budget leaves; it returns the
// budget left.
func (e *engine) scheduleRunning(budget int) int {
	for _, s := range e.running {
		if s.decoding {
			if w := s.promptLen + s.generated + s.sched; w > s.held {
				e.kvHeld += w - s.held
				s.held = w
			}
			budget--
			e.batch = append(e.batch, s)
		}
	}
	for _, s := range e.running {
		if !s.decoding {
			s.sched = min(s.prefillTo-s.computed, budget)
			budget -= s.sched
			if s.sched > 0 {
				e.batch = append(e.batch, s)
			}
		}
	}
	return budget
}

// admit admits waiting sequences, FIFO with head-of-line blocking, while token budget, sequence
// slots and KV allow, each with the prefix the cache holds already computed.
func (e *engine) admit(budget int) {
	cfg := &e.cfg
	k := cfg.TokensPerChunk
	for budget > 0 && len(e.running) < cfg.MaxNumSeqs && e.waiting.len() > 0 {
		s := e.waiting.front()
		ctx := s.promptLen + s.generated
		hold := ctx + s.yield(k)
		if !cfg.Preempt {
			hold = s.promptLen + s.maxOut
		}
		if e.kvHeld+hold > cfg.KVCacheTokens {
			break
		}
		e.waiting.popFront()
		cached := 0
		if e.cache != nil {
			n := e.cache.lookup(s.blocks)
			n = min(n, (ctx-1)/cfg.BlockSize)
			cached = n * cfg.BlockSize
		}
		if !s.seen && e.cache != nil {
			e.prefixQueries.Add(int64(s.promptLen))
			e.prefixHits.Add(int64(cached))
			s.cached.Store(int64(cached))
		}
		s.seen = true
		s.computed, s.prefillTo, s.held = cached, ctx, hold
		e.kvHeld += hold
		s.decoding = false
		s.sched = min(ctx-cached, budget)
		budget -= s.sched
		e.running = append(e.running, s)
		e.batch = append(e.batch, s)
	}
}

// stepTime is the planned batch's step time: a base, a cost per sequence and per token of KV
// attended, and the prefill tokens at the prefill rate.
func (e *engine) stepTime() time.Duration {
	cfg := &e.cfg
	kv, prefill := 0, 0
	for _, s := range e.batch {
		if s.decoding {
			kv += s.promptLen + s.generated + s.sched
		} else {
			kv += s.computed + s.sched
			prefill += s.sched
		}
	}
	return cfg.StepBase + time.Duration(len(e.batch))*cfg.StepPerSeq +
		time.Duration(kv)*cfg.StepPerKVToken +
		time.Duration(float64(prefill)/cfg.PrefillRate*float64(time.Second))
}

// apply ends the planned step at time now: decoders gain their tokens,
// prefill chunks are credited (a finished prefill yields one token), and
// finished sequences leave.
func (e *engine) apply(now time.Time) {
	e.finished = e.finished[:0]
	e.progressed = e.progressed[:0]
	var gen int64
	for _, s := range e.batch {
		if s.decoding {
			s.generated += s.sched
			gen += int64(s.sched)
		} else {
			s.computed += s.sched
			if s.computed < s.prefillTo {
				continue
			}
			if !s.firstOut {
				e.ttftHist.observe(now.Sub(s.arrival))
				e.promptTokens.Add(int64(s.promptLen))
				if e.cache != nil {
					e.cache.insert(s.blocks)
				}
			}
			g := s.yield(e.cfg.TokensPerChunk)
			s.firstOut = true
			s.generated += g
			gen += int64(g)
		}
		if s.generated >= s.target {
			e.finished = append(e.finished, s)
			continue
		}
		e.progressed = append(e.progressed, s)
	}
	// Counters first, then the tokens: a client holding a token must see it in the stats.
	e.genTokens.Add(gen)
	e.steps.Add(1)
	for _, s := range e.progressed {
		s.publish(stateRunning)
	}
	if len(e.finished) == 0 {
		return
	}
	kept := e.running[:0]
	for _, s := range e.running {
		if s.generated < s.target {
			kept = append(kept, s)
		}
	}
	clear(e.running[len(kept):])
	e.running = kept
	for _, s := range e.finished {
		e.kvHeld -= s.held
		s.held = 0
		if s.target < s.maxOut {
			e.successStop.Add(1)
		} else {
			e.successLength.Add(1)
		}
	}
	// Counts first, so that a client holding its last token never sees
	// its request still counted as running.
	e.publishCounts()
	for _, s := range e.finished {
		s.publish(stateDone)
	}
}

func (e *engine) publishCounts() {
	e.nRunning.Store(int64(len(e.running)))
	e.nWaiting.Store(int64(e.waiting.len()))
	e.kvUsed.Store(int64(e.kvHeld))
}

// loop runs steps on absolute deadlines with one reused timer, and sleeps
// on wake when there is no work. Step lateness is measured when the step
// has handed out its tokens.
func (e *engine) loop() {
	defer close(e.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var next time.Time
	for {
		e.drain()
		if len(e.running) == 0 && e.waiting.len() == 0 {
			e.publishCounts()
			select {
			case <-e.wake:
				next = time.Time{}
				continue
			case <-e.stop:
				e.shutdown()
				return
			}
		}
		start := next
		if now := time.Now(); start.IsZero() {
			start = now
		} else if now.Sub(start) > maxCatchUp {
			start = now
			e.resets.Add(1)
		}
		deadline := start.Add(e.plan())
		e.publishCounts()
		if wait := time.Until(deadline); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-e.stop:
				timer.Stop()
				e.shutdown()
				return
			}
		} else {
			select {
			case <-e.stop:
				e.shutdown()
				return
			default:
			}
		}
		e.apply(time.Now())
		// Lateness counts until the last token of the step is handed out:
		// timer wake-up delay plus the engine's own work and any time it
		// spent descheduled meanwhile.
		late := time.Since(deadline)
		e.lateness.add(late)
		e.latenessHist.observe(late)
		next = deadline
	}
}

// shutdown fails every sequence the engine knows of; later submits fail.
func (e *engine) shutdown() {
	e.mu.Lock()
	e.shut = true
	in := e.inbox
	e.inbox = nil
	e.mu.Unlock()
	fail := func(s *sequence) { s.publish(stateFailed) }
	for _, s := range in {
		fail(s)
	}
	for _, s := range e.running {
		fail(s)
	}
	for e.waiting.len() > 0 {
		fail(e.waiting.popFront())
	}
	e.running = nil
	e.kvHeld = 0
	e.publishCounts()
}
