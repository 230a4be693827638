package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/redact"
)

// Target is the deployment under test and how to talk to it.
type Target struct {
	BaseURL   string          // e.g. http://127.0.0.1:8000/v1
	APIKey    string          // sent as a Bearer token; never appears in any error message or record
	Model     string          // "" = the first model of GET /models (see Client.ResolveModel)
	Endpoint  Endpoint        // the kind of endpoint (Kinds); "" is Chat
	ExtraBody json.RawMessage // a JSON object merged into every request body; its keys override ours
	Headers   http.Header     // extra request headers; their values are treated as secrets too
	Timeout   time.Duration   // per-request deadline counted from sent; 0 = none
	Insecure  bool            // skip TLS certificate verification
	// MaxResponseBytes cuts a response that streams more than this many bytes (0 =
	// DefaultMaxResponseBytes): a server that never stops must not exhaust the client's
	// memory. A response with more output chunks than 16 times its max_tokens (at least 4,096)
	// is cut too.
	MaxResponseBytes int64
	// MaxHeldBytes bounds what the client's requests in flight hold together beyond their fixed
	// buffers (long SSE lines, event data, reply texts, answers, error bodies); 0 or less is
	// DefaultMaxHeldBytes, or MaxResponseBytes when that is larger. A request that would need
	// more is a stream_error.
	MaxHeldBytes int64
	// RequestIDPrefix, when not empty, sends every request with the header
	// "X-Request-Id: <prefix><tier>-<id>" (RequestID), as vLLM's --request-id-prefix does with
	// "<prefix><index>", so that the server's logs can be joined to the records, which hold tier
	// and id. The preflight sends "<prefix>preflight". A re-sent request (Tier.Retries) keeps its id.
	RequestIDPrefix string
}

// RequestIDHeader is the header that carries the request id (Target.RequestIDPrefix): the one
// vLLM's benchmark client sends and vLLM's server takes as the request's id.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDPrefix bounds --request-id-prefix: an id travels in every request and every log line.
const maxRequestIDPrefix = 128

// RequestID is the request id a request of the given tier and id is sent with under prefix:
// prefix, the tier, '-', the id ("bench-1-17"); the preflight (id < 0) is prefix + "preflight".
func RequestID(prefix string, tier, id int) string {
	return string(appendRequestID(nil, prefix, tier, id))
}

func appendRequestID(b []byte, prefix string, tier, id int) []byte {
	b = append(b, prefix...)
	if id < 0 {
		return append(b, "preflight"...)
	}
	b = strconv.AppendInt(b, int64(tier), 10)
	b = append(b, '-')
	return strconv.AppendInt(b, int64(id), 10)
}

// ValidateRequestID returns the problems of RequestIDPrefix (part of Validate, which needs a
// base URL): printable ASCII without blanks, at most 128 bytes, and no --header setting the
// same header.
func (t Target) ValidateRequestID() []error {
	var errs []error
	if why := checkRequestIDPrefix(t.RequestIDPrefix); why != "" {
		errs = append(errs, field.Errorf(FieldRequestIDPrefix, "%s", why))
	}
	if t.RequestIDPrefix != "" && hasHeader(t.Headers, RequestIDHeader) {
		errs = append(errs, field.Errorf(FieldHeader, "%s and %v both set the request id: give one of them", RequestIDHeader, field.Ref(FieldRequestIDPrefix)))
	}
	return errs
}

// hasHeader reports whether h holds name, whatever the case of its keys.
func hasHeader(h http.Header, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// checkRequestIDPrefix returns what is wrong with a request-id prefix, "" when nothing.
func checkRequestIDPrefix(p string) string {
	if len(p) > maxRequestIDPrefix {
		return fmt.Sprintf("%d bytes, more than the %d allowed", len(p), maxRequestIDPrefix)
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c >= 0x7f {
			return fmt.Sprintf("byte %d of %d is a blank, a control character or not ASCII (an id must be printable ASCII without blanks)", i+1, len(p))
		}
	}
	return ""
}

// MaxResponseHeaderBytes bounds the headers of a response: 32 KiB, eight times what nginx lets
// an upstream send by default (proxy_buffer_size, 4 or 8 KiB); an LLM server's are a few hundred
// bytes. A response with more is a stream_error ("no response: …headers exceeded…").
const MaxResponseHeaderBytes = 32 << 10

// DefaultMaxResponseBytes is the default cap on one response: 64 MiB, about 250,000 chunks of
// vLLM's ~250-byte chat chunks, far above any max_tokens loadcurve sends by default.
const DefaultMaxResponseBytes = 64 << 20

// maxResponseBytes is t's cap with its default.
func (t Target) maxResponseBytes() int64 {
	if t.MaxResponseBytes > 0 {
		return t.MaxResponseBytes
	}
	return DefaultMaxResponseBytes
}

// Validate returns every problem of t at once, naming the flag to fix.
func (t Target) Validate() []error {
	var errs []error
	if err := checkBaseURL(t.BaseURL); err != nil {
		errs = append(errs, err)
	}
	if t.Endpoint.Kind() == nil {
		errs = append(errs, field.Errorf(FieldEndpoint, "want %s, got %q", kindNames(), string(t.Endpoint)))
	}
	if len(bytes.TrimSpace(t.ExtraBody)) > 0 {
		if _, _, err := parseExtraBody(t.ExtraBody); err != nil {
			errs = append(errs, field.Errorf(FieldExtraBody, "%w", err))
		}
	}
	if t.Timeout < 0 {
		errs = append(errs, field.Errorf(FieldTimeout, "must be >= 0, got %v", t.Timeout))
	}
	errs = append(errs, t.ValidateRequestID()...)
	if t.MaxResponseBytes < 0 {
		errs = append(errs, field.Errorf(FieldMaxResponse, "must be > 0, got %d bytes", t.MaxResponseBytes))
	}
	return errs
}

// checkBaseURL says what is wrong with a base URL and what was probably meant; nil when it is an
// http or https URL with a host. The URL is echoed without user info, query or fragment: they
// may hold credentials.
func checkBaseURL(raw string) error {
	s := strings.TrimSpace(raw)
	const want = "want e.g. http://host:8000/v1"
	if s == "" {
		return field.Errorf(FieldBaseURL, "is empty; %s", want)
	}
	if !strings.Contains(s, "://") {
		guess, err := url.Parse("http://" + s)
		if err != nil || guess.Host == "" || strings.HasPrefix(strings.ToLower(s), "http") && strings.Contains(s, ":/") {
			return field.Errorf(FieldBaseURL, "not a URL with a scheme; %s", want)
		}
		shown := redact.URL(guess.String())
		return field.Sentencef(FieldBaseURL, "%v %s: not a URL with a scheme; did you mean %s?", field.Ref(FieldBaseURL), strings.TrimPrefix(shown, "http://"), shown)
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole input, which may hold credentials
		}
		return field.Errorf(FieldBaseURL, "not a valid URL (%v); %s", err, want)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return field.Sentencef(FieldBaseURL, "%v %s: the scheme must be http or https; %s", field.Ref(FieldBaseURL), redact.URL(s), want)
	case u.Host == "":
		return field.Sentencef(FieldBaseURL, "%v %s: no host; %s", field.Ref(FieldBaseURL), redact.URL(s), want)
	}
	return nil
}

