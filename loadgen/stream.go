package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// errRequestTimeout is the cause of a request context whose --timeout passed.
var errRequestTimeout = errors.New("request timeout")

// stopCause is a cancellation cause whose text goes into the records of the requests it stops.
// drain, when > 0, marks a tier's drain deadline, which came that long after dispatching stopped.
type stopCause struct {
	msg   string
	drain time.Duration
}

func (s *stopCause) Error() string { return s.msg }

const (
	// readerSize is the bufio size for SSE lines; longer lines are assembled (readLine). One
	// reader is held per open stream, on top of the transport's own 4 KiB connection buffer, so
	// it is kept small: streamed chunks are a few hundred bytes. Measured with 10,000 open
	// streams (loadcurve bench): 16 KiB readers cost 39-42 KiB of RSS per stream, 2 KiB ones
	// 37 KiB, at no measurable CPU cost per chunk.
	readerSize     = 2 << 10
	maxLineLen     = 8 << 20  // a longer SSE line is a broken stream, not a chunk
	maxErrorBody   = 64 << 10 // how much of a non-2xx body is read for its message
	maxDrainBytes  = 64 << 10 // how much is read after [DONE] to let the connection be reused
	drainWait      = 250 * time.Millisecond
	itlPreallocCap = 1024
)

var readerPool = sync.Pool{New: func() any {
	r := &pooledReader{}
	r.br = bufio.NewReaderSize(&r.ends, readerSize)
	return r
}}

// pooledReader is a response body's line reader: a bufio.Reader over the body with its line
// endings made uniform.
type pooledReader struct {
	ends lineEndings
	br   *bufio.Reader
}

// lineEndings turns the three line endings SSE allows (CRLF, LF and a bare CR) into LF, so
// that lines are read with one delimiter: a server that ends its lines with a bare CR gets
// every event read (and timed) as it arrives, not all at the end of the stream. A stream
// without CR (vLLM's, SGLang's) passes untouched, at the cost of one byte search per read.
type lineEndings struct {
	r      io.Reader
	lastCR bool  // the previous read ended in CR: an LF first in this one belongs to it
	left   int64 // bytes the response may still stream (Target.MaxResponseBytes)
}

// errResponseCap ends a response that streamed more than Target.MaxResponseBytes.
var errResponseCap = errors.New("response cap reached")

func (l *lineEndings) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errResponseCap
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if n == 0 || (!l.lastCR && bytes.IndexByte(p[:n], '\r') < 0) {
		return n, err
	}
	w := 0
	for _, c := range p[:n] {
		switch {
		case c == '\n' && l.lastCR:
			l.lastCR = false // the LF of a CRLF, already ended by its CR
			continue
		case c == '\r':
			l.lastCR = true
			c = '\n'
		default:
			l.lastCR = false
		}
		p[w] = c
		w++
	}
	if w == 0 && err == nil {
		// Only the LF of a CRLF split across reads: report it as a zero-byte read, which
		// bufio retries.
		return 0, nil
	}
	return w, err
}

// doResult is what Preflight needs beyond the record.
type doResult struct {
	status     int           // HTTP status, 0 if none came
	serverMsg  string        // the server's error message for a non-2xx status, cleaned
	transport  error         // set when no HTTP answer came at all (dial, TLS, reset before headers)
	retryAfter time.Duration // a non-2xx answer's Retry-After, 0 without one
	reply      string        // a session turn's answer text (content and text), for the next turn's history
}

// MinRetryWait is how long a re-send waits after an answer whose Retry-After is there but gives
// no usable wait: zero, negative, a date already past, a malformed value. The server asked the
// client to hold back; re-sending at once, by every request it answered so, would be a storm.
const MinRetryWait = time.Second

// parseRetryAfter reads a Retry-After value, delay-seconds or an HTTP date (RFC 9110 10.2.3), as
// the wait before a re-send. The rule: no header, no wait (0); delay-seconds or a future date
// wait that long, within [MinRetryWait, MaxRetryWait]; delay-seconds too large for any integer
// (it asks for a very long wait) MaxRetryWait; anything else (0, a negative number, a date now or
// past, a fraction, text) MinRetryWait.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		return clampRetryWait(time.Duration(min(max(secs, 0), int64(MaxRetryWait/time.Second)+1)) * time.Second)
	} else if errors.Is(err, strconv.ErrRange) && v[0] != '-' {
		return MaxRetryWait
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return clampRetryWait(at.Sub(now))
	}
	return MinRetryWait
}

func clampRetryWait(d time.Duration) time.Duration { return min(max(d, MinRetryWait), MaxRetryWait) }

// Do sends req as one streaming request and fills rec from Sent on (the caller owns Planned,
// Dispatched and Slot): the timestamps of METRICS.md as time.Since(t0) taken right after each
// SSE line is read, the chunk gaps, token counts and their source, finish reason, HTTP status,
// outcome, a bounded error text free of secrets, and the quality check. rec should come from
// records.NewRecord. ctx cancellation makes the request canceled, with the cause's text.
func (c *Client) Do(ctx context.Context, t0 time.Time, req *workloads.Request, rec *records.Record) {
	c.do(ctx, t0, req, rec)
}

