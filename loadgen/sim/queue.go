package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/queueing"
)

// QueueConfig describes an M/D/c FIFO queue served over the OpenAI API:
// Servers slots, every request served for exactly Service. It is a
// deployment whose steady state is known exactly (see queueing.MDCWaitCDF), to test
// decisions that are made from measurements.
//
// A completion request arrives when its body has been read and validated.
// It starts service as soon as fewer than Servers requests are in service,
// strictly in arrival order. Its service lasts exactly Service: the first
// output token is written at start + FirstToken, the other OutputTokens-1
// evenly spaced so that the last one is written at start + Service, and
// the slot is released at start + Service whatever the client does. A
// client that leaves while waiting leaves the queue without taking a slot;
// one that leaves during its service keeps its slot to the end of the
// service (the server does not notice early ends, as a GPU batch would
// not). Every response has OutputTokens tokens and finish_reason "length":
// max_tokens (and max_completion_tokens) is validated but otherwise
// ignored, so that service is deterministic.
type QueueConfig struct {
	// ModelName is the only model served; requests naming another get 404.
	ModelName string `json:"model_name"`
	// Servers is the number of slots, c: requests in service at once.
	Servers int `json:"servers"`
	// Service is the service time, D: from the start of service to the
	// last token and the release of the slot.
	Service time.Duration `json:"service_ns"`
	// FirstToken is the time from the start of service to the first
	// token, in [0, Service]. With one output token it must equal Service.
	FirstToken time.Duration `json:"first_token_ns"`
	// OutputTokens is the number of tokens of every response.
	OutputTokens int `json:"output_tokens"`
	// QueueLimit bounds the number of requests waiting (not in service):
	// a request that arrives when QueueLimit already wait is answered 429
	// with Retry-After: 1 at once. 0 means an unlimited waiting room.
	QueueLimit int `json:"queue_limit"`
}

// DefaultQueueModelName is the model name of DefaultQueueConfig.
const DefaultQueueModelName = "loadcurve-mdc"

// maxQueueOutputTokens bounds OutputTokens (the token times are computed in
// integer nanoseconds).
const maxQueueOutputTokens = 1 << 20

// DefaultQueueConfig is 4 slots serving each request for 400 ms, the first
// token 20 ms into the service, 16 tokens per response, no queue limit. Its
// throughput bound is c/D = 10 requests per second (160 tokens per second);
// a request meets a TTFT objective T exactly when its wait is at most
// T - 20 ms (less network time). For T = 250 ms met by 99 % of requests,
// with 5 ms allowed for the network, queueing.MDCCapacity gives 4.183 requests per
// second (ρ = 0.418).
func DefaultQueueConfig() QueueConfig {
	return QueueConfig{
		ModelName:    DefaultQueueModelName,
		Servers:      4,
		Service:      400 * time.Millisecond,
		FirstToken:   20 * time.Millisecond,
		OutputTokens: 16,
	}
}

// String is "mdc(c=4, D=400ms, first token 20ms, 16 tokens)", with the queue
// limit when there is one.
func (c QueueConfig) String() string {
	s := fmt.Sprintf("mdc(c=%d, D=%v, first token %v, %d tokens", c.Servers, c.Service, c.FirstToken, c.OutputTokens)
	if c.QueueLimit > 0 {
		s += fmt.Sprintf(", queue limit %d", c.QueueLimit)
	}
	return s + ")"
}

// Validate reports every problem of c at once (joined), or nil: each a
// field.Error named as in Params.
func (c QueueConfig) Validate() error {
	var errs []error
	add := func(name, format string, a ...any) { errs = append(errs, field.Errorf(queueField(name), format, a...)) }
	if c.ModelName == "" {
		add("model-name", "must not be empty")
	}
	if c.Servers < 1 {
		add("servers", "%d, must be at least 1", c.Servers)
	}
	if c.Service <= 0 {
		add("service", "%v, must be positive", c.Service)
	}
	switch {
	case c.FirstToken < 0 || (c.Service > 0 && c.FirstToken > c.Service):
		add("first-token", "%v, must be in [0, service] (service %v)", c.FirstToken, c.Service)
	case c.OutputTokens == 1 && c.Service > 0 && c.FirstToken != c.Service:
		add("first-token", "%v, must equal service (%v) when output-tokens is 1: the only token is also the last, written at the end of service", c.FirstToken, c.Service)
	}
	if c.OutputTokens < 1 || c.OutputTokens > maxQueueOutputTokens {
		add("output-tokens", "%d, must be in [1, %d]", c.OutputTokens, maxQueueOutputTokens)
	}
	if c.QueueLimit < 0 {
		add("queue-limit", "%d, must not be negative (0: unlimited)", c.QueueLimit)
	}
	return errors.Join(errs...)
}