// SanitizeURL returns u without user info, query or fragment, fit for result files and messages
// (redact.URL).
func SanitizeURL(u string) string { return redact.URL(u) }

// maxErrorLen bounds Record.Error, in bytes.
const maxErrorLen = 512

// Secrets is the set of every secret t carries (as its client's Secrets), for a caller that
// reports on t without a client.
func (t Target) Secrets() *redact.Secrets { return secretsOf(t) }

// secretsOf is the set of every secret t carries: the API key (and "Bearer KEY"), header
// values, the base URL's user info, Basic credential and query values, and the values of
// credential-named members of the extra body.
func secretsOf(t Target) *redact.Secrets {
	s := redact.New()
	s.AddAPIKey(t.APIKey)
	for _, vs := range t.Headers {
		for _, v := range vs {
			s.AddHeaderValue(v)
		}
	}
	s.AddURL(t.BaseURL)
	s.AddJSONCredentials(t.ExtraBody)
	return s
}

// Secrets returns the set of every secret the client's target carries (see secretsOf), for
// cleaning what the caller writes beside the records (labels, metadata, the extra body).
func (c *Client) Secrets() *redact.Secrets { return c.secrets }

// truncate bounds a text that holds no secret (already cleaned, or the client's own words).
func truncate(s string, n int) string { return redact.Bound(s, n) }

// parseExtraBody checks that b is a JSON object and returns its members (encoded key, raw value)
// in their original order, and the set of their keys. "stream" may only be true and
// "stream_options" must be an object: every request streams.
func parseExtraBody(b json.RawMessage) (members [][2]json.RawMessage, keys map[string]bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, errors.New("not valid JSON")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("must be a JSON object, e.g. {\"ignore_eos\":true}")
	}
	keys = map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, errors.New("not valid JSON")
		}
		key := tok.(string) // object keys are always strings
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, nil, errors.New("not valid JSON")
		}
		if keys[key] {
			return nil, nil, fmt.Errorf("key %q appears twice", key)
		}
		keys[key] = true
		switch key {
		case "stream":
			if string(bytes.TrimSpace(val)) != "true" {
				return nil, nil, errors.New(`"stream" cannot be turned off: loadcurve measures streamed responses`)
			}
		case "stream_options":
			if v := bytes.TrimSpace(val); len(v) == 0 || v[0] != '{' {
				return nil, nil, errors.New(`"stream_options" must be an object`)
			}
		}
		kb, _ := json.Marshal(key)
		members = append(members, [2]json.RawMessage{kb, val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, errors.New("not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errors.New("trailing data after the JSON object")
	}
	return members, keys, nil
}

// WithIgnoreEOS adds "ignore_eos":true to an extra body (nil: none yet), as vLLM's --ignore-eos
// does; a body that already sets ignore_eos to anything else is a contradiction.
func WithIgnoreEOS(body json.RawMessage) (json.RawMessage, error) {
	if len(body) == 0 {
		return json.RawMessage(`{"ignore_eos":true}`), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return body, err
	}
	if v, ok := m["ignore_eos"]; ok {
		if string(v) != "true" {
			return body, fmt.Errorf("contradicts the extra body's \"ignore_eos\":%s", v)
		}
		return body, nil
	}
	merged := []byte(`{"ignore_eos":true`)
	if len(m) > 0 {
		merged = append(merged, ',')
	}
	merged = append(merged, bytes.TrimSpace(body)[1:]...) // the members after '{', and '}'
	return ParseExtraBody(string(merged))
}
