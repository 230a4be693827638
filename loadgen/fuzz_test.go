package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// bodyTransport answers every request with 200, an event-stream content type and body, handed
// out in reads of at most piece bytes (so that lines straddle reads in every possible way).
type bodyTransport struct {
	body  []byte
	piece int
}

func (bt *bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"text/event-stream"}},
		Body:          io.NopCloser(&pieceReader{b: bt.body, piece: bt.piece}),
		ContentLength: -1,
		Request:       req,
	}, nil
}

type pieceReader struct {
	b     []byte
	piece int
}

func (p *pieceReader) Read(dst []byte) (int, error) {
	if len(p.b) == 0 {
		return 0, io.EOF
	}
	n := copy(dst[:min(len(dst), p.piece)], p.b)
	p.b = p.b[n:]
	return n, nil
}

// scriptBytes renders a fakesse script's steps as one response body.
func scriptBytes(sc fakesse.Script) []byte {
	var b bytes.Buffer
	for _, st := range sc.Steps {
		b.WriteString(st.Raw)
	}
	return b.Bytes()
}

// FuzzStreamBody feeds arbitrary bytes as the body of a 200 event-stream answer through
// Client.Do (SSE line reader, chunk parser, token and timing bookkeeping, quality check) and
// checks that the record is always coherent: a known outcome with a bounded error, timestamps
// in order, one gap per chunk after the first and summing to last-first, token counts from the
// right source, ok only after [DONE], and a record line that decodes back to the same record.
func FuzzStreamBody(f *testing.F) {
	seeds := [][]byte{
		scriptBytes(fakesse.Stream{Chunks: 3, Usage: true, PromptTokens: 4}.Script()),
		scriptBytes(fakesse.Stream{RoleFirst: true, Chunks: 2, TokensPerChunk: 2, EmptyBetween: true}.Script()),
		scriptBytes(fakesse.Stream{Completions: true, Chunks: 2, NoDone: true}.Script()),
		[]byte(": ping\n\ndata:" + fakesse.ChatChunk("x ", "stop") + "\r\n\r\ndata:[DONE]\r\n\r\n"),
		[]byte("event: error\ndata: {\"message\":\"boom\"}\n\n"),
		[]byte("data: " + fakesse.ChatChunk("a", "") + "\n\ndata: {\"error\":{\"message\":\"KV cache full\"}}\n\n"),
		[]byte(`data: {"object":"error","message":"prompt too long"}` + "\n\n"),
		[]byte("data: {\"choices\":[{\"delta\":\n\ndata: [DONE]\n\n"),
		[]byte("data: {\"choices\":[{\"text\":\"\\u00e9\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1e3}}\n\ndata: [DONE]\n\n"),
		[]byte("data: [DONE]"),
		[]byte("data: " + strings.Repeat("a", 40<<10) + "\n"),
		{},
	}
	for _, s := range seeds {
		f.Add(s, uint16(7))
		f.Add(s, uint16(4096))
	}
	c, err := NewClient(Target{BaseURL: "http://fuzz.invalid/v1", Model: "m"}, 1)
	if err != nil {
		f.Fatal(err)
	}
	defer c.Close()
	expect := &workloads.Expectation{MinTokens: 1}
	f.Fuzz(func(t *testing.T, body []byte, piece uint16) {
		tr := &bodyTransport{body: body, piece: max(int(piece), 1)}
		c.hc.Transport = tr
		req := workloads.Request{ID: 1, Prompt: "p", InputTokens: 1, MaxTokens: 4}
		if len(body)%2 == 1 {
			req.Expect = expect // half the inputs also run the quality check on the text
		}
		rec := records.NewRecord(0, req.ID, 0)
		c.Do(context.Background(), time.Now(), &req, &rec)
		if err := coherent(&rec, body); err != nil {
			t.Fatalf("%v\nrecord %+v", err, rec)
		}
	})
}

// inputSource reports whether s is a source an input count may have after a usage message.
func inputSource(s string) bool {
	return s == records.SourceUsage || s == records.SourceWorkload || s == records.SourceWorkloadBadUsage
}

