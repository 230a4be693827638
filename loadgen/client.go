package loadgen

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/redact"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// Connection-pool sizing.
const (
	// DefaultUncappedIdleConns is the idle-connection pool size when the concurrency is not
	// capped: enough to keep every stream's connection alive for reuse at any practical load.
	DefaultUncappedIdleConns = 4096
	// idleHeadroom is added to a capped pool for the preflight and GET /models requests.
	idleHeadroom = 2
)

// Client sends streaming requests to one target. It is safe for concurrent use by many
// requests; ResolveModel must not run concurrently with Do.
//
// Why the stream is not read with go-openai's ChatCompletionStream (v1.43.0, checked in the
// module cache and pinned by TestGoOpenAIStreamReaderCannotTellDoneFromEOF):
//   - its RecvRaw returns io.EOF both after "data: [DONE]" and when the connection ends without
//     it, so a truncated stream would pass as complete;
//   - it fails a stream after 300 consecutive non-data lines, and SSE keep-alive comments sent
//     during a long prefill count towards that;
//   - a `data: {"error":…}` line is only reported once a further line arrives;
//   - the request path rejects some model names and max_tokens for "reasoning" model names,
//     which says nothing about a self-hosted deployment, and cannot merge an extra body.
//
// So the client builds the request body itself (with --extra-body merged member by member, no
// re-encoding of the prompt) and reads the SSE lines with its own minimal reader; go-openai is
// used where it is correct: the OpenAI error-body types. GET /models is read as a stream within
// bounds (listModels): go-openai's ListModels reads the whole answer into memory.
type Client struct {
	target   Target
	kind     Kind // the target's endpoint kind
	model    string
	url      string // full URL of the endpoint, query kept
	header   http.Header
	hc       *http.Client // no Timeout: deadlines are per request, from sent
	tr       *http.Transport
	secrets  *redact.Secrets
	bodyPlan bodyPlan
	// idHeaders holds *idHeader values when requests carry an id (Target.RequestIDPrefix).
	idHeaders sync.Pool
	// host is a --header Host value ("" when none): net/http sends req.Host and ignores a
	// Host entry of the header map, so it is set on every request instead.
	host string
	// held bounds what the requests in flight hold beyond their fixed buffers, together
	// (Target.MaxHeldBytes).
	held *heldBudget
}

// idHeader is the header of one request that carries an id: the shared header's entries (their
// value slices shared, read-only) and the id's entry. It is pooled, and handed back once the
// request's response body is closed (net/http's contract for reusing a request), so that an id
// costs a request one allocation: its string.
type idHeader struct {
	h   http.Header
	val []string // h[RequestIDHeader]: one element, the id
	buf []byte   // the id being built
}

// requestHeader returns a pooled header carrying rec's request id; put it back in c.idHeaders
// once the response body is closed.
func (c *Client) requestHeader(rec *records.Record) *idHeader {
	ih, _ := c.idHeaders.Get().(*idHeader)
	if ih == nil {
		ih = &idHeader{h: make(http.Header, len(c.header)+1), val: make([]string, 1)}
		for k, v := range c.header {
			ih.h[k] = v
		}
		ih.h[RequestIDHeader] = ih.val
	}
	ih.buf = appendRequestID(ih.buf[:0], c.target.RequestIDPrefix, rec.Tier, rec.ID)
	ih.val[0] = string(ih.buf)
	return ih
}

