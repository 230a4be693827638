// Package fakesse is a scriptable OpenAI-compatible streaming server for loadgen's tests: each
// request is answered by a Script (delays, status, raw SSE lines, a stall or a dropped
// connection). The same scripts run over loopback HTTP (Server) or in memory (Transport), the
// latter for tests under testing/synctest and for benchmarks of the client path.
package fakesse

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Step writes Raw (verbatim, then flushes) after Delay.
type Step struct {
	Delay time.Duration
	Raw   string
}

// Script is the answer to one request.
type Script struct {
	HeaderDelay time.Duration // before the status line and headers
	Status      int           // 0 = 200
	ContentType string        // "" = text/event-stream for 2xx, application/json otherwise
	Body        string        // written after the headers, before Steps (error bodies)
	Steps       []Step
	Hang        bool // after the steps, keep the response open until the client goes away
	Abort       bool // after the steps, drop the connection without ending the response
}

// Received is a request as the server saw it.
type Received struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// JSON decodes the request body into a map (nil if it is not a JSON object).
func (r Received) JSON() map[string]any {
	var m map[string]any
	if json.Unmarshal(r.Body, &m) != nil {
		return nil
	}
	return m
}

// Data is an SSE event "data: payload" after delay.
func Data(delay time.Duration, payload string) Step {
	return Step{Delay: delay, Raw: "data: " + payload + "\n\n"}
}

// Done is the [DONE] sentinel after delay.
func Done(delay time.Duration) Step { return Data(delay, "[DONE]") }

// RoleChunk is a chat chunk that only announces the assistant role.
func RoleChunk() string {
	return `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
}

// ChatChunk is a chat chunk carrying content, with an optional finish reason.
func ChatChunk(content, finish string) string {
	return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%s},"finish_reason":%s}],"usage":null}`,
		quote(content), nullable(finish))
}

// TextChunk is a completions chunk carrying text, with an optional finish reason.
func TextChunk(text, finish string) string {
	return fmt.Sprintf(`{"id":"c","object":"text_completion","choices":[{"index":0,"text":%s,"finish_reason":%s}]}`,
		quote(text), nullable(finish))
}

// UsageChunk is the final usage chunk of stream_options.include_usage.
func UsageChunk(prompt, completion int) string {
	return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		prompt, completion, prompt+completion)
}

