package loadgen

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// chunkInfo is what one SSE data payload tells the client.
type chunkInfo struct {
	choices    bool   // a choices array with at least one entry (first_event)
	output     bool   // some choice carries output: text, content, reasoning or a tool call
	answer     bool   // some choice carries answer output: text, content or a tool call
	outBytes   int    // the raw JSON length of the non-empty output values (streamState.streamed)
	finish     []byte // the last non-empty finish_reason, raw (a slice of the payload)
	usageSet   bool   // a non-null usage object
	prompt     int    // usage.prompt_tokens (when promptOK)
	completion int    // usage.completion_tokens (when completionOK)
	promptOK   bool   // usage.prompt_tokens is an integer in [0, maxUsageTokens]
	completeOK bool   // usage.completion_tokens is an integer in [0, maxUsageTokens]
	cached     int    // usage.prompt_tokens_details.cached_tokens (when cachedOK)
	cachedOK   bool
	reasoning  int // usage.completion_tokens_details.reasoning_tokens (when reasoningOK)
	reasonOK   bool
	usageBad   string // what is wrong with the usage object, if anything
	isError    bool   // a non-null "error" member, or "object":"error"
	errRaw     []byte // the raw "error" value
	done       bool   // the kind's last event of a response (chat and completions end with [DONE] instead)
}

// parseChunk reads the members the client needs from a streamed completion chunk, validating
// the whole payload as JSON, without allocating.
//
// encoding/json into a small struct was measured at about 6 µs and 8 allocations per chunk
// (validation pass, decode state, parse stack); this scanner does the same job in a single pass.
// Keys are matched exactly (encoding/json also accepts other letter cases; OpenAI-compatible
// servers send lower case). The members it reads must have the OpenAI types (choices an array,
// delta and usage objects, finish_reason a string, token counts integers), else the chunk is
// malformed; any value counts as output when it is not null, "", [] or {}.
func parseChunk(b []byte, ci *chunkInfo) error {
	*ci = chunkInfo{}
	s := jscan{b: b}
	s.ws()
	if s.peek() != '{' {
		return s.fail("a JSON object")
	}
	return s.document(func(key []byte) error {
		switch string(key) {
		case "choices":
			return s.choices(ci)
		case "usage":
			return s.usage(ci, openAIUsage)
		case "error":
			start := s.i
			if _, err := s.value(); err != nil {
				return err
			}
			if string(s.b[start:s.i]) != "null" {
				ci.isError, ci.errRaw = true, s.b[start:s.i]
			}
			return nil
		case "object":
			if s.peek() == '"' {
				raw, err := s.str()
				ci.isError = ci.isError || string(raw) == "error"
				return err
			}
		}
		_, err := s.value()
		return err
	})
}

func (s *jscan) choices(ci *chunkInfo) error {
	return s.arrayOrNull("choices to be an array", func() error {
		ci.choices = true
		return s.objectOrNull("a choice object", func(key []byte) error {
			switch string(key) {
			case "text":
				return s.output(ci, true)
			case "delta":
				return s.objectOrNull("delta to be an object", func(key []byte) error {
					switch string(key) {
					case "content", "tool_calls":
						return s.output(ci, true)
					case "reasoning_content", "reasoning":
						return s.output(ci, false)
					}
					_, err := s.value()
					return err
				})
			case "finish_reason":
				switch s.peek() {
				case 'n':
					return s.literal("null")
				case '"':
					raw, err := s.str()
					if len(raw) > 0 {
						ci.finish = raw
					}
					return err
				}
				return s.fail("finish_reason to be a string")
			}
			_, err := s.value()
			return err
		})
	})
}

// objectOrNull reads null, or an object whose members member reads; anything else fails, saying
// it wanted want ("usage to be an object").
func (s *jscan) objectOrNull(want string, member func(key []byte) error) error {
	switch s.peek() {
	case 'n':
		return s.literal("null")
	case '{':
		return s.object(member)
	}
	return s.fail(want)
}

