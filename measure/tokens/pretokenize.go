package tokens

import (
	"strings"
	"unicode/utf8"
)

// A preTokenizer splits a piece into the pieces the model tokenizes one by one (Hugging Face's
// pre-tokenizers), appending them to out.
type preTokenizer interface {
	preTokenize(e *encoder, p piece, out []piece) []piece
}

// byteLevel is the ByteLevel pre-tokenizer: a space in front of a piece without one
// (add_prefix_space), GPT-2's split (use_regex), then every byte written as the character
// that stands for it in the vocabulary. When it is the last step before a BPE model, the
// model reads the bytes themselves (its vocabulary is kept in bytes) and mapChars is off.
type byteLevel struct {
	addPrefixSpace bool
	split          *splitter // GPT-2's pattern, nil without use_regex
	mapChars       bool
}

func (b *byteLevel) preTokenize(e *encoder, p piece, out []piece) []piece {
	if b.addPrefixSpace && !strings.HasPrefix(p.text, " ") {
		p.text = " " + p.text
	}
	start := len(out)
	if b.split != nil {
		out = b.split.preTokenize(e, p, out)
	} else {
		out = append(out, p)
	}
	if b.mapChars {
		for i := start; i < len(out); i++ {
			out[i].text = byteLevelString(out[i].text)
		}
	}
	return out
}

// metaspace is the Metaspace pre-tokenizer: spaces become the replacement (▁), one is put in
// front (prepend_scheme always, or first: only at the start of the text), and with split the
// text is cut before every replacement character.
type metaspace struct {
	replacement string
	prepend     prependScheme
	split       bool
}

type prependScheme int

const (
	prependAlways prependScheme = iota
	prependFirst
	prependNever
)

func (m *metaspace) preTokenize(e *encoder, p piece, out []piece) []piece {
	text := strings.ReplaceAll(p.text, " ", m.replacement)
	if !strings.HasPrefix(text, m.replacement) && (m.prepend == prependAlways || (m.prepend == prependFirst && p.first)) {
		text = m.replacement + text
	}
	p.text = text
	if !m.split {
		return append(out, p)
	}
	sp := splitter{m: literal(m.replacement), behavior: mergedWithNext}
	return sp.preTokenize(e, p, out)
}

// bert is BertPreTokenizer: split at whitespace (removed), then at punctuation (isolated).
type bert struct{}

var (
	whitespaceSplit = &splitter{m: charClass(isSpace), behavior: removed}
	punctIsolated   = &splitter{m: charClass(isPunct), behavior: isolated}
)

func (bert) preTokenize(e *encoder, p piece, out []piece) []piece {
	start := len(out)
	out = whitespaceSplit.preTokenize(e, p, out)
	// Each word through the second split: the words are moved aside first (the second split
	// appends behind them).
	words := append(e.bertWords[:0], out[start:]...)
	out = out[:start]
	for _, w := range words {
		out = punctIsolated.preTokenize(e, w, out)
	}
	e.bertWords = words[:0]
	return out
}

// wordsAndPunct is the Whitespace pre-tokenizer's pattern \w+|[^\w\s]+: runs of word
// characters, and runs of characters that are neither word nor space.
type wordsAndPunct struct{}

func (wordsAndPunct) matches(s string, dst []span) []span {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		var in func(rune) bool
		switch {
		case isWord(r):
			in = isWord
		case !isSpace(r):
			in = func(r rune) bool { return !isWord(r) && !isSpace(r) }
		default:
			i += n
			continue
		}
		j := i + n
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !in(r) {
				break
			}
			j += n
		}
		dst = append(dst, span{i, j})
		i = j
	}
	return dst
}

// fixedLength is the FixedLength pre-tokenizer: pieces of length characters.
type fixedLength struct{ length int }

func (f fixedLength) preTokenize(_ *encoder, p piece, out []piece) []piece {
	s := p.text
	start, chars := 0, 0
	for i := range s {
		if chars == f.length {
			out = append(out, piece{s[start:i], p.first && start == 0})
			start, chars = i, 0
		}
		chars++
	}
	if start < len(s) {
		out = append(out, piece{s[start:], p.first && start == 0})
	}
	return out
}

// byteChars is GPT-2's bytes-to-characters table: printable Latin-1 bytes stand for
// themselves, the others for the characters from U+0100 on, in order.
var byteChars, charBytes = func() (chars [256]rune, bytes map[rune]byte) {
	bytes = make(map[rune]byte, 256)
	n := rune(0)
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff) {
			chars[b] = rune(b)
		} else {
			chars[b] = 256 + n
			n++
		}
		bytes[chars[b]] = byte(b)
	}
	return chars, bytes
}()

// byteLevelString writes s's bytes as their byte-level characters.
func byteLevelString(s string) string {
	var b strings.Builder
	b.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteChars[s[i]])
	}
	return b.String()
}

// fromByteLevel turns a byte-level vocabulary entry back into its bytes; ok is false for an
// entry with a character outside the byte-level alphabet (it can never be produced).
func fromByteLevel(s string, buf []byte) ([]byte, bool) {
	buf = buf[:0]
	for _, r := range s {
		b, ok := charBytes[r]
		if !ok {
			return buf, false
		}
		buf = append(buf, b)
	}
	return buf, true
}