// tokenAt is the offset of token i (0-based) from the start of service:
// FirstToken, then evenly spaced up to Service, in exact integer
// nanoseconds.
func (c QueueConfig) tokenAt(i int) time.Duration {
	n := c.OutputTokens
	if n == 1 {
		return c.FirstToken
	}
	span, den := int64(c.Service-c.FirstToken), int64(n-1)
	q, r := span/den, span%den
	return c.FirstToken + time.Duration(q*int64(i)+r*int64(i)/den)
}

type queueParam struct {
	name, usage string
	get         func(*QueueConfig) string
	set         func(*QueueConfig, string) error
}

func queueIntParam(name, usage string, f func(*QueueConfig) *int) queueParam {
	return queueParam{name, usage,
		func(c *QueueConfig) string { return strconv.Itoa(*f(c)) },
		func(c *QueueConfig, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("want an integer: %w", err)
			}
			*f(c) = n
			return nil
		}}
}

func queueDurParam(name, usage string, f func(*QueueConfig) *time.Duration) queueParam {
	return queueParam{name, usage,
		func(c *QueueConfig) string { return f(c).String() },
		func(c *QueueConfig, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("want a duration such as 400ms or 1s: %w", err)
			}
			*f(c) = d
			return nil
		}}
}

var queueParams = []queueParam{
	{"model-name", "model name served by the M/D/c queue",
		func(c *QueueConfig) string { return c.ModelName },
		func(c *QueueConfig, v string) error { c.ModelName = v; return nil }},
	queueIntParam("servers", "number of slots c (requests in service at once)", func(c *QueueConfig) *int { return &c.Servers }),
	queueDurParam("service", "service time D of every request (start of service to last token)", func(c *QueueConfig) *time.Duration { return &c.Service }),
	queueDurParam("first-token", "time from the start of service to the first token", func(c *QueueConfig) *time.Duration { return &c.FirstToken }),
	queueIntParam("output-tokens", "tokens per response (max_tokens is ignored)", func(c *QueueConfig) *int { return &c.OutputTokens }),
	queueIntParam("queue-limit", "most requests waiting; more are answered 429 (0: unlimited)", func(c *QueueConfig) *int { return &c.QueueLimit }),
}

// Queue is the M/D/c FIFO queue as an OpenAI-compatible http.Handler:
// POST /v1/chat/completions and /v1/completions (framed like Server's
// responses, one token per chunk), GET /v1/models, /health and /metrics.
//
// One scheduler goroutine owns the queue and the slots. A handler stamps
// its request's arrival (monotonic clock, under the lock that orders the
// scheduler's inbox, so inbox order is arrival order) and waits for the
// scheduler's decision. The scheduler replays arrivals, departures from
// the waiting room and ends of service in time order on exact offsets: a
// service that starts when a slot frees starts at that slot's end time,
// not when the scheduler wakes, and it sleeps to the next end of service
// (an absolute deadline, one reused timer). Each handler then writes its
// tokens at their absolute offsets from its start, without holding any
// lock, sleeping on its own reused timer and, for the last 1.5 ms, in a
// thread-blocking nanosleep (Linux; see fineMargin), since the runtime's
// timers alone may wake up to a millisecond late. Lateness delays a write
// (Stats reports the worst) but never shifts the schedule of later tokens
// or requests. Only the notice of a start from the waiting room comes on
// the scheduler's timer: with FirstToken under about 2 ms, such a
// request's first token may be up to a millisecond late.
type Queue struct {
	cfg       QueueConfig
	base      time.Time // origin of every offset; monotonic
	modelJSON string
	tag       string
	created   int64

	mu    sync.Mutex // guards inbox and shut
	inbox []queueEvent
	shut  bool
	wake  chan struct{}

	closed    chan struct{}
	done      chan struct{} // scheduler exited
	closeOnce sync.Once

	// Scheduler goroutine only.
	core  *queueing.Core[*queuedReq]
	spare []queueEvent // the inbox's other buffer

	received, rejected, completed, abandoned atomic.Int64
	nRunning, nWaiting                       atomic.Int64
	maxLate                                  atomic.Int64 // ns
	inflight                                 atomic.Int64 // completion handlers running
}

