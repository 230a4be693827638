package loadgen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// Names of the settings of a target and of a client that have no rule of their own to report.
const (
	FieldAPIKey        = "API key"
	FieldModel         = "model"
	FieldIgnoreEOS     = "ignore EOS"
	FieldInsecure      = "insecure TLS"
	FieldServerMetrics = "server metrics"
	FieldRateLimit     = "rate limit"
)

// MaxReadyCheck bounds the ready check's wait: a day.
const MaxReadyCheck = 86400 * time.Second

// TargetSettings are the user's choices about a target, as given: the caller parses the
// endpoint, the extra body and the headers (ParseEndpoint, ParseExtraBody, WithIgnoreEOS,
// ParseHeaders) into a Target, and checks the rest with Validate.
type TargetSettings struct {
	BaseURL, APIKey, Model, Endpoint, ExtraBody, RequestIDPrefix, ServerMetrics string
	IgnoreEOS, Insecure                                                         bool
	Headers                                                                     []string
	ReadyCheckSec, MaxResponseMiB                                               int
	Timeout                                                                     time.Duration
}

// DefaultTargetSettings returns the settings nobody chose: chat, the default deadline
// (timeout) and response size cap.
func DefaultTargetSettings(timeout time.Duration) TargetSettings {
	return TargetSettings{Endpoint: string(Chat), Timeout: timeout, MaxResponseMiB: DefaultMaxResponseBytes >> 20}
}

// Params declares the settings, bound to s.
func (s *TargetSettings) Params() []param.Param {
	return []param.Param{
		param.String(FieldBaseURL, &s.BaseURL, "OpenAI-style base URL of the target, e.g. http://host:8000/v1").Default("none: start the embedded simulated deployment"),
		param.String(FieldAPIKey, &s.APIKey, "API key sent as a Bearer token (never written to any output)"),
		param.String(FieldModel, &s.Model, "model name").Default("the first of GET /models"),
		param.String(FieldEndpoint, &s.Endpoint, endpointUsage()),
		param.String(FieldExtraBody, &s.ExtraBody, "JSON object merged into every request body, e.g. '{\"ignore_eos\":true}'"),
		param.Bool(FieldIgnoreEOS, &s.IgnoreEOS, "ask the server to generate max_tokens tokens whatever it samples (vLLM's flag: adds \"ignore_eos\":true to the body)"),
		param.Strings(FieldHeader, &s.Headers, "extra request header 'Name: value', or vLLM's 'Name=value' (repeatable; values never written to any output)"),
		param.String(FieldRequestIDPrefix, &s.RequestIDPrefix, "send every request with the header X-Request-Id: PREFIX<tier>-<id> (the preflight's: PREFIXpreflight), as vLLM's flag does, so that the server's logs join records.jsonl").Default("none: no id sent"),
		param.Int(FieldReadyTimeout, &s.ReadyCheckSec, "before the preflight, wait up to N seconds for the target to answer, probing it every second (vLLM's flag)").Default("0: no waiting"),
		param.Duration(FieldTimeout, &s.Timeout, "per-request deadline from send to the end of the stream (0: none)"),
		param.Bool(FieldInsecure, &s.Insecure, "skip TLS certificate verification (loudly reported)"),
		param.Int(FieldMaxResponse, &s.MaxResponseMiB, "cut a response that streams more than this many MiB (recorded as stream_error); responses with more than 16·max_tokens output chunks (at least 4096) are cut too"),
		param.String(FieldServerMetrics, &s.ServerMetrics, "Prometheus metrics URL of the target, scraped every second of every tier, or off").Default("the target's /metrics when it answers"),
	}
}

// endpointUsage lists the registered endpoint kinds with their routes: "chat
// (/chat/completions), completions (/completions), …".
func endpointUsage() string {
	var parts []string
	for _, k := range Kinds() {
		parts = append(parts, fmt.Sprintf("%s (%s)", k, k.Route()))
	}
	return strings.Join(parts, ", ")
}

// MaxResponseBytes returns the response size cap in bytes, and an error when the MiB given are
// out of [1, 1 Mi].
func (s TargetSettings) MaxResponseBytes() (int64, error) {
	if s.MaxResponseMiB < 1 || s.MaxResponseMiB > 1<<20 {
		return 0, field.Errorf(FieldMaxResponse, "must be in [1, %d], got %d", 1<<20, s.MaxResponseMiB)
	}
	return int64(s.MaxResponseMiB) << 20, nil
}

