package loadgen_test

import (
	"context"
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

func ExampleSanitizeURL() {
	fmt.Println(loadgen.SanitizeURL("https://user:secret@llm.example.com/v1?api-key=abc"))
	// Output: https://llm.example.com/v1
}

// ExampleRun sends five requests, one every 10 ms, to a local server that streams three chunks
// per request, and sums up the records.
func ExampleRun() {
	srv := fakesse.New(func(fakesse.Received) fakesse.Script {
		return fakesse.Stream{Chunks: 3, Gap: time.Millisecond, Usage: true, PromptTokens: 4}.Script()
	})
	defer srv.Close()
	c, err := loadgen.NewClient(loadgen.Target{BaseURL: srv.URL, Timeout: 10 * time.Second}, 2)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx := context.Background()
	model, err := c.ResolveModel(ctx) // the first of GET /models
	if err != nil {
		panic(err)
	}
	if err := c.Preflight(ctx, loadgen.PreflightRequest()); err != nil {
		panic(err)
	}
	reqs := make([]workloads.Request, 5)
	offsets := make([]time.Duration, 5)
	for i := range reqs {
		reqs[i] = workloads.Request{ID: i, Prompt: "tell me a story", InputTokens: 4, MaxTokens: 3}
		offsets[i] = time.Duration(i) * 10 * time.Millisecond
	}
	var out summary
	res, err := loadgen.Run(ctx, c, loadgen.Tier{Offsets: offsets, Requests: reqs, MaxConcurrency: 2, Grace: 10 * time.Second}, &out, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("model %s: %d planned, %d dispatched, %d ok, %d output tokens (%s)\n",
		model, res.Planned, res.Dispatched, out.ok, out.tokens, out.source)
	// Output: model fake-model: 5 planned, 5 dispatched, 5 ok, 15 output tokens (usage)
}

type summary struct {
	ok, tokens int
	source     string
}

func (s *summary) Write(r *records.Record) error {
	if r.Outcome == records.OK {
		s.ok++
	}
	s.tokens += r.OutputTokens
	s.source = r.OutputTokensSource
	return nil
}