var _ http.Handler = (*Queue)(nil)

// queuedReq is one admitted-or-rejected request as the scheduler sees it.
type queuedReq struct {
	decided chan struct{} // closed once rejected or admitted
	started chan struct{} // closed once start is set
	// Written by the scheduler before closing decided / started.
	rejected bool
	start    time.Duration
	// Scheduler only.
	inService bool
	left      bool
}

// queueEvent is an arrival, or a waiting request's client leaving.
type queueEvent struct {
	at    time.Duration
	req   *queuedReq
	leave bool
}

// NewQueue validates cfg and starts the scheduler. Call Close to stop it.
func NewQueue(cfg QueueConfig) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sim queue config: %w", err)
	}
	m, err := json.Marshal(cfg.ModelName)
	if err != nil {
		return nil, fmt.Errorf("sim queue model name: %w", err)
	}
	now := time.Now()
	q := &Queue{
		cfg:       cfg,
		base:      now,
		modelJSON: string(m),
		tag:       strconv.FormatUint(mix(uint64(now.UnixNano()), 1, 0)&0xffffffff, 16),
		created:   now.Unix(),
		wake:      make(chan struct{}, 1),
		closed:    make(chan struct{}),
		done:      make(chan struct{}),
	}
	q.core = queueing.NewCore(cfg.queue(), func(r *queuedReq) bool { return r.left })
	go q.loop()
	return q, nil
}

// Config returns the configuration the queue runs with.
func (q *Queue) Config() QueueConfig { return q.cfg }

// Close stops the scheduler and fails every waiting or running stream (an
// error event, or 503 when the response has not started); later requests
// get 503. It is safe to call more than once.
func (q *Queue) Close() {
	q.closeOnce.Do(func() {
		q.mu.Lock()
		q.shut = true
		q.mu.Unlock()
		close(q.closed)
		<-q.done
	})
}

// QueueStats is a snapshot of the queue's counters.
type QueueStats struct {
	Running, Waiting int   // requests in service / waiting
	Received         int64 // POSTs to the completion endpoints, valid or not
	Rejected         int64 // answered 429: the waiting room was full
	Completed        int64 // services that ended (the client may have left)
	Abandoned        int64 // left the waiting room: the client went away
	// MaxLateness is the largest delay, over all writes so far, between
	// the moment a token was due and the moment it was handed to the
	// connection (timer and scheduling delays of this process).
	MaxLateness time.Duration
}

// Stats returns a snapshot; counters are read one by one, not atomically
// as a set.
func (q *Queue) Stats() QueueStats {
	return QueueStats{
		Running:     int(q.nRunning.Load()),
		Waiting:     int(q.nWaiting.Load()),
		Received:    q.received.Load(),
		Rejected:    q.rejected.Load(),
		Completed:   q.completed.Load(),
		Abandoned:   q.abandoned.Load(),
		MaxLateness: time.Duration(q.maxLate.Load()),
	}
}

func (q *Queue) now() time.Duration { return time.Since(q.base) }

