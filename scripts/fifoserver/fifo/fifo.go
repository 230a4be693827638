// Package fifo is the fifoserver's queue (scripts/fifoserver): an OpenAI-compatible streaming
// server that is a FIFO queue with c slots, M/D/c or M/G/c, and logs every request it served.
// It imports the standard library only, nothing of loadcurve, so that it is an external check of
// loadcurve's answers: see the command's documentation for the queue and its log.
package fifo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ServerName is the log header's "server".
const ServerName = "fifoserver"

// Config is the server's whole configuration; the log's header holds it.
type Config struct {
	Server        string        `json:"server"` // "fifoserver"
	Model         string        `json:"model"`
	Slots         int           `json:"slots"`
	Service       time.Duration `json:"-"`
	ServiceS      float64       `json:"service_s,omitempty"` // deterministic service time
	FirstToken    time.Duration `json:"-"`
	FirstTokenS   float64       `json:"first_token_s"`
	Tokens        int           `json:"tokens,omitempty"` // deterministic output tokens
	TokenInterval time.Duration `json:"-"`
	IntervalS     float64       `json:"token_interval_s,omitempty"` // spread: between tokens
	OutputDist    string        `json:"output_dist,omitempty"`
	OutputMean    float64       `json:"output_mean,omitempty"`
	OutputCV      float64       `json:"output_cv,omitempty"`
	MaxOutput     int           `json:"max_output,omitempty"`
	Seed          uint64        `json:"seed"`
	Addr          string        `json:"addr"`
	Start         string        `json:"start"` // wall-clock start, RFC 3339, for people only
}

// Spread reports whether output lengths are drawn (M/G/c) rather than fixed (M/D/c).
func (c *Config) Spread() bool { return c.OutputMean > 0 }

// Check validates c and fills its seconds fields (the log's units); its errors name the
// fifoserver's flags.
func (c *Config) Check() error {
	var errs []error
	if c.Slots < 1 {
		errs = append(errs, fmt.Errorf("-slots %d: want at least 1", c.Slots))
	}
	if c.FirstToken < 0 {
		errs = append(errs, fmt.Errorf("-first-token %v: want ≥ 0", c.FirstToken))
	}
	if c.Spread() {
		switch c.OutputDist {
		case "lognormal", "exponential", "geometric":
		default:
			errs = append(errs, fmt.Errorf("-output-dist %q: want lognormal, exponential or geometric", c.OutputDist))
		}
		if c.TokenInterval <= 0 {
			errs = append(errs, fmt.Errorf("-token-interval %v: want > 0", c.TokenInterval))
		}
		if c.OutputDist == "lognormal" && !(c.OutputCV > 0) {
			errs = append(errs, fmt.Errorf("-output-cv %v: want > 0", c.OutputCV))
		}
		if c.MaxOutput < 1 {
			errs = append(errs, fmt.Errorf("-max-output %d: want ≥ 1", c.MaxOutput))
		}
		c.IntervalS = c.TokenInterval.Seconds()
		c.Tokens, c.Service = 0, 0
	} else {
		if c.Tokens < 1 {
			errs = append(errs, fmt.Errorf("-tokens %d: want ≥ 1", c.Tokens))
		}
		if c.Service <= 0 || c.FirstToken > c.Service {
			errs = append(errs, fmt.Errorf("-service %v: want > 0 and at least -first-token (%v)", c.Service, c.FirstToken))
		}
		c.ServiceS = c.Service.Seconds()
		c.OutputDist, c.OutputCV, c.MaxOutput = "", 0, 0
	}
	c.FirstTokenS = c.FirstToken.Seconds()
	if !(c.OutputMean >= 0) || math.IsInf(c.OutputMean, 0) {
		errs = append(errs, fmt.Errorf("-output-mean %v: want a finite number ≥ 0", c.OutputMean))
	}
	return errors.Join(errs...)
}

// Server is the queue and its log: an http.Handler.
type Server struct {
	cfg  Config
	base time.Time // the log's zero; every time is time.Since(base), monotonic

	mu      sync.Mutex
	ends    []time.Duration // the logical ends of the services in progress, one a busy slot
	waiting []*req          // FIFO; entries whose client left are nil
	head    int
	seq     int64
	rng     *rand.Rand

	logMu  sync.Mutex
	logW   *bufio.Writer
	last   time.Time // last flush
	closed bool

	modelJSON []byte
}

// req is one request in the queue.
type req struct {
	seq     int64
	arrival time.Duration
	start   time.Duration // logical start of service, set when it gets a slot
	service time.Duration
	tokens  int
	cut     bool // its drawn length was cut to max_tokens
	started chan struct{}
}

