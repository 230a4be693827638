package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/loadcurve/loadcurve/internal/field"
)

// headerForm is the shape every --header error asks for.
const headerForm = "want 'Name: value' or vLLM's 'Name=value', e.g. 'X-Request-Source: loadcurve'"

// ParseHeader parses one --header value in either of its two forms: "Name: value" (curl's) or
// "Name=value" (vLLM's `--header KEY=VALUE`). The name ends at the first ':' or '=' (neither
// may appear in an HTTP header name, so the two forms never disagree), is taken without
// surrounding blanks, and must be a non-empty HTTP token (letters, digits and
// !#$%&'*+-.^_`|~); the value is the rest without surrounding blanks, may be empty, and may not
// contain control characters (CR or LF would smuggle another header in). Errors never quote the
// value, which is often a credential, nor the text at all when it has no valid name (it may be a
// pasted token).
func ParseHeader(s string) (name, value string, err error) {
	sep := strings.IndexAny(s, ":=")
	if sep < 0 {
		return "", "", field.Errorf(FieldHeader, "no ':' or '=' in the %d-byte value given (not shown: it may be a credential); %s", len(s), headerForm)
	}
	rawName, rawValue := s[:sep], s[sep+1:]
	name = strings.Trim(rawName, " \t")
	if name == "" {
		return "", "", field.Errorf(FieldHeader, "empty header name before '%c'; %s", s[sep], headerForm)
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return "", "", field.Errorf(FieldHeader, "the header name has a character not allowed in HTTP header names at byte %d of %d (name not shown); %s", i+1, len(name), headerForm)
		}
	}
	value = strings.Trim(rawValue, " \t")
	if s[sep] == '=' && value != "" && strings.Trim(value, "=") == "" {
		// "abc123==" is a pasted base64 token, not NAME=VALUE: sending it as a header name
		// would hand the credential to the server (and its logs) in the clear.
		return "", "", field.Errorf(FieldHeader, "the %d-byte value given ends in '=' padding like a base64 token (not shown: it may be a credential); %s", len(s), headerForm)
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return "", "", field.Errorf(FieldHeader, "%s: the value has a control character (0x%02x) at byte %d of %d (value not shown)", name, c, i+1, len(value))
		}
	}
	return name, value, nil
}

// isTokenChar reports whether c may appear in an HTTP header name (RFC 9110 tchar).
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// extraBodyExample ends every --extra-body error.
const extraBodyExample = `want a JSON object, e.g. '{"ignore_eos":true}'`

// ParseExtraBody parses --extra-body: a JSON object whose members are merged into every request
// body. Blank input means no extra body (nil, nil). The object may not turn "stream" off, its
// "stream_options" must be an object, and a key may appear only once. The result is the input
// without surrounding blanks. Errors say what is wrong and where, without quoting the input.
func ParseExtraBody(s string) (json.RawMessage, error) {
	b := bytes.TrimSpace([]byte(s))
	if len(b) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, field.Errorf(FieldExtraBody, "not valid JSON (syntax error at byte %d of %d); %s", se.Offset, len(b), extraBodyExample)
		}
		return nil, field.Errorf(FieldExtraBody, "not valid JSON; %s", extraBodyExample)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, field.Errorf(FieldExtraBody, "got %s, %s", jsonKind(v), extraBodyExample)
	}
	if _, _, err := parseExtraBody(b); err != nil {
		return nil, field.Errorf(FieldExtraBody, "%w", err)
	}
	return json.RawMessage(b), nil
}

// jsonKind names the kind of a decoded JSON value, with its article.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// ParseHeaders parses every header value given (ParseHeader), in order, each header given once
// whatever the case of its name. A problem is a field error of FieldHeader that names its value
// by position ("header #2: …") in the words of ParseHeader, never quoting a value.
func ParseHeaders(list []string) (http.Header, []error) {
	var h http.Header
	var errs []error
	given := map[string]int{} // canonical name → the position that gave it
	for i, s := range list {
		name, value, err := ParseHeader(s)
		if err != nil {
			msg := err.Error()
			if fe := field.Of(err); fe != nil {
				msg = fe.Msg
			}
			errs = append(errs, field.Sentencef(FieldHeader, "%v #%d: %s", field.Ref(FieldHeader), i+1, msg))
			continue
		}
		canon := http.CanonicalHeaderKey(name)
		if j := given[canon]; j > 0 {
			errs = append(errs, field.Sentencef(FieldHeader, "%v #%d: %s is given twice (#%d and #%d): give each header once", field.Ref(FieldHeader), i+1, canon, j, i+1))
			continue
		}
		given[canon] = i + 1
		if h == nil {
			h = http.Header{}
		}
		h.Add(name, value)
	}
	return h, errs
}
