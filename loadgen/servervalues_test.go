package loadgen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
)

// These tests hold every value a server sends to what was asked and what was streamed (issue
// 23, "Blame and numbers"): usage counts, the runaway cut, multi-line SSE data, an event stream
// labelled as JSON, Retry-After, and the size of finish_reason.

// contentChunks returns n chat chunks of content "ab " and, when usage >= 0, a usage chunk with
// completion_tokens usage, then [DONE].
func contentChunks(n, usage int) fakesse.Script {
	var s []fakesse.Step
	for range n {
		s = append(s, fakesse.Data(0, fakesse.ChatChunk("ab ", "")))
	}
	if usage >= 0 {
		s = append(s, fakesse.Data(0, fakesse.UsageChunk(5, usage)))
	}
	return steps(append(s, fakesse.Done(0))...)
}

// TestUsageCheckedAgainstAskedAndStreamed: a completion_tokens beyond both the max_tokens the
// body carried and what the streamed output could carry is not believed (8 chunks with usage
// 1,000,000 once made 14.7 M tok/s); the record keeps the counted chunks and says why. Within
// either bound the usage stands (a server may count tokens it did not stream, up to max_tokens).
func TestUsageCheckedAgainstAskedAndStreamed(t *testing.T) {
	tests := []struct {
		name      string
		maxTokens int    // the workload's
		extra     string // --extra-body
		chunks    int
		usage     int
		believed  bool
		sentMax   int    // the record's MaxTokens
		why       string // in UsageRejected when not believed
	}{
		{name: "the issue's case: 8 chunks, usage 1,000,000", maxTokens: 16, chunks: 8, usage: 1_000_000, sentMax: 16,
			why: "usage.completion_tokens 1000000: beyond the 16 max_tokens sent, and the 8 output chunks (40 bytes) streamed carry at most 49 tokens"},
		{name: "within max_tokens, beyond what was streamed: believed", maxTokens: 16, chunks: 2, usage: 16, believed: true, sentMax: 16},
		{name: "beyond max_tokens, within what was streamed: believed", maxTokens: 4, chunks: 8, usage: 12, believed: true, sentMax: 4},
		{name: "no max_tokens sent: bounded by what was streamed", chunks: 2, usage: 14, sentMax: 0,
			why: "no max_tokens was sent, and the 2 output chunks (10 bytes) streamed carry at most 13 tokens"},
		{name: "no max_tokens sent, within what was streamed", chunks: 2, usage: 13, believed: true},
		{name: "--extra-body max_tokens 6000 is what was asked", maxTokens: 16, extra: `{"max_tokens":6000}`, chunks: 2, usage: 6000, believed: true, sentMax: 6000},
		{name: "--extra-body max_tokens 6000, usage beyond it", maxTokens: 16, extra: `{"max_tokens":6000}`, chunks: 2, usage: 6001, sentMax: 6000,
			why: "beyond the 6000 max_tokens sent"},
		{name: "--extra-body max_completion_tokens counts too", maxTokens: 16, extra: `{"max_completion_tokens":5e3}`, chunks: 2, usage: 5000, believed: true, sentMax: 5000},
		{name: "--extra-body max_tokens null: none sent", maxTokens: 16, extra: `{"max_tokens":null}`, chunks: 2, usage: 16, sentMax: 0,
			why: "no max_tokens was sent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := prompt()
			req.MaxTokens = tc.maxTokens
			r, srv := doOnce(t, loadgen.Target{ExtraBody: json.RawMessage(tc.extra)}, req, contentChunks(tc.chunks, tc.usage))
			if r.Outcome != records.OK || r.Chunks != tc.chunks || r.MaxTokens != tc.sentMax {
				t.Fatalf("%v, %d chunks, max_tokens %d (want %d); error %q", r.Outcome, r.Chunks, r.MaxTokens, tc.sentMax, r.Error)
			}
			// The record's max_tokens is the body's.
			var body struct {
				MaxTokens           *int     `json:"max_tokens"`
				MaxCompletionTokens *float64 `json:"max_completion_tokens"`
			}
			if err := json.Unmarshal(srv.Received()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			sent := 0
			if body.MaxTokens != nil {
				sent = *body.MaxTokens
			}
			if body.MaxCompletionTokens != nil {
				sent = max(sent, int(*body.MaxCompletionTokens))
			}
			if sent != r.MaxTokens {
				t.Errorf("the body carried max_tokens %d, the record says %d", sent, r.MaxTokens)
			}
			if tc.believed {
				if r.OutputTokens != tc.usage || r.OutputTokensSource != records.SourceUsage || r.UsageRejected != "" {
					t.Errorf("output %d from %q (%q), want the usage's %d", r.OutputTokens, r.OutputTokensSource, r.UsageRejected, tc.usage)
				}
				return
			}
			if r.OutputTokens != tc.chunks || r.OutputTokensSource != records.SourceChunksBadUsage || !strings.Contains(r.UsageRejected, tc.why) {
				t.Errorf("output %d from %q, why %q; want the %d chunks, why containing %q", r.OutputTokens, r.OutputTokensSource, r.UsageRejected, tc.chunks, tc.why)
			}
			line := string(r.AppendJSON(nil))
			var back records.Record
			if err := json.Unmarshal([]byte(line), &back); err != nil || back.UsageRejected != r.UsageRejected || back.MaxTokens != r.MaxTokens {
				t.Errorf("the record line does not keep why and max_tokens (%v): %s", err, line)
			}
		})
	}
}

