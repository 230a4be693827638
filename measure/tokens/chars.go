package tokens

import (
	"unicode"
	"unicode/utf8"
)

// The character classes of Hugging Face tokenizers, as its Rust code and the Oniguruma
// patterns of tokenizer.json files define them: \s is Unicode's White_Space (Rust's
// char::is_whitespace, Oniguruma's \s), \w Rust's regex \w, punctuation Rust's
// is_ascii_punctuation or category P, a number Rust's char::is_numeric (category N).

// asciiClass holds the classes of the ASCII characters, so the common case is a table lookup.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		r := rune(c)
		switch {
		case r >= 'a' && r <= 'z':
			t[c] = clLetter | clLower | clWord
		case r >= 'A' && r <= 'Z':
			t[c] = clLetter | clUpper | clWord
		case r >= '0' && r <= '9':
			t[c] = clNumber | clWord
		case r == ' ' || (r >= '\t' && r <= '\r'):
			t[c] = clSpace
		case r == '_':
			t[c] = clWord | clPunct
		case r > ' ' && r < 0x7f:
			t[c] = clPunct
		}
	}
	return t
}()

const (
	clLetter = 1 << iota
	clLower
	clUpper
	clNumber
	clSpace
	clWord
	clPunct
)

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clSpace != 0
	}
	return unicode.Is(unicode.White_Space, r)
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clLetter != 0
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clNumber != 0
	}
	return unicode.IsNumber(r)
}

// isWord is Rust regex's Unicode \w: Alphabetic, marks, decimal digits, connector punctuation
// and the joiners.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clWord != 0
	}
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Nl, r) ||
		unicode.Is(unicode.Pc, r) || unicode.Is(unicode.Join_Control, r) || unicode.Is(unicode.Other_Alphabetic, r)
}

// isPunct is the Punctuation and Bert pre-tokenizers' test: ASCII punctuation (symbols such as
// $ + < = > ^ ` | ~ included) or Unicode category P.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clPunct != 0
	}
	return unicode.IsPunct(r)
}