func (c *Client) do(ctx context.Context, t0 time.Time, req *workloads.Request, rec *records.Record) doResult {
	var res doResult
	body := c.body(req)
	// The runaway cut and the belief in usage counts follow the max_tokens the body carries
	// (--extra-body may replace the workload's), which the record keeps.
	sentMax := c.bodyPlan.sentMaxTokens(req)
	rec.MaxTokens = sentMax
	// The request's context is made first, so the request is built with it once (WithContext
	// would copy the request). One clock reading serves as both sent and the origin of the
	// --timeout deadline, so a request never times out before --timeout has passed since sent
	// (sent therefore precedes building the request by the microsecond that takes).
	sentAt := time.Now()
	var rctx context.Context
	var cancel context.CancelFunc
	if c.target.Timeout > 0 {
		rctx, cancel = context.WithDeadlineCause(ctx, sentAt.Add(c.target.Timeout), errRequestTimeout)
	} else {
		rctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	// The connection the request goes out on tells when its bytes moved (socket.go).
	trace := sockTraces.Get().(*sockTrace)
	trace.conn = nil
	defer sockTraces.Put(trace) // after the body is closed: the defers below run first
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(rctx, &trace.trace), http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil { // only an invalid method or URL, both fixed and validated
		rec.Outcome, rec.Error = records.StreamError, c.clean("build request: "+err.Error())
		return res
	}
	// Shared by every request, read-only: net/http never modifies a client request's Header
	// (http.Client copies it before adding anything), so no per-request clone is needed. A
	// request that carries an id gets a pooled copy, back in the pool once its body is closed
	// (this defer runs after the body's).
	if c.target.RequestIDPrefix == "" {
		hreq.Header = c.header
	} else {
		ih := c.requestHeader(rec)
		hreq.Header = ih.h
		defer c.idHeaders.Put(ih)
	}
	if c.host != "" {
		hreq.Host = c.host
	}
	rec.Sent = sentAt.Sub(t0)
	resp, err := c.hc.Do(hreq)
	if err != nil {
		rec.End = time.Since(t0)
		res.transport = c.noResponse(rctx, rec, err)
		return res
	}
	defer resp.Body.Close()
	clock := newSocketClock(trace.conn, t0)
	if w, ok := clock.written(); ok && w >= rec.Sent {
		rec.Written = w // the request's last bytes went to the socket: its response has begun
	}
	rec.HTTPStatus = resp.StatusCode
	res.status = resp.StatusCode

	h := held{b: c.held} // what the request holds beyond its fixed buffers
	defer h.release()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		c.statusFailure(resp, &h, t0, rec, &res)
		return res
	}
	sk, ok := c.kind.(streamKind)
	if !ok {
		c.readDocument(rctx, resp.Body, &h, t0, req, rec, maxPromptTokens(len(body)))
		return res
	}
	c.readStream(rctx, cancel, resp, &h, sk, clock, t0, req, rec, len(body), sentMax, &res)
	return res
}

// readStream reads a 2xx response's event stream into rec (its moments, chunks, usage, finish
// reason, quality) and, for a session's turn, the reply into res; within the client's budget h
// and the stream's own limits. cancel ends the request when a finished stream's body does not.
func (c *Client) readStream(rctx context.Context, cancel context.CancelFunc, resp *http.Response, h *held, sk streamKind,
	clock socketClock, t0 time.Time, req *workloads.Request, rec *records.Record, bodyLen, sentMax int, res *doResult) {
	pr := readerPool.Get().(*pooledReader)
	pr.ends = lineEndings{r: resp.Body, left: c.target.maxResponseBytes()}
	br := pr.br
	br.Reset(&pr.ends)
	defer func() {
		pr.ends = lineEndings{}
		br.Reset(&pr.ends)
		readerPool.Put(pr)
	}()
	if isJSONMediaType(resp.Header.Get("Content-Type")) && !startsAsEventStream(br) {
		c.documentNotStream(br, h, t0, rec)
		return
	}

	st := streamState{kind: sk, rec: rec, t0: t0, clock: clock, floor: max(rec.Sent, rec.Written), needText: req.Expect.NeedsText() || req.Session != 0, maxChunks: maxChunksFor(sentMax), maxTokens: sentMax,
		maxPrompt: maxPromptTokens(bodyLen), held: held{b: c.held}}
	defer st.held.release()
	if sentMax > 1 {
		rec.ITL = make([]time.Duration, 0, min(sentMax-1, itlPreallocCap))
	}
	done, readErr := st.read(br)
	st.long, st.pending = st.held.drop(st.long), st.held.drop(st.pending) // nothing refers to them any more
	if done {
		// Read to the end of the body (the chunked terminator normally follows [DONE] at once) so
		// the connection goes back to the pool; give up quickly if the server keeps it open.
		stop := time.AfterFunc(drainWait, cancel)
		_, _ = io.Copy(io.Discard, io.LimitReader(br, maxDrainBytes))
		stop.Stop()
	}

	if !done {
		c.streamEnd(rctx, rec, readErr, sk, resp.Header)
	}
	if rec.Error != "" {
		rec.Error = c.clean(rec.Error)
	}
	st.finish(req)
	if rec.FinishReason != "" {
		// The server's own word, kept in the record and shown: sanitised like its error texts.
		rec.FinishReason = c.secrets.Clean(rec.FinishReason, records.MaxFinishReasonLen)
	}
	if st.errMsg != "" && rec.Outcome == records.OK {
		rec.Error = c.clean(st.errMsg) // the quality check's reason
	}
	if req.Session != 0 {
		res.reply = st.text.String()
	}
}

