package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// maxBodyBytes bounds a request body.
const maxBodyBytes = 32 << 20

// Server is the simulated deployment: an http.Handler in front of one engine.
type Server struct {
	cfg       Config
	eng       *engine
	modelJSON string
	tag       string // distinguishes response ids of different servers
	created   int64  // /v1/models "created"
	received  atomic.Uint64
	inflight  atomic.Int64 // completion handlers running
	closed    chan struct{}
	closeOnce sync.Once
}

var _ http.Handler = (*Server)(nil)

// New validates cfg and starts the engine. Call Close to stop it.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sim config: %w", err)
	}
	m, err := json.Marshal(cfg.ModelName)
	if err != nil {
		return nil, fmt.Errorf("sim model name: %w", err)
	}
	now := time.Now()
	s := &Server{
		cfg:       cfg,
		eng:       newEngine(cfg),
		modelJSON: string(m),
		tag:       strconv.FormatUint(mix(uint64(now.UnixNano()), 0, 0)&0xffffffff, 16),
		created:   now.Unix(),
		closed:    make(chan struct{}),
	}
	go s.eng.loop()
	return s, nil
}

// Config returns the configuration the server runs with.
func (s *Server) Config() Config { return s.cfg }

// Close stops the engine and fails every waiting or running stream (an
// error event, or 503 when nothing was sent yet); later requests get 503.
// It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closed)
		close(s.eng.stop)
		<-s.eng.done
	})
}

// Stats is a snapshot of the engine and server counters.
type Stats struct {
	Running, Waiting   int   // sequences running / waiting (not yet admitted)
	KVUsedTokens       int   // KV tokens allocated to running sequences
	KVCapacityTokens   int   // Config.KVCacheTokens
	PeakRunning        int   // most sequences ever running at once
	PeakKVUsedTokens   int   // most KV tokens ever allocated at once
	Steps              int64 // engine steps run
	ScheduleResets     int64 // times the engine fell over 250 ms behind and restarted its step clock
	StepLatenessP50    time.Duration
	StepLatenessP99    time.Duration // p50/p99 over the last 4096 steps
	StepLatenessMax    time.Duration // since start
	GeneratedTokens    int64
	PromptTokens       int64 // prompts fully prefilled (cached tokens included)
	RequestsReceived   int64 // POSTs to the completion endpoints, valid or not
	RequestsSucceeded  int64 // sequences that generated all their tokens
	PrefixCacheQueries int64 // tokens looked up at first admission
	PrefixCacheHits    int64 // of which found in the prefix cache
	Preemptions        int64
}

// Stats returns a snapshot; counters are read one by one, not atomically
// as a set.
func (s *Server) Stats() Stats {
	e := s.eng
	p50, p99, mx := e.lateness.summary()
	return Stats{
		Running:            int(e.nRunning.Load()),
		Waiting:            int(e.nWaiting.Load()) + e.inboxLen(),
		KVUsedTokens:       int(e.kvUsed.Load()),
		KVCapacityTokens:   s.cfg.KVCacheTokens,
		PeakRunning:        int(e.peakRunning.Load()),
		PeakKVUsedTokens:   int(e.peakKV.Load()),
		Steps:              e.steps.Load(),
		ScheduleResets:     e.resets.Load(),
		StepLatenessP50:    p50,
		StepLatenessP99:    p99,
		StepLatenessMax:    mx,
		GeneratedTokens:    e.genTokens.Load(),
		PromptTokens:       e.promptTokens.Load(),
		RequestsReceived:   int64(s.received.Load()),
		RequestsSucceeded:  e.successLength.Load() + e.successStop.Load(),
		PrefixCacheQueries: e.prefixQueries.Load(),
		PrefixCacheHits:    e.prefixHits.Load(),
		Preemptions:        e.preemptions.Load(),
	}
}

// ServeHTTP serves the OpenAI-compatible API, /health and /metrics. To cut
// a connection (DropRate) it panics with http.ErrAbortHandler, which
// net/http turns into a silent close of the connection.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if serve, ok := routes[r.URL.Path]; ok {
		serve(s, w, r)
		return
	}
	switch r.URL.Path {
	case "/v1/models":
		if s.method(w, r, http.MethodGet) {
			s.serveModels(w)
		}
	case "/health":
		if s.method(w, r, http.MethodGet) {
			if s.isClosed() {
				writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", "the simulated deployment is shut down")
				return
			}
			w.WriteHeader(http.StatusOK)
		}
	case "/metrics":
		if s.method(w, r, http.MethodGet) {
			s.serveMetrics(w)
		}
	default:
		writeError(w, http.StatusNotFound, "NotFoundError", "", "no route for "+r.URL.Path)
	}
}