// New makes the server of cfg (checked with Check), writing its log to w: the header now, then a
// line per request as it ends, flushed at least every second and by Close. Its clock starts now.
func New(cfg Config, w io.Writer) (*Server, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	cfg.Server = ServerName
	s := &Server{cfg: cfg, base: time.Now(), logW: bufio.NewWriterSize(w, 1<<16),
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))}
	s.last = s.base
	s.modelJSON, _ = json.Marshal(cfg.Model)
	hdr, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("log header: %w", err)
	}
	s.logW.Write(hdr)
	s.logW.WriteByte('\n')
	if err := s.logW.Flush(); err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	return s, nil
}

// String describes the queue: "M/D/8: 320ms a request, first token 30ms, 16 tokens".
func (s *Server) String() string {
	c := s.cfg
	if c.Spread() {
		return fmt.Sprintf("M/G/%d: first token %v, then a token every %v, %s lengths of mean %g (cv %g), seed %d", c.Slots, c.FirstToken, c.TokenInterval, c.OutputDist, c.OutputMean, c.OutputCV, c.Seed)
	}
	return fmt.Sprintf("M/D/%d: %v a request, first token %v, %d tokens", c.Slots, c.Service, c.FirstToken, c.Tokens)
}

func (s *Server) now() time.Duration { return time.Since(s.base) }

// Close flushes the log; requests that end afterwards are not logged.
func (s *Server) Close() error {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	s.closed = true
	if err := s.logW.Flush(); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	return nil
}

// ServeHTTP serves /v1/models, /v1/completions, /v1/chat/completions and /health (with or
// without the /v1 prefix).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	received := s.now()
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/v1/models", "/models":
		s.models(w)
	case "/v1/completions", "/completions":
		s.completion(w, r, received, false)
	case "/v1/chat/completions", "/chat/completions":
		s.completion(w, r, received, true)
	case "/health":
		w.WriteHeader(http.StatusOK)
	default:
		writeError(w, http.StatusNotFound, "not found: "+r.URL.Path)
	}
}

func (s *Server) models(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"object":"list","data":[{"id":%s,"object":"model","created":0,"owned_by":"fifoserver"}]}`, s.modelJSON)
}

// body is what the server reads of a request.
type body struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []message       `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type message struct {
	Content json.RawMessage `json:"content"`
}

func (s *Server) completion(w http.ResponseWriter, hr *http.Request, received time.Duration, chat bool) {
	if hr.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "use POST")
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, hr.Body, 64<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	}
	var b body
	if err := json.Unmarshal(raw, &b); err != nil {
		writeError(w, http.StatusBadRequest, "the body is not JSON: "+err.Error())
		return
	}
	if b.Model != "" && b.Model != s.cfg.Model {
		writeError(w, http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist.", b.Model))
		return
	}
	maxTokens := b.MaxTokens
	if chat && b.MaxCompletionTokens != nil {
		maxTokens = b.MaxCompletionTokens
	}
	if maxTokens != nil && *maxTokens < 1 {
		writeError(w, http.StatusBadRequest, "max_tokens must be at least 1")
		return
	}
	prompt := words(b.Prompt)
	for _, m := range b.Messages {
		prompt += words(m.Content)
	}
	rx, stamped := lastRead(hr.Context()) // the read that brought the body's end
	r := s.enqueue(maxTokens)
	line := LogLine{ID: hr.Header.Get("X-Request-Id"), Seq: r.seq, Received: sec(received), Arrival: sec(r.arrival), Service: sec(r.service), Tokens: r.tokens}
	if stamped && rx <= r.arrival {
		line.RX = ptr(sec(rx))
	}
	defer func() { s.log(&line) }()
	select {
	case <-r.started:
	case <-hr.Context().Done():
		if !s.leave(r) { // it got its slot meanwhile: it keeps it to the end of its service
			<-r.started
			line.Start = ptr(sec(r.start))
		}
		line.Outcome = OutcomeLeftWaiting
		return
	}
	line.Start = ptr(sec(r.start))
	line.FirstDue = ptr(sec(r.start + s.cfg.FirstToken))
	id := strconv.FormatInt(r.seq, 10)
	if !b.Stream {
		s.respond(w, hr, r, &line, chat, id, prompt)
		return
	}
	s.stream(w, hr, r, &line, chat, id, prompt, b.StreamOptions != nil && b.StreamOptions.IncludeUsage)
}

// enqueue makes the request that arrives now (its body read and valid), draws its service and
// queues it, or starts it at once when a slot is free. The arrival is stamped with s.mu held, so
// the queue's order is the order of the arrivals.
func (s *Server) enqueue(maxTokens *int) *req {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &req{seq: s.seq, arrival: s.now(), started: make(chan struct{})}
	s.seq++
	r.tokens, r.service, r.cut = s.draw(maxTokens)
	s.advance(r.arrival)
	if len(s.ends) < s.cfg.Slots {
		s.ends = append(s.ends, 0)
		s.begin(r, len(s.ends)-1, r.arrival)
		return r
	}
	s.waiting = append(s.waiting, r)
	return r
}

