package tokens

import (
	"unicode"
	"unicode/utf8"
)

// Scanners for the split patterns of the major model families. Each returns, at a position,
// exactly the match a backtracking engine (Oniguruma's, regexp2's) returns there: the first
// alternative that matches, with its greedy repeats backed off only as far as the rest of
// the alternative needs. They are many times faster than regexp2 and are held to it on the
// corpus and on random text (scan_test.go, FuzzScanners).

// gpt2Pattern is the ByteLevel pre-tokenizer's split (GPT-2's).
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// The patterns of the families' Split pre-tokenizers, as their tokenizer.json files write them.
const (
	// Llama 3 (and OpenAI's cl100k).
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// Qwen 2.5 and 3: Llama 3's with one digit at a time.
	qwenPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// gpt-oss (OpenAI's o200k).
	o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// Mistral's tekken (Mistral Nemo and later): o200k's without contractions, one digit at a time.
	tekkenPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// DeepSeek V3 and R1: three splits in a row.
	deepseekDigits = `\p{N}{1,3}`
	deepseekCJK    = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
	deepseekMain   = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
)

// scanner is a pattern matched by a function giving the end of the match at i (-1: none).
type scanner func(s string, i int) int

func (sc scanner) matches(s string, dst []span) []span {
	for i := 0; i < len(s); {
		if end := sc(s, i); end > i {
			dst = append(dst, span{i, end})
			i = end
			continue
		}
		_, n := decode(s, i)
		i += n
	}
	return dst
}

// knownPattern returns the scanner written for a pattern, nil for a pattern without one.
func knownPattern(pattern string) matcher {
	switch pattern {
	case gpt2Pattern:
		return scanner(gpt2)
	case llama3Pattern:
		return scanner(tiktoken{digits: 3}.at)
	case qwenPattern:
		return scanner(tiktoken{digits: 1}.at)
	case o200kPattern:
		return scanner(cased{digits: 3, contractions: true}.at)
	case tekkenPattern:
		return scanner(cased{digits: 1}.at)
	case deepseekDigits:
		return scanner(func(s string, i int) int { return runUpTo(s, i, isNumber, 3) })
	case deepseekCJK:
		return scanner(func(s string, i int) int { return run(s, i, isDeepseekCJK) })
	case deepseekMain:
		return scanner(deepseek)
	}
	return nil
}

func decode(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// run returns the end of the run of characters in class from i (i itself when there is none).
func run(s string, i int, class func(rune) bool) int {
	for i < len(s) {
		r, n := decode(s, i)
		if !class(r) {
			break
		}
		i += n
	}
	return i
}

// runLetters is run(s, i, isLetter) with ASCII letters tested in line: most of a prompt is
// ASCII words.
func runLetters(s string, i int) int { return runASCII(s, i, clLetter, unicode.IsLetter) }

// runASCII is run(s, i, class) for a class whose ASCII members are those with bit in
// asciiClass, and whose other members slow reports.
func runASCII(s string, i int, bit uint8, slow func(rune) bool) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiClass[c]&bit == 0 {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !slow(r) {
			break
		}
		i += n
	}
	return i
}

func isUpperishWide(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}
func isLowerishWide(r rune) bool { return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M) }

// runUpTo is run, at most max characters long.
func runUpTo(s string, i int, class func(rune) bool, max int) int {
	for k := 0; k < max && i < len(s); k++ {
		r, n := decode(s, i)
		if !class(r) {
			break
		}
		i += n
	}
	return i
}

// at reports whether s[i] is a character of class.
func at(s string, i int, class func(rune) bool) bool {
	if i >= len(s) {
		return false
	}
	r, _ := decode(s, i)
	return class(r)
}

func isNewline(r rune) bool { return r == '\r' || r == '\n' }

// isOtherChar is [^\s\p{L}\p{N}]: neither whitespace, letter nor number.
func isOtherChar(r rune) bool { return !isSpace(r) && !isLetter(r) && !isNumber(r) }

