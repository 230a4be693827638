package loadgen

import (
	"errors"

	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// Embeddings is OpenAI's embeddings API: POST /embeddings, answered with one JSON document.
const Embeddings Endpoint = "embeddings"

func init() { register(embeddingsKind{}) }

// embeddingsKind sends the request's prompt (its messages' contents joined, as for completions)
// as "input" and reads the answer's usage.prompt_tokens. Nothing is generated: a record has its
// sent and end moments, E2EL is the request's latency, and throughputs count input tokens.
type embeddingsKind struct{}

func (embeddingsKind) Name() Endpoint         { return Embeddings }
func (embeddingsKind) Route() string          { return "/embeddings" }
func (embeddingsKind) Unit() records.Unit     { return records.UnitInputTokens }
func (embeddingsKind) MaxTokensParam() string { return "" }

func (embeddingsKind) appendMembers(b []byte, p *bodyPlan, req *workloads.Request) []byte {
	if b, ok := member(b, p, "input"); ok {
		return appendCompletionPrompt(b, req)
	}
	return b
}

// readDocument checks that the answer is an embeddings list (an object whose "data" is a
// non-empty array) and reads usage.prompt_tokens.
func (embeddingsKind) readDocument(body []byte, d *document) error {
	s := jscan{b: body}
	s.ws()
	if s.peek() != '{' {
		return s.fail("a JSON object")
	}
	var ci chunkInfo
	var data bool
	err := s.document(func(key []byte) error {
		switch string(key) {
		case "data":
			if s.peek() != '[' {
				return s.fail("data to be an array")
			}
			nonEmpty, err := s.value()
			data = nonEmpty
			return err
		case "usage":
			return s.usage(&ci, openAIUsage)
		case "error":
			start := s.i
			if _, err := s.value(); err != nil {
				return err
			}
			if string(s.b[start:s.i]) != "null" {
				ci.isError, ci.errRaw = true, s.b[start:s.i]
			}
			return nil
		}
		_, err := s.value()
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case ci.isError:
		return errors.New("an error: " + streamErrorMessage(body, ci.errRaw))
	case !data:
		return errors.New(`no embedding: "data" is missing or empty`)
	}
	d.prompt, d.promptOK = ci.prompt, ci.promptOK
	return nil
}