// noResponse records a request that got no response: the context's failure when it ended
// (--timeout, an interruption), else a transport failure (the client's own resources named as
// such). It returns the transport error.
func (c *Client) noResponse(rctx context.Context, rec *records.Record, err error) error {
	if rctx.Err() != nil {
		rec.Outcome, rec.Error = c.ctxFailure(rctx, rec)
		return nil
	}
	rec.Outcome = records.StreamError
	if isLocalResourceError(err) {
		rec.Error = c.clean(records.ClientResourcesPrefix + describeTransportError(err) +
			" (this client's limit, not the server's failure: raise the limit, or cap --max-concurrency)")
	} else {
		rec.Error = c.clean("no response: " + describeTransportError(err))
	}
	return err
}

// statusFailure records a response whose status is not 2xx: its Retry-After, the server's
// message (from its body, read within the client's budget h, or where a redirect points).
func (c *Client) statusFailure(resp *http.Response, h *held, t0 time.Time, rec *records.Record, res *doResult) {
	res.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	// A short read (cut, or the client's memory for bodies held by others) still has the status.
	b, _ := h.readHeld(resp.Body, maxErrorBody-1, "an error body")
	rec.End = time.Since(t0)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		res.serverMsg = c.clean(redirectMessage(resp))
	} else {
		res.serverMsg = c.clean(serverMessage(b))
	}
	h.drop(b)
	rec.Outcome = records.HTTPError
	rec.Error = c.clean((&statusError{resp.StatusCode, res.serverMsg}).Error())
}

// documentNotStream records a 2xx answer that is a JSON document where an event stream was
// asked for: a broken stream, with the server's error message when the document carries one.
func (c *Client) documentNotStream(br io.Reader, h *held, t0 time.Time, rec *records.Record) {
	b, _ := h.readHeld(br, maxErrorBody-1, "a JSON answer")
	rec.End = time.Since(t0)
	rec.Outcome = records.StreamError
	msg := "the server answered with a JSON document, not an event stream (does it support \"stream\": true?)"
	if m := serverMessage(b); m != "" && bytes.Contains(b, []byte(`"error"`)) {
		msg += ": " + m
	}
	h.drop(b)
	rec.Error = c.clean(msg)
}

// streamEnd records why a stream that did not reach its last event ended: the context's failure
// (--timeout, an interruption), a line or response too large to hold, the body's end, or a
// broken connection. readErr nil means the reading stopped on a malformed or error-carrying
// event, whose outcome and text are already set.
func (c *Client) streamEnd(rctx context.Context, rec *records.Record, readErr error, sk streamKind, header http.Header) {
	switch {
	case readErr != nil && rctx.Err() != nil:
		rec.Outcome, rec.Error = c.ctxFailure(rctx, rec)
	case readErr == nil:
	case errors.Is(readErr, errHeldFull) || errors.As(readErr, new(*lineTooLongError)):
		// A line (or an event) the stream cannot be let hold: the server's, as a broken stream.
		rec.Outcome = records.StreamError
		rec.Error = fmt.Sprintf("stream cut after %d output chunks: %v", rec.Chunks, readErr)
	case errors.Is(readErr, errResponseCap):
		rec.Outcome = records.StreamError
		rec.Error = fmt.Sprintf("response cut at %s (--max-response-mib) after %d output chunks: the server does not stop", sizeText(c.target.maxResponseBytes()), rec.Chunks)
	case errors.Is(readErr, io.EOF):
		rec.Outcome = records.StreamError
		rec.Error = fmt.Sprintf("stream ended without %s after %d output chunks", sk.lastEvent(), rec.Chunks)
		if why := notAnEventStream(header); why != "" && rec.Chunks == 0 {
			rec.Error += ": " + why
		}
	default:
		rec.Outcome = records.StreamError
		rec.Error = "stream broken: " + describeTransportError(readErr)
	}
}

// readDocument fills rec from a documentKind's 2xx answer, body: the whole answer is read
// (within --max-response-mib, held against the client's budget h) and its end is the
// response's end, and, for an answer, its last moment too (E2EL, last - sent, is then the
// request's latency); nothing is streamed, so the record has no first token, no chunks and no
// output tokens. The input tokens are the usage's
// when the answer reports them and they are to be believed (within maxPrompt, what the request
// could carry: maxPromptTokens), else the workload's count.
func (c *Client) readDocument(rctx context.Context, body io.Reader, h *held, t0 time.Time, req *workloads.Request, rec *records.Record, maxPrompt int) {
	limit := c.target.maxResponseBytes()
	b, err := h.readHeld(body, limit, "an answer")
	defer h.drop(b) // what the answer holds is copied into the record
	rec.End = time.Since(t0)
	rec.InputTokens, rec.InputTokensSource = req.InputTokens, records.SourceWorkload
	switch {
	case err != nil && rctx.Err() != nil:
		rec.Outcome, rec.Error = c.ctxFailure(rctx, rec)
	case errors.Is(err, errHeldFull):
		rec.Outcome, rec.Error = records.StreamError, "answer not read whole: "+err.Error()
	case err != nil:
		rec.Outcome, rec.Error = records.StreamError, "answer broken: "+describeTransportError(err)
	case int64(len(b)) > limit:
		rec.Outcome = records.StreamError
		rec.Error = fmt.Sprintf("answer cut at %s (--max-response-mib): the server does not stop", sizeText(limit))
	default:
		var d document
		if err := c.kind.(documentKind).readDocument(b, &d); err != nil {
			rec.Outcome, rec.Error = records.StreamError, fmt.Sprintf("malformed answer (%v): %s", err, excerpt(b))
		} else {
			rec.Last = rec.End // the answer's last (and only) piece: E2EL is the request's latency
			if d.promptOK {
				believePrompt(rec, req, d.prompt, maxPrompt)
			}
		}
	}
	if rec.Error != "" {
		rec.Error = c.clean(rec.Error)
	}
}