// submit queues an event stamped now; false once the queue is closed.
func (q *Queue) submit(r *queuedReq, leave bool) bool {
	q.mu.Lock()
	if q.shut {
		q.mu.Unlock()
		return false
	}
	// Stamped under the lock: inbox order is time order, and every event
	// stamped before the scheduler's drain is in that drain.
	q.inbox = append(q.inbox, queueEvent{at: q.now(), req: r, leave: leave})
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// loop is the scheduler.
func (q *Queue) loop() {
	defer close(q.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		q.mu.Lock()
		now := q.now()
		in := q.inbox
		q.inbox = q.spare[:0]
		q.mu.Unlock()
		for i, ev := range in {
			q.advance(ev.at)
			q.apply(ev)
			in[i] = queueEvent{}
		}
		q.spare = in
		q.advance(now)
		q.nRunning.Store(int64(q.core.Running()))
		q.nWaiting.Store(int64(q.core.Waiting()))

		var tick <-chan time.Time
		if end, ok := q.core.NextEnd(); ok {
			timer.Reset(time.Until(q.base.Add(end)))
			tick = timer.C
		}
		select {
		case <-tick:
		case <-q.wake:
			timer.Stop()
		case <-q.closed:
			timer.Stop()
			return
		}
	}
}

// advance ends every service due by t, in order; freed slots go to the
// head of the waiting room at the end time.
func (q *Queue) advance(t time.Duration) {
	for {
		end, ok := q.core.NextEnd()
		if !ok || end > t {
			return
		}
		_, _, next, started := q.core.Release()
		q.completed.Add(1)
		if started {
			next.inService = true
			next.start = end
			close(next.started)
		}
	}
}

func (q *Queue) apply(ev queueEvent) {
	r := ev.req
	if ev.leave {
		// A request in service keeps its slot to the end of its service.
		if !r.inService && !r.left {
			r.left = true
			q.core.Abandon()
			q.abandoned.Add(1)
		}
		return
	}
	switch q.core.Arrive(ev.at, r) {
	case queueing.Started:
		r.inService = true
		r.start = ev.at
		close(r.decided)
		close(r.started)
	case queueing.Queued:
		close(r.decided)
	case queueing.Rejected:
		r.rejected = true
		q.rejected.Add(1)
		close(r.decided)
	}
}

// ServeHTTP serves the OpenAI-compatible API, /health and /metrics.
func (q *Queue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/chat/completions":
		q.serveCompletion(w, r, true)
	case "/v1/completions":
		q.serveCompletion(w, r, false)
	case "/v1/models":
		if allowMethod(w, r, http.MethodGet) {
			q.serveModels(w)
		}
	case "/health":
		if allowMethod(w, r, http.MethodGet) {
			if q.isClosed() {
				writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", "the simulated deployment is shut down")
				return
			}
			w.WriteHeader(http.StatusOK)
		}
	case "/metrics":
		if allowMethod(w, r, http.MethodGet) {
			q.serveMetrics(w)
		}
	default:
		writeError(w, http.StatusNotFound, "NotFoundError", "", "no route for "+r.URL.Path)
	}
}

// allowMethod answers 405 unless r uses m (GET also allows HEAD).
func allowMethod(w http.ResponseWriter, r *http.Request, m string) bool {
	if r.Method == m || (m == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", m)
	writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "", "method "+r.Method+" not allowed; use "+m)
	return false
}

func (q *Queue) isClosed() bool {
	select {
	case <-q.closed:
		return true
	default:
		return false
	}
}