// coherent checks the invariants of a record made from a complete 200 event-stream body.
func coherent(r *records.Record, body []byte) error {
	switch r.Outcome {
	case records.OK:
		if !bytes.Contains(body, []byte("[DONE]")) {
			return fmt.Errorf("ok without [DONE] in the body")
		}
		if r.Error != "" && !strings.HasPrefix(r.Error, "quality check: ") {
			return fmt.Errorf("ok with error %q", r.Error)
		}
	case records.StreamError:
		if r.Error == "" {
			return fmt.Errorf("stream_error without a reason")
		}
	default:
		return fmt.Errorf("outcome %v for a complete 200 body", r.Outcome)
	}
	if len(r.Error) > maxErrorLen || r.HTTPStatus != http.StatusOK {
		return fmt.Errorf("error of %d bytes (bound %d), status %d", len(r.Error), maxErrorLen, r.HTTPStatus)
	}
	if r.Sent == records.Unset || r.End < r.Sent {
		return fmt.Errorf("sent %v end %v", r.Sent, r.End)
	}
	if r.FirstEvent != records.Unset && (r.FirstEvent < r.Sent || r.FirstEvent > r.End) {
		return fmt.Errorf("first_event %v outside [sent, end]", r.FirstEvent)
	}
	if (r.Chunks > 0) != (r.First != records.Unset) || (r.Chunks > 0) != (r.Last != records.Unset) {
		return fmt.Errorf("%d chunks, first %v, last %v", r.Chunks, r.First, r.Last)
	}
	if r.Chunks > 0 {
		// Output comes in a choice, so the first output event is also an event with choices.
		if r.FirstEvent == records.Unset || r.FirstEvent > r.First || r.First > r.Last || r.Last > r.End {
			return fmt.Errorf("out of order: first_event %v first %v last %v end %v", r.FirstEvent, r.First, r.Last, r.End)
		}
		if len(r.ITL) != r.Chunks-1 {
			return fmt.Errorf("%d gaps for %d chunks", len(r.ITL), r.Chunks)
		}
		var sum time.Duration
		for _, g := range r.ITL {
			if g < 0 {
				return fmt.Errorf("negative gap %v", g)
			}
			sum += g
		}
		if sum != r.Last-r.First {
			return fmt.Errorf("gaps sum to %v, last-first %v", sum, r.Last-r.First)
		}
	}
	if r.OutputTokens < 0 || r.OutputTokens > 1<<30 || r.InputTokens < 0 || r.InputTokens > 1<<30 {
		return fmt.Errorf("token counts %d in, %d out: beyond belief", r.InputTokens, r.OutputTokens)
	}
	// The request's body is a few hundred bytes: a prompt count believed must be within them
	// and the template's allowance (maxPromptTokens).
	if r.InputTokensSource == records.SourceUsage && r.InputTokens > maxPromptTokens(1024) || r.CachedTokens > maxPromptTokens(1024) {
		return fmt.Errorf("%d input tokens (%d cached) believed for a one-word prompt", r.InputTokens, r.CachedTokens)
	}
	switch r.OutputTokensSource {
	case records.SourceChunks:
		if r.OutputTokens != r.Chunks || r.InputTokensSource != records.SourceWorkload {
			return fmt.Errorf("%d tokens counted from %d chunks, input from %q", r.OutputTokens, r.Chunks, r.InputTokensSource)
		}
	case records.SourceChunksBadUsage: // a usage message came, and could not be believed
		if r.OutputTokens != r.Chunks || !inputSource(r.InputTokensSource) {
			return fmt.Errorf("%d tokens counted from %d chunks after a bad usage, input from %q", r.OutputTokens, r.Chunks, r.InputTokensSource)
		}
	case records.SourceUsage:
		if !inputSource(r.InputTokensSource) {
			return fmt.Errorf("output from usage, input from %q", r.InputTokensSource)
		}
		if r.OutputTokens == 0 && r.Chunks > 0 {
			return fmt.Errorf("0 tokens from usage after %d output chunks", r.Chunks)
		}
	default:
		return fmt.Errorf("output token source %q", r.OutputTokensSource)
	}
	line := r.AppendJSON(nil)
	var back records.Record
	if err := json.Unmarshal(line, &back); err != nil {
		return fmt.Errorf("the record line does not decode (%v): %s", err, line)
	}
	if !utf8.ValidString(r.Error) || !utf8.ValidString(r.FinishReason) {
		back.Error, back.FinishReason = r.Error, r.FinishReason // invalid UTF-8 decodes as U+FFFD
	}
	if again := back.AppendJSON(nil); !bytes.Equal(again, line) {
		return fmt.Errorf("the record line does not round-trip:\n%s\n%s", line, again)
	}
	return nil
}