// excerpt is the head of b that an error text may quote: the client bounds the text to
// maxErrorLen once secrets are hidden, so a few times that is all it ever shows, and a payload
// of megabytes is not copied into a message only to be cut.
func excerpt(b []byte) []byte { return b[:min(len(b), 4*maxErrorLen)] }

// sizeText prints a byte count in MiB when it is a whole number of them.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// maxChunksFor is the number of output chunks beyond which a response is cut as runaway: a
// chunk carries at least one token, so sixteen times max_tokens is a server that ignores
// max_tokens by far, and the floor of 4,096 leaves room for servers that stream more chunks
// than tokens (a test server's fixed stream, a proxy that splits them). Without max_tokens the
// cap is maxChunksNoLimit. It keeps a record's ITL array bounded whatever the server does.
func maxChunksFor(maxTokens int) int {
	if maxTokens <= 0 {
		return maxChunksNoLimit
	}
	return max(16*maxTokens, minChunkCap)
}

const (
	minChunkCap      = 4096
	maxChunksNoLimit = 1 << 20
)

// notAnEventStream says why an answer that ended without a single event was not an event
// stream, when its headers tell: a compressed body (the client asks for none) or another media
// type, such as a web page at the base URL.
func notAnEventStream(h http.Header) string {
	if ce := strings.TrimSpace(h.Get("Content-Encoding")); ce != "" && !strings.EqualFold(ce, "identity") {
		return fmt.Sprintf("the answer is compressed (Content-Encoding %q), and an event stream must not be: is a proxy compressing it?", ce)
	}
	ct := strings.TrimSpace(h.Get("Content-Type"))
	if mt, _, _ := strings.Cut(ct, ";"); !strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
		if ct == "" {
			ct = "none"
		}
		return fmt.Sprintf("the answer's Content-Type is %q, not text/event-stream: is --base-url the API (it usually ends in /v1), not a web page or a proxy's?", ct)
	}
	return ""
}

// startsAsEventStream reports whether a body (labelled as something else, such as
// application/json) is an event stream all the same: after any blank space, it starts with an
// SSE field a JSON document cannot start with ("data:", "event:", "id:", "retry:") or a comment
// (":"). It reads no further than the first field name, and consumes only the blank space.
func startsAsEventStream(br *bufio.Reader) bool {
	for {
		c, err := br.ReadByte()
		if err != nil {
			return false
		}
		if c != ' ' && c != '\t' && c != '\n' {
			_ = br.UnreadByte()
			break
		}
	}
	first, err := br.Peek(1)
	if err != nil {
		return false
	}
	switch first[0] {
	case ':':
		return true
	case 'd', 'e', 'i', 'r':
	default:
		return false // '{', '[', a string, a number, true, false, null: a JSON document
	}
	for _, field := range []string{"data:", "event:", "id:", "retry:"} {
		if field[0] != first[0] {
			continue
		}
		b, _ := br.Peek(len(field))
		return string(b) == field
	}
	return false
}

