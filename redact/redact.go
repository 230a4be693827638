// Package redact keeps a target's secrets out of everything loadcurve writes: records, results,
// reports and messages. A Secrets set is built from every place a secret can come from (the API
// key, header values, the base URL's user info and query) together with the encodings a server
// may echo them in (query- and path-escaped, JSON-escaped, HTTP Basic); Clean hides each of them,
// and any prefix of eight bytes or more of one (a server, or a length limit, may cut an echoed key
// short), before it bounds the text's length, so that no cut can let a secret through.
//
// URL is the one way a URL is shown: without user info, query or fragment.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"
)

// Mask replaces every secret.
const Mask = "[REDACTED]"

// MinLen is the shortest value treated as a secret. Shorter values (a header "1", a query flag
// "on") would turn every message into noise, and no real credential is that short.
const MinLen = 4

// MinPrefix is the shortest prefix of a secret that is hidden on its own: an echoed key cut
// short still loses everything from its eighth byte on. Secrets shorter than this are hidden
// only whole.
const MinPrefix = 8

// Window bounds how much of a text Clean looks at: texts are error messages and echoed bodies,
// and what lies beyond the window is cut without being shown.
const Window = 64 << 10

// Secrets is a set of secret values. The zero value and nil hide nothing. It is immutable once
// built and safe for concurrent use.
type Secrets struct {
	values []string // longest first, so that a secret containing another is hidden whole
}

// New returns the set of the given values (and their encodings); see Add.
func New(values ...string) *Secrets {
	s := &Secrets{}
	for _, v := range values {
		s.Add(v)
	}
	return s
}

// Add adds v and the encodings it may be echoed in. Values shorter than MinLen are ignored.
func (s *Secrets) Add(v string) {
	if len(v) < MinLen {
		return
	}
	for _, e := range []string{v, url.QueryEscape(v), url.PathEscape(v), jsonEscaped(v)} {
		s.addOne(e)
	}
}

// AddHeaderValue adds a header value; of a "Scheme credential" value (Bearer, Basic, …) it adds
// the credential, which hides the whole value wherever it appears without masking the scheme's
// name in unrelated text.
func (s *Secrets) AddHeaderValue(v string) {
	v = strings.TrimSpace(v)
	if scheme, cred, ok := strings.Cut(v, " "); ok && scheme != "" && !strings.ContainsAny(scheme, "=:,") {
		if cred = strings.TrimSpace(cred); len(cred) >= MinLen {
			s.Add(cred)
			return
		}
	}
	s.Add(v)
}

// AddURL adds the secrets a URL carries: its user name and password, the HTTP Basic credential
// Go's client derives from them, and its query values. An unparsable URL adds itself whole.
func (s *Secrets) AddURL(raw string) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		s.Add(raw)
		return
	}
	if u.User != nil {
		name := u.User.Username()
		pw, hasPW := u.User.Password()
		s.Add(name)
		s.Add(pw)
		if hasPW || name != "" {
			s.Add(base64.StdEncoding.EncodeToString([]byte(name + ":" + pw)))
		}
		s.Add(u.User.String())
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			s.Add(v)
		}
	}
}

func (s *Secrets) addOne(v string) {
	if len(v) < MinLen {
		return
	}
	for _, have := range s.values {
		if have == v {
			return
		}
	}
	s.values = append(s.values, v)
	sort.SliceStable(s.values, func(i, j int) bool { return len(s.values[i]) > len(s.values[j]) })
}

// Empty reports whether s hides nothing.
func (s *Secrets) Empty() bool { return s == nil || len(s.values) == 0 }

// Redact returns text with every secret, and every prefix of MinPrefix bytes or more of one,
// replaced by Mask.
func (s *Secrets) Redact(text string) string {
	if s.Empty() {
		return text
	}
	// Whole values first, so that a longer value's prefix (an escaped form of the same secret)
	// cannot consume the start of a shorter whole one and leave its end behind.
	for _, v := range s.values {
		text = strings.ReplaceAll(text, v, Mask)
	}
	for _, v := range s.values {
		text = hide(text, v)
	}
	return text
}

// Clean redacts text and bounds it to max bytes (at a rune boundary, "…" marking the cut). Only
// the first Window bytes are looked at; a secret cut by that window is hidden too.
func (s *Secrets) Clean(text string, max int) string {
	cut := false
	if len(text) > Window {
		text, cut = text[:Window], true
	}
	text = s.Redact(text)
	if cut && !s.Empty() {
		text = hideTrailingPrefix(text, s.values)
	}
	return boundOutsideMasks(text, max)
}

// boundOutsideMasks is Bound that never cuts inside a Mask: a cut mask would read as text.
func boundOutsideMasks(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := max(n-len("…"), 0)
	for k := max(cut-len(Mask)+1, 0); k < cut; k++ {
		if strings.HasPrefix(text[k:], Mask) {
			return Bound(text[:k]+"…", n)
		}
	}
	return Bound(text, n)
}

// hide replaces, in one pass over text, every occurrence of v and every occurrence of a prefix
// of v of at least MinPrefix bytes by Mask.
func hide(text, v string) string {
	key := v
	if len(key) > MinPrefix {
		key = key[:MinPrefix]
	}
	i := strings.Index(text, key)
	if i < 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for i >= 0 {
		n := len(key)
		for n < len(v) && i+n < len(text) && text[i+n] == v[n] {
			n++
		}
		b.WriteString(text[:i])
		b.WriteString(Mask)
		text = text[i+n:]
		i = strings.Index(text, key)
	}
	b.WriteString(text)
	return b.String()
}

// hideTrailingPrefix masks the end of a text that was cut short when it ends with the start of
// a secret: the cut may have fallen inside it.
func hideTrailingPrefix(text string, values []string) string {
	for _, v := range values {
		for n := min(len(v)-1, len(text)); n > 0; n-- {
			if strings.HasSuffix(text, v[:n]) {
				return text[:len(text)-n] + Mask
			}
		}
	}
	return text
}

// Bound returns s cut to at most n bytes at a rune boundary, ending in "…" when cut.
func Bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ell = "…"
	cut := n - len(ell)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ell
}

// URL returns u without user info, query or fragment: the form in which a URL appears in result
// files and messages. An unparsable URL is shown as "(invalid URL)": its text may hold secrets.
func URL(u string) string {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil {
		return "(invalid URL)"
	}
	p.User = nil
	p.RawQuery = ""
	p.ForceQuery = false
	p.Fragment = ""
	p.RawFragment = ""
	return p.String()
}

func jsonEscaped(v string) string {
	j, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return string(j[1 : len(j)-1])
}