func (s *Server) method(w http.ResponseWriter, r *http.Request, m string) bool {
	if r.Method == m || (m == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", m)
	writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "", "method "+r.Method+" not allowed; use "+m)
	return false
}

func (s *Server) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

func writeError(w http.ResponseWriter, status int, typ, param, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(appendError(nil, status, typ, param, msg), '\n'))
}

func (s *Server) serveModels(w http.ResponseWriter) {
	b := []byte(`{"object":"list","data":[{"id":`)
	b = append(b, s.modelJSON...)
	b = append(b, `,"object":"model","created":`...)
	b = strconv.AppendInt(b, s.created, 10)
	b = append(b, `,"owned_by":"loadcurve-sim","root":`...)
	b = append(b, s.modelJSON...)
	b = append(b, `,"parent":null,"max_model_len":`...)
	b = strconv.AppendInt(b, int64(s.cfg.MaxModelLen), 10)
	b = append(b, `,"permission":[]}]}`+"\n"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// Per-request random choices are drawn from mix(Seed, request index, salt).
const (
	saltFault uint64 = iota + 1
	saltFaultPoint
	saltStatus
	saltEOS
	saltToolCall
)

// mix is splitmix64 over the seed, an index and a salt.
func mix(seed, idx, salt uint64) uint64 {
	z := seed + 0x9e3779b97f4a7c15*(idx+1) + 0xbf58476d1ce4e5b9*salt
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// unit maps x to [0, 1).
func unit(x uint64) float64 { return float64(x>>11) / (1 << 53) }

type faultKind int

const (
	faultNone faultKind = iota
	faultError
	faultDrop
	faultStall
)

// plan is everything decided for one request before it enters the engine.
type plan struct {
	fault      faultKind
	faultAt    int // drop: cut after this many tokens; stall: stop after
	status     int // faultError: 500 or 503
	target     int
	finish     string
	includeUse bool
	reasonOn   bool // a chat response with ReasoningShare > 0: usage reports reasoning tokens
	reason     int  // its first reason tokens are reasoning
}

// reasoningTokens is floor(share·maxOut), the reasoning part of a chat
// response of at most maxOut tokens (the tolerance absorbs floating-point
// error, so that 0.29·100 is 29); share < 1 leaves at least one token for
// the answer.
func reasoningTokens(share float64, maxOut int) int {
	r := int(math.Floor(share*float64(maxOut) + 1e-9))
	return max(0, min(r, maxOut-1))
}

// usage is what the usage object of q's response reports, completion
// tokens sent.
func (s *Server) usage(q *sequence, p *plan, completion int) usageInfo {
	u := usageInfo{prompt: q.promptLen, completion: completion}
	if s.eng.cache != nil {
		u.cacheOn, u.cached = true, int(q.cached.Load())
	}
	if p.reasonOn {
		u.reasonOn, u.reasoning = true, min(p.reason, completion)
	}
	return u
}

// decide draws request idx's fault and output length. One uniform picks
// the fault so that the three rates are exact and exclusive.
func (s *Server) decide(idx uint64, maxOut int, ignoreEOS bool) plan {
	seed := uint64(s.cfg.Seed)
	p := plan{target: maxOut, finish: "length"}
	if t, stop := s.cfg.OutputTarget(idx, maxOut, ignoreEOS); stop {
		p.target, p.finish = t, "stop"
	}
	u := unit(mix(seed, idx, saltFault))
	v := unit(mix(seed, idx, saltFaultPoint))
	c := s.cfg
	switch {
	case u < c.ErrorRate:
		p.fault, p.status = faultError, http.StatusInternalServerError
		if unit(mix(seed, idx, saltStatus)) < 0.5 {
			p.status = http.StatusServiceUnavailable
		}
	case u < c.ErrorRate+c.DropRate:
		// Cut after 1..target tokens: some output always gets out.
		p.fault, p.faultAt = faultDrop, 1+int(v*float64(p.target))
		p.faultAt = min(p.faultAt, p.target)
	case u < c.ErrorRate+c.DropRate+c.StallRate:
		// Stop after 0..target-1 tokens: the stream never completes.
		p.fault, p.faultAt = faultStall, min(int(v*float64(p.target)), p.target-1)
	}
	return p
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// readModelRequest reads the body of a request to one of the model's routes and checks it: the
// deployment is not shut down, the body is within maxBodyBytes and decodes, and it names this
// model (or none). On a problem it answers as the API would and returns ok false.
func (s *Server) readModelRequest(w http.ResponseWriter, r *http.Request) (body []byte, req *request, ok bool) {
	if s.isClosed() {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", "the simulated deployment is shut down")
		return nil, nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", "", fmt.Sprintf("reading the request body: %v", err))
		return nil, nil, false
	}
	if req, err = decodeRequest(body); err != nil {
		writeBad(w, err)
		return nil, nil, false
	}
	if req.Model != nil && *req.Model != "" && *req.Model != s.cfg.ModelName {
		writeError(w, http.StatusNotFound, "NotFoundError", "model", fmt.Sprintf("The model `%s` does not exist.", *req.Model))
		return nil, nil, false
	}
	return body, req, true
}

// serveCompletion answers a request of a generating API a on the engine.
func (s *Server) serveCompletion(w http.ResponseWriter, r *http.Request, a genAPI) {
	if !s.method(w, r, http.MethodPost) {
		return
	}
	idx := s.received.Add(1) - 1
	arrival := time.Now()
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	body, req, ok := s.readModelRequest(w, r)
	if !ok {
		return
	}
	t := s.tokenizer()
	g, err := a.read(body, req, &t)
	if err != nil {
		writeBad(w, err)
		return
	}
	maxOut := s.cfg.DefaultMaxTokens
	if g.maxTokens != nil {
		if *g.maxTokens < 1 {
			writeError(w, http.StatusBadRequest, "BadRequestError", g.maxParam, fmt.Sprintf("%s must be at least 1, got %d.", g.maxParam, *g.maxTokens))
			return
		}
		maxOut = *g.maxTokens
	}
	if t.n >= s.cfg.MaxModelLen {
		writeError(w, http.StatusBadRequest, "BadRequestError", g.promptParam, fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, your request has %d input tokens, which leaves no room for output. Please reduce the length of the input.",
			s.cfg.MaxModelLen, t.n))
		return
	}
	maxOut = min(maxOut, s.cfg.MaxModelLen-t.n)
	ignoreEOS := req.IgnoreEOS != nil && *req.IgnoreEOS
	p := s.decide(idx, maxOut, ignoreEOS)
	if p.fault == faultError {
		writeFault(w, p)
		return
	}
	stream := req.Stream != nil && *req.Stream
	p.includeUse = g.usage || req.StreamOptions != nil && req.StreamOptions.IncludeUsage != nil && *req.StreamOptions.IncludeUsage
	if g.reasons && s.cfg.ReasoningShare > 0 {
		p.reasonOn, p.reason = true, reasoningTokens(s.cfg.ReasoningShare, maxOut)
	}
	// A tool call needs answer tokens: a response that stops while still
	// reasoning calls no tool.
	var toolID string
	var toolName []byte
	if s.cfg.ToolCalls && g.hasTools && p.target > p.reason {
		p.finish = "tool_calls"
		toolID = "call_" + hex16(mix(uint64(s.cfg.Seed), idx, saltToolCall))
		toolName, _ = json.Marshal(firstToolName(g.tools)) // a string always marshals
	}

	q := &sequence{
		promptLen: t.n,
		blocks:    t.blocks,
		maxOut:    maxOut,
		target:    p.target,
		arrival:   arrival,
		notify:    make(chan struct{}, 1),
	}
	if !s.eng.submit(q) {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", "the simulated deployment is shut down")
		return
	}
	defer s.eng.cancel(q) // no-op for the engine once q has finished

	id := a.idPrefix() + s.tag + "-" + strconv.FormatUint(idx, 10)
	enc := a.framer(id, time.Now().Unix(), s.modelJSON, answerShape{reason: p.reason, target: p.target, toolID: toolID, toolName: toolName})
	if stream {
		s.stream(w, r, q, enc, &p)
	} else {
		s.respond(w, r, q, enc, &p)
	}
}

// hex16 is x in 16 lower-case hexadecimal digits.
func hex16(x uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = digits[x&0xf]
		x >>= 4
	}
	return string(b[:])
}

// writeFault answers a request whose plan is an injected server error (faultError).
func writeFault(w http.ResponseWriter, p plan) {
	typ := "InternalServerError"
	if p.status == http.StatusServiceUnavailable {
		typ = "ServiceUnavailableError"
	}
	writeError(w, p.status, typ, "", "simulated server error (fault injection)")
}

// tokenizer is the tokenizer of a request's input: counting its tokens and, with the prefix
// cache on, hashing its blocks.
func (s *Server) tokenizer() tokenizer {
	if s.eng.cache != nil {
		return newTokenizer(s.cfg.BlockSize)
	}
	return newTokenizer(0)
}

func writeBad(w http.ResponseWriter, err error) {
	var br *badRequest
	if errors.As(err, &br) {
		writeError(w, http.StatusBadRequest, "BadRequestError", br.param, br.msg)
		return
	}
	writeError(w, http.StatusBadRequest, "BadRequestError", "", err.Error())
}

// wait blocks until q progresses (ok), the client leaves (neither), or the
// server closes (closed).
func (s *Server) wait(r *http.Request, q *sequence) (ok, closed bool) {
	select {
	case <-q.notify:
		return true, false
	case <-r.Context().Done():
		return false, false
	case <-s.closed:
		return false, true
	}
}

// hang waits for the client to leave or the server to close.
func (s *Server) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.closed:
	}
}

