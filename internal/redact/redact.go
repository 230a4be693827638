// Package redact is the one sanitiser every byte that came from a server, or from a secret
// source, passes before loadcurve writes it anywhere: records, results, reports, plots, file
// names and the terminal.
//
// A Secrets set is built from every place a secret can come from (the API key, header values,
// the base URL's user info, HTTP Basic credential and query values, credentials in
// --extra-body). Each value is kept with the encodings a server may echo it in: query-, path-,
// JSON- and HTML-escaped, hex, base64 at each of the three alignments a value can have inside a
// longer base64 text (and of "Bearer KEY"), the padded base64 Go's client sends. Redact hides
// every run of text that matches any eight-byte piece of one of those (a prefix, a middle or a
// tail: a server, or a length limit, may cut an echo anywhere), ignoring ASCII case; a value
// shorter than eight bytes is hidden whole.
//
// Clean is the sanitiser for text meant for a person or a file: it removes terminal escape
// sequences and control characters (a newline becomes a space, so a server cannot forge a line
// of output), redacts, and only then bounds the length, so that no cut can let a secret through.
// FileName makes a name (a model id, a label) safe to use in a file name.
//
// URL is the one way a URL is shown: without user info, query or fragment.
package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html"
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

// MinPrefix is the length of the pieces of a secret that are hidden on their own: any run of
// MinPrefix bytes or more of a secret (or of one of its encodings), wherever it sits in the
// secret, is hidden. Secrets (and encodings) shorter than this are hidden only whole.
const MinPrefix = 8

// Window bounds how much of a text Clean looks at: texts are error messages and echoed bodies,
// and what lies beyond the window is cut without being shown.
const Window = 64 << 10

// filterBits sizes the bitmap that lets Redact skip most positions of a text without a map
// lookup: 64 Ki bits (8 KiB) keep it a few percent full for a few thousand pieces.
const filterBits = 1 << 16

// Secrets is a set of secret values. The zero value and nil hide nothing. It is immutable once
// built (Add and the other adders are for building it) and then safe for concurrent use.
type Secrets struct {
	long  []string            // forms of MinPrefix bytes or more, longest first
	short []string            // forms shorter than MinPrefix, hidden whole (exact case), longest first
	grams map[uint64]struct{} // every MinPrefix-byte piece of every long form, ASCII case folded
	bits  []uint64            // filterBits bits: the grams' hashes
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
	for _, e := range encodings(v) {
		s.addForm(e)
	}
}

// AddAPIKey adds an API key: the key, its encodings, and the base64 forms of the header value
// it is sent in ("Bearer KEY"), which a server may echo encoded.
func (s *Secrets) AddAPIKey(key string) {
	key = strings.TrimSpace(key)
	if len(key) < MinLen {
		return
	}
	s.Add(key)
	s.addBase64("Bearer " + key)
}

// AddHeaderValue adds a header value; of a "Scheme credential" value (Bearer, Basic, …) it adds
// the credential (and the base64 forms of the whole value), which hides the whole value wherever
// it appears without masking the scheme's name in unrelated text.
func (s *Secrets) AddHeaderValue(v string) {
	v = strings.TrimSpace(v)
	if scheme, cred, ok := strings.Cut(v, " "); ok && scheme != "" && !strings.ContainsAny(scheme, "=:,") {
		if cred = strings.TrimSpace(cred); len(cred) >= MinLen {
			s.Add(cred)
			s.addBase64(v)
			return
		}
	}
	s.Add(v)
}

// AddHeader adds the value of a header given as "Name: value" (as --header takes it): the
// value is the secret, not the header's name.
func (s *Secrets) AddHeader(line string) {
	if _, v, ok := strings.Cut(line, ":"); ok {
		s.AddHeaderValue(v)
		return
	}
	s.AddHeaderValue(line)
}

// AddURL adds the secrets a URL carries: its user name and password, the "user:password" text
// and the HTTP Basic credential Go's client derives from them, and its query values. An
// unparsable URL adds itself whole.
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
			s.Add(name + ":" + pw)
			// The Authorization header Go's client sends for them, which a server may echo
			// encoded again.
			s.AddHeaderValue("Basic " + base64.StdEncoding.EncodeToString([]byte(name+":"+pw)))
		}
		s.Add(u.User.String())
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			s.Add(v)
		}
	}
}

// AddJSONCredentials adds the string values of a JSON object's members whose names say they
// hold a credential (api_key, token, secret, password, authorization, …), at any depth: an
// --extra-body may carry one to the server. Text that is not JSON adds nothing.
func (s *Secrets) AddJSONCredentials(doc []byte) {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return
	}
	var walk func(v any, credential bool)
	walk = func(v any, credential bool) {
		switch t := v.(type) {
		case map[string]any:
			for k, m := range t {
				walk(m, credential || CredentialName(k))
			}
		case []any:
			for _, m := range t {
				walk(m, credential)
			}
		case string:
			if credential {
				s.AddHeaderValue(t)
			}
		}
	}
	walk(v, false)
}

