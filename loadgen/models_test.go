package loadgen_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

const modelsKey = "sk-ModelsKeySecret0123456789"

// modelsServer serves GET /v1/models with models(w) and answers every completion request with a
// stream that ends in finish_reason finish.
func modelsServer(t *testing.T, models func(w io.Writer), finish string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) { models(w) })
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fr, _ := json.Marshal(finish)
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%s}]}\n\n", fr)
		fmt.Fprintf(w, "data: [DONE]\n\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// modelIDs writes a model list of the given ids.
func modelIDs(ids ...string) func(io.Writer) {
	return func(w io.Writer) {
		data := make([]map[string]string, len(ids))
		for i, id := range ids {
			data[i] = map[string]string{"id": id, "object": "model"}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	}
}

// TestModelIDsAreNotTrusted: the first id of GET /models becomes the model's name in every
// output, so an id that echoes the API key (whole or a piece of it, in another case), holds
// control characters or terminal escapes, or is absurdly long is refused with a message that
// says why and names --model, and holds no secret and no control character itself.
func TestModelIDsAreNotTrusted(t *testing.T) {
	tests := []struct {
		name, id, why string
	}{
		{"the key", modelsKey, "holds a secret"},
		{"a middle piece of the key, upper case", "org/" + strings.ToUpper(modelsKey[5:20]), "holds a secret"},
		{"the key in base64 of Bearer", "m-" + b64("Bearer "+modelsKey), "holds a secret"},
		{"terminal escapes", "model\x1b[2J\x1b[31m", "control characters"},
		{"a fake line", "model\nloadcurve: all good", "control characters"},
		{"too long", strings.Repeat("m", loadgen.MaxModelIDLen+1), "more than 256"},
		{"empty", "", "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modelsServer(t, modelIDs(tt.id, "other"), "stop")
			c := unresolved(t, loadgen.Target{BaseURL: srv.URL + "/v1", APIKey: modelsKey})
			m, err := c.ResolveModel(context.Background())
			if err == nil {
				t.Fatalf("ResolveModel took %q", m)
			}
			msg := flagged(err)
			if !strings.Contains(msg, tt.why) || !strings.Contains(msg, "give --model") {
				t.Errorf("error %q does not say %q and --model", msg, tt.why)
			}
			if strings.Contains(strings.ToLower(msg), strings.ToLower(modelsKey[5:13])) || strings.ContainsAny(msg, "\x1b\n") {
				t.Errorf("the error shows what it refused: %q", msg)
			}
			if len(msg) > 600 {
				t.Errorf("the error is %d bytes", len(msg))
			}
		})
	}
	// A plain id is taken as it is.
	srv := modelsServer(t, modelIDs("meta-llama/Llama-3.1-8B-Instruct"), "stop")
	c := unresolved(t, loadgen.Target{BaseURL: srv.URL + "/v1", APIKey: modelsKey})
	if m, err := c.ResolveModel(context.Background()); err != nil || m != "meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("ResolveModel = %q, %v", m, err)
	}
}

// TestModelsListIsBounded: an endless model list is read up to MaxModelsBytes and no further
// (it once ran the client out of memory), and a long one keeps only its first MaxModelIDs ids;
// the model is still resolved from the first id.
func TestModelsListIsBounded(t *testing.T) {
	endless := func(w io.Writer) {
		if _, err := io.WriteString(w, `{"object":"list","data":[{"id":"first"}`); err != nil {
			return
		}
		chunk := strings.Repeat(`,{"id":"model-xxxxxxxxxxxxxxxxxxxx","object":"model"}`, 1000)
		for i := 0; i < 1<<20; i++ { // 50 GB: stops when the client hangs up
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}
	many := func(w io.Writer) {
		_, _ = io.WriteString(w, `{"data":[`)
		for i := range loadgen.MaxModelIDs + 500 {
			if i > 0 {
				_, _ = io.WriteString(w, ",")
			}
			fmt.Fprintf(w, `{"id":"m%d"}`, i)
		}
		_, _ = io.WriteString(w, `]}`)
	}
	for name, models := range map[string]func(io.Writer){"endless": endless, "many": many} {
		t.Run(name, func(t *testing.T) {
			srv := modelsServer(t, models, "stop")
			c := unresolved(t, loadgen.Target{BaseURL: srv.URL + "/v1"})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			m, err := c.ResolveModel(ctx)
			if err != nil || (m != "first" && m != "m0") {
				t.Fatalf("ResolveModel = %q, %v", m, err)
			}
		})
	}
}

// TestModelNotServedListsAFew: the "model not served" message lists at most five ids, cleaned
// and cut, and how many more there are (it once listed all 200,000 in a 3 MB line).
func TestModelNotServedListsAFew(t *testing.T) {
	ids := []string{modelsKey, "m\x1b[31mred", strings.Repeat("long", 100)}
	for i := range 200_000 {
		ids = append(ids, fmt.Sprintf("model-%d", i))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			modelIDs(ids...)(w)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, `{"error":{"message":"The model does not exist."}}`, http.StatusNotFound)
	}))
	defer srv.Close()
	c := newClient(t, loadgen.Target{BaseURL: srv.URL + "/v1", APIKey: modelsKey, Model: "wanted"}, 0)
	err := c.Preflight(context.Background(), loadgen.PreflightRequest())
	if !errors.Is(err, loadgen.ErrModelNotServed) {
		t.Fatalf("Preflight: %v", err)
	}
	msg := err.Error()
	if len(msg) > 1000 || !strings.Contains(msg, fmt.Sprintf("and %d more (only the first %d ids were read)", loadgen.MaxModelIDs-5, loadgen.MaxModelIDs)) {
		t.Errorf("%d bytes: %.300q", len(msg), msg)
	}
	if strings.Contains(msg, modelsKey[:8]) || strings.ContainsAny(msg, "\x1b") {
		t.Errorf("the list shows a secret or an escape: %q", msg)
	}
}

// TestFinishReasonIsSanitised: a finish_reason is the server's text like any other: a key it
// echoes there is hidden, control characters and escapes are removed, and it is bounded.
func TestFinishReasonIsSanitised(t *testing.T) {
	for _, tt := range []struct{ name, finish string }{
		{"the key", "stop " + modelsKey},
		{"the key's tail, upper case", "STOP:" + strings.ToUpper(modelsKey[10:])},
		{"escapes and a fake line", "stop\x1b]0;title\x07\nloadcurve: fake"},
		{"huge", strings.Repeat("z", 1<<20) + modelsKey},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := modelsServer(t, modelIDs("m"), tt.finish)
			c := newClient(t, loadgen.Target{BaseURL: srv.URL + "/v1", APIKey: modelsKey, Model: "m"}, 0)
			rec := records.NewRecord(0, 0, 0)
			c.Do(context.Background(), time.Now(), &workloads.Request{Prompt: "hi", MaxTokens: 4}, &rec)
			fr := rec.FinishReason
			if fr == "" || len(fr) > records.MaxFinishReasonLen {
				t.Errorf("finish_reason %q (%d bytes)", fr, len(fr))
			}
			if strings.Contains(strings.ToLower(fr), strings.ToLower(modelsKey[12:20])) || strings.ContainsAny(fr, "\x1b\x07\n") {
				t.Errorf("finish_reason %q", fr)
			}
		})
	}
}

// unresolved is a client of tg without a model: ResolveModel asks GET /models.
func unresolved(t *testing.T, tg loadgen.Target) *loadgen.Client {
	t.Helper()
	c, err := loadgen.NewClient(tg, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
