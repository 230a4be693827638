package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Micro-benchmarks of the client's per-chunk hot path, one stage at a time, and of go-openai's
// stream reader for comparison (docs/PERFORMANCE.md quotes them).

// benchChunkPayloads are typical payloads: a vLLM chat delta, a completions chunk, the usage
// message.
var benchChunkPayloads = []struct{ name, payload string }{
	{"chat", `{"id":"chatcmpl-7b1f","object":"chat.completion.chunk","created":1700000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}],"usage":null}`},
	{"completions", `{"id":"cmpl-7b1f","object":"text_completion","created":1700000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"text":" the","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}`},
	{"usage", `{"id":"chatcmpl-7b1f","object":"chat.completion.chunk","created":1700000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[],"usage":{"prompt_tokens":512,"total_tokens":640,"completion_tokens":128}}`},
}

// BenchmarkParseChunk is the scanner that extracts what the client needs from one payload;
// BenchmarkParseChunkEncodingJSON decodes the same fields with encoding/json in one pass into a
// small struct, the alternative it replaced.
func BenchmarkParseChunk(b *testing.B) {
	for _, p := range benchChunkPayloads {
		b.Run(p.name, func(b *testing.B) {
			payload := []byte(p.payload)
			var ci chunkInfo
			b.ReportAllocs()
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				if err := parseChunk(payload, &ci); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseChunkEncodingJSON(b *testing.B) {
	for _, p := range benchChunkPayloads {
		b.Run(p.name, func(b *testing.B) {
			payload := []byte(p.payload)
			b.ReportAllocs()
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				var c refChunkWithUsage
				if err := json.Unmarshal(payload, &c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// refChunkWithUsage is the test's reference decoding shape with the usage member: everything
// parseChunk extracts, in one encoding/json pass.
type refChunkWithUsage struct {
	refChunk
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// BenchmarkSSELines is the SSE line loop alone (line splitting, timestamps, chunk parsing, ITL
// bookkeeping) over an in-memory stream of 1,000 chat chunks: no HTTP, no goroutines.
func BenchmarkSSELines(b *testing.B) {
	const chunks = 1000
	var sb strings.Builder
	for range chunks {
		sb.WriteString("data: " + benchChunkPayloads[0].payload + "\n\n")
	}
	sb.WriteString("data: " + benchChunkPayloads[2].payload + "\n\ndata: [DONE]\n\n")
	stream := []byte(sb.String())
	br := bufio.NewReaderSize(nil, readerSize)
	src := bytes.NewReader(stream)
	t0 := time.Now()
	rec := records.NewRecord(0, 0, 0)
	rec.ITL = make([]time.Duration, 0, chunks)
	budget := newHeldBudget(0)
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		src.Reset(stream)
		br.Reset(src)
		rec.First, rec.ITL, rec.Chunks = records.Unset, rec.ITL[:0], 0
		st := streamState{kind: chatKind{}, rec: &rec, t0: t0, held: held{b: budget}}
		if done, err := st.read(br); !done || err != nil || rec.Chunks != chunks {
			b.Fatalf("done %v, err %v, %d chunks", done, err, rec.Chunks)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
}

// BenchmarkGoOpenAIRecv reads the same 1,000-chunk stream, served from memory, with go-openai's
// ChatCompletionStream: Recv (full unmarshalling into its response type) and RecvRaw (line
// matching only). Compare with BenchmarkClientChunks, loadcurve's whole client path.
func BenchmarkGoOpenAIRecv(b *testing.B) {
	const chunks = 1000
	sc := fakesse.Stream{Chunks: chunks, Usage: true}.Script()
	for _, raw := range []bool{false, true} {
		name := "Recv"
		if raw {
			name = "RecvRaw"
		}
		b.Run(name, func(b *testing.B) {
			cfg := openai.DefaultConfig("k")
			cfg.BaseURL = "http://bench.invalid/v1"
			cfg.HTTPClient = &fakeDoer{tr: &fakesse.Transport{Handler: func(fakesse.Received) fakesse.Script { return sc }}}
			oa := openai.NewClientWithConfig(cfg)
			req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "p"}}, Stream: true}
			b.ReportAllocs()
			for b.Loop() {
				st, err := oa.CreateChatCompletionStream(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					if raw {
						_, err = st.RecvRaw()
					} else {
						_, err = st.Recv()
					}
					if err != nil {
						break
					}
					n++
				}
				st.Close()
				if n < chunks {
					b.Fatalf("%d chunks", n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
		})
	}
}

type fakeDoer struct{ tr *fakesse.Transport }

func (d *fakeDoer) Do(req *http.Request) (*http.Response, error) { return d.tr.RoundTrip(req) }
