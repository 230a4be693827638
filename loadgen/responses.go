package loadgen

import (
	"encoding/json"
	"strings"

	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// Responses is OpenAI's Responses API: POST /responses, streamed as typed events.
const Responses Endpoint = "responses"

func init() { register(responsesKind{}) }

// responsesKind sends the request's prompt (or its messages) as "input" with
// max_output_tokens, and reads the Responses API's event stream: every event's data is an object
// whose "type" names it. response.created (or any first event) is the first event;
// response.output_text.delta, response.refusal.delta and
// response.function_call_arguments.delta carry answer output; response.reasoning_text.delta and
// response.reasoning_summary_text.delta carry reasoning, counted as chat's reasoning content is
// (TTFT on the first output, TTFA on the first answer); response.completed and
// response.incomplete end the response with its usage (input_tokens, output_tokens and their
// details); response.failed and error events end it as broken. The stream has no [DONE]: it ends
// with its terminal event. The workload's tools are not sent: they have chat's shape, which
// the Responses API does not take.
type responsesKind struct{}

func (responsesKind) Name() Endpoint         { return Responses }
func (responsesKind) Route() string          { return "/responses" }
func (responsesKind) Unit() records.Unit     { return records.UnitOutputTokens }
func (responsesKind) MaxTokensParam() string { return "max_output_tokens" }

func (responsesKind) appendMembers(b []byte, p *bodyPlan, req *workloads.Request) []byte {
	var ok bool
	if b, ok = member(b, p, "input"); ok {
		if len(req.Messages) == 0 {
			b = appendPromptJSON(b, req)
		} else {
			b = append(b, '[')
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
	}
	// The Responses API reports usage in its last event: only the user's stream_options are sent.
	return appendStreamMembers(b, p, req, p.extraStreamOptions)
}

// Finish reasons of the Responses API's terminal events, in chat's words where they mean the
// same: a completed response stopped; one incomplete for max_output_tokens was cut at its length.
var (
	finishStop   = []byte("stop")
	finishLength = []byte("length")
)

func (responsesKind) parseEvent(payload []byte, ci *chunkInfo) error {
	*ci = chunkInfo{}
	s := jscan{b: payload}
	s.ws()
	if s.peek() != '{' {
		return s.fail("a JSON object")
	}
	var typ, incomplete []byte
	var deltaSet bool
	var deltaBytes int
	err := s.document(func(key []byte) error {
		switch string(key) {
		case "type":
			raw, err := s.str()
			typ = raw
			return err
		case "delta":
			start := s.i
			nonEmpty, err := s.value()
			deltaSet = nonEmpty
			if nonEmpty {
				deltaBytes = s.i - start
			}
			return err
		case "response":
			return s.response(ci, &incomplete)
		}
		_, err := s.value()
		return err
	})
	if err != nil {
		return err
	}
	if typ == nil {
		return s.fail(`an event with a "type"`)
	}
	ci.choices = true // every event of the response counts for its first event
	switch string(typ) {
	case "response.output_text.delta", "response.refusal.delta", "response.function_call_arguments.delta":
		ci.output, ci.answer = deltaSet, deltaSet
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		ci.output = deltaSet
	case "response.completed":
		ci.done, ci.finish = true, finishStop
	case "response.incomplete":
		ci.done, ci.finish = true, incomplete
		if string(incomplete) == "max_output_tokens" || len(incomplete) == 0 {
			ci.finish = finishLength
		}
	case "response.failed", "error":
		// A failed response's error is its response.error (errRaw); an error event carries its
		// code and message itself, which streamErrorMessage reads from the payload.
		ci.isError = true
	default:
		ci.usageSet = false // only a terminal event's usage counts
	}
	if ci.output {
		ci.outBytes = deltaBytes
	}
	return nil
}

// response reads a Responses event's "response" object: its usage into ci, its error (a failed
// response) and the reason it is incomplete.
func (s *jscan) response(ci *chunkInfo, incomplete *[]byte) error {
	return s.objectOrNull("response to be an object", func(key []byte) error {
		switch string(key) {
		case "usage":
			return s.usage(ci, responsesUsage)
		case "error":
			start := s.i
			if _, err := s.value(); err != nil {
				return err
			}
			if string(s.b[start:s.i]) != "null" {
				ci.errRaw = s.b[start:s.i]
			}
			return nil
		case "incomplete_details":
			if s.peek() != '{' {
				_, err := s.value()
				return err
			}
			return s.object(func(key []byte) error {
				if string(key) == "reason" && s.peek() == '"' {
					raw, err := s.str()
					*incomplete = raw
					return err
				}
				_, err := s.value()
				return err
			})
		}
		_, err := s.value()
		return err
	})
}

func (responsesKind) appendText(payload []byte, text *strings.Builder) {
	var ev struct {
		Type  string `json:"type"`
		Delta string `json:"delta"`
	}
	if json.Unmarshal(payload, &ev) != nil {
		return // decoded once already: cannot fail
	}
	if ev.Type == "response.output_text.delta" || ev.Type == "response.refusal.delta" {
		text.WriteString(ev.Delta)
	}
}

func (responsesKind) lastEvent() string { return "response.completed (or response.incomplete)" }
