package loadgen

import (
	"strings"

	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// Completions is OpenAI's (legacy) completions API: POST /completions, streamed.
const Completions Endpoint = "completions"

func init() { register(completionsKind{}) }

// completionsKind sends the request's prompt (its messages' contents joined, when it only has
// messages) and reads the chunks of a completion stream (parseChunk, as chat's).
type completionsKind struct{}

func (completionsKind) Name() Endpoint         { return Completions }
func (completionsKind) Route() string          { return "/completions" }
func (completionsKind) Unit() records.Unit     { return records.UnitOutputTokens }
func (completionsKind) MaxTokensParam() string { return "max_tokens" }

func (completionsKind) appendMembers(b []byte, p *bodyPlan, req *workloads.Request) []byte {
	var ok bool
	if b, ok = member(b, p, "prompt"); ok {
		b = appendCompletionPrompt(b, req)
	}
	return appendStreamMembers(b, p, req, p.streamOptions)
}

func (completionsKind) parseEvent(payload []byte, ci *chunkInfo) error {
	return parseChunk(payload, ci)
}

func (completionsKind) appendText(payload []byte, text *strings.Builder) {
	appendChunkText(payload, text)
}

func (completionsKind) lastEvent() string { return "data: [DONE]" }
