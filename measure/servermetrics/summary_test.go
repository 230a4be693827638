package servermetrics_test

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	sm "github.com/loadcurve/loadcurve/measure/servermetrics"
)

type vals = map[string]float64

// snaps builds snapshots one second apart from value maps.
func snaps(source string, vs ...vals) []sm.Snapshot {
	out := make([]sm.Snapshot, len(vs))
	for i, v := range vs {
		out[i] = sm.Snapshot{At: time.Duration(i) * time.Second, Values: v, Source: source}
	}
	return out
}

func f(v float64) *float64 { return &v }

// eq compares optional numbers; 1e-12 relative absorbs the rounding of a
// handful of additions and one division.
func eq(got, want *float64) bool {
	if got == nil || want == nil {
		return got == want
	}
	return math.Abs(*got-*want) <= 1e-12*math.Max(1, math.Abs(*want))
}

func show(p *float64) string {
	if p == nil {
		return "nil"
	}
	b, _ := json.Marshal(*p)
	return string(b)
}

func TestSummarize(t *testing.T) {
	type want struct {
		source                         string
		hitRate, queries, hits, preemp *float64
		meanRun, maxRun                *float64
		meanWait, maxWait              *float64
		meanKV, maxKV                  *float64
		gen, prompt, recv, fin         *float64
		note                           string // a note containing this, if set
	}
	tests := []struct {
		name  string
		snaps []sm.Snapshot
		want  want
	}{
		{
			name:  "no scrape at all",
			snaps: nil,
			want:  want{source: sm.SourceUnknown},
		},
		{
			name: "one scrape: gauges but no deltas",
			snaps: snaps(sm.SourceVLLM,
				vals{sm.NameRunning: 4, sm.NameGenerationTokens: 100}),
			want: want{source: sm.SourceVLLM, meanRun: f(4), maxRun: f(4)},
		},
		{
			name: "deltas over three scrapes, means and maxima over them",
			snaps: snaps(sm.SourceVLLM,
				vals{sm.NamePrefixQueries: 1000, sm.NamePrefixHits: 100, sm.NamePreemptions: 2, sm.NameGenerationTokens: 50, sm.NamePromptTokens: 10, sm.NameRequestsFinished: 7, sm.NameRunning: 1, sm.NameWaiting: 0, sm.NameKVUsage: 0.1},
				vals{sm.NamePrefixQueries: 1400, sm.NamePrefixHits: 250, sm.NamePreemptions: 2, sm.NameGenerationTokens: 80, sm.NamePromptTokens: 30, sm.NameRequestsFinished: 9, sm.NameRunning: 5, sm.NameWaiting: 6, sm.NameKVUsage: 0.6},
				vals{sm.NamePrefixQueries: 1800, sm.NamePrefixHits: 500, sm.NamePreemptions: 5, sm.NameGenerationTokens: 150, sm.NamePromptTokens: 40, sm.NameRequestsFinished: 12, sm.NameRunning: 3, sm.NameWaiting: 3, sm.NameKVUsage: 0.2},
			),
			want: want{
				source:  sm.SourceVLLM,
				queries: f(800), hits: f(400), hitRate: f(0.5), preemp: f(3),
				gen: f(100), prompt: f(30), fin: f(5), recv: f(5), // no received counter: finished
				meanRun: f(3), maxRun: f(5), meanWait: f(3), maxWait: f(6),
				meanKV: f(0.3), maxKV: f(0.6),
			},
		},
		{
			name: "a counter that goes down is a restart: the value after it is the increase since",
			snaps: snaps(sm.SourceVLLM,
				vals{sm.NameGenerationTokens: 100},
				vals{sm.NameGenerationTokens: 150}, // +50
				vals{sm.NameGenerationTokens: 20},  // restart: +20
				vals{sm.NameGenerationTokens: 50},  // +30
			),
			want: want{source: sm.SourceVLLM, gen: f(100), note: "generation_tokens went down from 150 to 20 between the scrapes at 1s and 2s: counted as a server restart"},
		},
		{
			name: "a counter created during the tier counts from zero",
			snaps: snaps(sm.SourceSGLang,
				vals{sm.NamePrefixQueries: 100},
				vals{sm.NamePrefixQueries: 300},
				vals{sm.NamePrefixQueries: 700, sm.NamePrefixHits: 64},
				vals{sm.NamePrefixQueries: 900, sm.NamePrefixHits: 96},
			),
			want: want{source: sm.SourceSGLang, queries: f(800), hits: f(96), hitRate: f(96.0 / 800)},
		},
		{
			name: "a scrape without the counter is skipped, not read as zero",
			snaps: snaps(sm.SourceVLLM,
				vals{sm.NamePreemptions: 10},
				vals{},
				vals{sm.NamePreemptions: 12},
			),
			want: want{source: sm.SourceVLLM, preemp: f(2)},
		},
		{
			name: "no prefix-cache query during the tier: no hit rate",
			snaps: snaps(sm.SourceVLLM,
				vals{sm.NamePrefixQueries: 500, sm.NamePrefixHits: 200},
				vals{sm.NamePrefixQueries: 500, sm.NamePrefixHits: 200},
			),
			want: want{source: sm.SourceVLLM, queries: f(0), hits: f(0)},
		},
		{
			name: "without the counters the hit-rate gauge is averaged, and noted",
			snaps: snaps(sm.SourceSGLang,
				vals{sm.NamePrefixHitRate: 0.2, sm.NamePrefixQueries: 10},
				vals{sm.NamePrefixHitRate: 0.4, sm.NamePrefixQueries: 30},
			),
			want: want{source: sm.SourceSGLang, hitRate: f(0.3), queries: f(20), note: "mean of the server's own hit-rate gauge"},
		},
		{
			name: "the sim's received counter is preferred to finished",
			snaps: snaps(sm.SourceSim,
				vals{sm.NameRequestsReceived: 10, sm.NameRequestsFinished: 8},
				vals{sm.NameRequestsReceived: 20, sm.NameRequestsFinished: 15},
			),
			want: want{source: sm.SourceSim, recv: f(10), fin: f(7)},
		},
		{
			name: "a change of server is noted",
			snaps: append(snaps(sm.SourceVLLM, vals{}),
				sm.Snapshot{At: time.Second, Values: vals{}, Source: sm.SourceSGLang}),
			want: want{source: sm.SourceSGLang, note: "detected server changed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sm.Summarize(tt.snaps)
			w := tt.want
			if got.Source != w.source || got.Scrapes != len(tt.snaps) || got.Failures != 0 {
				t.Errorf("source %q scrapes %d failures %d, want %q %d 0", got.Source, got.Scrapes, got.Failures, w.source, len(tt.snaps))
			}
			for _, c := range []struct {
				name      string
				got, want *float64
			}{
				{"PrefixCacheHitRate", got.PrefixCacheHitRate, w.hitRate},
				{"PrefixCacheQueries", got.PrefixCacheQueries, w.queries},
				{"PrefixCacheHits", got.PrefixCacheHits, w.hits},
				{"Preemptions", got.Preemptions, w.preemp},
				{"MeanRunning", got.MeanRunning, w.meanRun},
				{"MaxRunning", got.MaxRunning, w.maxRun},
				{"MeanWaiting", got.MeanWaiting, w.meanWait},
				{"MaxWaiting", got.MaxWaiting, w.maxWait},
				{"MeanKVUsage", got.MeanKVUsage, w.meanKV},
				{"MaxKVUsage", got.MaxKVUsage, w.maxKV},
				{"GenerationTokens", got.GenerationTokens, w.gen},
				{"PromptTokens", got.PromptTokens, w.prompt},
				{"RequestsReceived", got.RequestsReceived, w.recv},
				{"RequestsFinished", got.RequestsFinished, w.fin},
				{"StepLatenessP99", got.StepLatenessP99, nil},
			} {
				if !eq(c.got, c.want) {
					t.Errorf("%s = %s, want %s", c.name, show(c.got), show(c.want))
				}
			}
			if w.note == "" && len(got.Notes) > 0 {
				t.Errorf("unexpected notes %q", got.Notes)
			}
			if w.note != "" && !slices.ContainsFunc(got.Notes, func(n string) bool { return strings.Contains(n, w.note) }) {
				t.Errorf("notes %q, want one containing %q", got.Notes, w.note)
			}
		})
	}
}