// isJSONMediaType reports whether a Content-Type value names application/json, whatever its
// parameters and letter case, without mime.ParseMediaType's allocation of a parameter map on
// every request.
func isJSONMediaType(v string) bool {
	mt, _, _ := strings.Cut(v, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// stallSilence is how long a response must have been silent (nothing since it was sent, or since
// its last output) when a tier's drain deadline ends it to count as stalled: the drain itself
// when shorter. A streaming server sends something every few tens of milliseconds; one that
// has not started a request sent seconds ago, or stopped in the middle of one, is not working
// on it.
const stallSilence = 5 * time.Second

// ctxFailure classifies rec, a request whose context ended (rec.End set): its own deadline is a
// timeout; a tier's drain deadline that found the response silent for stallSilence (or the whole
// drain, when shorter) is a stall, a timeout too, the server's failure (StallPrefix); anything
// else (the run stopping, a drain deadline that cut a response still streaming) a cancellation
// with the cause's text.
func (c *Client) ctxFailure(rctx context.Context, rec *records.Record) (records.Outcome, string) {
	cause := context.Cause(rctx)
	if errors.Is(cause, errRequestTimeout) {
		return records.Timeout, fmt.Sprintf("no complete response within the %v request timeout", c.target.Timeout)
	}
	var sc *stopCause
	if errors.As(cause, &sc) {
		if sc.drain > 0 && rec.Sent != records.Unset && rec.End != records.Unset {
			heard := max(rec.Sent, rec.FirstEvent, rec.Last) // the last sign of the response
			if silent := rec.End - heard; silent >= min(sc.drain, stallSilence) {
				what := "no output"
				if rec.Chunks > 0 {
					what = fmt.Sprintf("no output after %d chunks", rec.Chunks)
				}
				return records.Timeout, fmt.Sprintf("%s%s from the server for %v, when the tier's drain deadline passed (grace %v after dispatching stopped)",
					records.StallPrefix, what, silent.Round(time.Millisecond), sc.drain)
			}
		}
		return records.Canceled, sc.msg
	}
	return records.Canceled, "canceled: the run was stopped (" + cause.Error() + ")"
}

// streamState is the per-request reading state.
type streamState struct {
	kind         streamKind
	rec          *records.Record
	t0           time.Time
	clock        socketClock   // when the bytes of each read arrived
	readAt       time.Duration // when the client read the current line (its moment may be earlier)
	floor        time.Duration // the earliest moment the next line may have: the previous one's, or sent
	needText     bool
	text         strings.Builder
	long         []byte // assembly buffer for lines longer than the reader's buffer, held against held
	held         held   // what the request holds beyond its fixed buffers (long, pending, text)
	chunk        chunkInfo
	usageSet     bool // a usage message was received; prompt and complete are its counts
	prompt       int
	complete     int
	promptOK     bool   // the last usage's prompt_tokens was a valid count
	completeOK   bool   // the last usage's completion_tokens was a valid count
	usageBad     string // what was wrong with the last usage message
	pending      []byte // data lines of an event that are not yet a whole payload (data)
	pendingErr   error  // why the first of them was not one by itself
	outBytes     int    // raw JSON bytes of every output value streamed (chunkInfo.outBytes)
	finishReason string
	isError      bool // the current event was announced as "event: error"
	maxChunks    int  // output chunks beyond which the response is cut as runaway (maxChunksFor)
	maxTokens    int  // the request's max_tokens, for the cut's message
	maxPrompt    int  // the most prompt tokens the request could carry (maxPromptTokens)
	errMsg       string
	lastAnswer   time.Duration // the last answer-bearing message
	cached       int           // the last usage's prompt_tokens_details.cached_tokens (when cachedOK)
	cachedOK     bool
	reasoning    int // the last usage's completion_tokens_details.reasoning_tokens (when reasonOK)
	reasonOK     bool
}

// read consumes SSE lines until [DONE] (done), a read error (returned), or an event that ends the
// stream as broken (rec.Outcome set, nil error).
func (s *streamState) read(br *bufio.Reader) (done bool, err error) {
	rec := s.rec
	for {
		line, err := s.readLine(br)
		now := s.moment()
		if err != nil && !errors.Is(err, io.EOF) {
			// The read was cut (the request's deadline, a cancel, a reset): what came of the
			// last line is a fragment, and parsing it would blame the server for the cut. The
			// stream ended when the client saw it end, not when its last bytes arrived.
			rec.End = s.readAt
			return false, err
		}
		if len(line) > 0 {
			stop, isDone := s.line(line, now)
			s.settle()
			if isDone {
				rec.End = now
				return true, nil
			}
			if stop {
				rec.End = now
				return false, nil
			}
		} else if err == nil && s.endEvent() { // blank line: end of an event
			rec.End = now
			return false, nil
		}
		if err != nil {
			rec.End = s.readAt // the end of the stream, seen when the read returned it
			if s.endEvent() {  // the stream ended inside an event
				return false, nil
			}
			return false, err
		}
	}
}

// moment is when the line just read arrived: when the bytes of the connection's last read
// arrived (the read that brought the line's last byte), or, without socket stamps, now. The
// client's own reading, later on a busy machine, is kept in s.readAt.
//
// An arrival is believed only between the stream's previous moment (or the request's sent
// moment, for its first line) and the read: never later than the read, so timing at the socket
// can only take the client's own delay out of a latency, and never earlier than what came
// before it (the real-time clock the kernel stamps with stepped forward), so it cannot make the
// deployment look faster than its bytes were.
func (s *streamState) moment() time.Duration {
	s.readAt = time.Since(s.t0)
	at := s.readAt
	if arrived, read, ok := s.clock.arrived(); ok && arrived <= s.readAt && read <= s.readAt && arrived >= s.floor {
		at = arrived
	}
	s.floor = at
	return at
}

// readLine returns the next line without its line ending. The slice is valid until the next call.
// A line longer than the reader's buffer is assembled in s.long, read in pieces of at most that
// buffer, each piece's room taken from the client's budget before it is copied: a line longer
// than maxLineLen, or one the budget cannot hold, ends the stream (lineTooLongError,
// errHeldFull) without more of it being read.
func (s *streamState) readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.long = s.long[:0]
		for {
			var gerr error
			if s.long, gerr = s.held.grow(s.long, len(line), maxLineLen, "an event line"); gerr != nil {
				return nil, gerr
			}
			s.long = append(s.long, line...)
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
			line, err = br.ReadSlice('\n')
		}
		line = s.long
	}
	line = bytes.TrimRight(line, "\r\n")
	return line, err
}

// keepHeld is the capacity a stream keeps of a buffer held against the client's budget once
// the line or event that grew it is done; a larger one is given back.
const keepHeld = 64 << 10

// settle gives back what the stream no longer holds: the long-line buffer and the pending data's
// buffer, when they are empty and large.
func (s *streamState) settle() {
	if cap(s.long) > keepHeld {
		s.long = s.held.drop(s.long)
	}
	if len(s.pending) == 0 && cap(s.pending) > keepHeld {
		s.pending = s.held.drop(s.pending)
	}
}

// line handles one non-empty SSE line received at now. stop reports a stream ended as broken;
// done the [DONE] sentinel.
func (s *streamState) line(line []byte, now time.Duration) (stop, done bool) {
	if line[0] == ':' {
		return false, false // comment, e.g. a keep-alive
	}
	field, value, _ := bytes.Cut(line, []byte{':'})
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(field) {
	case "data":
		return s.data(value, now)
	case "event":
		s.isError = string(value) == "error"
	}
	return false, false
}

