package loadgen_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// TestKindRegistry: every kind is registered under its name with its route and unit, and a
// vLLM-style path finds its kind by its ending (the longest route wins).
func TestKindRegistry(t *testing.T) {
	want := []loadgen.Endpoint{loadgen.Chat, loadgen.Completions, loadgen.Embeddings, loadgen.Responses}
	if got := loadgen.Kinds(); !slices.Equal(got, want) {
		t.Fatalf("Kinds() = %v, want %v", got, want)
	}
	tests := []struct {
		kind   loadgen.Endpoint
		route  string
		unit   records.Unit
		stream bool
	}{
		{loadgen.Chat, "/chat/completions", records.UnitOutputTokens, true},
		{loadgen.Completions, "/completions", records.UnitOutputTokens, true},
		{loadgen.Responses, "/responses", records.UnitOutputTokens, true},
		{loadgen.Embeddings, "/embeddings", records.UnitInputTokens, false},
		{"", "/chat/completions", records.UnitOutputTokens, true}, // the zero value is chat
	}
	for _, tc := range tests {
		if tc.kind.Route() != tc.route || tc.kind.Unit() != tc.unit || tc.kind.Streams() != tc.stream {
			t.Errorf("%s: route %q unit %q streams %v, want %q %q %v", tc.kind, tc.kind.Route(), tc.kind.Unit(), tc.kind.Streams(), tc.route, tc.unit, tc.stream)
		}
	}
	routes := []struct {
		path string
		want loadgen.Endpoint
		ok   bool
	}{
		{"/v1/chat/completions", loadgen.Chat, true},
		{"/v1/completions/", loadgen.Completions, true},
		{"/v1/responses", loadgen.Responses, true},
		{"/openai/v1/embeddings", loadgen.Embeddings, true},
		{"/v1/models", "", false},
	}
	for _, tc := range routes {
		if got, ok := loadgen.EndpointOfRoute(tc.path); got != tc.want || ok != tc.ok {
			t.Errorf("EndpointOfRoute(%q) = %q, %v; want %q, %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
	if err := (loadgen.Target{BaseURL: "http://h/v1", Endpoint: "bogus"}).Validate(); len(err) != 1 ||
		!strings.Contains(err[0].Error(), "endpoint kind: want chat, completions, embeddings or responses") {
		t.Errorf("an unknown kind: %v", err)
	}
}

// event is one Responses API event, framed as OpenAI sends it.
func event(delay time.Duration, typ, members string) fakesse.Step {
	data := `{"type":"` + typ + `","sequence_number":1`
	if members != "" {
		data += "," + members
	}
	return fakesse.Step{Delay: delay, Raw: "event: " + typ + "\ndata: " + data + "}\n\n"}
}

const createdMembers = `"response":{"id":"resp_1","object":"response","status":"in_progress","output":[],"usage":null}`

func completed(typ, status, extra string, input, output, reasoning, cached int) fakesse.Step {
	usage, _ := json.Marshal(map[string]any{
		"input_tokens": input, "output_tokens": output, "total_tokens": input + output,
		"input_tokens_details": map[string]int{"cached_tokens": cached}, "output_tokens_details": map[string]int{"reasoning_tokens": reasoning},
	})
	return event(0, typ, `"response":{"id":"resp_1","object":"response","status":"`+status+`"`+extra+`,"output":[],"usage":`+string(usage)+`}`)
}

// TestResponsesStream: the Responses API's events fill the record as chat chunks do: the first
// event, the first output (a reasoning delta), the first answer, chunks, reasoning chunks, the
// usage of response.completed (input_tokens, output_tokens and their details) and a finish
// reason; an incomplete response is cut at its length; error events and failed responses end it
// as broken with the server's message; a stream without its terminal event is broken.
func TestResponsesStream(t *testing.T) {
	const ms = time.Millisecond
	normal := []fakesse.Step{
		event(0, "response.created", createdMembers),
		event(0, "response.in_progress", createdMembers),
		event(2*ms, "response.reasoning_summary_text.delta", `"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"think "`),
		event(ms, "response.reasoning_text.delta", `"item_id":"rs_1","output_index":0,"content_index":0,"delta":"more "`),
		event(ms, "response.output_text.delta", `"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hello "`),
		event(ms, "response.output_text.delta", `"item_id":"msg_1","output_index":1,"content_index":0,"delta":""`), // empty: no output
		event(ms, "response.output_text.delta", `"item_id":"msg_1","output_index":1,"content_index":0,"delta":"world"`),
		event(0, "response.output_text.done", `"item_id":"msg_1","output_index":1,"content_index":0,"text":"Hello world"`),
	}
	tests := []struct {
		name       string
		steps      []fakesse.Step
		outcome    records.Outcome
		errHas     string
		finish     string
		chunks     int
		reasoning  int // reasoning chunks
		output     int
		outSource  string
		input      int
		reasonToks int
		cached     int
	}{
		{name: "completed", steps: append(slices.Clone(normal), completed("response.completed", "completed", "", 7, 9, 4, 2)),
			outcome: records.OK, finish: "stop", chunks: 4, reasoning: 2, output: 9, outSource: records.SourceUsage, input: 7, reasonToks: 4, cached: 2},
		{name: "incomplete at max_output_tokens", steps: append(slices.Clone(normal),
			completed("response.incomplete", "incomplete", `,"incomplete_details":{"reason":"max_output_tokens"}`, 7, 16, 4, 0)),
			outcome: records.OK, finish: "length", chunks: 4, reasoning: 2, output: 16, outSource: records.SourceUsage, input: 7, reasonToks: 4},
		{name: "incomplete for a content filter", steps: append(slices.Clone(normal),
			completed("response.incomplete", "incomplete", `,"incomplete_details":{"reason":"content_filter"}`, 7, 5, 0, 0)),
			outcome: records.OK, finish: "content_filter", chunks: 4, reasoning: 2, output: 5, outSource: records.SourceUsage, input: 7},
		{name: "error event", steps: append(slices.Clone(normal[:3]), event(0, "error", `"code":"server_error","message":"the model fell over","param":null`)),
			outcome: records.StreamError, errHas: "error in stream: the model fell over", chunks: 1, reasoning: 1, output: 1, outSource: records.SourceChunks, input: 2},
		{name: "failed response", steps: append(slices.Clone(normal[:2]),
			event(0, "response.failed", `"response":{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"out of memory"},"usage":null}`)),
			outcome: records.StreamError, errHas: "error in stream: out of memory", outSource: records.SourceChunks, input: 2},
		{name: "no terminal event", steps: normal,
			outcome: records.StreamError, errHas: "stream ended without response.completed (or response.incomplete) after 4 output chunks",
			chunks: 4, reasoning: 2, output: 4, outSource: records.SourceChunks, input: 2},
		{name: "an event without a type", steps: append(slices.Clone(normal[:1]), fakesse.Data(0, `{"delta":"x"}`)),
			outcome: records.StreamError, errHas: `want an event with a "type"`, outSource: records.SourceChunks, input: 2},
		{name: "[DONE] ends it too", steps: append(slices.Clone(normal), fakesse.Done(0)),
			outcome: records.OK, chunks: 4, reasoning: 2, output: 4, outSource: records.SourceChunks, input: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, srv := doOnce(t, loadgen.Target{Endpoint: loadgen.Responses}, prompt(), steps(tc.steps...))
			if r.Outcome != tc.outcome || !strings.Contains(r.Error, tc.errHas) || (tc.errHas == "" && r.Error != "") {
				t.Fatalf("outcome %v error %q, want %v with %q", r.Outcome, r.Error, tc.outcome, tc.errHas)
			}
			if r.FinishReason != tc.finish || r.Chunks != tc.chunks || r.ReasoningChunks != tc.reasoning {
				t.Errorf("finish %q, %d chunks, %d reasoning; want %q, %d, %d", r.FinishReason, r.Chunks, r.ReasoningChunks, tc.finish, tc.chunks, tc.reasoning)
			}
			if r.OutputTokens != tc.output || r.OutputTokensSource != tc.outSource || r.InputTokens != tc.input {
				t.Errorf("output %d (%s), input %d; want %d (%s), %d", r.OutputTokens, r.OutputTokensSource, r.InputTokens, tc.output, tc.outSource, tc.input)
			}
			if tc.outSource == records.SourceUsage && (r.ReasoningTokens != tc.reasonToks || r.CachedTokens != tc.cached) {
				t.Errorf("reasoning %d cached %d, want %d %d", r.ReasoningTokens, r.CachedTokens, tc.reasonToks, tc.cached)
			}
			if tc.reasoning > 0 && tc.outcome == records.OK {
				// Reasoning came first: the first output is before the first answer (TTFA > TTFT).
				if r.FirstEvent == records.Unset || r.First < r.FirstEvent || r.FirstAnswer <= r.First || r.End < r.Last {
					t.Errorf("moments out of order: first event %v, first %v, first answer %v, last %v, end %v", r.FirstEvent, r.First, r.FirstAnswer, r.Last, r.End)
				}
				if len(r.ITL) != r.Chunks-1 {
					t.Errorf("%d ITL gaps for %d chunks", len(r.ITL), r.Chunks)
				}
			}
			got := srv.Received()[0]
			if got.Path != "/v1/responses" {
				t.Errorf("path %q", got.Path)
			}
			body := got.JSON()
			if body["input"] != "hello there" || body["max_output_tokens"] != float64(16) || body["stream"] != true {
				t.Errorf("body %s", got.Body)
			}
			for _, k := range []string{"max_tokens", "stream_options", "messages", "prompt"} {
				if _, ok := body[k]; ok {
					t.Errorf("body has %q: %s", k, got.Body)
				}
			}
		})
	}
}

// TestResponsesBody: a request's messages are sent as the input list; --extra-body's
// max_output_tokens overrides the workload's and bounds the record's; its stream_options are
// sent as given.
func TestResponsesBody(t *testing.T) {
	req := prompt()
	req.Prompt, req.Messages = "", []workloads.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}
	sc := steps(event(0, "response.output_text.delta", `"delta":"x"`), completed("response.completed", "completed", "", 3, 1, 0, 0))
	r, srv := doOnce(t, loadgen.Target{Endpoint: loadgen.Responses,
		ExtraBody: json.RawMessage(`{"max_output_tokens":40,"stream_options":{"include_obfuscation":false}}`)}, req, sc)
	if r.Outcome != records.OK || r.MaxTokens != 40 {
		t.Fatalf("%v %q, max tokens %d", r.Outcome, r.Error, r.MaxTokens)
	}
	var body struct {
		Input           []workloads.Message `json:"input"`
		MaxOutputTokens int                 `json:"max_output_tokens"`
		StreamOptions   map[string]any      `json:"stream_options"`
	}
	if err := json.Unmarshal(srv.Received()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(body.Input, req.Messages) || body.MaxOutputTokens != 40 || len(body.StreamOptions) != 1 || body.StreamOptions["include_obfuscation"] != false {
		t.Errorf("body %s", srv.Received()[0].Body)
	}
}

// TestEmbeddingsDocument: an embeddings answer is one JSON document: the record has its sent and
// end moments and no output (E2EL is its latency), its input tokens are the usage's
// prompt_tokens (the workload's count without one); an answer that is not an embeddings list is
// broken, and says why.
func TestEmbeddingsDocument(t *testing.T) {
	const list = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2]}],"model":"m"`
	tests := []struct {
		name    string
		body    string
		status  int
		outcome records.Outcome
		errHas  string
		input   int
		source  string
	}{
		{"usage", list + `,"usage":{"prompt_tokens":11,"total_tokens":11}}`, 0, records.OK, "", 11, records.SourceUsage},
		{"no usage", list + `}`, 0, records.OK, "", 2, records.SourceWorkload},
		{"a bad count", list + `,"usage":{"prompt_tokens":-3}}`, 0, records.OK, "", 2, records.SourceWorkload},
		{"a count no request of its size carries", list + `,"usage":{"prompt_tokens":1000000000}}`, 0, records.OK, "", 2, records.SourceWorkloadBadUsage},
		{"no data", `{"object":"list","data":[],"usage":{"prompt_tokens":11}}`, 0, records.StreamError, `no embedding: "data" is missing or empty`, 2, records.SourceWorkload},
		{"an error in a 200", `{"error":{"message":"busy","type":"server_error"}}`, 0, records.StreamError, "an error: busy", 2, records.SourceWorkload},
		{"not JSON", `<html>`, 0, records.StreamError, "malformed answer", 2, records.SourceWorkload},
		{"HTTP 500", `{"error":{"message":"nope"}}`, 500, records.HTTPError, "HTTP 500 Internal Server Error: nope", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := fakesse.Script{Status: tc.status, ContentType: "application/json", Body: tc.body}
			r, srv := doOnce(t, loadgen.Target{Endpoint: loadgen.Embeddings}, prompt(), sc)
			if r.Outcome != tc.outcome || !strings.Contains(r.Error, tc.errHas) || (tc.errHas == "" && r.Error != "") {
				t.Fatalf("outcome %v error %q, want %v with %q", r.Outcome, r.Error, tc.outcome, tc.errHas)
			}
			if r.InputTokens != tc.input || r.InputTokensSource != tc.source {
				t.Errorf("input %d (%s), want %d (%s)", r.InputTokens, r.InputTokensSource, tc.input, tc.source)
			}
			if r.First != records.Unset || r.Chunks != 0 || r.OutputTokens != 0 || r.MaxTokens != 0 || r.Sent == records.Unset || r.End < r.Sent {
				t.Errorf("first %v, %d chunks, %d output tokens, max %d, sent %v, end %v", r.First, r.Chunks, r.OutputTokens, r.MaxTokens, r.Sent, r.End)
			}
			// An answer's E2EL is the request's latency (last = end); a failure has none.
			if e2el, ok := r.E2EL(); ok != (r.Outcome == records.OK) || ok && e2el != r.End-r.Sent {
				t.Errorf("E2EL %v, %v; sent %v end %v", e2el, ok, r.Sent, r.End)
			}
			got := srv.Received()[0]
			if got.Path != "/v1/embeddings" || got.Header.Get("Accept") != "application/json" {
				t.Errorf("path %q accept %q", got.Path, got.Header.Get("Accept"))
			}
			body := got.JSON()
			if body["input"] != "hello there" || body["model"] != "m" || len(body) != 2 {
				t.Errorf("body %s, want model and input only", got.Body)
			}
		})
	}
}

// TestEmbeddingsDocumentIsBounded: an answer longer than --max-response-mib is cut there and
// recorded as a stream_error saying so, not read whole into memory.
func TestEmbeddingsDocumentIsBounded(t *testing.T) {
	body := `{"object":"list","data":[{"embedding":[` + strings.Repeat("0.125,", 400) + `0]}]}`
	sc := fakesse.Script{ContentType: "application/json", Body: body}
	r, _ := doOnce(t, loadgen.Target{Endpoint: loadgen.Embeddings, MaxResponseBytes: 1024}, prompt(), sc)
	if r.Outcome != records.StreamError || !strings.Contains(r.Error, "answer cut at 1024 bytes (--max-response-mib)") || r.Last != records.Unset {
		t.Errorf("%v %q, last %v", r.Outcome, r.Error, r.Last)
	}
}

// TestKindsAgainstTheSim: the embedded deployment serves every kind, and each kind's record
// counts what the deployment did: the responses' reasoning and answer from the Responses events,
// the embeddings' input tokens from the usage, with no output.
func TestKindsAgainstTheSim(t *testing.T) {
	cfg, err := sim.Profile(sim.ProfileDefault)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReasoningShare = 0.25
	srv, err := sim.Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	req := workloads.Request{ID: 1, Prompt: "one two three four five six seven eight", InputTokens: 8, MaxTokens: 16}
	for _, kind := range loadgen.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			c := newClient(t, loadgen.Target{BaseURL: srv.URL(), Model: cfg.ModelName, Endpoint: kind}, 1)
			if err := c.Preflight(context.Background(), loadgen.PreflightRequest()); err != nil {
				t.Fatalf("preflight: %v", err)
			}
			r := records.NewRecord(0, 1, 0)
			c.Do(context.Background(), time.Now(), &req, &r)
			if r.Outcome != records.OK || r.Error != "" {
				t.Fatalf("%v: %s", r.Outcome, r.Error)
			}
			if r.InputTokensSource != records.SourceUsage || r.InputTokens < 8 {
				t.Errorf("input %d (%s)", r.InputTokens, r.InputTokensSource)
			}
			switch kind {
			case loadgen.Embeddings:
				if r.Chunks != 0 || r.OutputTokens != 0 || r.First != records.Unset {
					t.Errorf("an embedding streamed: %d chunks, %d tokens", r.Chunks, r.OutputTokens)
				}
			default:
				if r.OutputTokens != 16 || r.OutputTokensSource != records.SourceUsage || r.FinishReason != "length" {
					t.Errorf("output %d (%s), finish %q", r.OutputTokens, r.OutputTokensSource, r.FinishReason)
				}
			}
			if kind == loadgen.Chat || kind == loadgen.Responses {
				// The first answer can share the reasoning's arrival: two events read from the
				// socket at once carry the one kernel timestamp of that read.
				if r.ReasoningTokens != 4 || r.ReasoningChunks == 0 || r.FirstAnswer == records.Unset || r.FirstAnswer < r.First {
					t.Errorf("reasoning %d tokens in %d chunks, first %v, first answer %v", r.ReasoningTokens, r.ReasoningChunks, r.First, r.FirstAnswer)
				}
			}
		})
	}
}
