package tokens

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The most entries a tokenizer file may hold in each of its lists, checked before the file is
// parsed: eight times the largest of the major families' (Gemma 3: 262,144 vocabulary entries,
// 514,906 merges, 6,415 added tokens), so that a file of millions of entries is refused before
// a map of them is built.
const (
	MaxVocab  = 1 << 21
	MaxMerges = 1 << 22
	MaxAdded  = 1 << 21
)

// shape is what checkShape finds in a tokenizer file without decoding it: the model's type and
// the number of entries of each list, as encoding/json would read them (keys matched as it
// matches them, the last of a repeated key winning). A count is -1 when the value is not a list.
type shape struct {
	modelType     string
	typeKnown     bool // the model's type is a string (or absent); false when it is another value
	vocab, merges int
	added         int
	model         bool // a model object was found (the last "model" is one)
	isObject      bool // the file is a JSON object
}

// knownModels are the model types parseModel reads.
var knownModels = map[string]bool{"BPE": true, "Unigram": true, "WordPiece": true, "WordLevel": true}

// checkShape refuses a file whose model type is unknown or whose lists hold more than a tokenizer
// does, from one pass over its bytes that decodes nothing and allocates nothing: a file of 100 MB
// is refused in a fraction of a second, at no cost beyond the bytes read. A file the pass cannot
// follow (not JSON) is left to the parser, which says what is wrong with it.
func checkShape(data []byte) error {
	sh, ok := scanShape(data)
	if !ok || !sh.isObject || !sh.model {
		return nil
	}
	if sh.typeKnown && sh.modelType != "" && !knownModels[sh.modelType] {
		return fmt.Errorf("model: unknown model type %s", quote(sh.modelType))
	}
	for _, l := range []struct {
		what   string
		n, max int
	}{{"model: vocab", sh.vocab, MaxVocab}, {"model: merges", sh.merges, MaxMerges}, {"added_tokens", sh.added, MaxAdded}} {
		if l.n > l.max {
			return fmt.Errorf("%s: %d entries, more than a tokenizer holds (at most %d; Gemma 3's, the largest of the major families, holds 262,144 vocabulary entries, 514,906 merges, 6,415 added tokens): not read further",
				l.what, l.n, l.max)
		}
	}
	return nil
}

// scanShape reads the shape of data, a tokenizer file; ok is false when the bytes are not JSON
// it can follow.
func scanShape(data []byte) (sh shape, ok bool) {
	s := &jsonWalker{b: data}
	sh = shape{vocab: -1, merges: -1, added: -1}
	s.ws()
	if s.peek() != '{' {
		return sh, true
	}
	sh.isObject = true
	ok = s.members(func(key []byte) bool {
		switch {
		case keyIs(key, "model"):
			if s.peek() != '{' {
				sh.model = false
				return s.skip()
			}
			sh.model, sh.modelType, sh.typeKnown, sh.vocab, sh.merges = true, "", true, -1, -1
			return s.members(func(key []byte) bool {
				switch {
				case keyIs(key, "type"):
					return s.modelType(&sh)
				case keyIs(key, "vocab"):
					sh.vocab = s.countOrSkip()
					return sh.vocab != -2
				case keyIs(key, "merges"):
					sh.merges = s.countOrSkip()
					return sh.merges != -2
				}
				return s.skip()
			})
		case keyIs(key, "added_tokens"):
			sh.added = s.countOrSkip()
			return sh.added != -2
		}
		return s.skip()
	})
	return sh, ok
}

// keyIs reports whether a key (its raw bytes between the quotes) names field as encoding/json
// matches a struct field's name: the same letters, whatever their case, escapes resolved.
func keyIs(raw []byte, field string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return bytes.EqualFold(raw, []byte(field))
	}
	if len(raw) > 16*len(field) { // an escape is at most 12 bytes for a letter
		return false
	}
	var k string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &k) != nil {
		return false
	}
	return bytes.EqualFold([]byte(k), []byte(field))
}

// jsonWalker walks JSON text without decoding it.
type jsonWalker struct {
	b []byte
	i int
}

