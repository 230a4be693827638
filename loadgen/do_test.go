package loadgen_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// slack is the allowance for upper bounds on wall-clock timings over loopback. Lower bounds are
// exact: the server's scripted sleeps start only after it has received the request, which is
// after `sent`. Above them a measurement adds loopback delivery (~0.1 ms), Go timer and netpoller
// latency (~1 ms) and goroutine scheduling on a 2-core machine shared with other engineers' -race
// test runs, where pauses of tens of milliseconds happen; 50 ms covers that without hiding a real
// error of the size of the scripted delays (100 ms and more). A longer stall of the whole process
// is told apart by the stall watch (stall_test.go). Exact timings are asserted under
// testing/synctest in run_synctest_test.go.
const slack = 50 * time.Millisecond

func prompt() workloads.Request {
	return workloads.Request{ID: 3, Prompt: "hello there", InputTokens: 2, MaxTokens: 16}
}

func newClient(t *testing.T, tg loadgen.Target, conc int) *loadgen.Client {
	t.Helper()
	if tg.Model == "" {
		tg.Model = "m"
	}
	c, err := loadgen.NewClient(tg, conc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// doOnce sends req to a fresh server answering with sc and returns the record.
func doOnce(t *testing.T, tg loadgen.Target, req workloads.Request, sc fakesse.Script) (records.Record, *fakesse.Server) {
	t.Helper()
	srv := fakesse.New(func(fakesse.Received) fakesse.Script { return sc })
	t.Cleanup(srv.Close)
	if tg.BaseURL == "" {
		tg.BaseURL = srv.URL
	}
	c := newClient(t, tg, 1)
	rec := records.NewRecord(0, req.ID, 0)
	t0 := time.Now()
	c.Do(context.Background(), t0, &req, &rec)
	return rec, srv
}

func between(t *testing.T, what string, got, lo, hi time.Duration) {
	t.Helper()
	if got < lo || got > hi {
		t.Errorf("%s = %v, want in [%v, %v]", what, got, lo, hi)
	}
}

func ttft(r records.Record) time.Duration { d, _ := r.TTFT(); return d }
func e2el(r records.Record) time.Duration { d, _ := r.E2EL(); return d }

func TestDoScenarios(t *testing.T) {
	watchStalls(t)
	ms := time.Millisecond
	tests := []struct {
		name    string
		target  loadgen.Target
		req     func(*workloads.Request)
		script  fakesse.Script
		outcome records.Outcome
		check   func(t *testing.T, r records.Record)
	}{
		{
			name:    "timings, tokens from usage",
			script:  withHeaderDelay(fakesse.Stream{TTFT: 120 * ms, Gap: 30 * ms, Chunks: 5, TokensPerChunk: 3, Usage: true, PromptTokens: 7}.Script(), 40*ms),
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				// First content leaves the server 40+120 ms after it got the request; the last 4 gaps later.
				betweenOrStalled(t, "TTFT", ttft(r), 160*ms, 160*ms+slack)
				betweenOrStalled(t, "E2EL", e2el(r), 280*ms, 280*ms+slack)
				if r.FirstEvent != r.First {
					t.Errorf("no role chunk: first_event %v should equal first %v", r.FirstEvent, r.First)
				}
				if len(r.ITL) != 4 || r.Chunks != 5 {
					t.Fatalf("chunks %d, ITL %v: want 5 chunks, 4 gaps", r.Chunks, r.ITL)
				}
				var sum time.Duration
				for _, g := range r.ITL {
					betweenOrStalled(t, "gap", g, 0, 30*ms+slack)
					sum += g
				}
				if sum != r.Last-r.First {
					t.Errorf("gaps sum to %v, last-first = %v", sum, r.Last-r.First)
				}
				if r.OutputTokens != 15 || r.OutputTokensSource != records.SourceUsage || r.InputTokens != 7 || r.InputTokensSource != records.SourceUsage {
					t.Errorf("tokens %d(%s) in %d(%s), want 15(usage) and 7(usage)", r.OutputTokens, r.OutputTokensSource, r.InputTokens, r.InputTokensSource)
				}
				if r.RequestedInputTokens != 2 {
					t.Errorf("requested input %d, want the request set's 2 beside the server's 7", r.RequestedInputTokens)
				}
				if r.FinishReason != "length" || r.HTTPStatus != 200 || r.Error != "" {
					t.Errorf("finish %q status %d error %q", r.FinishReason, r.HTTPStatus, r.Error)
				}
				if !(r.Sent >= 0 && r.End >= r.Last) {
					t.Errorf("sent %v end %v last %v", r.Sent, r.End, r.Last)
				}
			},
		},
		{
			name:    "role-only first chunk: first_event before first",
			script:  fakesse.Stream{RoleFirst: true, TTFT: 150 * ms, Chunks: 2, Usage: true}.Script(),
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				betweenOrStalled(t, "first_event-sent", r.FirstEvent-r.Sent, 0, slack)
				betweenOrStalled(t, "TTFT", ttft(r), 150*ms, 150*ms+slack)
				if r.Chunks != 2 {
					t.Errorf("the role chunk was counted: %d chunks", r.Chunks)
				}
			},
		},
		{
			name:    "empty chunks do not count; no usage: chunk count and workload input",
			script:  fakesse.Stream{Chunks: 4, TokensPerChunk: 3, EmptyBetween: true}.Script(),
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				if r.Chunks != 4 || len(r.ITL) != 3 {
					t.Errorf("chunks %d ITL %d, want 4 and 3", r.Chunks, len(r.ITL))
				}
				if r.OutputTokens != 4 || r.OutputTokensSource != records.SourceChunks {
					t.Errorf("output %d (%s), want 4 (chunks)", r.OutputTokens, r.OutputTokensSource)
				}
				if r.InputTokens != 2 || r.InputTokensSource != records.SourceWorkload {
					t.Errorf("input %d (%s), want 2 (workload)", r.InputTokens, r.InputTokensSource)
				}
			},
		},
		{
			name:    "completions endpoint",
			target:  loadgen.Target{Endpoint: loadgen.Completions},
			script:  fakesse.Stream{Completions: true, Chunks: 3, Usage: true, PromptTokens: 2}.Script(),
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				if r.Chunks != 3 || r.OutputTokens != 3 || r.FirstEvent != r.First {
					t.Errorf("chunks %d tokens %d first_event %v first %v", r.Chunks, r.OutputTokens, r.FirstEvent, r.First)
				}
			},
		},
		{
			name: "reasoning and tool-call deltas are output",
			script: steps(
				fakesse.Data(0, `{"choices":[{"index":0,"delta":{"role":"assistant"}}]}`),
				fakesse.Data(0, `{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}`),
				fakesse.Data(0, `{"choices":[{"index":0,"delta":{"reasoning":"so"}}]}`),
				fakesse.Data(0, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]}}]}`),
				fakesse.Data(0, `{"choices":[{"index":0,"delta":{"content":null,"tool_calls":[]}}]}`),
				fakesse.Data(0, `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
				fakesse.Done(0)),
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				if r.Chunks != 3 || r.FinishReason != "tool_calls" {
					t.Errorf("chunks %d finish %q, want 3 and tool_calls", r.Chunks, r.FinishReason)
				}
			},
		},
		{
			name:    "HTTP 500 with an OpenAI error body",
			script:  fakesse.Script{Status: 500, Body: fakesse.ErrorJSON("engine overloaded")},
			outcome: records.HTTPError,
			check: func(t *testing.T, r records.Record) {
				if r.HTTPStatus != 500 || r.Error != "HTTP 500 Internal Server Error: engine overloaded" {
					t.Errorf("status %d error %q", r.HTTPStatus, r.Error)
				}
				if r.First != records.Unset || r.FirstEvent != records.Unset || r.End < r.Sent {
					t.Errorf("first %v first_event %v end %v", r.First, r.FirstEvent, r.End)
				}
			},
		},
		{
			name:    "401",
			script:  fakesse.Script{Status: 401, Body: `{"detail":"bad key"}`},
			outcome: records.HTTPError,
			check: func(t *testing.T, r records.Record) {
				if r.HTTPStatus != 401 || !strings.Contains(r.Error, "bad key") {
					t.Errorf("status %d error %q", r.HTTPStatus, r.Error)
				}
			},
		},
		{
			name: "broken JSON mid-stream",
			script: steps(fakesse.Data(0, fakesse.ChatChunk("a ", "")), fakesse.Data(0, fakesse.ChatChunk("b ", "")),
				fakesse.Data(0, `{"choices":[{"delta":`), fakesse.Done(0)),
			outcome: records.StreamError,
			check: func(t *testing.T, r records.Record) {
				if !strings.Contains(r.Error, "malformed event data") || r.Chunks != 2 || r.OutputTokens != 2 {
					t.Errorf("error %q chunks %d tokens %d", r.Error, r.Chunks, r.OutputTokens)
				}
			},
		},
		{
			// Nothing follows the error line and the connection stays open: the client must not
			// wait for another line (go-openai's reader does).
			name: "error object mid-stream",
			script: hang(steps(fakesse.Data(0, fakesse.ChatChunk("a ", "")),
				fakesse.Data(0, `{"error":{"message":"KV cache exhausted","type":"InternalServerError","code":500}}`))),
			target:  loadgen.Target{Timeout: 2 * time.Second},
			outcome: records.StreamError,
			check: func(t *testing.T, r records.Record) {
				if r.Error != "error in stream: KV cache exhausted" || r.Chunks != 1 || r.OutputTokens != 1 {
					t.Errorf("error %q chunks %d tokens %d", r.Error, r.Chunks, r.OutputTokens)
				}
				betweenOrStalled(t, "end-sent", r.End-r.Sent, 0, slack)
			},
		},
		{
			name:    "vLLM's older in-stream error shape",
			script:  steps(fakesse.Data(0, `{"object":"error","message":"prompt too long","type":"BadRequestError","code":400}`)),
			outcome: records.StreamError,
			check: func(t *testing.T, r records.Record) {
				if r.Error != "error in stream: prompt too long" {
					t.Errorf("error %q", r.Error)
				}
			},
		},
		{
			name:    "EOF without [DONE] keeps the tokens",
			script:  fakesse.Stream{Chunks: 3, NoDone: true}.Script(),
			outcome: records.StreamError,
			check: func(t *testing.T, r records.Record) {
				if !strings.Contains(r.Error, "without data: [DONE]") || r.Chunks != 3 || r.OutputTokens != 3 {
					t.Errorf("error %q chunks %d tokens %d", r.Error, r.Chunks, r.OutputTokens)
				}
			},
		},
		{
			name:    "stall past the deadline",
			target:  loadgen.Target{Timeout: 200 * ms},
			script:  hang(steps(fakesse.Data(0, fakesse.ChatChunk("a ", "")), fakesse.Data(20*ms, fakesse.ChatChunk("b ", "")))),
			outcome: records.Timeout,
			check: func(t *testing.T, r records.Record) {
				betweenOrStalled(t, "end-sent", r.End-r.Sent, 200*ms, 200*ms+slack)
				if r.Chunks != 2 || r.OutputTokens != 2 || !strings.Contains(r.Error, "200ms request timeout") {
					t.Errorf("chunks %d tokens %d error %q", r.Chunks, r.OutputTokens, r.Error)
				}
			},
		},
		{
			name:    "deadline before the headers",
			target:  loadgen.Target{Timeout: 100 * ms},
			script:  fakesse.Script{HeaderDelay: time.Second},
			outcome: records.Timeout,
			check: func(t *testing.T, r records.Record) {
				betweenOrStalled(t, "end-sent", r.End-r.Sent, 100*ms, 100*ms+slack)
				if r.HTTPStatus != 0 {
					t.Errorf("status %d", r.HTTPStatus)
				}
			},
		},
		{
			name:    "connection dropped mid-stream",
			script:  abort(steps(fakesse.Data(0, fakesse.ChatChunk("a ", "")))),
			outcome: records.StreamError,
			check: func(t *testing.T, r records.Record) {
				if !strings.Contains(r.Error, "connection closed by the server in the middle") || r.Chunks != 1 {
					t.Errorf("error %q chunks %d", r.Error, r.Chunks)
				}
			},
		},
		{
			// 400 keep-alive comments and blank lines before the first token: go-openai's
			// reader gives up after 300 non-data lines.
			name:    "keep-alive comments during a long prefill",
			script:  keepAlives(400, fakesse.Stream{Chunks: 2, Usage: true}.Script()),
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				if r.Chunks != 2 || r.FirstEvent != r.First {
					t.Errorf("chunks %d first_event %v first %v", r.Chunks, r.FirstEvent, r.First)
				}
			},
		},
		{
			name:    "server ignores stream=true",
			script:  fakesse.Script{ContentType: "application/json", Body: `{"choices":[{"message":{"content":"hi"}}]}`},
			outcome: records.StreamError,
			check: func(t *testing.T, r records.Record) {
				if !strings.Contains(r.Error, "not an event stream") {
					t.Errorf("error %q", r.Error)
				}
			},
		},
		{
			name: "usage in every chunk: the last one wins",
			script: steps(
				fakesse.Data(0, `{"choices":[{"delta":{"content":"a b "}}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`),
				fakesse.Data(0, `{"choices":[{"delta":{"content":"c "},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3}}`),
				fakesse.Data(0, `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3}}`),
				fakesse.Done(0)),
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				if r.OutputTokens != 3 || r.InputTokens != 5 || r.Chunks != 2 || r.FinishReason != "stop" {
					t.Errorf("tokens %d/%d chunks %d finish %q", r.InputTokens, r.OutputTokens, r.Chunks, r.FinishReason)
				}
			},
		},
		{
			name: "usage: {} does not turn the chunks into 0 tokens",
			script: steps(
				fakesse.Data(0, `{"choices":[{"delta":{"content":"a b "}}]}`),
				fakesse.Data(0, `{"choices":[{"delta":{"content":"c "},"finish_reason":"stop"}]}`),
				fakesse.Data(0, `{"choices":[],"usage":{}}`),
				fakesse.Done(0)),
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				if r.OutputTokens != 2 || r.OutputTokensSource != records.SourceChunksBadUsage || r.InputTokensSource != records.SourceWorkload {
					t.Errorf("output %d from %q, input from %q", r.OutputTokens, r.OutputTokensSource, r.InputTokensSource)
				}
			},
		},
		{
			name: "a negative or overflowing usage count is not believed",
			script: steps(
				fakesse.Data(0, `{"choices":[{"delta":{"content":"a b "}}]}`),
				fakesse.Data(0, `{"choices":[],"usage":{"prompt_tokens":9223372036854775807,"completion_tokens":-9}}`),
				fakesse.Done(0)),
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				if r.OutputTokens != 1 || r.OutputTokensSource != records.SourceChunksBadUsage || r.InputTokensSource != records.SourceWorkload || r.InputTokens < 0 {
					t.Errorf("output %d from %q, input %d from %q", r.OutputTokens, r.OutputTokensSource, r.InputTokens, r.InputTokensSource)
				}
			},
		},
		{
			name: "completion_tokens 0 after output chunks is not believed",
			script: steps(
				fakesse.Data(0, `{"choices":[{"delta":{"content":"a b "}}]}`),
				fakesse.Data(0, `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":0}}`),
				fakesse.Done(0)),
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				if r.OutputTokens != 1 || r.OutputTokensSource != records.SourceChunksBadUsage || r.InputTokens != 5 || r.InputTokensSource != records.SourceUsage {
					t.Errorf("output %d from %q, input %d from %q", r.OutputTokens, r.OutputTokensSource, r.InputTokens, r.InputTokensSource)
				}
			},
		},
		{
			name:    "quality check passes on the streamed text",
			req:     func(r *workloads.Request) { r.Expect = &workloads.Expectation{Contains: "t1 t2", MinTokens: 3} },
			script:  fakesse.Stream{Chunks: 3, Usage: true}.Script(),
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				if r.Quality != records.QualityPass || r.Error != "" {
					t.Errorf("quality %d error %q", r.Quality, r.Error)
				}
			},
		},
		{
			name:    "quality check fails",
			req:     func(r *workloads.Request) { r.Expect = &workloads.Expectation{Regex: `^t0 t1$`} },
			script:  fakesse.Stream{Chunks: 3, Usage: true}.Script(),
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				if r.Quality != records.QualityFail || !strings.HasPrefix(r.Error, "quality check: ") {
					t.Errorf("quality %d error %q", r.Quality, r.Error)
				}
			},
		},
		{
			name:    "event: error announces an error payload",
			script:  fakesse.Script{Steps: []fakesse.Step{{Raw: "event: error\ndata: {\"message\":\"boom\"}\n\n"}}},
			outcome: records.StreamError,
			check: func(t *testing.T, r records.Record) {
				if r.Error != "error in stream: boom" {
					t.Errorf("error %q", r.Error)
				}
			},
		},
		{
			name:    "CRLF line endings and data without a space",
			script:  fakesse.Script{Steps: []fakesse.Step{{Raw: "data:" + fakesse.ChatChunk("x ", "stop") + "\r\n\r\ndata:[DONE]\r\n\r\n"}}},
			outcome: records.OK,
			check: func(t *testing.T, r records.Record) {
				if r.Chunks != 1 || r.FinishReason != "stop" {
					t.Errorf("chunks %d finish %q", r.Chunks, r.FinishReason)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := prompt()
			if tc.req != nil {
				tc.req(&req)
			}
			rec, _ := doOnce(t, tc.target, req, tc.script)
			if rec.Outcome != tc.outcome {
				t.Fatalf("outcome %v (error %q), want %v", rec.Outcome, rec.Error, tc.outcome)
			}
			if rec.Sent == records.Unset || rec.End == records.Unset || rec.End < rec.Sent {
				t.Errorf("sent %v end %v", rec.Sent, rec.End)
			}
			if rec.ID != 3 {
				t.Errorf("id %d", rec.ID)
			}
			tc.check(t, rec)
		})
	}
}