const shutdownMsg = "the simulated deployment shut down during the request"

func (s *Server) stream(w http.ResponseWriter, r *http.Request, q *sequence, enc framer, p *plan) {
	rc := http.NewResponseController(w)
	flush := func() { _ = rc.Flush() } // a writer that cannot flush just buffers
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if opening := enc.opening(nil); len(opening) > 0 {
		_, _ = w.Write(opening)
	}
	flush()
	if p.fault == faultStall && p.faultAt == 0 {
		s.hang(r)
		return
	}
	bp := bufPool.Get().(*[]byte)
	defer func() { *bp = (*bp)[:0]; bufPool.Put(bp) }()
	sent := 0
	for {
		ok, closed := s.wait(r, q)
		gen, state := q.load()
		if !ok && !closed {
			return
		}
		b := (*bp)[:0]
		if closed || state == stateFailed {
			b = enc.failure(b, http.StatusServiceUnavailable, "ServiceUnavailableError", shutdownMsg)
			_, _ = w.Write(b)
			flush()
			*bp = b
			return
		}
		upto := gen
		if p.fault != faultNone {
			upto = min(upto, p.faultAt)
		}
		if sent == 0 && upto > 0 {
			b = enc.first(b)
		}
		// One SSE chunk per engine step, even when this handler lags and
		// writes several at once: chunk boundaries are the engine's.
		for sent < upto {
			end := min(chunkEnd(sent, s.cfg.TokensPerChunk, q.target), upto)
			finish := ""
			if state == stateDone && end == q.target {
				finish = p.finish
			}
			b = enc.content(b, sent, end, finish)
			sent = end
		}
		end := state == stateDone && sent == q.target && p.fault == faultNone
		if end {
			b = enc.end(b, s.usage(q, p, sent), p.includeUse, p.finish)
		}
		if len(b) > 0 {
			if _, err := w.Write(b); err != nil {
				*bp = b
				return
			}
			flush()
		}
		*bp = b
		switch {
		case end:
			return
		case p.fault == faultDrop && sent >= p.faultAt:
			panic(http.ErrAbortHandler) // net/http closes the connection
		case p.fault == faultStall && sent >= p.faultAt:
			s.hang(r)
			return
		}
	}
}

// awaitDone waits until the engine has finished q and applies the plan's drop or stall fault:
// false when the handler has answered (the deployment shut down), the client left, or the
// request stalls, and must return.
func (s *Server) awaitDone(w http.ResponseWriter, r *http.Request, q *sequence, p *plan) bool {
	for {
		ok, closed := s.wait(r, q)
		_, state := q.load()
		if closed || state == stateFailed {
			writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", shutdownMsg)
			return false
		}
		if !ok {
			return false
		}
		if state == stateDone {
			break
		}
	}
	switch p.fault {
	case faultDrop:
		panic(http.ErrAbortHandler)
	case faultStall:
		s.hang(r)
		return false
	}
	return true
}

func (s *Server) respond(w http.ResponseWriter, r *http.Request, q *sequence, enc framer, p *plan) {
	if !s.awaitDone(w, r, q, p) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(enc.response(nil, s.usage(q, p, q.target), p.finish))
}
