package servermetrics_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/sim"
	sm "github.com/loadcurve/loadcurve/measure/servermetrics"
)

// Against the real simulated deployment: three identical non-streaming
// completions during a sampled tier.
func TestAgainstSim(t *testing.T) {
	cfg, err := sim.Profile(sim.ProfileMedium)
	if err != nil {
		t.Fatal(err)
	}
	run, err := sim.Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = run.Close() }()

	const (
		requests  = 3
		promptLen = 64 // words: one token each
		maxTokens = 8
	)
	prompt := strings.TrimSpace(strings.Repeat("loadcurve ", promptLen))
	body, err := json.Marshal(map[string]any{"model": cfg.ModelName, "prompt": prompt, "max_tokens": maxTokens, "stream": false})
	if err != nil {
		t.Fatal(err)
	}

	scraper := sm.NewScraper(sm.DefaultURL(run.URL()), nil, cfg.ModelName)
	smp := sm.StartSampler(context.Background(), scraper, time.Now(), 20*time.Millisecond)
	<-smp.Ready() // the baseline before the first request
	for i := range requests {
		resp, err := http.Post(run.URL()+"/completions", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || out.Usage.CompletionTokens != maxTokens {
			t.Fatalf("request %d: status %d, %d tokens, %v", i, resp.StatusCode, out.Usage.CompletionTokens, err)
		}
	}
	got := smp.Stop()

	if got.Source != sm.SourceSim || got.Failures != 0 || got.Scrapes < 2 {
		t.Fatalf("source %q scrapes %d failures %d (%s)", got.Source, got.Scrapes, got.Failures, got.LastError)
	}
	// The sim's prefix cache (package sim): a prompt's full blocks of
	// BlockSize = 16 tokens are cached once its prefill ends; a request
	// skips its longest cached prefix, at most the prompt minus one token,
	// in whole blocks: floor((64-1)/16)·16 = 48 tokens for the 2nd and 3rd
	// request, 0 for the 1st. Queries count every prompt token: 3·64.
	// So the hit rate is 96/192 = 0.5 exactly.
	for _, c := range []struct {
		name      string
		got, want *float64
	}{
		{"GenerationTokens", got.GenerationTokens, f(requests * maxTokens)},
		{"PromptTokens", got.PromptTokens, f(requests * promptLen)},
		{"PrefixCacheQueries", got.PrefixCacheQueries, f(requests * promptLen)},
		{"PrefixCacheHits", got.PrefixCacheHits, f(2 * 48)},
		{"PrefixCacheHitRate", got.PrefixCacheHitRate, f(0.5)},
		{"RequestsReceived", got.RequestsReceived, f(requests)},
		{"RequestsFinished", got.RequestsFinished, f(requests)},
		{"Preemptions", got.Preemptions, f(0)},
	} {
		if !eq(c.got, c.want) {
			t.Errorf("%s = %s, want %s", c.name, show(c.got), show(c.want))
		}
	}
	if got.StepLatenessP99 == nil || *got.StepLatenessP99 < 0 {
		t.Errorf("StepLatenessP99 = %s, want a value ≥ 0 (the engine ran steps)", show(got.StepLatenessP99))
	}
	if got.MeanKVUsage == nil || *got.MaxKVUsage < 0 || *got.MaxKVUsage > 1 || got.MeanRunning == nil || got.MeanWaiting == nil {
		t.Errorf("gauges missing or out of range: %+v", got)
	}
	if len(got.Notes) > 0 {
		t.Errorf("unexpected notes %q", got.Notes)
	}
}