// NewClient validates t and builds a client whose connection pool is sized to maxConcurrency
// (0 = not capped).
func NewClient(t Target, maxConcurrency int) (*Client, error) {
	if errs := t.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("target: %w", errors.Join(errs...))
	}
	if maxConcurrency < 0 {
		return nil, field.Errorf(FieldMaxConcurrency, "must be >= 0, got %d", maxConcurrency)
	}
	idle := DefaultUncappedIdleConns
	if maxConcurrency > 0 {
		idle = maxConcurrency + idleHeadroom
	}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		// Every connection stamps its writes and reads (socket.go), so that a request's moments
		// are those of its bytes, not of the client's goroutines.
		DialContext: dialTimed(&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}),
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: t.Insecure}, //nolint:gosec // the user asked for it
		TLSHandshakeTimeout: 10 * time.Second,
		// Keep one idle connection per possible stream so that a finished stream's connection is
		// reused by the next request instead of paying a new handshake inside its TTFT.
		MaxIdleConns:        idle,
		MaxIdleConnsPerHost: idle,
		// MaxConnsPerHost stays 0 (no cap) on purpose: the gate already bounds concurrency, and
		// a cap here would queue requests inside the transport after `sent`, so client waiting
		// would be counted as server latency.
		IdleConnTimeout: 90 * time.Second,
		// Compressed streams would be buffered by the decompressor, delaying chunk arrival.
		DisableCompression: true,
		// HTTP/1.1, one connection per stream, as vLLM's benchmark client does: HTTP/2 would
		// multiplex every stream over one TCP connection and its flow control.
		ForceAttemptHTTP2: false,
		// A response's headers are held until they end: a server that sends megabytes of them
		// and stalls would otherwise make every stalled stream hold its 10 MB default.
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
	}
	base, err := url.Parse(t.BaseURL)
	if err != nil {
		return nil, field.Errorf(FieldBaseURL, "is not a valid URL") // unreachable after Validate
	}
	endpoint := *base
	if t.Endpoint == "" {
		t.Endpoint = Chat
	}
	kind := t.Endpoint.Kind()
	endpoint.Path = strings.TrimRight(base.Path, "/") + kind.Route()
	endpoint.RawPath = ""

	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if t.Endpoint.Streams() {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	if t.APIKey != "" {
		h.Set("Authorization", "Bearer "+t.APIKey)
	}
	// A request written on a kept-alive connection that the server closes before answering
	// anything is sent again on a new one by net/http, which it does for a POST only when the
	// request is marked idempotent; a nil value marks it without sending the header. llama.cpp's
	// server closes the connection after every streamed response while announcing
	// "Keep-Alive: timeout=5, max=100": a request sent at once on it (the next request of a
	// concurrency-capped or back-to-back load) met the close, and was recorded as the server's
	// failure ("connection closed by the server before it answered") for a request the server
	// never read (docs/REAL-ENGINE.md). Nothing of the answer had come, so nothing is counted
	// twice; the re-send is inside the request's sent..end, which it lengthens by the failed
	// write (a fraction of a millisecond on loopback) and a new connection's handshake.
	h[idempotencyKey] = nil
	for k, vs := range t.Headers {
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}

	plan, err := newBodyPlan(t.ExtraBody, kind)
	if err != nil {
		return nil, field.Errorf(FieldExtraBody, "%w", err)
	}
	hc := &http.Client{Transport: tr, CheckRedirect: refuseRedirect}
	c := &Client{
		target: t, kind: kind, model: t.Model, url: endpoint.String(), header: h, hc: hc, tr: tr,
		secrets: secretsOf(t), bodyPlan: plan, host: t.Headers.Get("Host"), held: newHeldBudget(heldLimit(t)),
	}
	return c, nil
}

// refuseRedirect keeps a 3xx answer as the answer. Following it would turn a POST into a GET
// without its body (301, 302, 303), send the request's headers on to another host, and pass the
// URL's query on in Referer; a load test of the address given must not measure another one. The
// answer is recorded as an HTTP error naming the refused location (redirectMessage).
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// redirectMessage says which redirect was refused, and what to do.
func redirectMessage(resp *http.Response) string {
	where := "another address"
	if loc, err := resp.Location(); err == nil {
		where = redact.URL(loc.String())
	}
	return "redirect to " + where + " refused: loadcurve does not follow redirects (a POST would be re-sent as a GET, headers would go to another host); point --base-url at the final address"
}

