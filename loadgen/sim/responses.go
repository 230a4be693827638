package sim

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The Responses API (POST /v1/responses) runs on the same engine as chat, with its own framing:
// a stream opens with response.created and response.in_progress, carries reasoning tokens as
// response.reasoning_summary_text.delta events and answer tokens as response.output_text.delta
// events (one event per engine step, as chat's chunks), and ends with response.completed, or
// response.incomplete (reason max_output_tokens) when the output reached its bound, either with
// the usage (input_tokens, output_tokens and their details). A failure is an error event. Every
// event is "event: TYPE" and "data: {…}" with a sequence_number; there is no [DONE].

// responsesAPI is POST /v1/responses: the input (a string or messages) and max_output_tokens
// in, the Responses API's events out (respEncoder), with reasoning and always the usage.
type responsesAPI struct{}

func (responsesAPI) read(body []byte, _ *request, t *tokenizer) (genParams, error) {
	var in struct {
		Input           json.RawMessage `json:"input"`
		MaxOutputTokens *int            `json:"max_output_tokens"`
	}
	g := genParams{promptParam: "input", maxParam: "max_output_tokens", reasons: true, usage: true}
	if err := json.Unmarshal(body, &in); err != nil { // decodeRequest read it once
		return g, bad("", "request body: %v", err)
	}
	g.maxTokens = in.MaxOutputTokens
	return g, tokenizeInput(in.Input, t)
}

func (responsesAPI) idPrefix() string { return "resp_" }

func (responsesAPI) framer(id string, created int64, modelJSON string, shape answerShape) framer {
	return &respEncoder{id: id, created: created, modelJSON: modelJSON, reason: shape.reason}
}

// respEncoder writes one answer in the Responses API's framing.
type respEncoder struct {
	id        string
	created   int64
	modelJSON string
	reason    int // tokens [0, reason) are reasoning
	seq       int // the next event's sequence_number
}

// respEvent appends the start of an event of type typ, up to the members after its
// sequence_number.
func (e *respEncoder) respEvent(b []byte, typ string) []byte {
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	b = strconv.AppendInt(b, int64(e.seq), 10)
	e.seq++
	return b
}

// respObject appends the response object in the given status; with u (a finished response),
// its output (reasoning summary and message) and usage.
func (e *respEncoder) respObject(b []byte, status string, u *usageInfo) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, e.id...)
	b = append(b, `","object":"response","created_at":`...)
	b = strconv.AppendInt(b, e.created, 10)
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","model":`...)
	b = append(b, e.modelJSON...)
	if status == "incomplete" {
		b = append(b, `,"incomplete_details":{"reason":"max_output_tokens"}`...)
	} else {
		b = append(b, `,"incomplete_details":null`...)
	}
	b = append(b, `,"error":null,"output":[`...)
	if u != nil {
		n, r := u.completion, min(e.reason, u.completion)
		if r > 0 {
			b = append(b, `{"type":"reasoning","id":"rs_`...)
			b = append(b, e.id...)
			b = append(b, `","summary":[{"type":"summary_text","text":"`...)
			b = appendTokens(b, 0, r)
			b = append(b, `"}]}`...)
		}
		if n > r {
			if r > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"message","id":"msg_`...)
			b = append(b, e.id...)
			b = append(b, `","status":"`...)
			b = append(b, status...)
			b = append(b, `","role":"assistant","content":[{"type":"output_text","text":"`...)
			b = appendTokens(b, r, n)
			b = append(b, `","annotations":[]}]}`...)
		}
	}
	b = append(b, `],"usage":`...)
	if u == nil {
		b = append(b, "null"...)
	} else {
		b = appendResponsesUsage(b, *u)
	}
	return append(b, '}')
}

