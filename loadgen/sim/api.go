package sim

import (
	"encoding/json"
)

// genAPI is an API whose answers the engine generates: how a request's input is read and how
// its answer is framed. Each API is one type (chat and completions here, responses in
// responses.go); routes maps a path to it, and Server.serveCompletion runs every one of them
// on the engine the same way.
type genAPI interface {
	// read tokenizes the request's input into t (errors are *badRequest) and says what else
	// the answer depends on. body is the whole request, for members request does not hold.
	read(body []byte, req *request, t *tokenizer) (genParams, error)
	// idPrefix begins the answer's id ("chatcmpl-").
	idPrefix() string
	// framer returns the framing of one answer of the given shape.
	framer(id string, created int64, modelJSON string, shape answerShape) framer
}

// genParams is what a request asks of its answer besides its input.
type genParams struct {
	promptParam string // the input's parameter, named by a context-length error ("messages")
	maxTokens   *int   // the output bound asked (nil: the default)
	maxParam    string // its parameter ("max_tokens")
	reasons     bool   // the answer may reason (Config.ReasoningShare)
	tools       json.RawMessage
	hasTools    bool // tools lists one: the answer may call the first (Config.ToolCalls)
	usage       bool // the answer always reports its usage; else stream_options.include_usage asks
}

// answerShape is what the framing of one answer needs to know of it.
type answerShape struct {
	reason   int    // tokens [0, reason) are reasoning
	target   int    // tokens the answer will have
	toolID   string // non-empty: the answer tokens are the arguments of a call of toolName
	toolName []byte // JSON string
}

// framer writes the events (or the document) of one answer into a caller-owned buffer.
type framer interface {
	// opening is what a stream starts with, before any token.
	opening(b []byte) []byte
	// first is what precedes the first generated token (chat's role chunk).
	first(b []byte) []byte
	// content carries generated tokens [from, to); finish is "" but with the last ones.
	content(b []byte, from, to int, finish string) []byte
	// end ends a whole stream: the usage (when asked for, or always) and the last event.
	end(b []byte, u usageInfo, includeUsage bool, finish string) []byte
	// failure is an error event that ends the stream.
	failure(b []byte, status int, typ, msg string) []byte
	// response is the non-streaming answer.
	response(b []byte, u usageInfo, finish string) []byte
}

// chatAPI is POST /v1/chat/completions: messages and tools in, chat.completion chunks out, with
// reasoning and tool calls.
type chatAPI struct{}

func (chatAPI) read(_ []byte, req *request, t *tokenizer) (genParams, error) {
	g := genParams{promptParam: "messages", maxTokens: req.MaxTokens, maxParam: "max_tokens", reasons: true, tools: req.Tools}
	if err := tokenizeMessages(req.Messages, t); err != nil {
		return g, err
	}
	var err error
	g.hasTools, err = checkTools(req.Tools)
	if req.MaxCompletionTokens != nil {
		g.maxTokens, g.maxParam = req.MaxCompletionTokens, "max_completion_tokens"
	}
	return g, err
}

func (chatAPI) idPrefix() string { return "chatcmpl-" }

func (chatAPI) framer(id string, created int64, modelJSON string, shape answerShape) framer {
	e := newEncoder(true, id, created, modelJSON)
	e.setAnswer(shape.reason, shape.target, shape.toolID, shape.toolName)
	return e
}

// completionsAPI is POST /v1/completions: a prompt in, text_completion chunks out.
type completionsAPI struct{}

func (completionsAPI) read(_ []byte, req *request, t *tokenizer) (genParams, error) {
	return genParams{promptParam: "prompt", maxTokens: req.MaxTokens, maxParam: "max_tokens"}, tokenizePrompt(req.Prompt, t)
}

func (completionsAPI) idPrefix() string { return "cmpl-" }

func (completionsAPI) framer(id string, created int64, modelJSON string, _ answerShape) framer {
	return newEncoder(false, id, created, modelJSON)
}
