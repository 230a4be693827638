package sim

import (
	"encoding/binary"
	"unicode"
	"unicode/utf8"
)

// MessageOverheadTokens is the fixed number of tokens each chat message adds
// to the prompt besides its words (three before its content, one after, as
// a ChatML-like template would).
const MessageOverheadTokens = 4

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// tokenizer counts tokens and computes the chained block hashes of a prompt.
// The running FNV-1a state at a block boundary depends on every token
// before it, so it is the hash of the previous block's hash and this
// block's tokens.
type tokenizer struct {
	blockSize int // 0: no hashes
	n         int
	h         uint64
	blocks    []uint64
}

func newTokenizer(blockSize int) tokenizer {
	return tokenizer{blockSize: blockSize, h: fnvOffset}
}

func (t *tokenizer) endToken() {
	t.h ^= 0xff // token separator (never a byte of UTF-8 text)
	t.h *= fnvPrime
	t.n++
	if t.blockSize > 0 && t.n%t.blockSize == 0 {
		t.blocks = append(t.blocks, t.h)
	}
}

// word adds one token made of the bytes of w.
func (t *tokenizer) word(w string) {
	if t.blockSize > 0 {
		for i := 0; i < len(w); i++ {
			t.h ^= uint64(w[i])
			t.h *= fnvPrime
		}
	}
	t.endToken()
}

// id adds one token given by its id.
func (t *tokenizer) id(v int64) {
	if t.blockSize > 0 {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		for _, c := range b {
			t.h ^= uint64(c)
			t.h *= fnvPrime
		}
	}
	t.endToken()
}

// text adds one token per whitespace-separated word of s.
func (t *tokenizer) text(s string) {
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		size := 1
		space := false
		if c < utf8.RuneSelf {
			space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
		}
		if space {
			if start >= 0 {
				t.word(s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start >= 0 {
		t.word(s[start:])
	}
}

// messageStart adds the overhead tokens before a chat message's content
// (three of MessageOverheadTokens), messageEnd the one after it.
func (t *tokenizer) messageStart(role string) {
	t.word("<|start|>")
	t.word(role)
	t.word("<|sep|>")
}

func (t *tokenizer) messageEnd() { t.word("<|end|>") }

// genWords is the fixed vocabulary of generated text, cycled: token i is
// genWords[i%len(genWords)], preceded by a space unless it is the first.
var genWords = [...]string{
	"the", "model", "is", "a", "simulated", "deployment", "and", "these",
	"words", "are", "one", "token", "each", "so", "counting", "them",
	"gives", "the", "number", "of", "generated", "tokens", "for", "every",
	"request", "that", "it", "serves", "under", "any", "load", "level",
}

// appendTokens appends the text of generated tokens [from, to).
func appendTokens(b []byte, from, to int) []byte {
	for i := from; i < to; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, genWords[i%len(genWords)]...)
	}
	return b
}