// begin starts r's service in busy slot k at the logical moment at (with s.mu held), and the
// goroutine that frees the slot at its end.
func (s *Server) begin(r *req, k int, at time.Duration) {
	r.start = at
	s.ends[k] = at + r.service
	close(r.started)
	go s.release(r)
}

// advance frees, in the order of their logical ends, the slots whose services ended by now (with
// s.mu held), each to the head of the queue, which starts at that end or at its arrival if it
// came later. Every event of the queue (an arrival, a client leaving, a service's end) advances
// it first, so the queue is exactly the FIFO queue of its arrivals however late the goroutines
// that call it run.
func (s *Server) advance(now time.Duration) {
	for {
		k := -1
		for j, e := range s.ends {
			if e <= now && (k < 0 || e < s.ends[k]) {
				k = j
			}
		}
		if k < 0 {
			return
		}
		next := s.pop()
		if next == nil {
			s.ends[k] = s.ends[len(s.ends)-1]
			s.ends = s.ends[:len(s.ends)-1]
			continue
		}
		s.begin(next, k, max(s.ends[k], next.arrival))
	}
}

// pop takes the head of the queue (nil when none waits).
func (s *Server) pop() *req {
	for s.head < len(s.waiting) {
		next := s.waiting[s.head]
		s.waiting[s.head] = nil
		s.head++
		if next != nil {
			return next
		}
	}
	s.waiting, s.head = s.waiting[:0], 0
	return nil
}

// draw is the next request's tokens and service time (with s.mu held: the k-th arrival gets the
// k-th draw).
func (s *Server) draw(maxTokens *int) (tokens int, service time.Duration, cut bool) {
	c := &s.cfg
	if !c.Spread() {
		return c.Tokens, c.Service, false
	}
	var n int
	switch c.OutputDist {
	case "lognormal":
		sigma2 := math.Log1p(c.OutputCV * c.OutputCV)
		mu := math.Log(c.OutputMean) - sigma2/2
		n = int(math.Round(math.Exp(mu + math.Sqrt(sigma2)*s.rng.NormFloat64())))
	case "exponential":
		n = int(math.Round(s.rng.ExpFloat64() * c.OutputMean))
	case "geometric": // P(n) = p(1−p)^(n−1), mean 1/p
		p := 1 / math.Max(c.OutputMean, 1)
		n = 1 + int(math.Floor(math.Log(1-s.rng.Float64())/math.Log1p(-p)))
	}
	n = min(max(n, 1), c.MaxOutput)
	if maxTokens != nil && n > *maxTokens {
		n, cut = *maxTokens, true
	}
	return n, c.FirstToken + time.Duration(n-1)*c.TokenInterval, cut
}

// leave takes r out of the waiting room; false when it had started meanwhile.
func (s *Server) leave(r *req) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance(s.now())
	for i := s.head; i < len(s.waiting); i++ {
		if s.waiting[i] == r {
			s.waiting[i] = nil
			return true
		}
	}
	return false
}

// release advances the queue at the logical end of r's service, start + service.
func (s *Server) release(r *req) {
	sleepUntil(s.base, r.start+r.service)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance(s.now())
}

// tokenAt is the offset of token i (0-based) from the start of r's service.
func (s *Server) tokenAt(r *req, i int) time.Duration {
	c := &s.cfg
	if c.Spread() || r.tokens == 1 {
		return c.FirstToken + time.Duration(i)*c.TokenInterval
	}
	span, den := int64(r.service-c.FirstToken), int64(r.tokens-1)
	return c.FirstToken + time.Duration(span*int64(i)/den)
}

func (s *Server) stream(w http.ResponseWriter, hr *http.Request, r *req, line *LogLine, chat bool, id string, prompt int, usage bool) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	enc := encoder{chat: chat, id: id, model: s.modelJSON, created: strconv.FormatInt(time.Now().Unix(), 10)}
	var buf []byte
	for sent := 0; sent < r.tokens; {
		if !sleepUntilCtx(hr.Context(), s.base, r.start+s.tokenAt(r, sent)) {
			line.Outcome = OutcomeLeftInService
			return
		}
		buf = buf[:0]
		if chat && sent == 0 {
			buf = enc.role(buf)
		}
		now := s.now() // every token due by now, a chunk each: a late wake-up writes what it owes
		for sent < r.tokens && r.start+s.tokenAt(r, sent) <= now {
			finish := ""
			if sent == r.tokens-1 {
				finish = "length"
				if s.cfg.Spread() && !r.cut {
					finish = "stop" // the drawn length ended it, as an EOS would
				}
			}
			buf = enc.token(buf, sent, finish)
			sent++
		}
		if sent == r.tokens {
			if usage {
				buf = enc.usage(buf, prompt, r.tokens)
			}
			buf = append(buf, "data: [DONE]\n\n"...)
		}
		var before time.Duration
		if line.First == nil {
			before = s.now()
		}
		if _, err := w.Write(buf); err != nil {
			line.Outcome = "write failed: " + err.Error()
			return
		}
		if err := rc.Flush(); err != nil {
			line.Outcome = "flush failed: " + err.Error()
			return
		}
		if line.First == nil {
			line.FirstWrite, line.First = ptr(sec(before)), ptr(sec(s.now()))
		}
	}
	line.End = ptr(sec(s.now()))
	line.Outcome = OutcomeOK
}