// appendResponsesUsage appends the Responses API's usage object.
func appendResponsesUsage(b []byte, u usageInfo) []byte {
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(u.prompt), 10)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(u.cached), 10)
	b = append(b, `},"output_tokens":`...)
	b = strconv.AppendInt(b, int64(u.completion), 10)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(u.reasoning), 10)
	b = append(b, `},"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.prompt+u.completion), 10)
	return append(b, '}')
}

// opening appends response.created and response.in_progress.
func (e *respEncoder) opening(b []byte) []byte {
	for _, st := range [...]string{"response.created", "response.in_progress"} {
		b = e.respEvent(b, st)
		b = append(b, `,"response":`...)
		b = e.respObject(b, "in_progress", nil)
		b = append(b, "}\n\n"...)
	}
	return b
}

// content appends the events of generated tokens [from, to): their reasoning tokens, then
// their answer tokens.
func (e *respEncoder) content(b []byte, from, to int, _ string) []byte {
	if from < e.reason {
		end := min(to, e.reason)
		b = e.respEvent(b, "response.reasoning_summary_text.delta")
		b = append(b, `,"item_id":"rs_`...)
		b = append(b, e.id...)
		b = append(b, `","output_index":0,"summary_index":0,"delta":"`...)
		b = appendTokens(b, from, end)
		b = append(b, "\"}\n\n"...)
		from = end
	}
	if from >= to {
		return b
	}
	b = e.respEvent(b, "response.output_text.delta")
	b = append(b, `,"item_id":"msg_`...)
	b = append(b, e.id...)
	if e.reason > 0 {
		b = append(b, `","output_index":1`...)
	} else {
		b = append(b, `","output_index":0`...)
	}
	b = append(b, `,"content_index":0,"delta":"`...)
	b = appendTokens(b, from, to)
	return append(b, "\"}\n\n"...)
}

// end appends the terminal event (the usage is always in it): response.completed, or response.incomplete when the
// output reached its bound (finish "length").
func (e *respEncoder) end(b []byte, u usageInfo, _ bool, finish string) []byte {
	typ, status := "response.completed", "completed"
	if finish == "length" {
		typ, status = "response.incomplete", "incomplete"
	}
	b = e.respEvent(b, typ)
	b = append(b, `,"response":`...)
	b = e.respObject(b, status, &u)
	return append(b, "}\n\n"...)
}

// failure appends an error event.
func (e *respEncoder) failure(b []byte, status int, _, msg string) []byte {
	m, _ := json.Marshal(msg) // a string always marshals
	b = e.respEvent(b, "error")
	b = append(b, `,"code":"`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `","message":`...)
	b = append(b, m...)
	return append(b, ",\"param\":null}\n\n"...)
}

// first appends nothing: the Responses API opens its stream before the first token (opening).
func (e *respEncoder) first(b []byte) []byte { return b }

// response appends the non-streaming answer: the response object.
func (e *respEncoder) response(b []byte, u usageInfo, finish string) []byte {
	status := "completed"
	if finish == "length" {
		status = "incomplete"
	}
	return append(e.respObject(b, status, &u), '\n')
}

// tokenizeInput counts the tokens of a Responses or embeddings input: a string, or (responses)
// a list of messages whose content is a string or a list of text parts ("input_text" or
// "text"), counted as chat messages are.
func tokenizeInput(raw json.RawMessage, t *tokenizer) error {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return bad("input", "input: required")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return bad("input", "input: %v", err)
		}
		t.text(s)
		if t.n == 0 {
			return bad("input", "input: must contain at least one token (whitespace-separated word)")
		}
		return nil
	}
	var items []struct {
		Role    *string         `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return bad("input", "input: must be a string or a list of messages with a role and a content")
	}
	if len(items) == 0 {
		return bad("input", "input: must not be empty")
	}
	for i, it := range items {
		if it.Role == nil || *it.Role == "" {
			return bad("input", "input[%d].role: required", i)
		}
		t.messageStart(*it.Role)
		c := bytes.TrimSpace(it.Content)
		switch {
		case isNull(c):
		case c[0] == '"':
			var s string
			if err := json.Unmarshal(c, &s); err != nil {
				return bad("input", "input[%d].content: %v", i, err)
			}
			t.text(s)
		default:
			var parts []contentPart
			if err := json.Unmarshal(c, &parts); err != nil {
				return bad("input", "input[%d].content: must be a string or a list of text parts", i)
			}
			for j, p := range parts {
				if (p.Type != "input_text" && p.Type != "text") || p.Text == nil {
					return bad("input", "input[%d].content[%d]: only text parts are supported by the simulator (got type %q)", i, j, p.Type)
				}
				t.text(*p.Text)
			}
		}
		t.messageEnd()
	}
	return nil
}