// clean strips control characters from s, redacts every secret of the target, then bounds it to
// maxErrorLen bytes (redact.Secrets.Clean).
func (c *Client) clean(s string) string { return c.secrets.Clean(s, maxErrorLen) }

// extrasDoer adds the base URL's query and the target's headers to a GET /models request.
type extrasDoer struct {
	hc     *http.Client
	query  url.Values
	header http.Header
	host   string // a --header Host value, sent as req.Host
}

func (d extrasDoer) Do(req *http.Request) (*http.Response, error) {
	if len(d.query) > 0 {
		q := req.URL.Query()
		for k, vs := range d.query {
			q[k] = append(q[k], vs...)
		}
		req.URL.RawQuery = q.Encode()
	}
	for k, vs := range d.header {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if d.host != "" {
		req.Host = d.host
	}
	return d.hc.Do(req)
}

// Close releases the client's idle connections.
func (c *Client) Close() { c.tr.CloseIdleConnections() }

// Model is the model requests name ("" until set or resolved).
func (c *Client) Model() string { return c.model }

// ResolveModel returns the target's model; when none was given it asks GET /models (read
// within MaxModelsBytes and MaxModelIDs), takes the first id and uses it from then on, unless
// that id cannot stand as a name in the outputs (chooseModel says why). It must not run
// concurrently with Do.
func (c *Client) ResolveModel(ctx context.Context) (string, error) {
	if c.model != "" {
		return c.model, nil
	}
	list, err := c.listModels(ctx)
	if err != nil {
		return "", fmt.Errorf("choose a model: %w", err)
	}
	if c.model, err = c.chooseModel(list); err != nil {
		return "", fmt.Errorf("choose a model: %w", err)
	}
	return c.model, nil
}

// statusError is a non-2xx answer, with the server's message, already cleaned of secrets.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string {
	s := "HTTP " + strconv.Itoa(e.status)
	if t := http.StatusText(e.status); t != "" {
		s += " " + t
	}
	if e.msg != "" {
		s += ": " + e.msg
	}
	return s
}

// Preflight errors, for errors.Is.
var (
	ErrUnreachable    = errors.New("target unreachable")
	ErrUnauthorized   = errors.New("unauthorised")
	ErrModelNotServed = errors.New("model not served")
	// ErrNoOutput: the preflight succeeded without a single output token. The caller decides
	// whether to go on (a warning) or stop.
	ErrNoOutput = errors.New("no output")
)

// PreflightRequest is a small request for Preflight that shares no prefix with a typical
// workload, so it does not warm the server's prefix cache for the measured requests.
func PreflightRequest() workloads.Request {
	return workloads.Request{Prompt: "Reply with the word ready.", InputTokens: 5, MaxTokens: preflightMaxTokens}
}

const preflightMaxTokens = 4

// PreflightTimeout bounds Preflight when the target has no shorter --timeout.
const PreflightTimeout = 30 * time.Second

// Preflight sends one small streaming request (req with max_tokens capped at 4 and no quality
// check) and turns any failure into an actionable message; it also leaves a warm keep-alive
// connection in the pool. Pass PreflightRequest() unless the first measured request should be
// sent as is (it would warm the prefix cache for that prompt). The error wraps ErrUnreachable,
// ErrUnauthorized or ErrModelNotServed when one of those is the cause.
func (c *Client) Preflight(ctx context.Context, req workloads.Request) error {
	return c.PreflightRetrying(ctx, req, 0)
}

