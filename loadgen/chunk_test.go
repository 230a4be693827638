package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// refChunk is the reference decoding of a chunk with encoding/json (what parseChunk replaced for
// speed); the tests check that both agree.
type refChunk struct {
	Choices []struct {
		Text  refNonEmpty `json:"text"`
		Delta struct {
			Content          refNonEmpty `json:"content"`
			ReasoningContent refNonEmpty `json:"reasoning_content"`
			Reasoning        refNonEmpty `json:"reasoning"`
			ToolCalls        refNonEmpty `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Error  json.RawMessage `json:"error"`
	Object json.RawMessage `json:"object"`
}

type refNonEmpty bool

func (n *refNonEmpty) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	empty := string(b) == "null" || string(b) == `""` ||
		((b[0] == '[' || b[0] == '{') && len(bytes.TrimSpace(b[1:len(b)-1])) == 0)
	*n = refNonEmpty(!empty)
	return nil
}

// refInfo decodes b with encoding/json into a chunkInfo.
func refInfo(b []byte) (chunkInfo, error) {
	var c refChunk
	var u struct {
		Usage *struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return chunkInfo{}, err
	}
	if err := json.Unmarshal(b, &u); err != nil {
		return chunkInfo{}, err
	}
	ci := chunkInfo{choices: len(c.Choices) > 0}
	for _, ch := range c.Choices {
		ci.output = ci.output || bool(ch.Text) || bool(ch.Delta.Content) || bool(ch.Delta.ReasoningContent) ||
			bool(ch.Delta.Reasoning) || bool(ch.Delta.ToolCalls)
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			ci.finish = []byte(*ch.FinishReason)
		}
	}
	if u.Usage != nil {
		ci.usageSet, ci.prompt, ci.completion = true, u.Usage.PromptTokens, u.Usage.CompletionTokens
	}
	if c.Error != nil && string(c.Error) != "null" {
		ci.isError, ci.errRaw = true, c.Error
	}
	ci.isError = ci.isError || string(c.Object) == `"error"`
	return ci, nil
}

func sameInfo(a, b chunkInfo) bool {
	return a.choices == b.choices && a.output == b.output && finishReasonString(a.finish) == string(b.finish) &&
		a.usageSet == b.usageSet && a.prompt == b.prompt && a.completion == b.completion && a.isError == b.isError
}

func (ci chunkInfo) String() string {
	return fmt.Sprintf("{choices:%v output:%v finish:%q usage:%v %d/%d error:%v}", ci.choices, ci.output, ci.finish,
		ci.usageSet, ci.prompt, ci.completion, ci.isError)
}

var chunkCorpus = []string{
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}],"usage":null}`,
	`{"choices":[{"index":0,"delta":{"content":" wor\u00e9ld \"q\" \\ \n"},"finish_reason":"stop","stop_reason":null}]}`,
	`{"choices":[{"index":0,"text":"once","logprobs":{"tokens":["once"],"top_logprobs":[{"a":-0.5e-3}]},"finish_reason":"length"}]}`,
	`{"choices":[],"usage":{"prompt_tokens":12,"total_tokens":40,"completion_tokens":28,"prompt_tokens_details":{"cached_tokens":8}}}`,
	`{"choices":[{"delta":{"reasoning_content":"hm"}}]}`,
	`{"choices":[{"delta":{"reasoning":"so"}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call","type":"function","function":{"name":"f","arguments":""}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[ ],"content":null}}]}`,
	`{"choices":[{"delta":{}},{"delta":{"content":"x"},"finish_reason":"stop"}]}`,
	`{"choices":[null]}`,
	`{"choices":null,"usage":{"prompt_tokens":null,"completion_tokens":3}}`,
	`{"error":{"message":"boom","type":"x","code":500}}`,
	`{"error":"plain"}`,
	`{"error":null,"choices":[{"text":""}]}`,
	`{"object":"error","message":"too long"}`,
	` { "choices" : [ { "delta" : { "content" : "x" } } ] } `,
	`{"choices":[{"delta":{"content":[{"type":"text","text":"x"}]}}]}`,
	`{"choices":[{"text":true}],"n":-0.0E+5,"t":[false,null,{}]}`,
}

var malformedChunks = []string{
	``, `null`, `[]`, `{`, `{"choices":[{"delta":`, `{"choices":[}`, `{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{"a":1.}`,
	`{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a":"x}`,
	`{} {}`, `{}x`, `{"choices":{}}`, `{"choices":[1]}`, `{"choices":[{"delta":"x"}]}`,
	`{"choices":[{"finish_reason":5}]}`, `{"usage":[]}`, `{"usage":{"completion_tokens":"3"}}`, `{'a':1}`,
}

// TestParseChunkDoesNotBelieveAbsurdUsage: valid JSON whose counts cannot be true is not a
// broken stream; the count is flagged and left unused.
func TestParseChunkDoesNotBelieveAbsurdUsage(t *testing.T) {
	for _, tt := range []struct {
		in                   string
		promptOK, completeOK bool
		bad                  string
	}{
		{`{"usage":{"prompt_tokens":5,"completion_tokens":3}}`, true, true, ""},
		{`{"usage":{}}`, false, false, ""},
		{`{"usage":{"prompt_tokens":5,"completion_tokens":-3}}`, true, false, "usage.completion_tokens is -3"},
		{`{"usage":{"completion_tokens":1.5}}`, false, false, "usage.completion_tokens is 1.5"},
		{`{"usage":{"completion_tokens":9223372036854775807}}`, false, false, "not a count in [0, 1073741824]"},
		{`{"usage":{"completion_tokens":99999999999999999999}}`, false, false, "usage.completion_tokens is 99999999999999999999"},
		{`{"usage":{"prompt_tokens":-1,"completion_tokens":4}}`, false, true, "usage.prompt_tokens is -1"},
	} {
		var ci chunkInfo
		if err := parseChunk([]byte(tt.in), &ci); err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if ci.promptOK != tt.promptOK || ci.completeOK != tt.completeOK || !strings.Contains(ci.usageBad, tt.bad) || (tt.bad == "") != (ci.usageBad == "") {
			t.Errorf("%s: prompt ok %v, completion ok %v, bad %q; want %v %v %q", tt.in, ci.promptOK, ci.completeOK, ci.usageBad, tt.promptOK, tt.completeOK, tt.bad)
		}
	}
}

func TestParseChunkAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range chunkCorpus {
		var got chunkInfo
		err := parseChunk([]byte(in), &got)
		want, refErr := refInfo([]byte(in))
		if err != nil || refErr != nil {
			t.Errorf("%s: parseChunk error %v, encoding/json error %v", in, err, refErr)
			continue
		}
		if !sameInfo(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", in, got, want)
		}
	}
	for _, in := range malformedChunks {
		var got chunkInfo
		if err := parseChunk([]byte(in), &got); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestParseChunkAllocatesNothing(t *testing.T) {
	for _, in := range []string{
		chunkCorpus[2],
		`{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"finish_reason":null}]}`,
		`{"choices":[],"usage":{"prompt_tokens":17,"completion_tokens":8,"prompt_tokens_details":{"cached_tokens":16},"completion_tokens_details":{"reasoning_tokens":4}}}`,
	} {
		b := []byte(in)
		var ci chunkInfo
		if n := testing.AllocsPerRun(100, func() { _ = parseChunk(b, &ci) }); n != 0 {
			t.Errorf("%s: %v allocations per chunk", in, n)
		}
	}
}

// TestParseChunkAnswerAndDetails: reasoning deltas are output but not answer; the usage
// details are read, and a bad detail is not used without spoiling the counts.
func TestParseChunkAnswerAndDetails(t *testing.T) {
	for _, tc := range []struct {
		in                          string
		output, answer              bool
		cached, reasoning           int
		cachedOK, reasonOK, usageOK bool
	}{
		{in: `{"choices":[{"delta":{"reasoning_content":"a"}}]}`, output: true},
		{in: `{"choices":[{"delta":{"reasoning":"a"}}]}`, output: true},
		{in: `{"choices":[{"delta":{"reasoning_content":"a","content":"b"}}]}`, output: true, answer: true},
		{in: `{"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}`, output: true, answer: true},
		{in: `{"choices":[{"text":"x"}]}`, output: true, answer: true},
		{in: `{"choices":[{"delta":{"reasoning_content":""}}]}`},
		{in: `{"usage":{"completion_tokens":8,"prompt_tokens_details":{"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":5}}}`,
			cached: 3, reasoning: 5, cachedOK: true, reasonOK: true, usageOK: true},
		{in: `{"usage":{"completion_tokens":8,"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":-1}}}`, usageOK: true},
	} {
		var ci chunkInfo
		if err := parseChunk([]byte(tc.in), &ci); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if ci.output != tc.output || ci.answer != tc.answer || ci.cached != tc.cached || ci.cachedOK != tc.cachedOK ||
			ci.reasoning != tc.reasoning || ci.reasonOK != tc.reasonOK || (ci.usageBad == "") != tc.usageOK && ci.usageSet {
			t.Errorf("%s: %+v", tc.in, ci)
		}
	}
	var ci chunkInfo
	if err := parseChunk([]byte(`{"usage":{"prompt_tokens_details":[]}}`), &ci); err == nil {
		t.Error("usage details that are not an object were accepted")
	}
}

// FuzzParseChunk: parseChunk never accepts invalid JSON, never panics, and agrees with the
// encoding/json reference wherever the two are meant to agree (lower-case keys, no escapes that
// could hide a key, no duplicate keys, a top-level object).
func FuzzParseChunk(f *testing.F) {
	for _, s := range append(chunkCorpus, malformedChunks...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got chunkInfo
		err := parseChunk(b, &got)
		if err == nil && !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		if bytes.ContainsFunc(b, unicode.IsUpper) || bytes.ContainsRune(b, '\\') || hasDuplicateKeys(b) {
			return
		}
		want, refErr := refInfo(b)
		topObject := bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{"))
		switch {
		case refErr != nil && err == nil:
			t.Fatalf("%q: accepted, encoding/json says %v", b, refErr)
		case refErr == nil && err != nil && topObject:
			t.Fatalf("%q: rejected (%v), encoding/json accepts it", b, err)
		case err == nil && !sameInfo(got, want):
			t.Fatalf("%q:\n got %v\nwant %v", b, got, want)
		}
	})
}

// hasDuplicateKeys reports a key repeated within one object (where encoding/json's last-wins
// and parseChunk's any-occurrence differ), or invalid JSON.
func hasDuplicateKeys(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj    bool
		keys   map[string]bool
		expKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return !strings.Contains(err.Error(), "EOF") || len(stack) > 0
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.expKey {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.expKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			if top != nil && top.obj {
				top.expKey = true
			}
			stack = append(stack, &frame{obj: true, keys: map[string]bool{}, expKey: true})
		case json.Delim('['):
			if top != nil && top.obj {
				top.expKey = true
			}
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			if top != nil && top.obj {
				top.expKey = true
			}
		}
	}
}

// TestFinishReasonDecoded: a finish_reason is recorded as encoding/json decodes it: escapes
// resolved, and each byte that is not UTF-8 as U+FFFD (the fuzzer found "\xc8" recorded raw,
// which no JSON reader of the records would have read back as it was sent). The usual values
// are not allocated.
func TestFinishReasonDecoded(t *testing.T) {
	for _, tc := range []struct{ payload, want string }{
		{`{"choices":[{"finish_reason":"stop"}]}`, "stop"},
		{`{"choices":[{"finish_reason":"end_turn"}]}`, "end_turn"},
		{"{\"choices\":[{\"finish_reason\":\"\xc8\"}]}", "\uFFFD"},
		{"{\"choices\":[{\"finish_reason\":\"a\xff\xfeb\"}]}", "a\uFFFD\uFFFDb"},
		{`{"choices":[{"finish_reason":"st\u006fp \"x\""}]}`, `stop "x"`},
	} {
		var ci chunkInfo
		if err := parseChunk([]byte(tc.payload), &ci); err != nil {
			t.Fatalf("%q: %v", tc.payload, err)
		}
		var ref struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(tc.payload), &ref); err != nil {
			t.Fatal(err)
		}
		if got := finishReasonString(ci.finish); got != tc.want || got != ref.Choices[0].FinishReason {
			t.Errorf("%q: finish reason %q, want %q (encoding/json: %q)", tc.payload, got, tc.want, ref.Choices[0].FinishReason)
		}
	}
	raw := []byte("length")
	if n := testing.AllocsPerRun(100, func() { _ = finishReasonString(raw) }); n != 0 {
		t.Errorf("finishReasonString(%q) allocates %v times", raw, n)
	}
}