// ErrorJSON is an OpenAI error body.
func ErrorJSON(msg string) string {
	return fmt.Sprintf(`{"error":{"message":%s,"type":"server_error","param":null,"code":null}}`, quote(msg))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func nullable(s string) string {
	if s == "" {
		return "null"
	}
	return quote(s)
}

// Stream describes a well-formed streamed completion.
type Stream struct {
	Completions    bool          // /completions chunks ("text") instead of chat deltas
	RoleFirst      bool          // chat: a role-only chunk right after the headers
	TTFT           time.Duration // before the first content chunk
	Gap            time.Duration // between content chunks
	Chunks         int           // content chunks
	TokensPerChunk int           // words per chunk (0 = 1)
	EmptyBetween   bool          // an empty-content chunk after every content chunk
	Usage          bool          // a usage chunk before [DONE]
	PromptTokens   int           // for the usage chunk
	NoDone         bool          // end the body without [DONE]
}

// Script renders the stream. Content chunk k carries TokensPerChunk words "tk"; the last one has
// finish_reason "length".
func (o Stream) Script() Script {
	per := max(o.TokensPerChunk, 1)
	var steps []Step
	if o.RoleFirst {
		steps = append(steps, Data(0, RoleChunk()))
	}
	for k := 0; k < o.Chunks; k++ {
		delay := o.Gap
		if k == 0 {
			delay = o.TTFT
		}
		words := make([]string, per)
		for j := range words {
			words[j] = fmt.Sprintf("t%d", k*per+j)
		}
		text := strings.Join(words, " ") + " "
		finish := ""
		if k == o.Chunks-1 {
			finish = "length"
		}
		if o.Completions {
			steps = append(steps, Data(delay, TextChunk(text, finish)))
		} else {
			steps = append(steps, Data(delay, ChatChunk(text, finish)))
		}
		if o.EmptyBetween && !o.Completions {
			steps = append(steps, Data(0, ChatChunk("", "")))
		}
	}
	if o.Usage {
		steps = append(steps, Data(0, UsageChunk(o.PromptTokens, o.Chunks*per)))
	}
	if !o.NoDone {
		steps = append(steps, Done(0))
	}
	return Script{Steps: steps}
}

// Server serves scripts over loopback HTTP. GET …/models lists Models.
type Server struct {
	URL    string // base URL, ending in /v1
	Models []string

	srv      *httptest.Server
	handler  func(Received) Script
	quit     chan struct{}
	closeOne sync.Once
	mu       sync.Mutex
	received []Received
	conns    atomic.Int64
}

// New starts a server on 127.0.0.1 answering every completion request with handler's script.
func New(handler func(Received) Script) *Server { return start(handler, false) }

// NewTLS is New over HTTPS with a self-signed certificate.
func NewTLS(handler func(Received) Script) *Server { return start(handler, true) }

func start(handler func(Received) Script, useTLS bool) *Server {
	s := &Server{handler: handler, quit: make(chan struct{}), Models: []string{"fake-model"}}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	if useTLS {
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close unblocks hanging handlers and stops the server.
func (s *Server) Close() {
	s.closeOne.Do(func() { close(s.quit) })
	s.srv.Close()
}

// Received returns the requests seen so far.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Conns is the number of TCP connections accepted so far.
func (s *Server) Conns() int64 { return s.conns.Load() }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc := Received{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.received = append(s.received, rc)
	s.mu.Unlock()
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") && s.Models != nil {
		var b bytes.Buffer
		b.WriteString(`{"object":"list","data":[`)
		for i, m := range s.Models {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":%s,"object":"model","owned_by":"fake"}`, quote(m))
		}
		b.WriteString(`]}`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b.Bytes())
		return
	}
	sc := s.handler(rc)
	if !s.sleep(r.Context(), sc.HeaderDelay) {
		return
	}
	status := sc.Status
	if status == 0 {
		status = http.StatusOK
	}
	ct := sc.ContentType
	if ct == "" {
		ct = "text/event-stream"
		if status/100 != 2 {
			ct = "application/json"
		}
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	fl, _ := w.(http.Flusher)
	if sc.Body != "" {
		_, _ = io.WriteString(w, sc.Body)
	}
	if fl != nil {
		fl.Flush()
	}
	for _, st := range sc.Steps {
		if !s.sleep(r.Context(), st.Delay) {
			return
		}
		if _, err := io.WriteString(w, st.Raw); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
	switch {
	case sc.Abort:
		panic(http.ErrAbortHandler)
	case sc.Hang:
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
	}
}

func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.quit:
	}
	return false
}

// Transport answers requests in memory with handler's scripts, sleeping with time.Sleep-like
// timers (so it runs on the fake clock inside a testing/synctest bubble).
type Transport struct {
	Handler func(Received) Script
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	sc := t.Handler(Received{Method: req.Method, Path: req.URL.Path, Header: req.Header, Body: body})
	ctx := req.Context()
	if err := sleepCtx(ctx, sc.HeaderDelay); err != nil {
		return nil, err
	}
	status := sc.Status
	if status == 0 {
		status = http.StatusOK
	}
	ct := sc.ContentType
	if ct == "" {
		ct = "text/event-stream"
		if status/100 != 2 {
			ct = "application/json"
		}
	}
	return &http.Response{
		Status:     fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode: status,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {ct}},
		Body:          &scriptBody{ctx: ctx, sc: sc, pending: sc.Body},
		ContentLength: -1,
		Request:       req,
	}, nil
}

type scriptBody struct {
	ctx     context.Context
	sc      Script
	next    int
	pending string
}

func (b *scriptBody) Read(p []byte) (int, error) {
	for b.pending == "" {
		if b.next == len(b.sc.Steps) {
			switch {
			case b.sc.Abort:
				return 0, io.ErrUnexpectedEOF
			case b.sc.Hang:
				<-b.ctx.Done()
				return 0, b.ctx.Err()
			}
			return 0, io.EOF
		}
		st := b.sc.Steps[b.next]
		b.next++
		if err := sleepCtx(b.ctx, st.Delay); err != nil {
			return 0, err
		}
		b.pending = st.Raw
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

func (b *scriptBody) Close() error { return nil }

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