// FuzzParseHeader: ParseHeader never panics, never quotes the value in an error (the input is
// given a marker that only a leaked value could carry into the message), and what it accepts is
// a clean header that parses back to itself.
func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"X-Api-Key: abc", "Authorization: Bearer sk-1", "a:", ":b", "no colon", " X : y ",
		"X-Y: a\r\nEvil: 1", "Bad Name: v", "X: \x00", "X:\tv\t", "é: v", "X: é"} {
		f.Add(s)
	}
	const marker = "sk-LEAK-7f3a"
	f.Fuzz(func(t *testing.T, s string) {
		for _, in := range []string{s + ":" + marker, strings.ReplaceAll(s, ":", "") + marker, s} {
			name, value, err := ParseHeader(in)
			if err != nil {
				if strings.Contains(err.Error(), marker) {
					t.Fatalf("%q: the error quotes the value: %v", in, err)
				}
				continue
			}
			if name == "" || strings.ContainsAny(name, " \t:") || strings.Trim(value, " \t") != value ||
				strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
				t.Fatalf("%q: accepted name %q value %q", in, name, value)
			}
			n2, v2, err := ParseHeader(name + ": " + value)
			if err != nil || n2 != name || v2 != value {
				t.Fatalf("%q: %q %q does not parse back (%q %q %v)", in, name, value, n2, v2, err)
			}
			// What ParseHeader accepts, net/http must send: a header it rejects would fail
			// every request of the run.
			if err := netHTTPHeaderCheck(name, value); err != nil {
				t.Fatalf("%q: accepted a header net/http rejects: %v", in, err)
			}
		}
	})
}

// netHTTPHeaderCheck runs net/http's own check on outgoing header fields: the transport
// validates names and values before anything else, and the request's context is already
// canceled, so nothing is dialled.
func netHTTPHeaderCheck(name, value string) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:1/", nil)
	if err != nil {
		return err
	}
	req.Header.Set(name, value)
	_, err = (&http.Transport{}).RoundTrip(req)
	if err != nil && strings.Contains(err.Error(), "invalid header") {
		return err
	}
	return nil
}

