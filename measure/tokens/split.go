package tokens

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// piece is a part of the text on its way to the model: a normalized substring, or a new string
// a pre-tokenizer made.
type piece struct {
	text string
	// first: the piece begins where the input text begins (Hugging Face's
	// offsets_original().0 == 0), which Metaspace's prepend_scheme "first" asks.
	first bool
}

// span is a match's byte range [start, end).
type span struct{ start, end int }

// seg is a part of a piece in Hugging Face's Pattern::find_matches: a match or the text
// between two.
type seg struct {
	start, end int
	match      bool
}

// A matcher finds a split pattern's matches in a piece.
type matcher interface {
	// matches appends the byte ranges of the non-overlapping matches in s, leftmost first, as
	// Oniguruma's find_iter returns them (an empty match is possible).
	matches(s string, dst []span) []span
}

// behavior is Hugging Face's SplitDelimiterBehavior: what becomes of a match.
type behavior int

const (
	removed            behavior = iota // dropped
	isolated                           // a piece of its own
	mergedWithPrevious                 // appended to the piece before it
	mergedWithNext                     // put in front of the piece after it
	contiguous                         // consecutive matches become one piece
)

func parseBehavior(s string) (behavior, error) {
	switch s {
	case "Removed":
		return removed, nil
	case "Isolated":
		return isolated, nil
	case "MergedWithPrevious":
		return mergedWithPrevious, nil
	case "MergedWithNext":
		return mergedWithNext, nil
	case "Contiguous":
		return contiguous, nil
	}
	return 0, fmt.Errorf("split behavior %s: want Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous", quote(s))
}

// splitter splits pieces at a pattern's matches with a behavior (Hugging Face's
// NormalizedString::split), inverting what is a match when invert is set.
type splitter struct {
	m        matcher
	behavior behavior
	invert   bool
}

func (sp *splitter) preTokenize(e *encoder, p piece, out []piece) []piece {
	s := p.text
	e.spans = sp.m.matches(s, e.spans[:0])
	// The matches and the text between them, covering s.
	segs := e.segs[:0]
	prev := 0
	for _, m := range e.spans {
		if prev != m.start {
			segs = append(segs, seg{prev, m.start, sp.invert})
		}
		segs = append(segs, seg{m.start, m.end, !sp.invert})
		prev = m.end
	}
	if prev != len(s) {
		segs = append(segs, seg{prev, len(s), sp.invert})
	}
	e.segs = segs[:0] // the grown buffer, for the next call
	// What each behavior makes of them; seg.match now means "remove".
	switch sp.behavior {
	case isolated:
		for i := range segs {
			segs[i].match = false
		}
	case removed:
	case contiguous, mergedWithPrevious:
		merged := segs[:0]
		previous := false
		for _, g := range segs {
			join := g.match == previous
			if sp.behavior == mergedWithPrevious {
				join = g.match && !previous
			}
			if join && len(merged) > 0 {
				merged[len(merged)-1].end = g.end
			} else {
				merged = append(merged, seg{g.start, g.end, false})
			}
			previous = g.match
		}
		segs = merged
	case mergedWithNext:
		// Folded from the end: a match is put in front of the piece after it.
		n := len(segs)
		w := n
		previous := false
		for i := n - 1; i >= 0; i-- {
			g := segs[i]
			if g.match && !previous && w < n {
				segs[w].start = g.start
			} else {
				w--
				segs[w] = seg{g.start, g.end, false}
			}
			previous = g.match
		}
		segs = segs[w:]
	}
	for _, g := range segs {
		if !g.match && g.end > g.start {
			out = append(out, piece{s[g.start:g.end], p.first && g.start == 0})
		}
	}
	return out
}

// literal matches a fixed string (a Split or Replace pattern {"String": ...}).
type literal string

func (l literal) matches(s string, dst []span) []span {
	for i := 0; i <= len(s)-len(l); {
		j := strings.Index(s[i:], string(l))
		if j < 0 {
			break
		}
		dst = append(dst, span{i + j, i + j + len(l)})
		i += j + len(l)
	}
	return dst
}

// charClass matches every character of a class, one match each (Hugging Face's patterns that
// are functions of a char: whitespace, punctuation, digits, a delimiter).
type charClass func(rune) bool

func (c charClass) matches(s string, dst []span) []span {
	for i, r := range s {
		if c(r) {
			dst = append(dst, span{i, i + utf8.RuneLen(r)})
		}
	}
	return dst
}

// regex matches an Oniguruma pattern of a tokenizer.json file with regexp2, a backtracking
// engine with the same syntax for what those patterns use (look-around, \p{..} classes, inline
// case-insensitive groups, Unicode \s and \w).
type regex struct{ re *regexp2.Regexp }

func compileRegex(pattern string) (matcher, error) {
	if m := knownPattern(pattern); m != nil {
		return m, nil
	}
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("pattern %s: %v", quote(pattern), err)
	}
	return regex{re}, nil
}

func (r regex) matches(s string, dst []span) []span {
	m, err := r.re.FindStringMatch(s)
	for m != nil && err == nil {
		start, length := m.ByteRange()
		dst = append(dst, span{start, start + length})
		m, err = r.re.FindNextMatch(m)
	}
	return dst
}

// quote quotes s for a message, cut to a few dozen characters: a message never carries a
// file's content at length.
func quote(s string) string {
	const max = 60
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q…", s[:cut])
	}
	return fmt.Sprintf("%q", s)
}