// The step-lateness p99 follows Prometheus' histogram_quantile: rank
// 0.99·N in the bucket increase over the tier, linear inside the bucket.
func TestSummarizeStepLateness(t *testing.T) {
	inf := math.Inf(1)
	hist := func(bc ...float64) []sm.Bucket { // bound, count, bound, count...
		var b []sm.Bucket
		for i := 0; i < len(bc); i += 2 {
			b = append(b, sm.Bucket{UpperBound: bc[i], Count: bc[i+1]})
		}
		return b
	}
	tests := []struct {
		name        string
		first, last []sm.Bucket
		wantMs      *float64
		wantNote    bool
	}{
		// 100 new observations, all in (1 ms, 2 ms]: rank 99 is 99/100 of the
		// way through that bucket: 1 + 0.99·1 = 1.99 ms.
		{"rank inside the second bucket", hist(0.001, 0, 0.002, 0, inf, 0), hist(0.001, 0, 0.002, 100, inf, 100), f(1.99), false},
		// Increase 100 in (0, 1 ms]: the first bucket's lower bound is 0, so
		// 0.99·1 ms.
		{"rank inside the first bucket, from the increase", hist(0.001, 10, 0.002, 20, inf, 20), hist(0.001, 110, 0.002, 120, inf, 120), f(0.99), false},
		// Half the increase above the last finite bound: the largest finite
		// bound, as histogram_quantile answers.
		{"rank in the +Inf bucket", hist(0.001, 0, inf, 0), hist(0.001, 50, inf, 100), f(1), false},
		{"no step during the tier", hist(0.001, 7, inf, 7), hist(0.001, 7, inf, 7), nil, false},
		// Counts went down: the sim restarted; its histogram since the
		// restart is the increase: 100 observations ≤ 1 ms → 0.99 ms.
		{"restart", hist(0.001, 500, inf, 500), hist(0.001, 100, inf, 100), f(0.99), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sm.Summarize([]sm.Snapshot{
				{Values: vals{}, Source: sm.SourceSim, StepLateness: tt.first},
				{At: time.Second, Values: vals{}, Source: sm.SourceSim, StepLateness: tt.last},
			})
			if !eq(got.StepLatenessP99, tt.wantMs) {
				t.Errorf("StepLatenessP99 = %s ms, want %s", show(got.StepLatenessP99), show(tt.wantMs))
			}
			if hasNote := len(got.Notes) > 0; hasNote != tt.wantNote {
				t.Errorf("notes %q, want a note: %v", got.Notes, tt.wantNote)
			}
		})
	}
}

func TestTierMetricsJSON(t *testing.T) {
	tm := sm.TierMetrics{Source: sm.SourceVLLM, Scrapes: 3, PrefixCacheHitRate: f(0.5), StepLatenessP99: f(1.5)}
	b, err := json.Marshal(tm)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"source":"vllm","scrapes":3,"failures":0,"prefix_cache_hit_rate":0.5,"step_lateness_p99_ms":1.5}`
	if string(b) != want {
		t.Errorf("JSON\n %s\nwant\n %s", b, want)
	}
}
