package loadgen

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/loadcurve/loadcurve/workloads"
)

// TestBodyOfAGeneratedPrompt: a request whose prompt is kept as a recipe is sent with exactly the
// body of the same request with the text in Prompt, on both endpoints, cold or not, and writing
// it costs no allocation beyond the body itself.
func TestBodyOfAGeneratedPrompt(t *testing.T) {
	synth, err := workloads.Synthetic{InputLen: 300, OutputLen: 8, RangeRatio: 0.5, Seed: 9}.Generate(20)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := workloads.SharedPrefix{Groups: 2, PrefixLen: 40, SuffixLen: 10, OutputLen: 4, Seed: 2}.Generate(6)
	if err != nil {
		t.Fatal(err)
	}
	cold, err := workloads.ApplyCold(synth, "[run:0123456789abcdef]")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := workloads.LoadTrace(filepath.Join("..", "workloads", "testdata", "mooncake.jsonl"), "mooncake", 1)
	if err != nil {
		t.Fatal(err)
	}
	trace, err := workloads.TraceRequests(tr, 1) // shared blocks, then fresh words
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range []Endpoint{Completions, Chat} {
		c, err := NewClient(Target{BaseURL: "http://body.invalid/v1", Model: "m", Endpoint: ep}, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range []*workloads.Set{synth, shared, cold, trace} {
			for i := range set.Requests {
				req := &set.Requests[i]
				if !req.Generated() {
					t.Fatalf("%s request %d is not generated", set.Source, i)
				}
				plain := *req
				plain.Prompt = req.Text()
				got, want := c.body(req), c.body(&plain)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s %s request %d: body\n%s\nwant\n%s", ep, set.Source, i, got, want)
				}
				if !json.Valid(got) {
					t.Fatalf("not JSON: %s", got)
				}
			}
		}
		req := &synth.Requests[0]
		if n := testing.AllocsPerRun(20, func() { c.body(req) }); n > 2 {
			t.Errorf("%s: %v allocations per body, want the body and the generator's state", ep, n)
		}
	}
}