// data handles the value of a data line. An event's data may span several data lines, which
// the SSE specification joins with "\n"; servers also send one complete payload per data line
// without the blank line that ends an event. So a line that is a payload by itself is taken at
// once, as it arrives; one that is not waits for the lines that complete it (held in pending),
// and the joined payload is taken when it parses. Pending data that never becomes a payload
// (the event ends, the stream ends, or a line follows that is a payload by itself) is malformed.
func (s *streamState) data(value []byte, now time.Duration) (stop, done bool) {
	payload := bytes.TrimSpace(value)
	if len(s.pending) == 0 {
		switch string(payload) {
		case "[DONE]":
			return false, true
		case "":
			return false, false // an empty data line carries nothing
		}
		err := s.kind.parseEvent(payload, &s.chunk)
		if err == nil {
			return s.payload(payload, now)
		}
		var gerr error
		if s.pending, gerr = s.held.grow(s.pending, len(payload), 0, "an event's data"); gerr != nil {
			return s.cut(gerr), false
		}
		s.pending, s.pendingErr = append(s.pending, payload...), err
		return false, false
	}
	// The joined data is at most maxLineLen and one line more (the check below).
	grown, gerr := s.held.grow(s.pending, 1+len(value), 0, "an event's data")
	if gerr != nil {
		return s.cut(gerr), false
	}
	joined := append(append(grown, '\n'), value...)
	s.pending = joined
	if s.kind.parseEvent(joined, &s.chunk) == nil {
		s.pending = joined[:0]
		return s.payload(joined, now)
	}
	if string(payload) == "[DONE]" || s.kind.parseEvent(payload, &s.chunk) == nil || len(joined) > maxLineLen {
		// The held data was not the start of this payload: it was malformed on its own.
		return s.malformed(s.pendingErr, joined[:len(joined)-len(value)-1]), false
	}
	return false, false
}

// endEvent handles the end of an event (a blank line, or the end of the stream): data held for
// lines that did not come is malformed.
func (s *streamState) endEvent() (stop bool) {
	s.isError = false
	if len(s.pending) == 0 {
		return false
	}
	return s.malformed(s.pendingErr, s.pending)
}

// cut ends the stream as broken by data it cannot be let hold (errHeldFull).
func (s *streamState) cut(err error) bool {
	s.rec.Outcome = records.StreamError
	s.rec.Error = fmt.Sprintf("stream cut after %d output chunks: %v", s.rec.Chunks, err)
	s.pending = s.pending[:0]
	return true
}

// malformed ends the stream as broken by a payload that is not a chunk.
func (s *streamState) malformed(err error, payload []byte) bool {
	s.rec.Outcome = records.StreamError
	s.rec.Error = fmt.Sprintf("malformed event data (%v): %s", err, excerpt(payload)) // redacted, then bounded, by the client
	s.pending = s.pending[:0]
	return true
}

// payload handles one whole data payload, parsed into s.chunk, received at now. It reports a
// stream ended as broken (stop), or ended by the kind's last event (done).
func (s *streamState) payload(payload []byte, now time.Duration) (stop, done bool) {
	rec := s.rec
	ci := &s.chunk
	if s.isError || ci.isError {
		rec.Outcome = records.StreamError
		rec.Error = "error in stream: " + streamErrorMessage(payload, ci.errRaw)
		return true, false
	}
	if ci.choices && rec.FirstEvent == records.Unset {
		rec.FirstEvent = now
	}
	if len(ci.finish) > 0 && string(ci.finish) != s.finishReason {
		s.finishReason = finishReasonString(ci.finish)
	}
	if ci.output {
		if rec.First == records.Unset {
			rec.First = now
			if s.readAt > now {
				rec.FirstRead = s.readAt // the client read it later than it arrived
			}
		} else {
			rec.ITL = append(rec.ITL, now-rec.Last)
		}
		rec.Last = now
		rec.Chunks++
		s.outBytes += ci.outBytes
		s.answerOrReasoning(ci.answer, now)
		if s.maxChunks > 0 && rec.Chunks > s.maxChunks {
			rec.Outcome = records.StreamError
			rec.Error = fmt.Sprintf("response cut after %d output chunks (%d max_tokens): the server does not stop", rec.Chunks, s.maxTokens)
			return true, false
		}
		if s.needText {
			if err := s.holdText(len(payload)); err != nil {
				return s.cut(err), false
			}
			s.kind.appendText(payload, &s.text)
		}
	}
	if ci.usageSet {
		// The last usage wins: it is cumulative when the server streams usage with every chunk.
		s.usageSet, s.prompt, s.complete = true, ci.prompt, ci.completion
		s.promptOK, s.completeOK, s.usageBad = ci.promptOK, ci.completeOK, ci.usageBad
		s.cached, s.cachedOK, s.reasoning, s.reasonOK = ci.cached, ci.cachedOK, ci.reasoning, ci.reasonOK
	}
	return false, ci.done
}

// holdText makes room in s.text for the text of a payload of n bytes (its text is no longer
// than its JSON), its growth taken from the client's budget before the text grows.
func (s *streamState) holdText(n int) error {
	before, need := s.text.Cap(), s.text.Len()+n
	if need <= before {
		return nil
	}
	charged := before + n // strings.Builder.Grow(n) makes the capacity 2·cap+n
	if err := s.held.take(charged, "a reply's text", need); err != nil {
		return err
	}
	s.text.Grow(n)
	switch d := s.text.Cap() - before - charged; { // a size class other than computed
	case d > 0:
		return s.held.take(d, "a reply's text", need)
	case d < 0:
		s.held.give(-d)
	}
	return nil
}

