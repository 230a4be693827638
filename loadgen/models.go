package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/redact"
)

// GET /models is read with bounds: a server may answer an endless list, or a million models.
const (
	// MaxModelsBytes is how much of GET /models is read; the ids past it are not seen.
	MaxModelsBytes = 4 << 20
	// MaxModelIDs is how many ids of GET /models are read; the rest are not seen.
	MaxModelIDs = 100_000
	// MaxModelIDLen is the longest model id taken from GET /models as the model name.
	MaxModelIDLen = 256
	// modelsShown is how many ids a message lists, each cut to modelShownLen bytes.
	modelsShown   = 5
	modelShownLen = 80
)

// modelList is what GET /models answered, read within its bounds.
type modelList struct {
	ids []string // the first ids, at most MaxModelIDs
	cut string   // why the list may be longer than what was read ("" when read whole)
}

// has reports whether id is one of the ids read.
func (l modelList) has(id string) bool {
	for _, m := range l.ids {
		if m == id {
			return true
		}
	}
	return false
}

// shown lists the first ids for a message, cleaned of secrets and control characters and cut,
// with the number of the others.
func (c *Client) shown(l modelList) string {
	if len(l.ids) == 0 {
		return "(none)"
	}
	var parts []string
	for _, id := range l.ids[:min(len(l.ids), modelsShown)] {
		parts = append(parts, c.secrets.Clean(id, modelShownLen))
	}
	s := strings.Join(parts, ", ")
	if n := len(l.ids) - modelsShown; n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	if l.cut != "" {
		s += " (" + l.cut + ")"
	}
	return s
}

// listModels reads GET /models: at most MaxModelsBytes and MaxModelIDs ids. Errors are
// cleaned of secrets.
func (c *Client) listModels(ctx context.Context) (modelList, error) {
	var l modelList
	base, err := url.Parse(c.target.BaseURL)
	if err != nil {
		return l, field.Errorf(FieldBaseURL, "is not a valid URL") // unreachable after Validate
	}
	u := *base
	u.RawQuery, u.RawPath = "", ""
	u.Path = strings.TrimRight(u.Path, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return l, fmt.Errorf("GET /models: %s", c.clean(err.Error()))
	}
	if c.target.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.target.APIKey)
	}
	// The doer adds the base URL's query, the --header values and a --header Host.
	doer := extrasDoer{hc: c.hc, query: base.Query(), header: c.target.Headers, host: c.host}
	resp, err := doer.Do(req)
	if err != nil {
		return l, c.unreachable(strings.TrimRight(SanitizeURL(c.target.BaseURL), "/"), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		msg := serverMessage(b)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			msg = redirectMessage(resp)
		}
		return l, c.describeModelsError(&statusError{resp.StatusCode, c.clean(msg)})
	}
	lim := &io.LimitedReader{R: resp.Body, N: MaxModelsBytes + 1}
	l, err = readModelList(lim)
	switch {
	case lim.N <= 0 && len(l.ids) > 0:
		l.cut = fmt.Sprintf("the list was read up to its first %d MiB", MaxModelsBytes>>20)
	case err != nil && len(l.ids) > 0:
		l.cut = "the rest of the list is not valid JSON"
	case lim.N <= 0:
		return l, field.Sentencef(FieldModel, "GET %s/models: the answer is larger than %d MiB and lists no model in them; give %v",
			strings.TrimRight(SanitizeURL(c.target.BaseURL), "/"), MaxModelsBytes>>20, field.Ref(FieldModel))
	case err != nil:
		return l, field.Sentencef(FieldModel, "GET %s/models: not a model list ({\"data\":[{\"id\":…}]}): %s; give %v",
			strings.TrimRight(SanitizeURL(c.target.BaseURL), "/"), c.clean(err.Error()), field.Ref(FieldModel))
	}
	return l, nil
}

// readModelList reads an OpenAI model list ({"data":[{"id":"…"},…]}) as a stream of tokens, so
// that memory stays bounded whatever the list's length: at most MaxModelIDs ids are kept. The
// ids read before an error are returned with it.
func readModelList(r io.Reader) (modelList, error) {
	var l modelList
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return l, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return l, err
		}
		if key, _ := tok.(string); key != "data" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return l, err
			}
			continue
		}
		if err := expectDelim(dec, '['); err != nil {
			return l, fmt.Errorf("data: %w", err)
		}
		for dec.More() {
			if len(l.ids) >= MaxModelIDs {
				l.cut = fmt.Sprintf("only the first %d ids were read", MaxModelIDs)
				return l, nil
			}
			var m struct {
				ID string `json:"id"`
			}
			if err := dec.Decode(&m); err != nil {
				return l, fmt.Errorf("data[%d]: %w", len(l.ids), err)
			}
			l.ids = append(l.ids, m.ID)
		}
		if _, err := dec.Token(); err != nil { // ]
			return l, err
		}
	}
	return l, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}

// modelsStatus is the HTTP status of a failed GET /models (0 when there was no answer).
func modelsStatus(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.status
	}
	return 0
}

// describeModelsError gives a failed GET /models the same actionable messages as Preflight: it
// is the first request a run makes when no --model is given.
func (c *Client) describeModelsError(se *statusError) error {
	base := strings.TrimRight(SanitizeURL(c.target.BaseURL), "/")
	where := "GET " + base + "/models"
	if se.status == http.StatusUnauthorized || se.status == http.StatusForbidden {
		return unauthorized(se.status, where, se.msg)
	}
	if se.status == http.StatusNotFound && !strings.HasSuffix(base, "/v1") {
		return field.Sentencef(FieldBaseURL, "%s: %w: is %v right? It usually ends in /v1 (%s/v1)", where, se, field.Ref(FieldBaseURL), base)
	}
	return fmt.Errorf("%s: %w", where, se)
}

// chooseModel returns the model a run uses when none was given: the first id GET /models lists,
// when it can stand as a name in every output. An id that holds a secret of the run (a server
// echoing the API key as its model), control characters or terminal escapes, invalid UTF-8, or
// more than MaxModelIDLen bytes is refused, saying why: the run needs --model then.
func (c *Client) chooseModel(l modelList) (string, error) {
	base := strings.TrimRight(SanitizeURL(c.target.BaseURL), "/")
	if len(l.ids) == 0 {
		return "", field.Sentencef(FieldModel, "GET %s/models lists no models; give %v", base, field.Ref(FieldModel))
	}
	id := l.ids[0]
	why := ""
	switch {
	case id == "":
		why = "is empty"
	case c.secrets.Contains(id) || c.secrets.Contains(redact.StripControl(id)):
		why = "holds a secret of this run (the API key, a header's value or the base URL's credentials): the server echoes it"
	case !utf8.ValidString(id):
		why = "is not valid UTF-8"
	case redact.StripControl(id) != id:
		why = "holds control characters or terminal escape sequences"
	case len(id) > MaxModelIDLen:
		why = fmt.Sprintf("is %d bytes long, more than %d", len(id), MaxModelIDLen)
	}
	if why != "" {
		return "", field.Sentencef(FieldModel, "GET %s/models: refusing the first model id listed, %q, as the model's name: it %s; give %v",
			base, c.secrets.Clean(id, modelShownLen), why, field.Ref(FieldModel))
	}
	return id, nil
}
