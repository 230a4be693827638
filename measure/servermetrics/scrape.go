package servermetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/internal/redact"
)

// DefaultTimeout bounds one scrape: connection, request and body.
const DefaultTimeout = 2 * time.Second

// MaxBodyBytes bounds one exposition. A vLLM page with a few engines is
// well under 1 MiB.
const MaxBodyBytes = 16 << 20

// acceptHeader asks for the classic text format (a Python
// prometheus_client would otherwise be free to answer in OpenMetrics).
const acceptHeader = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Scraper fetches one metrics URL. It is immutable and safe for concurrent
// use.
type Scraper struct {
	url     string
	shown   string          // url without user info or query: the form errors quote
	secrets *redact.Secrets // the url's user info and query values, hidden in error texts
	client  *http.Client
	model   string
	timeout time.Duration
}

// NewScraper returns a Scraper for the full metrics URL (see DefaultURL).
// A nil client means a client with its own connection pool, apart from the
// load generator's. model, when not empty, keeps only the series labelled
// model_name=model (see the package documentation).
func NewScraper(url string, client *http.Client, model string) *Scraper {
	if client == nil {
		// A redirect is not followed: it would carry the URL's credentials elsewhere.
		client = &http.Client{Transport: newTransport(), CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	secrets := redact.New()
	secrets.AddURL(url)
	return &Scraper{url: url, shown: redact.URL(url), secrets: secrets, client: client, model: model, timeout: DefaultTimeout}
}

// Hide adds more secrets to hide in the scraper's errors (the load's API key and headers: a
// server may echo to the metrics endpoint what it received elsewhere). Call it before scraping.
func (s *Scraper) Hide(more *redact.Secrets) { s.secrets = redact.Union(s.secrets, more) }

// maxErrorLen bounds the text of a scrape error.
const maxErrorLen = 512

// cleanError is a scrape error whose text holds no secret of the URL; it still unwraps to its
// cause, so that a caller's cancellation is recognised.
type cleanError struct {
	msg string
	err error
}

func (e *cleanError) Error() string { return e.msg }
func (e *cleanError) Unwrap() error { return e.err }

// fail returns err with the URL's secrets hidden and its text bounded. A transport error's own
// quotation of the request URL (url.Error) is dropped: the message names s.shown instead.
func (s *Scraper) fail(err error) error {
	if err == nil {
		return nil
	}
	return &cleanError{msg: s.secrets.Clean(err.Error(), maxErrorLen), err: err}
}

func newTransport() http.RoundTripper {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		c := t.Clone()
		c.MaxIdleConnsPerHost = 1
		return c
	}
	return http.DefaultTransport
}

// WithTimeout returns a copy of s whose scrapes each last at most d
// (d ≤ 0 means DefaultTimeout).
func (s *Scraper) WithTimeout(d time.Duration) *Scraper {
	c := *s
	if d <= 0 {
		d = DefaultTimeout
	}
	c.timeout = d
	return &c
}

// URL is the metrics URL scraped.
func (s *Scraper) URL() string { return s.url }

// Scrape fetches and parses the metrics once and returns them by canonical
// name (the Name* constants; a name is absent when the server does not
// export it).
func (s *Scraper) Scrape(ctx context.Context) (map[string]float64, error) {
	snap, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return snap.Values, nil
}

// snapshot fetches and parses one exposition; At is left zero.
func (s *Scraper) snapshot(parent context.Context) (Snapshot, error) {
	ctx, cancel := context.WithTimeout(parent, s.timeout)
	defer cancel()
	// timedOut names the scrape's own deadline, which a bare "context
	// deadline exceeded" would not.
	timedOut := func(err error) error {
		if parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("no complete answer within %v: %w", s.timeout, err)
		}
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return Snapshot{}, s.fail(errors.New("scrape: not a valid URL (not quoted here: it may hold credentials)"))
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL it quotes in full
		}
		return Snapshot{}, s.fail(fmt.Errorf("scrape %s: %w", s.shown, timedOut(err)))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
			return Snapshot{}, s.fail(fmt.Errorf("scrape %s: HTTP %s: redirect to %s not followed: give --server-metrics the final address", s.shown, resp.Status, redact.URL(loc)))
		}
		return Snapshot{}, s.fail(fmt.Errorf("scrape %s: HTTP %s: %q", s.shown, resp.Status, strings.TrimSpace(string(snippet))))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return Snapshot{}, s.fail(fmt.Errorf("scrape %s: read body: %w", s.shown, timedOut(err)))
	}
	if len(body) > MaxBodyBytes {
		return Snapshot{}, s.fail(fmt.Errorf("scrape %s: body larger than %d bytes", s.shown, MaxBodyBytes))
	}
	snap, err := Parse(bytes.NewReader(body), s.model)
	if err != nil {
		return Snapshot{}, s.fail(fmt.Errorf("scrape %s (Content-Type %q): %w", s.shown, resp.Header.Get("Content-Type"), err))
	}
	return snap, nil
}

// DefaultURL derives the metrics URL from an OpenAI base URL: the path's
// trailing /v1 is replaced by /metrics, query and fragment dropped
// ("http://h:8000/v1" → "http://h:8000/metrics"; a base URL behind a path
// prefix keeps it: "http://h/llm/v1" → "http://h/llm/metrics").
func DefaultURL(baseURL string) string {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Host == "" {
		p := strings.TrimRight(strings.TrimSpace(baseURL), "/")
		return strings.TrimSuffix(p, "/v1") + "/metrics"
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, "/v1")
	u.Path = p + "/metrics"
	u.RawPath = ""
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	return u.String()
}

// isCanceled reports whether err comes from the caller's cancellation of
// ctx (not from the scrape's own deadline).
func isCanceled(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