// answerOrReasoning files an output message received at now (already counted in Chunks, ITL and
// Last) as answer output or reasoning only. The answer's own gaps are kept apart only once
// reasoning has come: until then they are ITL.
func (s *streamState) answerOrReasoning(answer bool, now time.Duration) {
	rec := s.rec
	if !answer {
		if rec.ReasoningChunks == 0 && rec.FirstAnswer != records.Unset {
			// Reasoning after answer output (unusual): every earlier message was an answer, so
			// the answer's gaps so far are ITL's, less the gap just added for this message.
			rec.AnswerITL = append([]time.Duration(nil), rec.ITL[:len(rec.ITL)-1]...)
		}
		rec.ReasoningChunks++
		return
	}
	if rec.FirstAnswer == records.Unset {
		rec.FirstAnswer = now
	} else if rec.ReasoningChunks > 0 {
		rec.AnswerITL = append(rec.AnswerITL, now-s.lastAnswer)
	}
	s.lastAnswer = now
}

// finishReasonString returns the string whose JSON body (between the quotes) is raw, as
// encoding/json decodes it (escapes resolved, each invalid UTF-8 byte as U+FFFD), without
// allocating for the usual values.
func finishReasonString(raw []byte) string {
	switch string(raw) { // the conversion in a switch does not allocate
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "tool_calls":
		return "tool_calls"
	case "content_filter":
		return "content_filter"
	}
	if len(raw) > records.MaxFinishReasonLen {
		// Decode no more than the record keeps (a server once sent 7 MB here): the first
		// bytes, less an escape the cut split (at most 5 bytes of one).
		head := raw[:records.MaxFinishReasonLen]
		for k := 0; k <= 5 && len(head) > 0; k++ {
			if v, ok := decodeJSONString(head); ok {
				return records.CutText(v, len(raw), records.MaxFinishReasonLen)
			}
			head = head[:len(head)-1]
		}
		return records.CutText("", len(raw), records.MaxFinishReasonLen)
	}
	if v, ok := decodeJSONString(raw); ok {
		return v
	}
	return string(raw) // parseChunk validated the string: cannot happen
}

// decodeJSONString decodes raw, the body of a JSON string (between its quotes), as
// encoding/json does; false when it is not a valid one.
func decodeJSONString(raw []byte) (string, bool) {
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw), true
	}
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var v string
	if err := json.Unmarshal(quoted, &v); err != nil {
		return "", false
	}
	return v, true
}

// finish fills the token counts, the finish reason and the quality check.
func (s *streamState) finish(req *workloads.Request) {
	rec := s.rec
	rec.OutputTokens, rec.OutputTokensSource = rec.Chunks, records.SourceChunks
	rec.InputTokens, rec.InputTokensSource = req.InputTokens, records.SourceWorkload
	defer s.finishReasoning()
	if !s.usageSet {
		s.finishQuality(req)
		return
	}
	// A usage message counts only where it can be believed (usageRejection). Otherwise the
	// output is counted from the chunks, and the record's source and UsageRejected say so.
	if why := s.usageRejection(); why == "" {
		rec.OutputTokens, rec.OutputTokensSource = s.complete, records.SourceUsage
	} else {
		rec.OutputTokensSource, rec.UsageRejected = records.SourceChunksBadUsage, records.BoundText(why, records.MaxNoteLen)
	}
	if s.promptOK {
		believePrompt(rec, req, s.prompt, s.maxPrompt)
	}
	if s.cachedOK && s.cached <= s.maxPrompt && (!s.promptOK || s.cached <= s.prompt) {
		rec.CachedTokens, rec.CachedTokensSource = s.cached, records.SourceUsage
	}
	s.finishQuality(req)
}

// promptTemplateAllowance is the prompt tokens a server may count beyond those of the text the
// request carried: what its chat template adds that no byte of the request holds. Templates add
// role markers around each message (a few tokens, fewer than the bytes of the message's JSON
// syntax, {"role":"user","content":""}, which the body bound counts already) and, in some
// models, a default system prompt (Llama 3's knowledge-date preamble is about 30 tokens,
// gpt-oss's harmony system message about 100). 1,024 tokens is several times the largest of
// these: a real server is never refused, and a count beyond it is one no request carried.
const promptTemplateAllowance = 1024

// maxPromptTokens is the most prompt tokens a request whose body has sent bytes can carry: a
// token of the text decodes to at least one byte of it (byte-level BPE; SentencePiece with byte
// fallback, whose dummy prefix stands for a space the template inserts), JSON never writes a
// text in fewer bytes than it has (nor a token id of a prompt given as ids in fewer than one),
// so the body's bytes bound the text's tokens; the template adds promptTemplateAllowance at
// most. A usage.prompt_tokens beyond it would put tokens in throughputs that no request carried
// (10^9 prompt tokens once made "Total token throughput 14656340626 tok/s", exit 0).
func maxPromptTokens(sent int) int { return sent + promptTemplateAllowance }

// believePrompt sets the record's input tokens to the usage's prompt_tokens when they are
// within what the request could carry (limit), keeping the workload's count beside them; else the
// workload's count stays, its source says the usage was not believed, and UsageRejected why.
func believePrompt(rec *records.Record, req *workloads.Request, prompt, limit int) {
	if prompt <= limit {
		rec.RequestedInputTokens = req.InputTokens
		rec.InputTokens, rec.InputTokensSource = prompt, records.SourceUsage
		return
	}
	rec.InputTokens, rec.InputTokensSource = req.InputTokens, records.SourceWorkloadBadUsage
	why := fmt.Sprintf("usage.prompt_tokens %d: beyond the %d a request of %d bytes can carry (a token per byte, and %d for the chat template)",
		prompt, limit, limit-promptTemplateAllowance, promptTemplateAllowance)
	if rec.UsageRejected != "" {
		why = rec.UsageRejected + "; " + why
	}
	rec.UsageRejected = records.BoundText(why, records.MaxNoteLen)
}