func TestDoConnectionRefused(t *testing.T) {
	base := closedPortURL(t)
	c := newClient(t, loadgen.Target{BaseURL: base}, 1)
	rec := records.NewRecord(0, 0, 0)
	req := prompt()
	c.Do(context.Background(), time.Now(), &req, &rec)
	if rec.Outcome != records.StreamError || !strings.Contains(rec.Error, "connection refused") || rec.HTTPStatus != 0 {
		t.Errorf("outcome %v status %d error %q", rec.Outcome, rec.HTTPStatus, rec.Error)
	}
}

func TestDoCanceledByContext(t *testing.T) {
	watchStalls(t)
	srv := fakesse.New(func(fakesse.Received) fakesse.Script {
		return hang(steps(fakesse.Data(0, fakesse.ChatChunk("a ", ""))))
	})
	defer srv.Close()
	c := newClient(t, loadgen.Target{BaseURL: srv.URL}, 1)
	const deadline = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	rec := records.NewRecord(0, 0, 0)
	req := prompt()
	start := time.Now()
	c.Do(ctx, start, &req, &rec)
	// The caller's deadline is not the request's --timeout: canceled, not timeout.
	if rec.Outcome != records.Canceled || !strings.Contains(rec.Error, "run was stopped") {
		t.Errorf("outcome %v error %q", rec.Outcome, rec.Error)
	}
	// The output received before the cancellation is kept. The chunk leaves the server at once;
	// only a stall of half the deadline can keep it from arriving before the cancellation.
	if rec.Chunks == 0 && rec.OutputTokens == 0 {
		if s := worstStall(start); s > deadline/2 {
			t.Skipf("no chunk arrived within the %v deadline: this process stalled for %v meanwhile", deadline, s)
		}
	}
	if rec.Chunks != 1 || rec.OutputTokens != 1 {
		t.Errorf("chunks %d tokens %d, want the one chunk sent before the cancellation", rec.Chunks, rec.OutputTokens)
	}
}

func steps(s ...fakesse.Step) fakesse.Script { return fakesse.Script{Steps: s} }

func hang(s fakesse.Script) fakesse.Script { s.Hang = true; return s }

func abort(s fakesse.Script) fakesse.Script { s.Abort = true; return s }

func withHeaderDelay(s fakesse.Script, d time.Duration) fakesse.Script { s.HeaderDelay = d; return s }

func keepAlives(n int, s fakesse.Script) fakesse.Script {
	pings := make([]fakesse.Step, 0, n+len(s.Steps))
	for range n {
		pings = append(pings, fakesse.Step{Raw: ": ping\n\n"})
	}
	s.Steps = append(pings, s.Steps...)
	return s
}