func (q *Queue) serveModels(w http.ResponseWriter) {
	b := []byte(`{"object":"list","data":[{"id":`)
	b = append(b, q.modelJSON...)
	b = append(b, `,"object":"model","created":`...)
	b = strconv.AppendInt(b, q.created, 10)
	b = append(b, `,"owned_by":"loadcurve-sim","root":`...)
	b = append(b, q.modelJSON...)
	b = append(b, `,"parent":null,"permission":[]}]}`+"\n"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// serveMetrics writes the Prometheus text exposition: vLLM's gauges of
// running and waiting requests and its success counter (services that
// ended), and the sim's counters of received and rejected requests.
func (q *Queue) serveMetrics(w http.ResponseWriter) {
	writeQueueMetrics(w, q.cfg.ModelName, q.Stats())
}

// writeQueueMetrics writes a queue's metrics (serveMetrics) from st.
func writeQueueMetrics(w http.ResponseWriter, model string, st QueueStats) {
	l := `model_name=` + strconv.Quote(model)
	var b []byte
	b = appendMetric(b, "vllm:num_requests_running", "Number of requests in service.", "gauge", l, float64(st.Running))
	b = appendMetric(b, "vllm:num_requests_waiting", "Number of requests waiting for a slot.", "gauge", l, float64(st.Waiting))
	b = appendHeader(b, "vllm:request_success_total", "Requests whose service ended (completed).", "counter")
	b = appendSample(b, "vllm:request_success_total", `finished_reason="length",`+l, float64(st.Completed))
	b = appendMetric(b, "sim_requests_received_total", "Completion requests received (every POST to a completion endpoint, valid or not).", "counter", l, float64(st.Received))
	b = appendMetric(b, "sim_requests_rejected_total", "Requests answered 429 because the waiting room was full.", "counter", l, float64(st.Rejected))
	b = appendMetric(b, "sim_requests_abandoned_total", "Requests whose client left while they waited.", "counter", l, float64(st.Abandoned))
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(b)
}

func (q *Queue) serveCompletion(w http.ResponseWriter, r *http.Request, chat bool) {
	if !allowMethod(w, r, http.MethodPost) {
		return
	}
	idx := q.received.Add(1) - 1
	q.inflight.Add(1)
	defer q.inflight.Add(-1)
	if q.isClosed() {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", "the simulated deployment is shut down")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", "", fmt.Sprintf("reading the request body: %v", err))
		return
	}
	req, err := decodeRequest(body)
	if err != nil {
		writeBad(w, err)
		return
	}
	if req.Model != nil && *req.Model != "" && *req.Model != q.cfg.ModelName {
		writeError(w, http.StatusNotFound, "NotFoundError", "model", fmt.Sprintf("The model `%s` does not exist.", *req.Model))
		return
	}
	t := newTokenizer(0)
	maxTokens, maxParam := req.MaxTokens, "max_tokens"
	if chat {
		err = tokenizeMessages(req.Messages, &t)
		if req.MaxCompletionTokens != nil {
			maxTokens, maxParam = req.MaxCompletionTokens, "max_completion_tokens"
		}
	} else {
		err = tokenizePrompt(req.Prompt, &t)
	}
	if err != nil {
		writeBad(w, err)
		return
	}
	if maxTokens != nil && *maxTokens < 1 {
		writeError(w, http.StatusBadRequest, "BadRequestError", maxParam, fmt.Sprintf("%s must be at least 1, got %d.", maxParam, *maxTokens))
		return
	}
	stream := req.Stream != nil && *req.Stream
	includeUse := req.StreamOptions != nil && req.StreamOptions.IncludeUsage != nil && *req.StreamOptions.IncludeUsage

	qr := &queuedReq{decided: make(chan struct{}), started: make(chan struct{})}
	if !q.submit(qr, false) {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", "the simulated deployment is shut down")
		return
	}
	select {
	case <-qr.decided:
	case <-q.closed:
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", shutdownMsg)
		return
	}
	if qr.rejected {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "RateLimitError", "", fmt.Sprintf(
			"the server is overloaded: %d requests are already waiting (queue limit); retry later", q.cfg.QueueLimit))
		return
	}

	prefix := "cmpl-"
	if chat {
		prefix = "chatcmpl-"
	}
	enc := newEncoder(chat, prefix+q.tag+"-"+strconv.FormatInt(idx, 10), time.Now().Unix(), q.modelJSON)
	if stream {
		q.stream(w, r, qr, enc, t.n, includeUse)
	} else {
		q.respond(w, r, qr, enc, t.n)
	}
}

// waitStart waits for r's service to start. When the client leaves first,
// r leaves the waiting room (or keeps its slot, if its service has started
// meanwhile).
func (q *Queue) waitStart(hr *http.Request, r *queuedReq) (ok, closed bool) {
	select {
	case <-r.started:
		return true, false
	case <-hr.Context().Done():
		q.submit(r, true)
		return false, false
	case <-q.closed:
		return false, true
	}
}

// fineMargin is the last stretch of a handler's wait, slept with fineSleep
// rather than on its timer: the runtime's timers may wake up to a
// millisecond late on Linux (its netpoller sleeps in whole milliseconds).
// At most maxFineSleepers handlers of the process sleep so at once, each
// blocking an OS thread; the others wait out the stretch on their timer.
const (
	fineMargin      = 1500 * time.Microsecond
	maxFineSleepers = 8
)

var fineSleepers atomic.Int32

// sleepUntil sleeps to the absolute offset at: on timer, interruptibly,
// to fineMargin before it, then with fineSleep. It returns false when the
// client left or the queue closed while it slept on its timer.
func (q *Queue) sleepUntil(timer *time.Timer, hr *http.Request, at time.Duration) (ok, closed bool) {
	due := q.base.Add(at)
	if ok, closed := q.sleepTimer(timer, hr, time.Until(due)-fineMargin); !ok {
		return false, closed
	}
	if fineSleepers.Add(1) > maxFineSleepers {
		fineSleepers.Add(-1)
		return q.sleepTimer(timer, hr, time.Until(due))
	}
	defer fineSleepers.Add(-1)
	for d := time.Until(due); d > 0; d = time.Until(due) {
		fineSleep(d)
	}
	return true, false
}