// CredentialName reports whether a field or header name says its value is a credential.
func CredentialName(name string) bool {
	n := strings.ToLower(strings.NewReplacer("-", "_", " ", "_").Replace(name))
	switch {
	case n == "key" || n == "token" || n == "auth" || n == "cookie":
		return true
	case strings.HasSuffix(n, "_key") || strings.HasSuffix(n, "apikey") || strings.HasSuffix(n, "_token"):
		return true
	}
	for _, w := range []string{"secret", "password", "passwd", "authorization", "credential"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Union returns a set hiding everything the given sets hide.
func Union(sets ...*Secrets) *Secrets {
	u := &Secrets{}
	for _, s := range sets {
		if s.Empty() {
			continue
		}
		for _, f := range s.long {
			u.addForm(f)
		}
		for _, f := range s.short {
			u.addForm(f)
		}
	}
	return u
}

// encodings are the forms in which v may be echoed.
func encodings(v string) []string {
	forms := []string{v, url.QueryEscape(v), url.PathEscape(v), jsonEscaped(v, true), jsonEscaped(v, false),
		html.EscapeString(v), htmlEntities.Replace(v), hex.EncodeToString([]byte(v)), StripControl(v)}
	forms = append(forms, base64Forms(v)...)
	return forms
}

// htmlEntities is the other common way of escaping text for HTML (named quotes, '+' escaped as
// html/template does).
var htmlEntities = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;", "+", "&#43;")

// addBase64 adds only the base64 forms of v (its plain text is not a secret as a whole: "Bearer
// KEY" holds the scheme's name).
func (s *Secrets) addBase64(v string) {
	for _, f := range base64Forms(v) {
		s.addForm(f)
	}
}

// base64Forms are v's padded standard base64 (as HTTP Basic sends it) and, for a value long
// enough to have pieces, the part of its base64 that depends on v alone when v starts at each
// of the three byte alignments inside a longer encoded text, in the standard and URL alphabets.
func base64Forms(v string) []string {
	forms := []string{base64.StdEncoding.EncodeToString([]byte(v))}
	if len(v) < MinPrefix {
		return forms
	}
	for k := range 3 {
		buf := make([]byte, k+len(v))
		copy(buf[k:], v)
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			e := enc.EncodeToString(buf)
			// Character j holds bits 6j..6j+5: it is v's alone when 6j >= 8k and 6j+6 <= 8(k+len(v)).
			first := (8*k + 5) / 6
			last := 8 * (k + len(v)) / 6
			if first < last && last <= len(e) {
				forms = append(forms, e[first:last])
			}
		}
	}
	return forms
}

func (s *Secrets) addForm(v string) {
	if len(v) < MinLen {
		return
	}
	if len(v) < MinPrefix {
		for _, have := range s.short {
			if have == v {
				return
			}
		}
		s.short = append(s.short, v)
		sort.SliceStable(s.short, func(i, j int) bool { return len(s.short[i]) > len(s.short[j]) })
		return
	}
	for _, have := range s.long {
		if have == v {
			return
		}
	}
	s.long = append(s.long, v)
	sort.SliceStable(s.long, func(i, j int) bool { return len(s.long[i]) > len(s.long[j]) })
	if s.grams == nil {
		s.grams = map[uint64]struct{}{}
		s.bits = make([]uint64, filterBits/64)
	}
	var g uint64
	for i := 0; i < len(v); i++ {
		g = g<<8 | uint64(fold[v[i]])
		if i >= MinPrefix-1 {
			s.grams[g] = struct{}{}
			h := gramHash(g)
			s.bits[h/64] |= 1 << (h % 64)
		}
	}
}

// fold maps a byte to its ASCII lower case.
var fold = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

func gramHash(g uint64) uint64 { return (g * 0x9E3779B97F4A7C15) >> (64 - 16) }

// Empty reports whether s hides nothing.
func (s *Secrets) Empty() bool { return s == nil || (len(s.long) == 0 && len(s.short) == 0) }

// Contains reports whether text holds a secret: Redact would change it.
func (s *Secrets) Contains(text string) bool {
	return len(s.spans(text)) > 0
}

// span is a half-open byte range of a text to hide.
type span struct{ from, to int }

// spans returns the ranges of text to hide, sorted and without overlaps (ranges that only touch
// stay apart: two secrets side by side are two masks).
func (s *Secrets) spans(text string) []span {
	if s.Empty() {
		return nil
	}
	var out []span
	add := func(from, to int) {
		if n := len(out); n > 0 && from < out[n-1].to {
			out[n-1].to = max(out[n-1].to, to)
			return
		}
		out = append(out, span{from, to})
	}
	if s.grams != nil && len(text) >= MinPrefix {
		var g uint64
		for i := 0; i < len(text); i++ {
			g = g<<8 | uint64(fold[text[i]])
			if i < MinPrefix-1 {
				continue
			}
			if h := gramHash(g); s.bits[h/64]&(1<<(h%64)) == 0 {
				continue
			}
			if _, ok := s.grams[g]; ok {
				add(i+1-MinPrefix, i+1)
			}
		}
	}
	if len(s.short) > 0 {
		var extra []span
		for _, v := range s.short {
			for off := 0; off <= len(text)-len(v); {
				j := strings.Index(text[off:], v)
				if j < 0 {
					break
				}
				extra = append(extra, span{off + j, off + j + len(v)})
				off += j + len(v)
			}
		}
		if len(extra) > 0 {
			all := append(out, extra...)
			sort.SliceStable(all, func(i, j int) bool { return all[i].from < all[j].from })
			out = nil
			for _, sp := range all {
				add(sp.from, sp.to)
			}
		}
	}
	return out
}

// Redact returns text with every secret, and every run of MinPrefix bytes or more of one (in
// any of its encodings, ignoring ASCII case), replaced by Mask.
func (s *Secrets) Redact(text string) string {
	sp := s.spans(text)
	if len(sp) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, r := range sp {
		b.WriteString(text[at:r.from])
		b.WriteString(Mask)
		at = r.to
	}
	b.WriteString(text[at:])
	return b.String()
}

// Clean makes text fit for a person or a file: terminal escape sequences and control characters
// removed (StripControl), secrets redacted, and the result bounded to max bytes (at a rune
// boundary, "…" marking the cut, never inside a mask). Only the first Window bytes are looked
// at; a secret cut by that window is hidden too.
func (s *Secrets) Clean(text string, max int) string {
	cut := false
	if len(text) > Window {
		text, cut = text[:Window], true
	}
	text = s.Redact(StripControl(text))
	if cut && !s.Empty() {
		text = hideTrailingPrefix(text, s.long)
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

// StripControl returns text without terminal escape sequences (ESC [ … and ESC ] … are removed
// whole) and with every other control character (C0, DEL, C1, the Unicode line and paragraph
// separators and bidirectional overrides) replaced by a space, so that it cannot move the
// cursor, recolour or clear a terminal, or start a line of its own. Invalid UTF-8 becomes U+FFFD.
func StripControl(text string) string {
	i := 0
	for i < len(text) && text[i] >= 0x20 && text[i] < 0x7f {
		i++
	}
	if i == len(text) {
		return text // printable ASCII: the common case
	}
	var b strings.Builder
	b.Grow(len(text))
	b.WriteString(text[:i])
	for i < len(text) {
		c := text[i]
		switch {
		case c == 0x1b:
			i = skipEscape(text, i)
			continue
		case c < 0x20 || c == 0x7f:
			b.WriteByte(' ')
			i++
			continue
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString("\uFFFD")
		case invisibleControl(r):
			b.WriteByte(' ')
		default:
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	return b.String()
}

// invisibleControl: C1 controls, line and paragraph separators, and the bidirectional
// formatting characters that can make a terminal show text other than what it holds.
func invisibleControl(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	case r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
		return true
	}
	return false
}

// skipEscape returns the index after the escape sequence starting with ESC at text[i]: a CSI
// (ESC [ parameters final), a string command (OSC, DCS, …, ended by BEL or ESC \), or ESC and
// one character.
func skipEscape(text string, i int) int {
	i++ // ESC
	if i >= len(text) {
		return i
	}
	switch text[i] {
	case '[':
		i++
		for i < len(text) && text[i] >= 0x20 && text[i] <= 0x3f {
			i++
		}
		if i < len(text) && text[i] >= 0x40 && text[i] <= 0x7e {
			i++
		}
		return i
	case ']', 'P', 'X', '^', '_':
		for i++; i < len(text); i++ {
			if text[i] == 0x07 {
				return i + 1
			}
			if text[i] == 0x1b {
				if i+1 < len(text) && text[i+1] == '\\' {
					return i + 2
				}
				return i
			}
		}
		return i
	}
	if text[i] >= 0x20 && text[i] < 0x7f {
		return i + 1
	}
	return i
}

// FileName returns name made safe as (a part of) a file name: control characters, path
// separators and the characters Windows reserves (< > : " / \ | ? *) become '_', a leading '.'
// or '-' too (no hidden file, no "..", nothing read as an option), and the result is cut to max
// bytes at a rune boundary. An empty result is "_".
func FileName(name string, max int) string {
	name = StripControl(name)
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		switch {
		case strings.ContainsRune(`<>:"/\|?*`, r), r < 0x20, r == 0x7f, r == utf8.RuneError:
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	if out != "" && (out[0] == '.' || out[0] == '-') {
		out = "_" + out[1:]
	}
	if len(out) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut]
	}
	if out == "" {
		return "_"
	}
	return out
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

// jsonEscaped is v as it appears inside a JSON string: with <, > and & escaped as encoding/json
// does by default, or kept (an encoder with SetEscapeHTML(false), most servers).
func jsonEscaped(v string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if enc.Encode(v) != nil {
		return v
	}
	j := strings.TrimSuffix(b.String(), "\n")
	return j[1 : len(j)-1]
}