// arrayOrNull reads null, or an array whose elements elem reads; anything else fails, saying it
// wanted want.
func (s *jscan) arrayOrNull(want string, elem func() error) error {
	switch s.peek() {
	case 'n':
		return s.literal("null")
	case '[':
		return s.array(elem)
	}
	return s.fail(want)
}

// output reads a value that is output when not empty: answer output, or reasoning.
func (s *jscan) output(ci *chunkInfo, answer bool) error {
	start := s.i
	nonEmpty, err := s.value()
	if nonEmpty {
		ci.outBytes += s.i - start
	}
	ci.output = ci.output || nonEmpty
	ci.answer = ci.answer || (answer && nonEmpty)
	return err
}

// usageKeys name a usage object's members: the prompt's and the completion's token counts and
// their details objects.
type usageKeys struct{ prompt, completion, promptDetails, completionDetails string }

var (
	// openAIUsage is the usage of completions, chat and embeddings.
	openAIUsage = usageKeys{"prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"}
	// responsesUsage is the Responses API's, in the roles of chat's prompt, completion, cached
	// and reasoning counts.
	responsesUsage = usageKeys{"input_tokens", "output_tokens", "input_tokens_details", "output_tokens_details"}
)

// usage reads a usage object (or null) whose members k names: the two counts, the cached
// prompt tokens and the reasoning tokens in their details.
func (s *jscan) usage(ci *chunkInfo, k usageKeys) error {
	if s.peek() == '{' {
		ci.usageSet = true
	}
	return s.objectOrNull("usage to be an object", func(key []byte) error {
		switch string(key) {
		case k.prompt:
			return s.count("usage.", key, &ci.prompt, &ci.promptOK, &ci.usageBad)
		case k.completion:
			return s.count("usage.", key, &ci.completion, &ci.completeOK, &ci.usageBad)
		case k.promptDetails:
			return s.details(ci, "cached_tokens", &ci.cached, &ci.cachedOK)
		case k.completionDetails:
			return s.details(ci, "reasoning_tokens", &ci.reasoning, &ci.reasonOK)
		}
		_, err := s.value()
		return err
	})
}

// details reads a usage details object (or null), keeping its member want, a count.
func (s *jscan) details(ci *chunkInfo, want string, dst *int, ok *bool) error {
	return s.objectOrNull("usage details to be an object", func(key []byte) error {
		if string(key) != want {
			_, err := s.value()
			return err
		}
		return s.count("", key, dst, ok, nil) // a bad detail is not used; it does not spoil the counts
	})
}

// count reads a token count (or null) into dst. A valid JSON number that is no believable count
// (negative, fractional, beyond any response) does not break the stream; it is not used, and
// *bad (when not nil) says why (streamState.finish), naming the member prefix+key (built only
// then: the usual path does not allocate).
func (s *jscan) count(prefix string, key []byte, dst *int, ok *bool, bad *string) error {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	start := s.i
	if err := s.number(); err != nil {
		return err
	}
	n, err := strconv.Atoi(string(s.b[start:s.i]))
	if err != nil || n < 0 || n > maxUsageTokens {
		if bad != nil {
			*bad = fmt.Sprintf("%s%s is %.40s, not a count in [0, %d]", prefix, key, s.b[start:s.i], maxUsageTokens)
		}
		return nil
	}
	*dst, *ok = n, true
	return nil
}

// maxUsageTokens bounds a usage count loadcurve believes: 2^30 tokens is far beyond any
// response or prompt, and far from the int64 overflow of a summary's totals.
const maxUsageTokens = 1 << 30

// maxDepth bounds the nesting the scanner follows (encoding/json allows 10000).
const maxDepth = 10000

// jscan is a minimal validating JSON scanner over one payload.
type jscan struct {
	b     []byte
	i     int
	depth int
}

// document reads the whole data as one JSON object, member by member (object), and nothing but
// white space after it.
func (s *jscan) document(member func(key []byte) error) error {
	if err := s.object(member); err != nil {
		return err
	}
	s.ws()
	if s.i != len(s.b) {
		return s.fail("the end of the data after the JSON object")
	}
	return nil
}