// PreflightRetrying is Preflight re-sent up to retries times after an answer Tier.Retries would
// re-send (429, 5xx, a lost connection before any output): a server still loading its model
// answers 503 for a while. Each re-send waits for the answer's Retry-After, at least a second
// and at most MaxRetryWait; all attempts share PreflightTimeout.
func (c *Client) PreflightRetrying(ctx context.Context, req workloads.Request, retries int) error {
	req.Expect = nil
	if req.MaxTokens <= 0 || req.MaxTokens > preflightMaxTokens {
		req.MaxTokens = preflightMaxTokens
	}
	ctx, cancel := context.WithTimeoutCause(ctx, PreflightTimeout, &stopCause{msg: fmt.Sprintf(
		"no complete answer within %v: is the server overloaded or still loading the model?", PreflightTimeout)})
	defer cancel()
	base := SanitizeURL(c.target.BaseURL)
	t0 := time.Now()
	rec := records.NewRecord(0, -1, 0)
	res := c.do(ctx, t0, &req, &rec)
	for attempt := 0; attempt < retries && retryable(&rec); attempt++ {
		if !waitFor(ctx, nil, min(max(res.retryAfter, time.Second), MaxRetryWait)) {
			break // the last answer stands
		}
		t0, rec = time.Now(), records.NewRecord(0, -1, 0)
		res = c.do(ctx, t0, &req, &rec)
	}
	switch {
	case res.transport != nil:
		return c.unreachable(base, res.transport)
	case res.status == http.StatusUnauthorized || res.status == http.StatusForbidden:
		return unauthorized(res.status, base, res.serverMsg)
	case res.status == http.StatusNotFound || res.status == http.StatusBadRequest || res.status == http.StatusUnprocessableEntity:
		return c.explainNotFound(ctx, base, res)
	case res.status >= 300 || res.status < 200:
		return fmt.Errorf("preflight request to %s failed: %s", c.endpointForMessages(), rec.Error)
	case rec.Outcome != records.OK:
		return fmt.Errorf("preflight request to %s failed (%s): %s", c.endpointForMessages(), rec.Outcome, rec.Error)
	case rec.Chunks == 0 && c.target.Endpoint.Streams():
		return fmt.Errorf("%w: the preflight request to %s ended with [DONE] but streamed no output (no content, text or reasoning in any choice): every measured request may too, with 0 tokens counted as ok",
			ErrNoOutput, c.endpointForMessages())
	}
	return nil
}

// unauthorized is the error of an answer refusing the run's credentials (401, 403) from where.
func unauthorized(status int, where, serverMsg string) error {
	return field.Sentencef(FieldAPIKey, "%w (HTTP %d from %s): check %v or OPENAI_API_KEY%s",
		ErrUnauthorized, status, where, field.Ref(FieldAPIKey), suffix(serverMsg))
}

// notTLS is the error of an https base URL whose server answers in plain HTTP.
func notTLS(base string) error {
	return field.Sentencef(FieldBaseURL, "%w: cannot reach %s: the server does not speak TLS — use http:// in %v", ErrUnreachable, base, field.Ref(FieldBaseURL))
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return " (server said: " + msg + ")"
}

func (c *Client) endpointForMessages() string {
	return SanitizeURL(c.url)
}

func (c *Client) unreachable(base string, err error) error {
	var dnsErr *net.DNSError
	var tlsErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	switch {
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"): // net/http's own text
		return notTLS(base)
	case isConnRefused(err):
		return fmt.Errorf("%w: cannot reach %s: connection refused — is the server running?", ErrUnreachable, base)
	case errors.As(err, &dnsErr):
		return field.Sentencef(FieldBaseURL, "%w: cannot reach %s: cannot resolve host %q — check %v", ErrUnreachable, base, dnsErr.Name, field.Ref(FieldBaseURL))
	case errors.As(err, &tlsErr):
		return field.Sentencef(FieldInsecure, "%w: cannot reach %s: TLS certificate not trusted (%s) — for a self-signed certificate, skip verification with %v",
			ErrUnreachable, base, c.clean(tlsErr.Err.Error()), field.Ref(FieldInsecure))
	case errors.As(err, &recErr):
		return notTLS(base)
	}
	return fmt.Errorf("%w: cannot reach %s: %s", ErrUnreachable, base, c.clean(describeTransportError(err)))
}