func (s *jsonWalker) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jsonWalker) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// str skips the string at s.i and returns its raw body; ok false when it does not end.
func (s *jsonWalker) str() (body []byte, ok bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i + 1
	// Most strings of a tokenizer file are short: a loop finds their end sooner than a search
	// set up for long ones. An escape is left to the search.
short:
	for j := start; j < len(s.b) && j < start+32; j++ {
		switch s.b[j] {
		case '"':
			s.i = j + 1
			return s.b[start:j], true
		case '\\':
			break short
		}
	}
	for j := start; ; {
		k := bytes.IndexByte(s.b[j:], '"')
		if k < 0 {
			return nil, false
		}
		end := j + k
		esc := 0
		for p := end - 1; p >= start && s.b[p] == '\\'; p-- {
			esc++
		}
		if esc%2 == 0 {
			s.i = end + 1
			return s.b[start:end], true
		}
		j = end + 1
	}
}

// skip skips the value at s.i (after white space), nested values included, without recursion.
func (s *jsonWalker) skip() bool {
	s.ws()
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			if _, ok := s.str(); !ok {
				return false
			}
			if depth == 0 {
				return true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return false
			}
			if depth == 0 {
				s.i++
				return true
			}
		default:
			if depth == 0 { // a number, true, false or null
				start := s.i
				for s.i < len(s.b) && !isDelim(s.b[s.i]) {
					s.i++
				}
				return s.i > start
			}
		}
		s.i++
	}
	return false
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ':', ' ', '\t', '\n', '\r', '"', '{', '[':
		return true
	}
	return false
}

// members calls fn for every member of the object at s.i, with s.i at the member's value; fn
// must consume the value. ok is false when the object is not well formed.
func (s *jsonWalker) members(fn func(key []byte) bool) bool {
	_, ok := s.walk('{', fn)
	return ok
}

// countOrSkip counts the entries of the object or array at s.i (-1 for another value, -2 when
// it is not well formed).
func (s *jsonWalker) countOrSkip() int {
	s.ws()
	switch s.peek() {
	case '{':
		n, ok := s.walk('{', func([]byte) bool { return s.skip() })
		if !ok {
			return -2
		}
		return n
	case '[':
		n, ok := s.walk('[', nil)
		if !ok {
			return -2
		}
		return n
	}
	if !s.skip() {
		return -2
	}
	return -1
}

// walk reads the object or array opened by open at s.i, calling fn with each member's key (an
// object's) or skipping each element (an array's); it returns the number of entries.
func (s *jsonWalker) walk(open byte, fn func(key []byte) bool) (int, bool) {
	s.ws()
	if s.peek() != open {
		return 0, false
	}
	closing := byte('}')
	if open == '[' {
		closing = ']'
	}
	s.i++
	s.ws()
	if s.peek() == closing {
		s.i++
		return 0, true
	}
	for n := 1; ; n++ {
		s.ws()
		if open == '{' {
			key, ok := s.str()
			if !ok {
				return 0, false
			}
			s.ws()
			if s.peek() != ':' {
				return 0, false
			}
			s.i++
			s.ws()
			if !fn(key) {
				return 0, false
			}
		} else if !s.skip() {
			return 0, false
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case closing:
			s.i++
			return n, true
		default:
			return 0, false
		}
	}
}

// modelType reads the model's "type" value at s.i into sh, as encoding/json would set a string
// field: a string sets it, null leaves it, anything else makes it unknown to this pass.
func (s *jsonWalker) modelType(sh *shape) bool {
	s.ws()
	switch s.peek() {
	case '"':
		raw, ok := s.str()
		if !ok {
			return false
		}
		if len(raw) > 4096 { // no model type is this long: the parser's message names it
			sh.modelType, sh.typeKnown = string(raw[:4096]), true
			return true
		}
		var t string
		if json.Unmarshal(s.b[s.i-len(raw)-2:s.i], &t) != nil {
			sh.typeKnown = false
			return true
		}
		sh.modelType = t
		return true
	case 'n':
		return s.skip()
	}
	sh.typeKnown = false
	return s.skip()
}
