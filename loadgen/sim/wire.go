package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// request is the part of an OpenAI completion or chat request the
// simulator reads; other fields are accepted and ignored, as vLLM does.
type request struct {
	Model               *string         `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            json.RawMessage `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              *bool           `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage *bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS *bool           `json:"ignore_eos"`
	Tools     json.RawMessage `json:"tools"`
}

type message struct {
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
}

type contentPart struct {
	Type string  `json:"type"`
	Text *string `json:"text"`
}

// badRequest is a client error with an OpenAI-style param.
type badRequest struct {
	param, msg string
}

func (e *badRequest) Error() string { return e.msg }

func bad(param, format string, a ...any) error {
	return &badRequest{param: param, msg: fmt.Sprintf(format, a...)}
}

// decodeRequest parses body; errors are *badRequest.
func decodeRequest(body []byte) (*request, error) {
	var r request
	if err := json.Unmarshal(body, &r); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return nil, bad("", "request body must be a JSON object, got JSON %s", te.Value)
			}
			return nil, bad(te.Field, "invalid type for %s: got JSON %s, want %s", te.Field, te.Value, jsonKind(te.Type.Kind().String()))
		}
		return nil, bad("", "request body is not valid JSON: %v", err)
	}
	return &r, nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64":
		return "an integer"
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return goKind
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// tokenizePrompt counts the tokens of a completions prompt: a string, a
// one-element list of strings, a list of token ids, or a one-element list
// of token-id lists.
func tokenizePrompt(raw json.RawMessage, t *tokenizer) error {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return bad("prompt", "prompt: required")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return bad("prompt", "prompt: %v", err)
		}
		t.text(s)
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return bad("prompt", "prompt: %v", err)
		}
		if len(items) == 0 {
			return bad("prompt", "prompt: must not be empty")
		}
		first := bytes.TrimSpace(items[0])
		switch {
		case len(first) > 0 && (first[0] == '"' || first[0] == '['):
			if len(items) > 1 {
				return bad("prompt", "prompt: a list of %d prompts (batched prompts) is not supported by the simulator; send one prompt per request", len(items))
			}
			return tokenizePrompt(first, t)
		default:
			var ids []int64
			if err := json.Unmarshal(raw, &ids); err != nil {
				return bad("prompt", "prompt: must be a string, a list of token ids, or a one-element list of either")
			}
			for _, id := range ids {
				t.id(id)
			}
		}
	default:
		return bad("prompt", "prompt: must be a string, a list of token ids, or a one-element list of either")
	}
	if t.n == 0 {
		return bad("prompt", "prompt: must contain at least one token (whitespace-separated word)")
	}
	return nil
}

// tokenizeMessages counts the tokens of chat messages: their words plus
// MessageOverheadTokens each.
func tokenizeMessages(raw json.RawMessage, t *tokenizer) error {
	if isNull(raw) {
		return bad("messages", "messages: required")
	}
	var msgs []message
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return bad("messages", "messages: must be an array of messages with a role and a content: %v", err)
	}
	if len(msgs) == 0 {
		return bad("messages", "messages: must not be empty")
	}
	for i, m := range msgs {
		if m.Role == nil || *m.Role == "" {
			return bad("messages", "messages[%d].role: required", i)
		}
		t.messageStart(*m.Role)
		c := bytes.TrimSpace(m.Content)
		switch {
		case isNull(c):
		case c[0] == '"':
			var s string
			if err := json.Unmarshal(c, &s); err != nil {
				return bad("messages", "messages[%d].content: %v", i, err)
			}
			t.text(s)
		case c[0] == '[':
			var parts []contentPart
			if err := json.Unmarshal(c, &parts); err != nil {
				return bad("messages", "messages[%d].content: must be a string or an array of content parts: %v", i, err)
			}
			for j, p := range parts {
				if p.Type != "text" || p.Text == nil {
					return bad("messages", "messages[%d].content[%d]: only text parts are supported by the simulator (got type %q)", i, j, p.Type)
				}
				t.text(*p.Text)
			}
		default:
			return bad("messages", "messages[%d].content: must be a string or an array of content parts", i)
		}
		t.messageEnd()
	}
	return nil
}

// checkTools validates a chat request's tools, which must be absent, null or
// an array, and reports whether it lists any.
func checkTools(raw json.RawMessage) (any bool, err error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return false, nil
	}
	if raw[0] != '[' {
		return false, bad("tools", "tools: must be an array of tools")
	}
	// The body is valid JSON: the array is empty when ']' follows '['.
	return bytes.TrimSpace(raw[1:])[0] != ']', nil
}

// firstToolName is the function name of the first tool of a tools array, or
// "tool" when it has none.
func firstToolName(raw json.RawMessage) string {
	var tools []json.RawMessage
	if json.Unmarshal(raw, &tools) != nil || len(tools) == 0 {
		return "tool"
	}
	var t struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(tools[0], &t) != nil || t.Function.Name == "" {
		return "tool"
	}
	return t.Function.Name
}

// encoder writes the chunks of one response with append-only encoding into
// a caller-owned buffer.
type encoder struct {
	chat      bool
	id        string
	created   int64
	modelJSON string
	head      []byte // `data: {"id":…,"object":…,"created":…,"model":…,"choices":[`

	// The shape of a chat answer (setAnswer); zero values: every token is
	// content.
	reason   int    // tokens [0, reason) are reasoning_content
	target   int    // the response's length: a tool call's arguments close at its last token
	toolID   string // non-empty: the answer tokens are the arguments of a call of toolName
	toolName []byte // JSON string
}

func newEncoder(chat bool, id string, created int64, modelJSON string) *encoder {
	e := &encoder{chat: chat, id: id, created: created, modelJSON: modelJSON}
	obj := "text_completion"
	if chat {
		obj = "chat.completion.chunk"
	}
	e.head = e.prefix(append(make([]byte, 0, 128), "data: "...), obj)
	return e
}

// setAnswer shapes a chat response of target tokens: the first reason of
// them are reasoning, the rest the answer; with a toolID the answer is a
// call of the tool whose name is toolName (a JSON string), its arguments
// the JSON object {"q":"<answer tokens>"}. Completions ignore it.
func (e *encoder) setAnswer(reason, target int, toolID string, toolName []byte) {
	if !e.chat {
		return
	}
	e.reason, e.target, e.toolID, e.toolName = reason, target, toolID, toolName
}

// prefix appends `{"id":…,"object":obj,"created":…,"model":…,"choices":[`.
func (e *encoder) prefix(b []byte, obj string) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, e.id...)
	b = append(b, `","object":"`...)
	b = append(b, obj...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, e.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, e.modelJSON...)
	return append(b, `,"choices":[`...)
}

func (e *encoder) role(b []byte) []byte {
	b = append(b, e.head...)
	return append(b, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

// Tool-call arguments wrap the answer tokens as a JSON object, escaped
// inside the JSON string "arguments".
const (
	argsOpen  = `{\"q\":\"`
	argsClose = `\"}`
)

// content appends the chunk carrying generated tokens [from, to); finish is
// "" for none. In a chat response that reasons, a chunk that straddles the
// end of the reasoning is sent as two SSE events, back to back: its
// reasoning tokens, then its answer tokens (which carry the finish reason).
func (e *encoder) content(b []byte, from, to int, finish string) []byte {
	if !e.chat {
		b = append(b, e.head...)
		b = append(b, `{"index":0,"text":"`...)
		b = appendTokens(b, from, to)
		b = append(b, '"')
		return e.tail(b, finish)
	}
	if from < e.reason {
		end := min(to, e.reason)
		b = append(b, e.head...)
		b = append(b, `{"index":0,"delta":{"reasoning_content":"`...)
		b = appendTokens(b, from, end)
		b = append(b, `"}`...)
		if end == to {
			return e.tail(b, finish)
		}
		b = e.tail(b, "")
		from = end
	}
	b = append(b, e.head...)
	switch {
	case e.toolID == "":
		b = append(b, `{"index":0,"delta":{"content":"`...)
		b = appendTokens(b, from, to)
		b = append(b, `"}`...)
	case from == e.reason:
		b = append(b, `{"index":0,"delta":{"tool_calls":[{"index":0,"id":"`...)
		b = append(b, e.toolID...)
		b = append(b, `","type":"function","function":{"name":`...)
		b = append(b, e.toolName...)
		b = append(b, `,"arguments":"`+argsOpen...)
		b = e.args(b, from, to)
	default:
		b = append(b, `{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"`...)
		b = e.args(b, from, to)
	}
	return e.tail(b, finish)
}

// args appends answer tokens [from, to) of a tool call's arguments, the
// closing of the arguments object after the last one, and closes the
// tool_calls delta.
func (e *encoder) args(b []byte, from, to int) []byte {
	b = appendTokens(b, from, to)
	if to == e.target {
		b = append(b, argsClose...)
	}
	return append(b, `"}}]}`...)
}

// tail appends what follows a choice's text or delta, up to the end of the
// event.
func (e *encoder) tail(b []byte, finish string) []byte {
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
		if !e.chat {
			b = append(b, `,"stop_reason":null`...)
		}
	} else {
		b = append(b, '"')
		b = append(b, finish...)
		b = append(b, `","stop_reason":null`...)
	}
	if e.chat {
		return append(b, "}]}\n\n"...)
	}
	return append(b, `}],"usage":null}`+"\n\n"...)
}

// usageInfo is what a usage object reports.
type usageInfo struct {
	prompt, completion int
	cacheOn            bool // report cached: prompt tokens served from the prefix cache
	cached             int
	reasonOn           bool // report reasoning: output tokens sent as reasoning
	reasoning          int
}

// appendUsage appends a usage object. prompt_tokens_details carries the
// cached tokens when the prefix cache is on; otherwise it is absent, or
// null in a non-streaming response (response), as vLLM sends it.
func appendUsage(b []byte, u usageInfo, response bool) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.prompt+u.completion), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.completion), 10)
	switch {
	case u.cacheOn:
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(u.cached), 10)
		b = append(b, '}')
	case response:
		b = append(b, `,"prompt_tokens_details":null`...)
	}
	if u.reasonOn {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(u.reasoning), 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// usage appends the final usage chunk (empty choices).
func (e *encoder) usage(b []byte, u usageInfo) []byte {
	b = append(b, e.head...)
	b = append(b, `],"usage":`...)
	b = appendUsage(b, u, false)
	return append(b, "}\n\n"...)
}

const doneEvent = "data: [DONE]\n\n"

// opening appends what a stream starts with before any token: nothing for chat and completions.
func (e *encoder) opening(b []byte) []byte { return b }

// first appends what precedes the first token: chat's role chunk.
func (e *encoder) first(b []byte) []byte {
	if e.chat {
		return e.role(b)
	}
	return b
}

// end appends what ends a whole stream: the usage chunk (when asked for) and [DONE].
func (e *encoder) end(b []byte, u usageInfo, includeUsage bool, _ string) []byte {
	if includeUsage {
		b = e.usage(b, u)
	}
	return append(b, doneEvent...)
}

// failure appends an error event that ends the stream.
func (e *encoder) failure(b []byte, status int, typ, msg string) []byte {
	b = append(b, "data: "...)
	b = appendError(b, status, typ, "", msg)
	return append(b, "\n\n"+doneEvent...)
}

// response appends the non-streaming response body of u.completion tokens.
func (e *encoder) response(b []byte, u usageInfo, finish string) []byte {
	n := u.completion
	if e.chat {
		b = e.prefix(b, "chat.completion")
		b = append(b, `{"index":0,"message":{"role":"assistant","reasoning_content":`...)
		r := min(e.reason, n)
		if r > 0 {
			b = append(b, '"')
			b = appendTokens(b, 0, r)
			b = append(b, '"')
		} else {
			b = append(b, "null"...)
		}
		if e.toolID != "" && n > r {
			b = append(b, `,"content":null,"tool_calls":[{"id":"`...)
			b = append(b, e.toolID...)
			b = append(b, `","type":"function","function":{"name":`...)
			b = append(b, e.toolName...)
			b = append(b, `,"arguments":"`+argsOpen...)
			b = appendTokens(b, r, n)
			b = append(b, argsClose+`"}}]`...)
		} else {
			b = append(b, `,"content":"`...)
			b = appendTokens(b, r, n)
			b = append(b, `","tool_calls":[]`...)
		}
		b = append(b, `},"logprobs":null,"finish_reason":"`...)
	} else {
		b = e.prefix(b, "text_completion")
		b = append(b, `{"index":0,"text":"`...)
		b = appendTokens(b, 0, n)
		b = append(b, `","logprobs":null,"finish_reason":"`...)
	}
	b = append(b, finish...)
	b = append(b, `","stop_reason":null`...)
	if !e.chat {
		b = append(b, `,"prompt_logprobs":null`...)
	}
	b = append(b, `}],"usage":`...)
	b = appendUsage(b, u, true)
	if e.chat {
		b = append(b, `,"prompt_logprobs":null`...)
	}
	return append(b, "}\n"...)
}

// appendError appends an OpenAI-style error object.
func appendError(b []byte, status int, typ, param, msg string) []byte {
	m, _ := json.Marshal(msg) // a string always marshals
	b = append(b, `{"error":{"message":`...)
	b = append(b, m...)
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	b = append(b, `","param":`...)
	if param == "" {
		b = append(b, "null"...)
	} else {
		p, _ := json.Marshal(param)
		b = append(b, p...)
	}
	b = append(b, `,"code":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	return append(b, "}}"...)
}