// explainNotFound tells a missing model from a wrong URL or endpoint by asking GET /models.
func (c *Client) explainNotFound(ctx context.Context, base string, res doResult) error {
	list, err := c.listModels(ctx)
	if err != nil {
		if modelsStatus(err) == http.StatusNotFound && res.status == http.StatusNotFound {
			return field.Sentencef(FieldBaseURL, "HTTP 404 from %s and from %s/models: is %v right? It usually ends in /v1", c.endpointForMessages(), base, field.Ref(FieldBaseURL))
		}
		return fmt.Errorf("preflight request to %s failed: HTTP %d%s (and listing models failed too: %w)",
			c.endpointForMessages(), res.status, suffix(res.serverMsg), err)
	}
	if !list.has(c.model) {
		return fmt.Errorf("%w: model %q not served; GET %s/models lists: %s", ErrModelNotServed,
			c.secrets.Clean(c.model, modelShownLen), base, c.shown(list))
	}
	if res.status == http.StatusNotFound {
		return field.Sentencef(FieldEndpoint, "HTTP 404 from %s although model %q is served: does the server support %v %s?%s",
			c.endpointForMessages(), c.model, field.Ref(FieldEndpoint), c.target.Endpoint, suffix(res.serverMsg))
	}
	return fmt.Errorf("preflight request to %s rejected: HTTP %d%s", c.endpointForMessages(), res.status, suffix(res.serverMsg))
}

// bodyPlan is --extra-body prepared once: which of our members it overrides, the raw text of its
// members, and the merged stream_options object.
type bodyPlan struct {
	override      map[string]bool
	tail          []byte // `,"key":value` for every extra member except stream_options
	streamOptions []byte // our {"include_usage":true} with extra stream_options members merged in
	// extraStreamOptions is --extra-body's stream_options as given (nil without one), for kinds
	// that ask for no usage there.
	extraStreamOptions []byte
	// maxParam is the kind's member that bounds the output ("" when it has none).
	maxParam string
	// extraMaxTokens and extraMaxCompletion are --extra-body's maxParam and
	// max_completion_tokens when it has them and they are counts (0: absent, null or not a count).
	extraMaxTokens, extraMaxCompletion int
}

// sentMaxTokens is the max_tokens (the kind's maxParam) req's body carries: the workload's
// unless --extra-body overrides it, or --extra-body's max_completion_tokens when that is larger
// (servers take one or the other; the larger bounds what either may stream). 0 when the body
// carries no count, or the kind generates no output.
func (p *bodyPlan) sentMaxTokens(req *workloads.Request) int {
	if p.maxParam == "" {
		return 0
	}
	n := max(req.MaxTokens, 0)
	if p.override[p.maxParam] {
		n = p.extraMaxTokens
	}
	return max(n, p.extraMaxCompletion)
}

// tokenCount reads a JSON value as a token count: a non-negative integer (written as one, or as
// a number with an integral value, e.g. 6e3), at most maxUsageTokens; else 0.
func tokenCount(raw []byte) int {
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || f < 1 || f > maxUsageTokens || f != math.Trunc(f) {
		return 0
	}
	return int(f)
}

