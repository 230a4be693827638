package tokens

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A normalizer rewrites text before it is split (Hugging Face's normalizers).
type normalizer interface {
	// normalize returns s normalized, and whether its first character still stands for s's
	// first one: false when leading characters were removed, so that a piece cut from the
	// start of the result no longer begins where the text did.
	normalize(s string) (string, bool)
}

type unicodeForm struct{ form norm.Form }

func (u unicodeForm) normalize(s string) (string, bool) {
	if u.form.IsNormalString(s) {
		return s, true
	}
	return u.form.String(s), true
}

// lowercase is Rust's char::to_lowercase, character by character.
type lowercase struct{}

func (lowercase) normalize(s string) (string, bool) { return toLower(s), true }

func toLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || (c >= 'A' && c <= 'Z') {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 'İ' { // the one character whose lowercase is two: i and a combining dot above
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// strip removes leading and trailing whitespace.
type strip struct{ left, right bool }

func (st strip) normalize(s string) (string, bool) {
	out, kept := s, true
	if st.left {
		out = strings.TrimLeftFunc(out, isSpace)
		kept = len(out) == len(s)
	}
	if st.right {
		out = strings.TrimRightFunc(out, isSpace)
	}
	return out, kept
}

// filterMap keeps the characters keep accepts (nil: all), each written as mapping gives it
// (nil: as it is); kept reports whether the first character was kept.
func filterMap(s string, keep func(rune) bool, mapping func(rune) rune) (string, bool) {
	change := func(r rune) (rune, bool, bool) { // the character written, whether it is, whether it changed
		if keep != nil && !keep(r) {
			return 0, false, true
		}
		if mapping != nil {
			if m := mapping(r); m != r {
				return m, true, true
			}
		}
		return r, true, false
	}
	first := -1
	for i, r := range s {
		if _, _, changed := change(r); changed {
			first = i
			break
		}
	}
	if first < 0 {
		return s, true
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:first])
	kept := true
	for i, r := range s[first:] {
		m, write, _ := change(r)
		if write {
			b.WriteRune(m)
		} else if first+i == 0 {
			kept = false
		}
	}
	return b.String(), kept
}

// stripAccents removes combining marks.
type stripAccents struct{}

func (stripAccents) normalize(s string) (string, bool) {
	return filterMap(s, func(r rune) bool { return !unicode.IsMark(r) }, nil)
}

// replace writes content in place of every match of a pattern.
type replace struct {
	m       matcher
	content string
}

func (r replace) normalize(s string) (string, bool) {
	var spans [16]span
	ms := r.m.matches(s, spans[:0])
	if len(ms) == 0 {
		return s, true
	}
	var b strings.Builder
	prev := 0
	for _, m := range ms {
		b.WriteString(s[prev:m.start])
		b.WriteString(r.content)
		prev = m.end
	}
	b.WriteString(s[prev:])
	return b.String(), !(ms[0].start == 0 && ms[0].end > 0 && r.content == "")
}

// prepend puts a string in front of non-empty text.
type prepend struct{ s string }

func (p prepend) normalize(s string) (string, bool) {
	if s == "" {
		return s, true
	}
	return p.s + s, true
}

// bertNormalizer is BertNormalizer: control characters removed and whitespace made spaces
// (clean_text), spaces around CJK ideographs, accents stripped, lowercase.
type bertNormalizer struct {
	cleanText, chineseChars, stripAccents, lowercase bool
}

func (bn bertNormalizer) normalize(s string) (string, bool) {
	kept := true
	if bn.cleanText {
		var k bool
		s, k = filterMap(s, func(r rune) bool {
			return !(r == 0 || r == utf8.RuneError || isOther(r) && r != '\t' && r != '\n' && r != '\r')
		},
			func(r rune) rune {
				if isSpace(r) {
					return ' '
				}
				return r
			})
		kept = kept && k
	}
	if bn.chineseChars {
		s = spaceChineseChars(s)
	}
	if bn.stripAccents {
		var k bool
		s, k = filterMap(norm.NFD.String(s), func(r rune) bool { return !unicode.Is(unicode.Mn, r) }, nil)
		kept = kept && k
	}
	if bn.lowercase {
		s = toLower(s)
	}
	return s, kept
}

// isOther is BertNormalizer's control test: categories Cc, Cf, Co and Cs (not Cn: an
// unassigned code point is kept, as in Hugging Face's).
func isOther(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) // Go's unicode.C holds Cn too
}

func isChineseChar(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

func spaceChineseChars(s string) string {
	if !strings.ContainsFunc(s, isChineseChar) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isChineseChar(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// nmt is the Nmt normalizer: some control characters removed, some spaces made plain.
type nmt struct{}

func (nmt) normalize(s string) (string, bool) {
	return filterMap(s, func(r rune) bool {
		return !(r >= 1 && r <= 8 || r == 0x0B || r >= 0x0E && r <= 0x1F || r == 0x7F || r == 0x8F || r == 0x9F)
	}, func(r rune) rune {
		switch {
		case r == 0x09, r == 0x0A, r == 0x0C, r == 0x0D, r == 0x1680, r >= 0x200B && r <= 0x200F,
			r == 0x2028, r == 0x2029, r == 0x2581, r == 0xFEFF, r == 0xFFFD:
			return ' '
		}
		return r
	})
}

// byteLevelNormalizer writes every byte as its byte-level character.
type byteLevelNormalizer struct{}

func (byteLevelNormalizer) normalize(s string) (string, bool) { return byteLevelString(s), true }

// sequence applies normalizers in order.
type sequence []normalizer

func (q sequence) normalize(s string) (string, bool) {
	kept := true
	for _, n := range q {
		var k bool
		s, k = n.normalize(s)
		kept = kept && k
	}
	return s, kept
}