// isPrefixChar is [^\r\n\p{L}\p{N}]: what may stand before a word.
func isPrefixChar(r rune) bool { return !isNewline(r) && !isLetter(r) && !isNumber(r) }

// contraction returns the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, or -1. Oniguruma folds
// case as Unicode does: ſ (long s) matches s, and K (Kelvin) k.
func contraction(s string, i int, fold bool) int {
	if i >= len(s) || s[i] != '\'' {
		return -1
	}
	lower := func(j int) (rune, int) {
		if j >= len(s) {
			return 0, 0
		}
		r, n := decode(s, j)
		if fold {
			switch {
			case r >= 'A' && r <= 'Z':
				r += 'a' - 'A'
			case r == 'ſ':
				r = 's'
			case r == 'K':
				r = 'k'
			}
		}
		return r, n
	}
	c1, n1 := lower(i + 1)
	switch c1 {
	case 's', 't', 'm', 'd':
		return i + 1 + n1
	case 'r', 'v', 'l':
		want := map[rune]rune{'r': 'e', 'v': 'e', 'l': 'l'}[c1]
		if c2, n2 := lower(i + 1 + n1); c2 == want {
			return i + 1 + n1 + n2
		}
	}
	return -1
}

// whitespace matches \s*[\r\n]+|\s+(?!\S)|\s+ at i, where s[i] is whitespace (newlines is
// false for GPT-2's pattern, which has no \s*[\r\n]+).
func whitespace(s string, i int, newlines bool) int {
	end, lastNL, last := i, -1, i
	for end < len(s) {
		r, n := decode(s, end)
		if !isSpace(r) {
			break
		}
		if isNewline(r) {
			lastNL = end + n
		}
		last = end
		end += n
	}
	switch {
	case newlines && lastNL >= 0: // \s*[\r\n]+: up to the run's last newline
		return lastNL
	case end == len(s): // \s+(?!\S) at the end of the text
		return end
	case last > i: // \s+(?!\S): all but the last, which stays with what follows
		return last
	}
	return end // \s+: a single whitespace character before a word
}

// tiktoken matches Llama 3's pattern (digits 3) and Qwen's (digits 1).
type tiktoken struct{ digits int }

func (t tiktoken) at(s string, i int) int {
	if e := contraction(s, i, true); e > 0 {
		return e
	}
	r, n := decode(s, i)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isLetter(r) {
		return runLetters(s, i)
	}
	if isPrefixChar(r) && at(s, i+n, isLetter) {
		return runLetters(s, i+n)
	}
	// \p{N}{1,3}
	if isNumber(r) {
		return runUpTo(s, i, isNumber, t.digits)
	}
	// ?[^\s\p{L}\p{N}]+[\r\n]*
	if e := punct(s, i, r, n, isNewline); e > 0 {
		return e
	}
	return whitespace(s, i, true)
}

// punct matches ` ?[^\s\p{L}\p{N}]+` then a run of tail characters, at i (r, n: s[i]).
func punct(s string, i int, r rune, n int, tail func(rune) bool) int {
	j := i
	if r == ' ' && at(s, i+n, isOtherChar) {
		j = i + n
	} else if !isOtherChar(r) {
		return -1
	}
	return run(s, run(s, j, isOtherChar), tail)
}

// cased matches the o200k pattern (gpt-oss: contractions, digits 3) and tekken's (neither),
// whose words are told apart by case: [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]* then
// [\p{Ll}\p{Lm}\p{Lo}\p{M}]+, or the first class then the second's repeat made optional.
type cased struct {
	digits       int
	contractions bool
}

func isUpperish(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'A' && r <= 'Z'
	}
	return isUpperishWide(r)
}

func isLowerish(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z'
	}
	return isLowerishWide(r)
}

