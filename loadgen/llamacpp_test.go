package loadgen_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// The streams under testdata/llamacpp were recorded from llama.cpp's own server, llama-server
// (node-llama-cpp 3.21.1's llama.cpp, commit 80fb11a), serving the model scripts/makegguf makes
// (docs/REAL-ENGINE.md): the bodies with curl -N, the raw HTTP answer of
// completions-then-close.http from a socket. They are replayed here so that CI holds what
// loadcurve reads from a real engine without running one.

func recorded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "llamacpp", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replay is a recorded SSE body sent event by event, each 2 ms after the one before.
func replay(body []byte) fakesse.Script {
	var sc fakesse.Script
	for _, ev := range strings.SplitAfter(string(body), "\n\n") {
		if ev != "" {
			sc.Steps = append(sc.Steps, fakesse.Step{Delay: 2 * time.Millisecond, Raw: ev})
		}
	}
	return sc
}

func TestLlamaCppRecordedStreams(t *testing.T) {
	tests := []struct {
		name     string
		endpoint loadgen.Endpoint
		file     string
		maxTok   int
		check    func(t *testing.T, r records.Record)
	}{
		{
			// A role-only first chunk ("content":null), one token per chunk, an empty-delta
			// chunk with the finish reason, then usage (and llama.cpp's timings) in a chunk of
			// no choices.
			name: "chat, length", endpoint: loadgen.Chat, file: "chat-length.sse", maxTok: 24,
			check: func(t *testing.T, r records.Record) {
				if r.Outcome != records.OK || r.Chunks != 24 || len(r.ITL) != 23 {
					t.Errorf("outcome %s, %d chunks, %d gaps: want ok, 24, 23 (%s)", r.Outcome, r.Chunks, len(r.ITL), r.Error)
				}
				if r.OutputTokens != 24 || r.OutputTokensSource != records.SourceUsage || r.InputTokens != 15 || r.InputTokensSource != records.SourceUsage {
					t.Errorf("tokens out %d (%s) in %d (%s): want 24 and 15 from usage", r.OutputTokens, r.OutputTokensSource, r.InputTokens, r.InputTokensSource)
				}
				if r.FinishReason != "length" || !(r.FirstEvent < r.First) {
					t.Errorf("finish %q, first_event %v first %v: want length, the role chunk before the first content", r.FinishReason, r.FirstEvent, r.First)
				}
				if r.CachedTokensSource != records.SourceUsage || r.CachedTokens != 0 {
					t.Errorf("cached %d (%s): want 0 from usage", r.CachedTokens, r.CachedTokensSource)
				}
			},
		},
		{
			// The text completion's last chunk carries "text":"", the finish reason and the
			// usage together.
			name: "completions, length", endpoint: loadgen.Completions, file: "completions-length.sse", maxTok: 6,
			check: func(t *testing.T, r records.Record) {
				if r.Outcome != records.OK || r.Chunks != 6 || r.OutputTokens != 6 || r.OutputTokensSource != records.SourceUsage {
					t.Errorf("outcome %s, %d chunks, %d tokens (%s): want ok, 6, 6 from usage (%s)", r.Outcome, r.Chunks, r.OutputTokens, r.OutputTokensSource, r.Error)
				}
				if r.InputTokens != 4 || r.CachedTokens != 1 || r.FinishReason != "length" {
					t.Errorf("in %d, cached %d, finish %q: want 4, 1, length", r.InputTokens, r.CachedTokens, r.FinishReason)
				}
			},
		},
		{
			// llama.cpp's chat parser refuses output that is no valid UTF-8 (a random model's
			// lone byte tokens) at the end of the response: an error event, HTTP 200, after 21
			// content chunks, with no finish chunk and no usage.
			name: "chat, an error event after the content", endpoint: loadgen.Chat, file: "chat-invalid-utf8-error.sse", maxTok: 32,
			check: func(t *testing.T, r records.Record) {
				if r.Outcome != records.StreamError || !strings.Contains(r.Error, "does not match the expected peg-native format") {
					t.Errorf("outcome %s error %q: want a stream error quoting the server", r.Outcome, r.Error)
				}
				if r.Chunks != 21 || r.OutputTokensSource != records.SourceChunks || r.HTTPStatus != 200 {
					t.Errorf("%d chunks (%s), HTTP %d: want 21 counted as chunks, 200", r.Chunks, r.OutputTokensSource, r.HTTPStatus)
				}
			},
		},
		{
			// End of sequence sampled first: no content at all, finish "stop", and a usage
			// that counts the end-of-sequence token the server did not stream.
			name: "chat, end of sequence first", endpoint: loadgen.Chat, file: "chat-eos-first.sse", maxTok: 8,
			check: func(t *testing.T, r records.Record) {
				if r.Chunks != 0 || r.First != records.Unset || r.FinishReason != "stop" {
					t.Errorf("%d chunks, first %v, finish %q: want none, unset, stop", r.Chunks, r.First, r.FinishReason)
				}
				if r.OutputTokens != 1 || r.OutputTokensSource != records.SourceUsage {
					t.Errorf("output %d (%s): want the usage's 1", r.OutputTokens, r.OutputTokensSource)
				}
				if _, ok := r.TTFT(); ok {
					t.Error("a TTFT without a first token")
				}
			},
		},
		{
			// Several tokens in one chunk, multi-byte characters made of byte tokens, and chunks
			// of no text: a model made with -no-suppress, its output held to a string of
			// multi-byte characters by a grammar (the request's "grammar"), so that it picks byte
			// tokens the server holds back until the character is whole. 13 tokens (the end of
			// sequence one of them) in 6 chunks of text, then two of "" before the finish.
			name: "completions, several tokens a chunk", endpoint: loadgen.Completions, file: "completions-multibyte-grammar.sse", maxTok: 16,
			check: func(t *testing.T, r records.Record) {
				if r.Outcome != records.OK || r.Chunks != 6 || len(r.ITL) != 5 {
					t.Errorf("outcome %s, %d chunks, %d gaps: want ok, the 6 chunks of text, 5 gaps (%s)", r.Outcome, r.Chunks, len(r.ITL), r.Error)
				}
				if r.OutputTokens != 13 || r.OutputTokensSource != records.SourceUsage || r.FinishReason != "stop" {
					t.Errorf("output %d (%s), finish %q: want the usage's 13, stop", r.OutputTokens, r.OutputTokensSource, r.FinishReason)
				}
				tpot, ok := r.TPOT()
				ttft, _ := r.TTFT()
				e2el, _ := r.E2EL()
				if want := (e2el - ttft) / 12; !ok || tpot != want {
					t.Errorf("TPOT %v (%v): want (E2EL - TTFT) / (13 - 1) = %v, the usage's tokens, not the chunks", tpot, ok, want)
				}
			},
		},
		{
			// The same through the chat endpoint: 15 tokens in 10 chunks of content.
			name: "chat, several tokens a chunk", endpoint: loadgen.Chat, file: "chat-multibyte-grammar.sse", maxTok: 16,
			check: func(t *testing.T, r records.Record) {
				if r.Outcome != records.OK || r.Chunks != 10 || len(r.ITL) != 9 {
					t.Errorf("outcome %s, %d chunks, %d gaps: want ok, 10, 9 (%s)", r.Outcome, r.Chunks, len(r.ITL), r.Error)
				}
				if r.OutputTokens != 15 || r.OutputTokensSource != records.SourceUsage {
					t.Errorf("output %d (%s): want the usage's 15", r.OutputTokens, r.OutputTokensSource)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := workloads.Request{ID: 1, Prompt: "Hello there, how are you?", InputTokens: 7, MaxTokens: tt.maxTok}
			r, _ := doOnce(t, loadgen.Target{Endpoint: tt.endpoint, Model: "tiny-random-qwen3vocab"}, req, replay(recorded(t, tt.file)))
			tt.check(t, r)
		})
	}
}

// A prompt beyond the slot's context: HTTP 400 with llama.cpp's error object.
func TestLlamaCppContextExceeded(t *testing.T) {
	sc := fakesse.Script{Status: 400, Body: string(recorded(t, "context-exceeded.json"))}
	r, _ := doOnce(t, loadgen.Target{Model: "tiny-random-qwen3vocab"}, prompt(), sc)
	if r.Outcome != records.HTTPError || r.HTTPStatus != 400 || !strings.Contains(r.Error, "exceeds the available context size (1024 tokens)") {
		t.Errorf("outcome %s HTTP %d error %q: want an HTTP error quoting the server", r.Outcome, r.HTTPStatus, r.Error)
	}
}

// closingServer answers every request on a connection with the recorded raw HTTP response of
// llama-server (a streamed completion announcing "Keep-Alive: timeout=5, max=100") and then
// closes the connection, as llama-server does after a streamed response. It closes when the
// next request on the connection arrives (or after a second), so that every request the client
// writes on a kept-alive connection meets the close: the outcome the race between the close
// and the next request gave against the real server (16 of 40 back-to-back requests), made
// certain.
type closingServer struct {
	ln       net.Listener
	raw      []byte
	conns    atomic.Int64
	answered atomic.Int64
	wg       sync.WaitGroup
}

func newClosingServer(t *testing.T, raw []byte) *closingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &closingServer{ln: ln, raw: raw}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.serve(c) }()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); s.wg.Wait() })
	return s
}