func (s *jscan) fail(want string) error {
	if s.i >= len(s.b) {
		return fmt.Errorf("unexpected end of JSON, want %s", want)
	}
	return fmt.Errorf("invalid JSON at byte %d (%q), want %s", s.i, s.b[s.i], want)
}

func (s *jscan) ws() {
	i, b := s.i, s.b // locals: the loop does not reload the fields
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	s.i = i
}

func (s *jscan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// value consumes any JSON value (after optional whitespace). nonEmpty is false for null, "", []
// and {}.
func (s *jscan) value() (nonEmpty bool, err error) {
	s.ws()
	switch c := s.peek(); {
	case c == '"':
		raw, err := s.str()
		return len(raw) > 0, err
	case c == '{':
		err := s.object(func([]byte) error {
			nonEmpty = true
			_, err := s.value()
			return err
		})
		return nonEmpty, err
	case c == '[':
		err := s.array(func() error {
			nonEmpty = true
			_, err := s.value()
			return err
		})
		return nonEmpty, err
	case c == 't':
		return true, s.literal("true")
	case c == 'f':
		return true, s.literal("false")
	case c == 'n':
		return false, s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return true, s.number()
	}
	return false, s.fail("a value")
}

// object consumes an object; member is called with s at each member's value and must consume it.
func (s *jscan) object(member func(key []byte) error) error {
	if s.depth++; s.depth > maxDepth {
		return s.fail("less nesting")
	}
	defer func() { s.depth-- }()
	s.i++ // '{'
	s.ws()
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		s.ws()
		key, err := s.str()
		if err != nil {
			return err
		}
		s.ws()
		if s.peek() != ':' {
			return s.fail("':'")
		}
		s.i++
		s.ws()
		if err := member(key); err != nil {
			return err
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail("',' or '}'")
		}
	}
}

// array consumes an array; elem is called with s at each element and must consume it.
func (s *jscan) array(elem func() error) error {
	if s.depth++; s.depth > maxDepth {
		return s.fail("less nesting")
	}
	defer func() { s.depth-- }()
	s.i++ // '['
	s.ws()
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if err := elem(); err != nil {
			return err
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.fail("',' or ']'")
		}
	}
}

// plainStringByte[c] is true for the bytes that stand for themselves inside a JSON string:
// anything but '"', '\\' and control characters.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str consumes a string and returns its raw content (escapes not decoded). Raw content is
// non-empty exactly when the decoded string is.
func (s *jscan) str() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.fail("a string")
	}
	b := s.b
	start := s.i + 1
	i := start
	for {
		for i < len(b) && plainStringByte[b[i]] { // the common case: one table lookup per byte
			i++
		}
		if i >= len(b) {
			s.i = i
			return nil, s.fail(`'"'`)
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return b[start:i], nil
		case c == '\\':
			i++
			s.i = i
			switch s.peek() {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				i++
				for k := 0; k < 4; k++ {
					s.i = i
					if !isHex(s.peek()) {
						return nil, s.fail("a hex digit")
					}
					i++
				}
			default:
				return nil, s.fail("an escape")
			}
		default: // c < 0x20
			s.i = i
			return nil, s.fail("no control character in a string")
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number consumes -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jscan) number() error {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return s.fail("a digit")
	}
	if s.peek() == '.' {
		s.i++
		if !isDigit(s.peek()) {
			return s.fail("a digit")
		}
		s.digits()
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !isDigit(s.peek()) {
			return s.fail("a digit")
		}
		s.digits()
	}
	return nil
}

func (s *jscan) digits() {
	for isDigit(s.peek()) {
		s.i++
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (s *jscan) literal(lit string) error {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return nil
	}
	return s.fail(lit)
}

// appendChunkText appends the generated text of a chat or completion chunk: every choice's text
// and delta content.
func appendChunkText(payload []byte, text *strings.Builder) {
	var tc struct {
		Choices []struct {
			Text  string `json:"text"`
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(payload, &tc) != nil {
		return // decoded once already: cannot fail
	}
	for _, ch := range tc.Choices {
		text.WriteString(ch.Text)
		text.WriteString(ch.Delta.Content)
	}
}