func newBodyPlan(extra []byte, kind Kind) (bodyPlan, error) {
	p := bodyPlan{streamOptions: []byte(`{"include_usage":true}`), maxParam: kind.MaxTokensParam()}
	if len(bytes.TrimSpace(extra)) == 0 {
		return p, nil
	}
	members, keys, err := parseExtraBody(extra)
	if err != nil {
		return p, err
	}
	p.override = keys
	for _, m := range members {
		switch key := string(m[0]); {
		case p.maxParam != "" && key == `"`+p.maxParam+`"`:
			p.extraMaxTokens = tokenCount(m[1])
		case p.maxParam == "max_tokens" && key == `"max_completion_tokens"`:
			p.extraMaxCompletion = tokenCount(m[1])
		}
		if string(m[0]) == `"stream_options"` {
			p.extraStreamOptions = m[1]
			// One level deep: the user's options are added to include_usage (and may override it).
			so, soKeys, err := parseExtraBody(m[1])
			if err != nil {
				return p, fmt.Errorf("stream_options: %w", err)
			}
			b := []byte{'{'}
			if !soKeys["include_usage"] {
				b = append(b, `"include_usage":true`...)
			}
			for _, sm := range so {
				if len(b) > 1 {
					b = append(b, ',')
				}
				b = append(b, sm[0]...)
				b = append(b, ':')
				b = append(b, sm[1]...)
			}
			p.streamOptions = append(b, '}')
			continue
		}
		p.tail = append(p.tail, ',')
		p.tail = append(p.tail, m[0]...)
		p.tail = append(p.tail, ':')
		p.tail = append(p.tail, m[1]...)
	}
	delete(p.override, "stream_options") // merged, emitted in our place
	return p, nil
}

// body encodes one request: the model, the kind's members in a fixed order, skipping those
// --extra-body overrides, then the extra members. No reflection, and the prompt is escaped
// exactly once.
func (c *Client) body(req *workloads.Request) []byte {
	p := &c.bodyPlan
	size := req.TextLen() + len(p.tail) + 160
	for _, m := range req.Messages {
		size += len(m.Content) + 32
	}
	b := make([]byte, 0, size+size/16)
	b = append(b, '{')
	if c.model != "" {
		var ok bool
		if b, ok = member(b, p, "model"); ok {
			b = appendJSONString(b, c.model)
		}
	}
	b = c.kind.appendMembers(b, p, req)
	if len(b) == 1 && len(p.tail) > 0 {
		b = append(b, p.tail[1:]...) // every member overridden: drop the leading comma
	} else {
		b = append(b, p.tail...)
	}
	return append(b, '}')
}

// appendStreamMembers appends what a streamed request ends with: the kind's max_tokens member
// (p.maxParam) when the request has a count, "stream":true, and the stream options given
// (none when nil).
func appendStreamMembers(b []byte, p *bodyPlan, req *workloads.Request, streamOptions []byte) []byte {
	var ok bool
	if req.MaxTokens > 0 {
		if b, ok = member(b, p, p.maxParam); ok {
			b = strconv.AppendInt(b, int64(req.MaxTokens), 10)
		}
	}
	if b, ok = member(b, p, "stream"); ok {
		b = append(b, "true"...)
	}
	if streamOptions != nil {
		b, _ = member(b, p, "stream_options") // merged, never overridden
		b = append(b, streamOptions...)
	}
	return b
}

// appendPromptJSON appends the request's prompt as a JSON string. A generated prompt is written
// straight into b from its recipe; its words need no escaping, which is checked, not assumed.
func appendPromptJSON(b []byte, req *workloads.Request) []byte {
	if !req.Generated() {
		return appendJSONString(b, req.Prompt)
	}
	start := len(b)
	b = append(b, '"')
	b = req.AppendText(b)
	for _, c := range b[start+1:] {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return appendJSONString(b[:start], req.Text())
		}
	}
	return append(b, '"')
}

