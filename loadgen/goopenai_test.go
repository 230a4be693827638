package loadgen_test

import (
	"context"
	"errors"
	"io"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
)

// TestGoOpenAIStreamReaderCannotTellDoneFromEOF pins the go-openai behaviour that made the client
// read SSE itself (see the Client comment): a stream cut off before "data: [DONE]" ends exactly
// like a complete one, and 301 keep-alive lines fail a healthy stream. If a go-openai upgrade
// changes this, this test fails and the choice can be revisited.
func TestGoOpenAIStreamReaderCannotTellDoneFromEOF(t *testing.T) {
	tests := []struct {
		name   string
		script fakesse.Script
		chunks int
		err    error
	}{
		{"complete", fakesse.Stream{Chunks: 2}.Script(), 2, io.EOF},
		{"cut off before [DONE]", fakesse.Stream{Chunks: 2, NoDone: true}.Script(), 2, io.EOF},
		{"keep-alive comments", keepAlives(301, fakesse.Stream{Chunks: 2}.Script()), 0, openai.ErrTooManyEmptyStreamMessages},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakesse.New(func(fakesse.Received) fakesse.Script { return tc.script })
			defer srv.Close()
			cfg := openai.DefaultConfig("k")
			cfg.BaseURL = srv.URL
			stream, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(),
				openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			n := 0
			for {
				_, err = stream.RecvRaw()
				if err != nil {
					break
				}
				n++
			}
			if n != tc.chunks || !errors.Is(err, tc.err) {
				t.Errorf("go-openai: %d chunks then %v; pinned: %d then %v", n, err, tc.chunks, tc.err)
			}
		})
	}
}