// usageRejection says why the last usage message's completion_tokens cannot be believed, or ""
// when it can: it must be a valid count, not 0 after output chunks (`usage: {}` would otherwise
// turn 8 chunks into 0 tokens), and not beyond both what was asked and what was streamed. What
// was asked is the max_tokens the body carried (a server may generate up to it; 0: none sent).
// What was streamed bounds a count from above by one token per byte of output (a token the
// client is sent decodes to at least one byte, and the raw JSON of a value is never shorter
// than its text) plus one per output chunk and one more (tokens that decode to nothing, such as
// an end-of-sequence token). A count beyond both would put tokens in throughputs that no
// response carried (8 chunks with completion_tokens 1,000,000 once reported 14.7 M tok/s).
func (s *streamState) usageRejection() string {
	rec := s.rec
	switch {
	case s.usageBad != "":
		return s.usageBad
	case !s.completeOK:
		return "the usage message has no completion_tokens"
	case s.complete == 0 && rec.Chunks > 0:
		return fmt.Sprintf("usage.completion_tokens is 0 after %d output chunks", rec.Chunks)
	}
	streamed := s.outBytes + rec.Chunks + 1
	if s.complete <= max(s.maxTokens, streamed) {
		return ""
	}
	asked := "no max_tokens was sent"
	if s.maxTokens > 0 {
		asked = fmt.Sprintf("beyond the %d max_tokens sent", s.maxTokens)
	}
	return fmt.Sprintf("usage.completion_tokens %d: %s, and the %d output chunks (%d bytes) streamed carry at most %d tokens",
		s.complete, asked, rec.Chunks, s.outBytes, streamed)
}

// finishReasoning splits the output into reasoning and answer. The reasoning tokens come from
// the usage message's completion_tokens_details.reasoning_tokens when the output count is the
// usage's too and the detail fits in it; else, when reasoning was streamed, they are estimated
// as the output tokens' share of reasoning-only messages (source "chunks").
func (s *streamState) finishReasoning() {
	rec := s.rec
	switch {
	case rec.OutputTokensSource == records.SourceUsage && s.reasonOK && s.reasoning <= rec.OutputTokens &&
		(s.reasoning > 0 || rec.ReasoningChunks > 0):
		rec.ReasoningTokens, rec.ReasoningTokensSource = s.reasoning, records.SourceUsage
	case rec.ReasoningChunks > 0:
		share := float64(rec.ReasoningChunks) / float64(rec.Chunks)
		rec.ReasoningTokens = int(math.Round(share * float64(rec.OutputTokens)))
		rec.ReasoningTokensSource = records.SourceChunks
	}
	if rec.ReasoningChunks == 0 {
		rec.FirstAnswer, rec.AnswerITL = records.Unset, nil // the answer's moments are the output's
	}
}

// finishQuality fills the finish reason and the quality check.
func (s *streamState) finishQuality(req *workloads.Request) {
	rec := s.rec
	rec.FinishReason = s.finishReason
	if req.Expect == nil || rec.Outcome != records.OK {
		return
	}
	if msg := req.Expect.Check(s.text.String(), s.finishReason, rec.OutputTokens); msg != "" {
		rec.Quality = records.QualityFail
		s.errMsg = "quality check: " + msg
	} else {
		rec.Quality = records.QualityPass
	}
}

// streamErrorMessage extracts the message of an error event.
func streamErrorMessage(payload, errRaw []byte) string {
	if len(errRaw) > 0 {
		var s string
		if json.Unmarshal(errRaw, &s) == nil && s != "" {
			return s
		}
		var e openai.APIError
		if json.Unmarshal(errRaw, &e) == nil && e.Message != "" {
			return e.Message
		}
		return string(errRaw)
	}
	if m := serverMessage(payload); m != "" {
		return m
	}
	return string(payload)
}

// serverMessage extracts the human message from an error body: OpenAI's {"error":{"message"}},
// {"error":"..."}, vLLM's {"object":"error","message"}, FastAPI's {"detail"}, else the text.
func serverMessage(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return ""
	}
	var oe openai.ErrorResponse
	if json.Unmarshal(body, &oe) == nil && oe.Error != nil && oe.Error.Message != "" {
		return oe.Error.Message
	}
	var other struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
		Detail  any    `json:"detail"`
	}
	if json.Unmarshal(body, &other) == nil {
		if s, ok := other.Error.(string); ok && s != "" {
			return s
		}
		if other.Message != "" {
			return other.Message
		}
		switch d := other.Detail.(type) {
		case string:
			return d
		case nil:
		default:
			if b, err := json.Marshal(d); err == nil {
				return string(b)
			}
		}
	}
	return strings.Join(strings.Fields(string(body)), " ")
}

// describeTransportError says what went wrong on the connection, without the request URL that
// net/http puts in its errors (it may carry a query secret).
func describeTransportError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var dnsErr *net.DNSError
	switch {
	case isConnRefused(err):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return "cannot resolve host " + dnsErr.Name
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by the server in the middle of the response"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the server"
	case errors.Is(err, io.EOF):
		return "connection closed by the server before it answered"
	case strings.Contains(err.Error(), "server response headers exceeded"): // net/http's words, unexported
		return fmt.Sprintf("the response's headers passed %d bytes (a server's are a few hundred): not read further", MaxResponseHeaderBytes)
	}
	return err.Error()
}

func isConnRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// isLocalResourceError reports whether err is the client running out of its own resources:
// file descriptors (per process or system-wide), local ports, buffers or memory.
func isLocalResourceError(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.EADDRNOTAVAIL, syscall.ENOBUFS, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