// appendCompletionPrompt appends the prompt sent to /completions as a JSON string: the prompt's
// text, or the messages' contents joined by blank lines when the request only has messages.
func appendCompletionPrompt(b []byte, req *workloads.Request) []byte {
	if req.Prompt != "" || len(req.Messages) == 0 {
		return appendPromptJSON(b, req)
	}
	parts := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		parts[i] = m.Content
	}
	return appendJSONString(b, strings.Join(parts, "\n\n"))
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD (so the body is
// always valid JSON); unlike encoding/json, <, > and & are left as they are.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Readiness polling (WaitReady).
const (
	readyPoll     = time.Second     // between two probes
	readyNoteEach = 5 * time.Second // at most one progress note this often, unless the reason changes
)

// WaitReady waits, for at most within, until the target answers: as vLLM's
// --ready-check-timeout-sec does, it probes the target with the preflight request (max_tokens 4)
// every second, after GET /models when no model was given (the first model listed is used from
// then on, as ResolveModel does). An answer that says "not ready yet" (no connection, no answer
// within the time left, HTTP 404, 408, 425, 429 or 5xx, an empty model list) is waited out; any
// other answer ends the wait with nil, an error answer included: the preflight that follows
// explains it (a wrong API key, a model not served). note, when not nil, is told how long the
// target has been waited for and why it is not ready, at the first wait, when the reason
// changes, and at most every 5 s otherwise. The error after within names
// --ready-check-timeout-sec and the last reason. It must not run concurrently with Do.
func (c *Client) WaitReady(ctx context.Context, within time.Duration, note func(waited time.Duration, why string)) error {
	if within <= 0 {
		return nil
	}
	start := time.Now()
	deadline := start.Add(within)
	var lastWhy string
	var lastNote time.Time
	for {
		why, err := c.readyOnce(ctx, deadline)
		if err != nil {
			return err
		}
		if why == "" {
			return nil
		}
		now := time.Now()
		if !now.Before(deadline) {
			return field.Errorf(FieldReadyTimeout, "%s did not become ready within %v; last: %s",
				SanitizeURL(c.target.BaseURL), within, why)
		}
		if note != nil && (why != lastWhy || now.Sub(lastNote) >= readyNoteEach) {
			note(now.Sub(start), why)
			lastWhy, lastNote = why, now
		}
		t := time.NewTimer(min(readyPoll, deadline.Sub(now)))
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}

// readyOnce probes the target once, before deadline: "" when it answered (whatever it said),
// else why it is not ready yet. The error is ctx's when it ended.
func (c *Client) readyOnce(ctx context.Context, deadline time.Time) (string, error) {
	if d := time.Now().Add(PreflightTimeout); d.Before(deadline) {
		deadline = d
	}
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if c.model == "" {
		list, err := c.listModels(pctx)
		switch {
		case ctx.Err() != nil:
			return "", context.Cause(ctx)
		case err != nil && (errors.Is(err, ErrUnreachable) || notReadyStatus(modelsStatus(err))):
			return err.Error(), nil
		case err != nil:
			return "", nil // an answer: the model's resolution that follows reports it
		case len(list.ids) == 0:
			return fmt.Sprintf("GET %s/models lists no models yet", strings.TrimRight(SanitizeURL(c.target.BaseURL), "/")), nil
		}
		if c.model, err = c.chooseModel(list); err != nil {
			return "", nil // an answer: the model's resolution that follows refuses the id and says why
		}
	}
	req := PreflightRequest()
	rec := records.NewRecord(0, -1, 0)
	res := c.do(pctx, time.Now(), &req, &rec)
	switch {
	case ctx.Err() != nil:
		return "", context.Cause(ctx)
	case res.transport != nil:
		return c.unreachable(SanitizeURL(c.target.BaseURL), res.transport).Error(), nil
	case res.status == 0 && pctx.Err() != nil:
		return "no answer to the preflight request in the time left", nil
	case notReadyStatus(res.status):
		return fmt.Sprintf("%s answered %s", c.endpointForMessages(), rec.Error), nil
	}
	return "", nil
}

// notReadyStatus reports whether an HTTP status says "not ready yet" rather than "no": a route
// or model not mounted yet (404), a timeout, too early, too many requests, a server error or a
// proxy with no backend yet (5xx).
func notReadyStatus(status int) bool {
	switch {
	case status == http.StatusNotFound, status == http.StatusRequestTimeout, status == http.StatusTooEarly,
		status == http.StatusTooManyRequests, status >= 500 && status <= 599:
		return true
	}
	return false
}

// idempotencyKey is the header net/http reads to re-send a non-idempotent request whose
// kept-alive connection the server closed before answering (http.Transport's documentation).
const idempotencyKey = "Idempotency-Key"