func (s *closingServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, req.Body)
	// Counted before the write: once the client has read the answer it may check the count
	// before this goroutine runs again, so a count after the write can lag the last answer.
	s.answered.Add(1)
	if _, err := c.Write(s.raw); err != nil {
		s.answered.Add(-1)
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	_, _ = br.Peek(1) // the next request's first byte, or a second: then close without answering
}

func TestLlamaCppClosesAfterStreamedResponse(t *testing.T) {
	raw := recorded(t, "completions-then-close.http")
	if !bytes.Contains(raw, []byte("Keep-Alive: timeout=5, max=100")) || bytes.Contains(raw, []byte("Connection: close")) {
		t.Fatal("the recording should announce keep-alive and never say it closes")
	}
	srv := newClosingServer(t, raw)
	c := newClient(t, loadgen.Target{BaseURL: "http://" + srv.ln.Addr().String() + "/v1", Endpoint: loadgen.Completions, Model: "tiny-random-qwen3vocab"}, 1)
	const n = 5
	t0 := time.Now()
	for i := range n {
		req := workloads.Request{ID: i, Prompt: "word city", InputTokens: 2, MaxTokens: 3}
		rec := records.NewRecord(0, i, 0)
		c.Do(context.Background(), t0, &req, &rec)
		if rec.Outcome != records.OK || rec.Chunks != 3 || rec.OutputTokens != 3 {
			t.Errorf("request %d: outcome %s, %d chunks, %d tokens, error %q: want ok with the recorded 3 tokens", i, rec.Outcome, rec.Chunks, rec.OutputTokens, rec.Error)
		}
	}
	if got := srv.answered.Load(); got != n {
		t.Errorf("the server answered %d requests, want %d", got, n)
	}
}

// While it loads the model, llama-server answers every request with HTTP 503 (no Retry-After,
// Connection: close) and the recorded body; --ready-check-timeout-sec waits it out, saying why.
func TestLlamaCppLoadingModel(t *testing.T) {
	body := string(recorded(t, "loading-model-503.json"))
	var n atomic.Int64
	srv := fakesse.New(func(fakesse.Received) fakesse.Script {
		if n.Add(1) <= 2 {
			return fakesse.Script{Status: 503, Body: body}
		}
		return fakesse.Stream{Chunks: 1, Usage: true}.Script()
	})
	t.Cleanup(srv.Close)
	c := newClient(t, loadgen.Target{BaseURL: srv.URL, Model: "tiny-random-qwen3vocab"}, 1)
	var notes []string
	err := c.WaitReady(context.Background(), 20*time.Second, func(_ time.Duration, why string) { notes = append(notes, why) })
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "503") || !strings.Contains(notes[0], "Loading model") {
		t.Errorf("notes %q: want the 503 and the server's Loading model", notes)
	}
	if got := n.Load(); got != 3 {
		t.Errorf("%d probes, want 3 (two 503s, then the answer)", got)
	}
}