// sleepTimer sleeps d on timer, interruptibly.
func (q *Queue) sleepTimer(timer *time.Timer, hr *http.Request, d time.Duration) (ok, closed bool) {
	if d <= 0 {
		return true, false
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return true, false
	case <-hr.Context().Done():
		timer.Stop()
		return false, false
	case <-q.closed:
		timer.Stop()
		return false, true
	}
}

func (q *Queue) noteLateness(due time.Duration) {
	late := int64(q.now() - due)
	for {
		cur := q.maxLate.Load()
		if late <= cur || q.maxLate.CompareAndSwap(cur, late) {
			return
		}
	}
}

func (q *Queue) stream(w http.ResponseWriter, hr *http.Request, r *queuedReq, enc *encoder, promptLen int, includeUse bool) {
	rc := http.NewResponseController(w)
	flush := func() { _ = rc.Flush() } // a writer that cannot flush just buffers
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	flush()
	bp := bufPool.Get().(*[]byte)
	defer func() { *bp = (*bp)[:0]; bufPool.Put(bp) }()
	fail := func() {
		b := append((*bp)[:0], "data: "...)
		b = appendError(b, http.StatusServiceUnavailable, "ServiceUnavailableError", "", shutdownMsg)
		b = append(b, "\n\n"+doneEvent...)
		_, _ = w.Write(b)
		flush()
		*bp = b
	}
	ok, closed := q.waitStart(hr, r)
	if closed {
		fail()
	}
	if !ok {
		return
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	n := q.cfg.OutputTokens
	for sent := 0; sent < n; {
		due := r.start + q.cfg.tokenAt(sent)
		ok, closed := q.sleepUntil(timer, hr, due)
		if closed {
			fail()
		}
		if !ok {
			return
		}
		b := (*bp)[:0]
		if enc.chat && sent == 0 {
			b = enc.role(b)
		}
		// Every token due by now, one chunk each: a handler that woke late
		// writes the chunks it owes in one flush but never merges them.
		now := q.now()
		for sent < n && r.start+q.cfg.tokenAt(sent) <= now {
			finish := ""
			if sent == n-1 {
				finish = "length"
			}
			b = enc.content(b, sent, sent+1, finish)
			sent++
		}
		if sent == n {
			if includeUse {
				b = enc.usage(b, usageInfo{prompt: promptLen, completion: n})
			}
			b = append(b, doneEvent...)
		}
		q.noteLateness(due)
		_, err := w.Write(b)
		*bp = b
		if err != nil {
			return
		}
		flush()
	}
}

func (q *Queue) respond(w http.ResponseWriter, hr *http.Request, r *queuedReq, enc *encoder, promptLen int) {
	ok, closed := q.waitStart(hr, r)
	if ok {
		timer := time.NewTimer(time.Hour)
		timer.Stop()
		ok, closed = q.sleepUntil(timer, hr, r.start+q.cfg.Service)
	}
	if closed {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", shutdownMsg)
		return
	}
	if !ok {
		return
	}
	q.noteLateness(r.start + q.cfg.Service)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(enc.response(nil, usageInfo{prompt: promptLen, completion: q.cfg.OutputTokens}, "length"))
}

// RunningQueue is an M/D/c queue serving on a listener.
type RunningQueue struct {
	*serving
	q *Queue
}

// StartQueue creates a Queue for cfg and serves it on addr (for example
// "127.0.0.1:0" for any free loopback port).
func StartQueue(cfg QueueConfig, addr string) (*RunningQueue, error) {
	q, err := NewQueue(cfg)
	if err != nil {
		return nil, err
	}
	s, err := serve("sim queue", q, q.Close, q.inflight.Load, addr)
	if err != nil {
		return nil, err
	}
	return &RunningQueue{serving: s, q: q}, nil
}

// Queue is the handler being served, for Stats.
func (r *RunningQueue) Queue() *Queue { return r.q }