func (s *Server) respond(w http.ResponseWriter, hr *http.Request, r *req, line *LogLine, chat bool, id string, prompt int) {
	if !sleepUntilCtx(hr.Context(), s.base, r.start+r.service) {
		line.Outcome = OutcomeLeftInService
		return
	}
	text := strings.Repeat("tok ", r.tokens)
	finish := "length"
	if s.cfg.Spread() && !r.cut {
		finish = "stop"
	}
	var b []byte
	if chat {
		b = fmt.Appendf(b, `{"id":"chatcmpl-%s","object":"chat.completion","created":%d,"model":%s,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":%q}],`,
			id, time.Now().Unix(), s.modelJSON, text, finish)
	} else {
		b = fmt.Appendf(b, `{"id":"cmpl-%s","object":"text_completion","created":%d,"model":%s,"choices":[{"index":0,"text":%q,"logprobs":null,"finish_reason":%q}],`,
			id, time.Now().Unix(), s.modelJSON, text, finish)
	}
	b = fmt.Appendf(b, `"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, prompt, r.tokens, prompt+r.tokens)
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(b); err != nil {
		line.Outcome = "write failed: " + err.Error()
		return
	}
	line.FirstWrite, line.First, line.End = ptr(sec(s.now())), ptr(sec(s.now())), ptr(sec(s.now()))
	line.Outcome = OutcomeOK
}

// encoder writes the SSE chunks of one response, as vLLM frames them.
type encoder struct {
	chat        bool
	id, created string
	model       []byte
}

func (e *encoder) open(b []byte) []byte {
	if e.chat {
		b = append(b, `data: {"id":"chatcmpl-`...)
		b = append(b, e.id...)
		b = append(b, `","object":"chat.completion.chunk","created":`...)
	} else {
		b = append(b, `data: {"id":"cmpl-`...)
		b = append(b, e.id...)
		b = append(b, `","object":"text_completion","created":`...)
	}
	b = append(b, e.created...)
	b = append(b, `,"model":`...)
	return append(b, e.model...)
}

func (e *encoder) role(b []byte) []byte {
	b = e.open(b)
	return append(b, `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n"...)
}

func (e *encoder) token(b []byte, i int, finish string) []byte {
	b = e.open(b)
	if e.chat {
		b = append(b, `,"choices":[{"index":0,"delta":{"content":"t`...)
	} else {
		b = append(b, `,"choices":[{"index":0,"text":"t`...)
	}
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, ` "`...)
	if !e.chat {
		b = append(b, `,"logprobs":null`...)
	} else {
		b = append(b, '}')
	}
	b = append(b, `,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, finish)
	}
	return append(b, "}]}\n\n"...)
}

func (e *encoder) usage(b []byte, prompt, completion int) []byte {
	b = e.open(b)
	return fmt.Appendf(b, `,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", prompt, completion, prompt+completion)
}

func (s *Server) log(l *LogLine) {
	b, _ := json.Marshal(l)
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.closed {
		return
	}
	s.logW.Write(b)
	s.logW.WriteByte('\n')
	if now := time.Now(); now.Sub(s.last) >= time.Second {
		s.last = now
		_ = s.logW.Flush() // an error shows again at close
	}
}

func sec(d time.Duration) float64 { return d.Seconds() }

func ptr[T any](v T) *T { return &v }

// words counts the whitespace-separated words of a JSON string (or of the strings of an array of
// strings or of content parts); anything else counts 0.
func words(raw json.RawMessage) int {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return len(strings.Fields(s))
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return 0
	}
	n := 0
	for _, p := range parts {
		var part struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(p, &s) == nil {
			n += len(strings.Fields(s))
		} else if json.Unmarshal(p, &part) == nil {
			n += len(strings.Fields(part.Text))
		}
	}
	return n
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(msg)
	fmt.Fprintf(w, `{"error":{"message":%s,"type":"error","code":%d}}`, b, status)
}