// TestPromptUsageCheckedAgainstTheRequest: a usage.prompt_tokens beyond what the request could
// carry (a token per byte of its body, plus 1,024 for the chat template) is not believed, as a
// completion_tokens beyond what was asked and streamed is not (issue 39: prompt_tokens 10^9
// reported "Total token throughput 14656340626 tok/s", exit 0): the record keeps the
// workload's count and says why; at the bound itself the usage stands, and so does any count a
// real template could make.
func TestPromptUsageCheckedAgainstTheRequest(t *testing.T) {
	// sent is the body's size, learnt from a first request: the bound is sent + 1,024.
	_, srv := doOnce(t, loadgen.Target{}, prompt(), contentChunks(2, 2))
	sent := len(srv.Received()[0].Body)
	tests := []struct {
		name     string
		prompt   int
		cached   int // prompt_tokens_details.cached_tokens; -1: none sent
		complete int
		believed bool
		why      string // in UsageRejected when not believed
	}{
		{name: "a real count", prompt: 5, cached: -1, complete: 2, believed: true},
		{name: "the issue's: 10^9 prompt tokens", prompt: 1_000_000_000, cached: -1, complete: 2,
			why: fmt.Sprintf("usage.prompt_tokens 1000000000: beyond the %d a request of %d bytes can carry (a token per byte, and 1024 for the chat template)", sent+1024, sent)},
		{name: "at the bound: believed", prompt: sent + 1024, cached: -1, complete: 2, believed: true},
		{name: "one beyond the bound", prompt: sent + 1025, cached: -1, complete: 2, why: fmt.Sprintf("usage.prompt_tokens %d: beyond the %d", sent+1025, sent+1024)},
		{name: "a bad prompt and a bad completion: both said", prompt: 1 << 29, cached: -1, complete: 1_000_000,
			why: "streamed carry at most 13 tokens; usage.prompt_tokens 536870912: beyond"},
		{name: "cached tokens no request carries are not believed either", prompt: 1 << 29, cached: 1 << 28, complete: 2, why: "usage.prompt_tokens 536870912"},
		{name: "cached tokens within a believed prompt", prompt: 5, cached: 4, complete: 2, believed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			details := ""
			if tc.cached >= 0 {
				details = fmt.Sprintf(`,"prompt_tokens_details":{"cached_tokens":%d}`, tc.cached)
			}
			usage := fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d%s}}`, tc.prompt, tc.complete, details)
			sc := steps(fakesse.Data(0, fakesse.ChatChunk("ab ", "")), fakesse.Data(0, fakesse.ChatChunk("ab ", "")), fakesse.Data(0, usage), fakesse.Done(0))
			req := prompt()
			r, srv := doOnce(t, loadgen.Target{}, req, sc)
			if got := len(srv.Received()[0].Body); got != sent {
				t.Fatalf("the body is %d bytes, the first was %d", got, sent)
			}
			if r.Outcome != records.OK {
				t.Fatalf("%v: %s", r.Outcome, r.Error)
			}
			if tc.believed {
				if r.InputTokens != tc.prompt || r.InputTokensSource != records.SourceUsage || r.UsageRejected != "" {
					t.Errorf("input %d from %q (%q), want the usage's %d", r.InputTokens, r.InputTokensSource, r.UsageRejected, tc.prompt)
				}
				if tc.cached >= 0 && (r.CachedTokens != tc.cached || r.CachedTokensSource != records.SourceUsage) {
					t.Errorf("cached %d from %q, want %d", r.CachedTokens, r.CachedTokensSource, tc.cached)
				}
				return
			}
			if r.InputTokens != req.InputTokens || r.InputTokensSource != records.SourceWorkloadBadUsage || !strings.Contains(r.UsageRejected, tc.why) {
				t.Errorf("input %d from %q, why %q; want the workload's %d, why containing %q", r.InputTokens, r.InputTokensSource, r.UsageRejected, req.InputTokens, tc.why)
			}
			if r.CachedTokensSource != "" {
				t.Errorf("cached %d from %q believed beside an unbelievable prompt", r.CachedTokens, r.CachedTokensSource)
			}
			var back records.Record
			if err := json.Unmarshal(r.AppendJSON(nil), &back); err != nil || back.InputTokensSource != r.InputTokensSource || back.UsageRejected != r.UsageRejected {
				t.Errorf("the record line does not keep the source and why (%v)", err)
			}
		})
	}
}

// TestRunawayCutUsesMaxTokensSent: with --extra-body max_tokens 6000, a server that streams
// 6,000 tokens did what it was asked (it was cut at 4,097 chunks, 16 times the workload's 256,
// as "the server does not stop"); without the override the same stream is a runaway.
func TestRunawayCutUsesMaxTokensSent(t *testing.T) {
	const n = 6000
	stream := contentChunks(n, n)
	tests := []struct {
		name    string
		extra   string
		outcome records.Outcome
		chunks  int
	}{
		{name: "max_tokens 6000 sent: 6,000 chunks are fine", extra: `{"max_tokens":6000}`, outcome: records.OK, chunks: n},
		{name: "max_tokens 256 sent: cut after 4,096 chunks", outcome: records.StreamError, chunks: 4097},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := prompt()
			req.MaxTokens = 256
			r, _ := doOnce(t, loadgen.Target{ExtraBody: json.RawMessage(tc.extra)}, req, stream)
			if r.Outcome != tc.outcome || r.Chunks != tc.chunks {
				t.Errorf("%v after %d chunks, want %v after %d; error %q", r.Outcome, r.Chunks, tc.outcome, tc.chunks, r.Error)
			}
			if tc.outcome == records.OK && (r.OutputTokens != n || r.OutputTokensSource != records.SourceUsage) {
				t.Errorf("output %d from %q", r.OutputTokens, r.OutputTokensSource)
			}
			if tc.outcome != records.OK && !strings.Contains(r.Error, "(256 max_tokens): the server does not stop") {
				t.Errorf("error %q", r.Error)
			}
		})
	}
}

// TestMultiLineSSEData: an event whose data spans several data lines (joined with "\n", as the
// SSE specification says) is one payload, not malformed data; one payload per line without blank
// lines still works; data that never becomes a payload is malformed, whatever ends it.
func TestMultiLineSSEData(t *testing.T) {
	raw := func(s string) fakesse.Step { return fakesse.Step{Raw: s} }
	tests := []struct {
		name    string
		steps   []fakesse.Step
		outcome records.Outcome
		chunks  int
		tokens  int
		errHas  string
	}{
		{name: "a chunk over three data lines", outcome: records.OK, chunks: 2, tokens: 7,
			steps: []fakesse.Step{
				raw("data: {\"choices\":[{\"index\":0,\ndata:  \"delta\":{\"content\":\"a \"}}]\ndata: }\n\n"),
				raw("data: {\"choices\":[{\"delta\":{\"content\":\"b \"},\ndata: \"finish_reason\":\"stop\"}]}\n\n"),
				raw("data: {\"choices\":[],\ndata: \"usage\":{\"prompt_tokens\":3,\"completion_tokens\":7}}\n\n"),
				raw("data: [DONE]\n\n")}},
		{name: "one payload per line, no blank lines", outcome: records.OK, chunks: 2, tokens: 2,
			steps: []fakesse.Step{
				raw("data: " + fakesse.ChatChunk("a ", "") + "\n"),
				raw("data: " + fakesse.ChatChunk("b ", "stop") + "\n"),
				raw("data: [DONE]\n")}},
		{name: "data that is no payload, then the event ends", outcome: records.StreamError, chunks: 1,
			errHas: "malformed event data (unexpected end of JSON",
			steps: []fakesse.Step{
				raw("data: " + fakesse.ChatChunk("a ", "") + "\n\n"),
				raw("data: {\"choices\":[\n\n"),
				raw("data: [DONE]\n\n")}},
		{name: "data that is no payload, then a payload by itself", outcome: records.StreamError, chunks: 0,
			errHas: "malformed event data (invalid JSON at byte 1 ('n'), want a string): {nope",
			steps: []fakesse.Step{
				raw("data: {nope\n"),
				raw("data: " + fakesse.ChatChunk("a ", "") + "\n\n"),
				raw("data: [DONE]\n\n")}},
		{name: "data that is no payload, then [DONE]", outcome: records.StreamError, chunks: 0, errHas: "malformed event data",
			steps: []fakesse.Step{raw("data: {nope\ndata: [DONE]\n\n")}},
		{name: "data that is no payload, then the end of the stream", outcome: records.StreamError, chunks: 0, errHas: "malformed event data",
			steps: []fakesse.Step{raw("data: {\"choices\":[")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := doOnce(t, loadgen.Target{}, prompt(), steps(tc.steps...))
			if r.Outcome != tc.outcome || r.Chunks != tc.chunks || !strings.Contains(r.Error, tc.errHas) {
				t.Errorf("%v after %d chunks, error %q; want %v after %d, error containing %q", r.Outcome, r.Chunks, r.Error, tc.outcome, tc.chunks, tc.errHas)
			}
			if tc.outcome == records.OK && (r.OutputTokens != tc.tokens || r.FinishReason != "stop") {
				t.Errorf("%d tokens (%s), finish %q", r.OutputTokens, r.OutputTokensSource, r.FinishReason)
			}
		})
	}
}

// TestEventStreamLabelledJSON: an event stream served as application/json (a proxy's or a
// server's wrong label) is read as the event stream it is; a JSON document is still refused as
// one.
func TestEventStreamLabelledJSON(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		outcome records.Outcome
		errHas  string
	}{
		{name: "data first", body: "data: " + fakesse.ChatChunk("a ", "stop") + "\n\ndata: [DONE]\n\n", outcome: records.OK},
		{name: "blank lines, then a comment", body: "\n\n: ping\n\ndata: " + fakesse.ChatChunk("a ", "stop") + "\n\ndata: [DONE]\n\n", outcome: records.OK},
		{name: "an event field first", body: "event: message\ndata: " + fakesse.ChatChunk("a ", "stop") + "\n\ndata: [DONE]\n\n", outcome: records.OK},
		{name: "a JSON document", body: `{"choices":[{"message":{"content":"hi"}}]}`, outcome: records.StreamError, errHas: "not an event stream"},
		{name: "a JSON error document", body: `  {"error":{"message":"no streaming here"}}`, outcome: records.StreamError, errHas: "no streaming here"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := doOnce(t, loadgen.Target{}, prompt(), fakesse.Script{ContentType: "application/json; charset=utf-8", Body: tc.body})
			if r.Outcome != tc.outcome || !strings.Contains(r.Error, tc.errHas) {
				t.Errorf("%v, error %q; want %v with %q", r.Outcome, r.Error, tc.outcome, tc.errHas)
			}
			if tc.outcome == records.OK && (r.Chunks != 1 || r.FinishReason != "stop") {
				t.Errorf("%d chunks, finish %q", r.Chunks, r.FinishReason)
			}
		})
	}
}

// TestRetryAfterUnusableWaitsTheFloor: a 429 whose Retry-After is negative, zero, overflowing or
// a date in the past is re-sent after MinRetryWait, not at once (it was re-sent within a
// millisecond). Only the lower bound is asserted: a timer never fires early.
func TestRetryAfterUnusableWaitsTheFloor(t *testing.T) {
	for _, v := range []string{"-1", "0", "99999999999999999999999", "Mon, 01 Jan 2001 00:00:00 GMT"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			srv := newFaultServer(t, nil, func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
				w.Header().Set("Retry-After", v)
				w.WriteHeader(http.StatusTooManyRequests)
			})
			c := newClient(t, loadgen.Target{BaseURL: srv.URL}, 1)
			r := runOneRequest(t, context.Background(), c, 1)
			if r.Outcome != records.OK || r.Attempts != 2 {
				t.Fatalf("outcome %v after %d attempts, error %q", r.Outcome, r.Attempts, r.Error)
			}
			if wait := r.Sent - r.Slot; wait < loadgen.MinRetryWait {
				t.Errorf("re-sent %v after the first attempt, want at least %v", wait, loadgen.MinRetryWait)
			}
		})
	}
}

// TestFinishReasonBounded: a finish_reason of megabytes (the 7 MB) is cut to
// records.MaxFinishReasonLen bytes, which say it was cut and from what length, in valid UTF-8
// whatever escape or character the cut falls in; the usual values pass untouched.
func TestFinishReasonBounded(t *testing.T) {
	tests := []struct {
		name   string
		finish string // the JSON string's body, as sent
		want   string // the record's, "" for a cut one
		total  int    // the raw length a cut one states
	}{
		{name: "stop", finish: "stop", want: "stop"},
		{name: "a short unusual value", finish: `abort\u0021`, want: "abort!"},
		{name: "7 MB", finish: strings.Repeat("x", 7<<20), total: 7 << 20},
		{name: "escapes across the cut", finish: strings.Repeat(`\u00e9`, 100_000), total: 600_000},
		{name: "characters across the cut", finish: strings.Repeat("é", 100_000), total: 200_000},
		{name: "escaped backslashes across the cut", finish: strings.Repeat(`\\`, 100_000), total: 200_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chunk := `{"choices":[{"delta":{"content":"a "},"finish_reason":"` + tc.finish + `"}]}`
			r, _ := doOnce(t, loadgen.Target{}, prompt(), steps(fakesse.Data(0, chunk), fakesse.Data(0, chunk), fakesse.Done(0)))
			if r.Outcome != records.OK || r.Chunks != 2 {
				t.Fatalf("%v after %d chunks, error %.200q", r.Outcome, r.Chunks, r.Error)
			}
			got := r.FinishReason
			if tc.want != "" {
				if got != tc.want {
					t.Errorf("finish_reason %q, want %q", got, tc.want)
				}
				return
			}
			if len(got) > records.MaxFinishReasonLen || !utf8.ValidString(got) || !strings.HasSuffix(got, fmt.Sprintf("…(cut from %d bytes)", tc.total)) {
				t.Errorf("finish_reason of %d bytes: %q", len(got), got)
			}
			if line := r.AppendJSON(nil); len(line) > 1024 {
				t.Errorf("a record line of %d bytes", len(line))
			}
		})
	}
}