// ReadyCheck returns how long to wait for the target to answer before the preflight, and an
// error when the seconds given are out of [0, MaxReadyCheck].
func (s TargetSettings) ReadyCheck() (time.Duration, error) {
	d := time.Duration(s.ReadyCheckSec) * time.Second
	if s.ReadyCheckSec < 0 || d > MaxReadyCheck {
		return 0, field.Errorf(FieldReadyTimeout, "must be in [0, %d] seconds (0: no waiting), got %d", int(MaxReadyCheck/time.Second), s.ReadyCheckSec)
	}
	return d, nil
}

// ClientSettings are how the client sends: a cap on requests in flight (0: none), a safety
// ceiling on the request rate (0: off) and the retries of a failed request.
type ClientSettings struct {
	MaxConcurrency int
	RateLimit      float64
	Retries        int
}

// Params declares the settings, bound to s.
func (s *ClientSettings) Params() []param.Param {
	return []param.Param{
		param.Int(FieldMaxConcurrency, &s.MaxConcurrency, "cap on requests in flight; excess arrivals wait in the client (measured as client_queue_time)").Default("no cap"),
		param.Float(FieldRateLimit, &s.RateLimit, "hard safety ceiling in requests/s guarding shared endpoints; holding requests back shows as schedule lag").Default("off"),
		param.Int(FieldRetries, &s.Retries, "re-send a request that got 429/5xx or lost its connection before any output, up to N times, after its Retry-After (at most 5s); the preflight too (attempts are recorded; retries distort the load)"),
	}
}

// Validate returns every problem with the settings the params (Params, applied) read: a cap
// or a ceiling given must be one (a cap >= 1, a finite rate > 0: omitting it is how to have
// none), retries >= 0.
func (s ClientSettings) Validate(ps []param.Param) []error {
	var errs []error
	if param.IsGiven(ps, FieldMaxConcurrency) && s.MaxConcurrency < 1 {
		errs = append(errs, field.Errorf(FieldMaxConcurrency, "must be >= 1 (omit it for no cap), got %d", s.MaxConcurrency))
	}
	if r := s.RateLimit; param.IsGiven(ps, FieldRateLimit) && (!(r > 0) || math.IsInf(r, 0)) {
		errs = append(errs, field.Errorf(FieldRateLimit, "must be a finite number of requests/s > 0, got %s", rateText(r)))
	}
	if s.Retries < 0 {
		errs = append(errs, field.Errorf(FieldRetries, "must be >= 0, got %d", s.Retries))
	}
	return errs
}

// rateText writes a rate as the shortest decimal, inf for an infinite one, — for NaN.
func rateText(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case v == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Target returns the target the settings describe, their texts parsed (the endpoint, the
// extra body with ignore_eos merged in), and every problem with them but the headers', which
// ParseHeaders reads by position. An endpoint given as a path (vLLM's form, a route:
// EndpointOfRoute) is left zero for the caller, who knows the base URL it joins.
func (s TargetSettings) Target() (Target, []error) {
	var errs []error
	t := Target{BaseURL: s.BaseURL, APIKey: s.APIKey, Model: s.Model, Timeout: s.Timeout, Insecure: s.Insecure, RequestIDPrefix: s.RequestIDPrefix}
	var err error
	if t.Endpoint, err = ParseEndpoint(s.Endpoint); err != nil && !strings.HasPrefix(s.Endpoint, "/") {
		errs = append(errs, err)
	}
	if t.MaxResponseBytes, err = s.MaxResponseBytes(); err != nil {
		errs = append(errs, err)
	}
	if t.ExtraBody, err = ParseExtraBody(s.ExtraBody); err != nil {
		errs = append(errs, err)
	}
	if s.IgnoreEOS {
		if t.ExtraBody, err = WithIgnoreEOS(t.ExtraBody); err != nil {
			errs = append(errs, field.Errorf(FieldIgnoreEOS, "%w", err))
		}
	}
	return t, errs
}

// ValidateLocal returns the problems Validate finds with what a target without a base URL
// still uses (one the caller starts itself): the deadline and the request id prefix.
func (t Target) ValidateLocal() []error {
	var errs []error
	if t.Timeout < 0 {
		errs = append(errs, field.Errorf(FieldTimeout, "must be >= 0, got %v", t.Timeout))
	}
	return append(errs, t.ValidateRequestID()...)
}