func (c cased) at(s string, i int) int {
	r, n := decode(s, i)
	prefix := isPrefixChar(r)
	// The first alternative with the prefix, then without it; then the second.
	if prefix {
		if e := c.upperThenLower(s, i+n); e > 0 {
			return e
		}
	}
	if e := c.upperThenLower(s, i); e > 0 {
		return e
	}
	if prefix {
		if e := c.upperRun(s, i+n); e > 0 {
			return e
		}
	}
	if e := c.upperRun(s, i); e > 0 {
		return e
	}
	if isNumber(r) {
		return runUpTo(s, i, isNumber, c.digits)
	}
	if e := punct(s, i, r, n, func(r rune) bool { return isNewline(r) || r == '/' }); e > 0 {
		return e
	}
	if isSpace(r) {
		return whitespace(s, i, true)
	}
	return -1
}

func (c cased) suffix(s string, e int) int {
	if c.contractions {
		if k := contraction(s, e, true); k > 0 {
			return k
		}
	}
	return e
}

// upperThenLower matches [U]*[L]+ at j: the longest run of U, then the longest run of L after
// it; when none follows, the run of U gives back characters up to its last one that is also L.
func (c cased) upperThenLower(s string, j int) int {
	if j >= len(s) {
		return -1
	}
	a := runASCII(s, j, clUpper, isUpperishWide)
	if at(s, a, isLowerish) {
		return c.suffix(s, runASCII(s, a, clLower, isLowerishWide))
	}
	last := -1
	for k := j; k < a; {
		r, n := decode(s, k)
		if isLowerish(r) {
			last = k + n
		}
		k += n
	}
	if last < 0 {
		return -1
	}
	return c.suffix(s, last)
}

// upperRun matches [U]+[L]* at j.
func (c cased) upperRun(s string, j int) int {
	a := runASCII(s, j, clUpper, isUpperishWide)
	if a == j {
		return -1
	}
	return c.suffix(s, runASCII(s, a, clLower, isLowerishWide))
}

// gpt2 matches GPT-2's pattern.
func gpt2(s string, i int) int {
	if e := contraction(s, i, false); e > 0 {
		return e
	}
	r, n := decode(s, i)
	if isLetter(r) {
		return runLetters(s, i)
	}
	if r == ' ' && at(s, i+n, isLetter) {
		return runLetters(s, i+n)
	}
	for _, class := range [2]func(rune) bool{isNumber, isOtherChar} {
		if class(r) {
			return run(s, i, class)
		}
		if r == ' ' && at(s, i+n, class) {
			return run(s, i+n, class)
		}
	}
	return whitespace(s, i, false)
}

// deepseek matches DeepSeek V3's third split.
func deepseek(s string, i int) int {
	r, n := decode(s, i)
	// [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+
	if r < utf8.RuneSelf && asciiClass[r]&clPunct != 0 && at(s, i+n, isASCIILetter) {
		return run(s, i+n, isASCIILetter)
	}
	// [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
	if !isNewline(r) && !isLetter(r) && !isPunctOrSymbol(r) && at(s, i+n, isLetterOrMark) {
		return run(s, i+n, isLetterOrMark)
	}
	if isLetterOrMark(r) {
		return run(s, i, isLetterOrMark)
	}
	// ?[\p{P}\p{S}]+[\r\n]*
	j := i
	if r == ' ' && at(s, i+n, isPunctOrSymbol) {
		j = i + n
	}
	if at(s, j, isPunctOrSymbol) {
		return run(s, run(s, j, isPunctOrSymbol), isNewline)
	}
	if isSpace(r) {
		return whitespace(s, i, true)
	}
	return -1
}

func isASCIILetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

func isLetterOrMark(r rune) bool { return isLetter(r) || r >= utf8.RuneSelf && unicode.IsMark(r) }

// isPunctOrSymbol is [\p{P}\p{S}] (Unicode's categories: $ + < = > ^ ` | ~ are symbols).
func isPunctOrSymbol(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clPunct != 0
	}
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}

func isDeepseekCJK(r rune) bool {
	return r >= 0x4e00 && r <= 0x9fa5 || r >= 0x3040 && r <= 0x309f || r >= 0x30a0 && r <= 0x30ff
}
