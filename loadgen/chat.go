package loadgen

import (
	"strings"

	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// Chat is OpenAI's chat completions API: POST /chat/completions, streamed.
const Chat Endpoint = "chat"

func init() { register(chatKind{}) }

// chatKind sends the request's messages (or its prompt as one user message) and its tools, and
// reads the chunks of a chat completion stream (parseChunk).
type chatKind struct{}

func (chatKind) Name() Endpoint         { return Chat }
func (chatKind) Route() string          { return "/chat/completions" }
func (chatKind) Unit() records.Unit     { return records.UnitOutputTokens }
func (chatKind) MaxTokensParam() string { return "max_tokens" }

func (chatKind) appendMembers(b []byte, p *bodyPlan, req *workloads.Request) []byte {
	var ok bool
	if b, ok = member(b, p, "messages"); ok {
		b = append(b, '[')
		if len(req.Messages) == 0 {
			b = append(b, `{"role":"user","content":`...)
			b = appendPromptJSON(b, req)
			b = append(b, '}')
		}
		for i, m := range req.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"role":`...)
			b = appendJSONString(b, m.Role)
			b = append(b, `,"content":`...)
			b = appendJSONString(b, m.Content)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(req.Tools) > 0 {
		if b, ok = member(b, p, "tools"); ok {
			b = append(b, req.Tools...) // validated as a JSON array when the workload was read
		}
	}
	return appendStreamMembers(b, p, req, p.streamOptions)
}

func (chatKind) parseEvent(payload []byte, ci *chunkInfo) error { return parseChunk(payload, ci) }

func (chatKind) appendText(payload []byte, text *strings.Builder) { appendChunkText(payload, text) }

func (chatKind) lastEvent() string { return "data: [DONE]" }
