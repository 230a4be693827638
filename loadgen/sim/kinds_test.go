package sim_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

func postJSON(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

type respEvent struct {
	Type     string `json:"type"`
	Seq      int    `json:"sequence_number"`
	Delta    string `json:"delta"`
	Response *struct {
		Status     string `json:"status"`
		Incomplete *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Usage *struct {
			Input   int `json:"input_tokens"`
			Output  int `json:"output_tokens"`
			Details struct {
				Reasoning int `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	} `json:"response"`
}

// TestResponsesRoute: POST /v1/responses streams the Responses API's events, each an "event:"
// line naming the type its data carries, numbered in order: created and in_progress, the
// reasoning share as reasoning summary deltas, then the answer as output text deltas, and the
// terminal event with the usage: response.incomplete (max_output_tokens) when the output
// reached its bound, response.completed when it stopped before. Without "stream" the answer is
// the response object. A missing input is a 400 naming input.
func TestResponsesRoute(t *testing.T) {
	cfg := testConfig()
	cfg.ReasoningShare = 0.5
	cfg.TokensPerChunk = 2
	base := start(t, cfg).URL()
	for _, tc := range []struct {
		name      string
		eos       float64
		terminal  string
		reasoning int
	}{
		{"bound reached", 0, "response.incomplete", 4},
		{"stopped at once", 1, "response.completed", 4}, // one token, a reasoning one
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cfg
			cfg.EOSProbability = tc.eos
			base := base
			if tc.eos > 0 {
				base = start(t, cfg).URL()
			}
			status, body := postJSON(t, base+"/responses", `{"model":"`+cfg.ModelName+`","input":"`+words(12, "r")+`","max_output_tokens":8,"stream":true}`)
			if status != http.StatusOK {
				t.Fatalf("HTTP %d: %s", status, body)
			}
			var evs []respEvent
			sc := bufio.NewScanner(bytes.NewReader(body))
			var name string
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "event: "):
					name = strings.TrimPrefix(line, "event: ")
				case strings.HasPrefix(line, "data: "):
					var ev respEvent
					if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
						t.Fatalf("%v: %s", err, line)
					}
					if ev.Type != name || ev.Seq != len(evs) {
						t.Fatalf("event %q data type %q sequence %d, want %d", name, ev.Type, ev.Seq, len(evs))
					}
					evs = append(evs, ev)
				}
			}
			if len(evs) < 3 || evs[0].Type != "response.created" || evs[1].Type != "response.in_progress" {
				t.Fatalf("events %+v", evs)
			}
			last := evs[len(evs)-1]
			if last.Type != tc.terminal || last.Response == nil || last.Response.Usage == nil {
				t.Fatalf("last event %+v, want %s with usage", last, tc.terminal)
			}
			var reasoning, answer int
			for _, ev := range evs[2 : len(evs)-1] {
				n := len(strings.Fields(ev.Delta))
				switch ev.Type {
				case "response.reasoning_summary_text.delta":
					if answer > 0 {
						t.Errorf("reasoning after the answer")
					}
					reasoning += n
				case "response.output_text.delta":
					answer += n
				default:
					t.Errorf("unexpected event %q", ev.Type)
				}
			}
			u := last.Response.Usage
			if u.Input != 12 || u.Output != reasoning+answer || u.Details.Reasoning != min(tc.reasoning, u.Output) || reasoning != u.Details.Reasoning {
				t.Errorf("usage %+v; streamed %d reasoning and %d answer tokens", *u, reasoning, answer)
			}
			if tc.terminal == "response.incomplete" && (u.Output != 8 || last.Response.Incomplete == nil || last.Response.Incomplete.Reason != "max_output_tokens") {
				t.Errorf("incomplete: %+v", last.Response)
			}
		})
	}
	status, body := postJSON(t, base+"/responses", `{"input":[{"role":"user","content":[{"type":"input_text","text":"a b c"}]}],"max_output_tokens":3}`)
	var doc respEvent
	if status != http.StatusOK || json.Unmarshal(body, &doc.Response) != nil || doc.Response.Status != "incomplete" || doc.Response.Usage.Output != 3 {
		t.Errorf("non-streaming: HTTP %d %s", status, body)
	}
	status, body = postJSON(t, base+"/responses", `{"max_output_tokens":3,"stream":true}`)
	if status != http.StatusBadRequest || !strings.Contains(string(body), `"param":"input"`) {
		t.Errorf("no input: HTTP %d %s", status, body)
	}
}

// TestEmbeddingsRoute: POST /v1/embeddings answers one JSON document with an embedding and the
// usage's prompt_tokens, after the engine prefilled the input (its stats count the prompt
// tokens); the cluster balances the route too. A missing or empty input is a 400 naming input.
func TestEmbeddingsRoute(t *testing.T) {
	cfg := testConfig()
	srv := start(t, cfg)
	for _, input := range []string{`"` + words(100, "e") + `"`, `["` + words(30, "f") + `"]`, `[1,2,3,4,5]`} {
		status, body := postJSON(t, srv.URL()+"/embeddings", `{"model":"`+cfg.ModelName+`","input":`+input+`}`)
		var doc struct {
			Object string `json:"object"`
			Data   []struct {
				Embedding []float64 `json:"embedding"`
			} `json:"data"`
			Usage struct {
				Prompt int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(body, &doc); err != nil || status != http.StatusOK {
			t.Fatalf("HTTP %d %v: %s", status, err, body)
		}
		want := map[byte]int{'"': 100, '[': 30}[input[0]]
		if input[1] == '1' {
			want = 5
		}
		if doc.Object != "list" || len(doc.Data) != 1 || len(doc.Data[0].Embedding) == 0 || doc.Usage.Prompt != want {
			t.Errorf("%s: %s", input, body)
		}
	}
	if got := srv.Server().Stats().PromptTokens; got != 135 {
		t.Errorf("the engine prefilled %d prompt tokens, want 135", got)
	}
	for _, body := range []string{`{}`, `{"input":""}`, `{"input":[]}`} {
		status, b := postJSON(t, srv.URL()+"/embeddings", body)
		if status != http.StatusBadRequest || !strings.Contains(string(b), `"param":"input"`) || !strings.Contains(string(b), "input:") {
			t.Errorf("%s: HTTP %d %s", body, status, b)
		}
	}
	cl, err := sim.StartCluster(cfg, 2, sim.BalanceRoundRobin, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	for _, path := range []string{"/embeddings", "/responses"} {
		if status, b := postJSON(t, cl.URL()+path, `{"input":"a b"}`); status != http.StatusOK {
			t.Errorf("cluster %s: HTTP %d %s", path, status, b)
		}
	}
}