// FuzzParseExtraBody: ParseExtraBody never panics; what it accepts is a JSON object without
// duplicate keys that parses back to itself and can be planned into request bodies that are
// valid JSON; a plain JSON object without duplicate keys or stream members is always accepted.
func FuzzParseExtraBody(f *testing.F) {
	for _, s := range []string{`{"ignore_eos":true}`, ` {"top_k": 5, "stream_options": {"continuous_usage_stats": true}} `,
		`[]`, `null`, `"x"`, `{"a":1,"a":2}`, `{"stream":false}`, `{"stream":true}`, `{`, `{"a":1} x`, ``, `   `, `{"model":"other"}`} {
		f.Add(s)
	}
	c, err := NewClient(Target{BaseURL: "http://fuzz.invalid/v1", Model: "m"}, 1)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, err := ParseExtraBody(s)
		var obj map[string]json.RawMessage
		isObject := json.Unmarshal([]byte(s), &obj) == nil && obj != nil
		if err != nil {
			if fe := field.Of(err); fe == nil || fe.Name != FieldExtraBody {
				t.Fatalf("%q: the error does not name the body parameters: %v", s, err)
			}
			if isObject && !hasDuplicateKeys([]byte(s)) && obj["stream"] == nil && obj["stream_options"] == nil {
				t.Fatalf("%q: a plain JSON object rejected: %v", s, err)
			}
			return
		}
		if strings.TrimSpace(s) == "" {
			if raw != nil {
				t.Fatalf("blank input gave %q", raw)
			}
			return
		}
		if !isObject || !json.Valid(raw) {
			t.Fatalf("%q: accepted, but it is not a JSON object", s)
		}
		if again, err := ParseExtraBody(string(raw)); err != nil || !bytes.Equal(again, raw) {
			t.Fatalf("%q: does not parse back: %q %v", s, again, err)
		}
		plan, err := newBodyPlan(raw, c.kind)
		if err != nil {
			t.Fatalf("%q: accepted but cannot be planned: %v", s, err)
		}
		c.bodyPlan = plan
		body := c.body(&workloads.Request{Prompt: "p", MaxTokens: 2})
		var merged map[string]json.RawMessage
		if err := json.Unmarshal(body, &merged); err != nil {
			t.Fatalf("%q: request body is not a JSON object (%v): %s", s, err, body)
		}
		for k := range obj {
			if _, ok := merged[k]; !ok && k != "stream_options" {
				t.Fatalf("%q: member %q missing from the request body %s", s, k, body)
			}
		}
	})
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		in          string
		name, value string
		errHas      string // "" = valid
	}{
		{in: "X-Api-Key: abc123", name: "X-Api-Key", value: "abc123"},
		{in: "Authorization: Bearer sk-secret", name: "Authorization", value: "Bearer sk-secret"},
		{in: "  x-trace :\t v:1:2 \t", name: "x-trace", value: "v:1:2"},  // blanks trimmed, later ':' kept
		{in: "X-Empty:", name: "X-Empty", value: ""},                     // an empty value is a valid header
		{in: "X-Api-Key=abc123", name: "X-Api-Key", value: "abc123"},     // vLLM's KEY=VALUE
		{in: " x-info = 0.3.3=a:b ", name: "x-info", value: "0.3.3=a:b"}, // the name ends at the first '=' or ':'
		{in: "X-Url: http://h/?a=b", name: "X-Url", value: "http://h/?a=b"},
		{in: "X-Empty=", name: "X-Empty", value: ""},
		{in: "Bearer sk-secret", errHas: "no ':' or '=' in the 16-byte value"},
		{in: "c2stc2VjcmV0==", errHas: "like a base64 token"},
		{in: "=sk-secret", errHas: "empty header name before '='"},
		{in: "Bad Name=sk-secret", errHas: "not allowed in HTTP header names at byte 4 of 8"},
		{in: ": sk-secret", errHas: "empty header name"},
		{in: "Bad Name: sk-secret", errHas: "not allowed in HTTP header names at byte 4 of 8"},
		{in: "é: sk-secret", errHas: "not allowed in HTTP header names at byte 1"},
		{in: "X-A: sk-secret\r\nX-Evil: 1", errHas: "X-A: the value has a control character (0x0d) at byte 10"},
		{in: "X-A: sk-\x00secret", errHas: "control character (0x00)"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			name, value, err := ParseHeader(tc.in)
			if tc.errHas == "" {
				if err != nil || name != tc.name || value != tc.value {
					t.Fatalf("got %q %q %v, want %q %q", name, value, err, tc.name, tc.value)
				}
				if err := netHTTPHeaderCheck(name, value); err != nil {
					t.Errorf("net/http rejects it: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Fatalf("error %v, want it to contain %q", err, tc.errHas)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error quotes the value: %v", err)
			}
			if !strings.Contains(err.Error(), "Name: value") && !strings.Contains(err.Error(), "value not shown") {
				t.Errorf("the error does not say what is wanted: %v", err)
			}
		})
	}
	// The helper itself: net/http does reject what ParseHeader rejects for the same reasons.
	if netHTTPHeaderCheck("Bad Name", "v") == nil || netHTTPHeaderCheck("X", "a\r\nb") == nil {
		t.Error("netHTTPHeaderCheck accepts invalid headers: the fuzz check would prove nothing")
	}
}

func TestParseExtraBody(t *testing.T) {
	tests := []struct {
		in     string
		want   string // accepted form; "" with errHas ""= no extra body
		errHas string
	}{
		{in: ` {"ignore_eos": true, "top_k": 5} `, want: `{"ignore_eos": true, "top_k": 5}`},
		{in: `{"stream_options":{"continuous_usage_stats":true}}`, want: `{"stream_options":{"continuous_usage_stats":true}}`},
		{in: `{}`, want: `{}`},
		{in: "  "},
		{in: `[1,2]`, errHas: `body parameters: got an array, want a JSON object, e.g. '{"ignore_eos":true}'`},
		{in: `null`, errHas: "got null, want a JSON object"},
		{in: `"sk-secret"`, errHas: "got a string, want a JSON object"},
		{in: `12`, errHas: "got a number"},
		{in: `{"a":sk-secret}`, errHas: `not valid JSON (syntax error at byte 6 of 15); want a JSON object, e.g. '{"ignore_eos":true}'`},
		{in: `{"a":1} {"b":2}`, errHas: "not valid JSON"},
		{in: `{"a":1,"a":2}`, errHas: `key "a" appears twice`},
		{in: `{"stream":false}`, errHas: `"stream" cannot be turned off`},
		{in: `{"stream_options":true}`, errHas: `"stream_options" must be an object`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseExtraBody(tc.in)
			if tc.errHas == "" {
				if err != nil || string(got) != tc.want || (tc.want == "") != (got == nil) {
					t.Fatalf("got %q %v, want %q", got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Fatalf("error %v, want it to contain %q", err, tc.errHas)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error quotes the input: %v", err)
			}
		})
	}
}
