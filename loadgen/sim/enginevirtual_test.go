package sim

import (
	"math"
	"slices"
	"testing"
	"time"
)

// engineCfg is a deployment whose step times are easy to add up by hand: a step is 1 ms, plus
// 0.1 ms per sequence in it, plus its prefill at 10,000 tokens/s.
func engineCfg() Config {
	c := defaultProfile()
	c.MaxNumSeqs, c.KVCacheTokens, c.MaxBatchedTokens, c.MaxModelLen = 4, 100_000, 4096, 4096
	c.StepBase, c.StepPerSeq, c.StepPerKVToken = time.Millisecond, 100*time.Microsecond, 0
	c.PrefillRate, c.TokensPerChunk, c.PrefixCacheBlocks = 10_000, 1, 0
	c.EOSProbability = 0
	return c
}

func simulate(t *testing.T, cfg Config, reqs []EngineRequest) []EngineResult {
	t.Helper()
	var out []EngineResult
	if err := SimulateEngine(cfg, reqs, func(r EngineResult) bool { out = append(out, r); return false }); err != nil {
		t.Fatal(err)
	}
	return out
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// TestSimulateEngineStepsAddUp: the virtual engine's times are the engine's step times added up:
// a prefill step, then one decode step a token; chunked prefill over several steps; a request
// arriving during a step joins at its end; two requests share their steps.
func TestSimulateEngineStepsAddUp(t *testing.T) {
	cfg := engineCfg()
	near := func(a, b time.Duration) bool { return (a - b).Abs() < time.Microsecond }
	// Alone: a 100-token prefill (1 + 0.1 + 10 ms), then 4 decode steps of 1.1 ms.
	res := simulate(t, cfg, []EngineRequest{{Arrival: 0, PromptLen: 100, MaxOut: 5, Target: 5}})
	want := []time.Duration{ms(11.1), ms(12.2), ms(13.3), ms(14.4), ms(15.5)}
	if len(res) != 1 || len(res[0].Chunks) != 5 || res[0].Tokens != 5 {
		t.Fatalf("alone: %+v", res)
	}
	for k, w := range want {
		if !near(res[0].Chunks[k], w) {
			t.Errorf("alone: chunk %d at %v, want %v", k, res[0].Chunks[k], w)
		}
	}
	// Chunked: a budget of 32 tokens a step prefills 100 tokens in 4 steps (32, 32, 32, 4).
	c := cfg
	c.MaxBatchedTokens = 32
	res = simulate(t, c, []EngineRequest{{Arrival: 0, PromptLen: 100, MaxOut: 2, Target: 2}})
	if first := ms(3*(1.1+3.2) + 1.1 + 0.4); !near(res[0].First(), first) || !near(res[0].End(), first+ms(1.1)) {
		t.Errorf("chunked: first %v, end %v; want %v, %v", res[0].First(), res[0].End(), first, first+ms(1.1))
	}
	// B arrives during A's prefill, waits for the step's end, then both share steps: B's prefill
	// step carries A's decode (2 sequences), and so on.
	res = simulate(t, cfg, []EngineRequest{
		{Arrival: 0, PromptLen: 100, MaxOut: 3, Target: 3},
		{Arrival: ms(5), PromptLen: 10, MaxOut: 2, Target: 2},
	})
	if len(res) != 2 {
		t.Fatalf("%d results", len(res))
	}
	a, b := res[0], res[1]
	if a.Index != 0 || b.Index != 1 {
		a, b = b, a
	}
	// Step 1 (A prefill): 11.1. Step 2 (A decode + B prefill of 10): 1 + 0.2 + 1 = 2.2 → 13.3.
	// Step 3 (both decode): 1.2 → 14.5; A has 3 tokens, B 2.
	if !slices.EqualFunc(a.Chunks, []time.Duration{ms(11.1), ms(13.3), ms(14.5)}, near) {
		t.Errorf("A's chunks %v", a.Chunks)
	}
	if !slices.EqualFunc(b.Chunks, []time.Duration{ms(13.3), ms(14.5)}, near) {
		t.Errorf("B's chunks %v", b.Chunks)
	}
}

// TestSimulateEngineStops: once emit returns true, later arrivals are not part of the run, and
// those that arrived run to their end, as SimulateQueue does.
func TestSimulateEngineStops(t *testing.T) {
	cfg := engineCfg()
	var reqs []EngineRequest
	for i := range 20 {
		reqs = append(reqs, EngineRequest{Arrival: ms(5 * float64(i)), PromptLen: 10, MaxOut: 20, Target: 20})
	}
	var got []int
	stopAt := time.Duration(0)
	err := SimulateEngine(cfg, reqs, func(r EngineResult) bool {
		got = append(got, r.Index)
		if stopAt == 0 {
			stopAt = r.End()
			return true
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range got {
		if reqs[i].Arrival > stopAt {
			t.Errorf("request %d arrived at %v, after the stop at %v, and was run", i, reqs[i].Arrival, stopAt)
		}
	}
	arrived := 0
	for _, r := range reqs {
		if r.Arrival <= stopAt {
			arrived++
		}
	}
	if len(got) != arrived || arrived == len(reqs) {
		t.Errorf("%d results, %d arrived by the stop at %v (of %d)", len(got), arrived, stopAt, len(reqs))
	}
}

// TestSimulateEngineKVAndPreemption: with a KV budget too small for every sequence's growth,
// the engine preempts (and the requests still end with all their tokens); without Preempt,
// admission reserves each request's whole length and never preempts.
func TestSimulateEngineKVAndPreemption(t *testing.T) {
	for _, preempt := range []bool{true, false} {
		cfg := engineCfg()
		cfg.KVCacheTokens, cfg.MaxModelLen, cfg.Preempt = 400, 400, preempt
		var reqs []EngineRequest
		for i := range 8 {
			reqs = append(reqs, EngineRequest{Arrival: ms(float64(i) * 0.1), PromptLen: 50, MaxOut: 100, Target: 100})
		}
		res := simulate(t, cfg, reqs)
		if len(res) != 8 {
			t.Fatalf("preempt %v: %d results", preempt, len(res))
		}
		for _, r := range res {
			if r.Tokens != 100 || slices.Max(r.ChunkTokens) < 1 {
				t.Errorf("preempt %v: request %d got %d tokens", preempt, r.Index, r.Tokens)
			}
			sum := 0
			for _, n := range r.ChunkTokens {
				sum += n
			}
			if sum != r.Tokens {
				t.Errorf("preempt %v: request %d: chunks carry %d tokens, it got %d", preempt, r.Index, sum, r.Tokens)
			}
		}
	}
}

// TestOutputTargetDistributions: the lengths at EOS follow their distributions (200,000 draws;
// tolerances of four standard errors): EOSProbability's geometric has mean 1/q, EOSLengthMean's
// log-normal its mean and coefficient of variation; a draw beyond max tokens runs to max tokens.
func TestOutputTargetDistributions(t *testing.T) {
	const n = 200_000
	draw := func(c Config, maxOut int) (mean, cv, stopped float64) {
		var s, s2 float64
		stops := 0
		for i := range uint64(n) {
			g, stop := c.OutputTarget(i, maxOut, false)
			if stop {
				stops++
			}
			s += float64(g)
			s2 += float64(g) * float64(g)
		}
		mean = s / n
		return mean, math.Sqrt(s2/n-mean*mean) / mean, float64(stops) / n
	}
	c := defaultProfile()
	c.EOSProbability = 0.02
	mean, _, stopped := draw(c, 1<<20)
	// Geometric: mean 1/q = 50, standard deviation sqrt(1-q)/q ≈ 49.5.
	if se := 49.5 / math.Sqrt(n); math.Abs(mean-50) > 4*se || stopped != 1 {
		t.Errorf("geometric: mean %.3f (want 50 ± %.3f), stopped %v", mean, 4*se, stopped)
	}
	c.EOSProbability, c.EOSLengthMean, c.EOSLengthCV = 0, 200, 1.5
	mean, cv, _ := draw(c, 1<<20)
	// Log-normal: the sample mean's standard error is mean·cv/sqrt(n); its standard deviation's
	// converges slowly with so heavy a tail, so the cv is held to 5 %.
	if se := 200 * 1.5 / math.Sqrt(n); math.Abs(mean-200) > 4*se+0.5 || math.Abs(cv-1.5) > 0.075 {
		t.Errorf("log-normal: mean %.2f (want 200 ± %.2f), cv %.3f (want 1.5)", mean, 4*se+0.5, cv)
	}
	// Capped at 400 tokens: the share that runs to the cap is P(X > 400) of the log-normal.
	sigma := math.Sqrt(math.Log1p(1.5 * 1.5))
	mu := math.Log(200) - sigma*sigma/2
	want := 0.5 * math.Erfc((math.Log(400.5)-mu)/(sigma*math.Sqrt2))
	if _, _, stopped = draw(c, 400); math.Abs((1-stopped)-want) > 4*math.Sqrt(want*(1-want)/n) {
		t.Errorf("log-normal capped at 400: %.4f ran to the cap, want %.4f", 1-stopped, want)
	}
	if g, stop := c.OutputTarget(7, 400, true); g != 400 || stop {
		t.Errorf("ignore_eos: %d, %v", g, stop)
	}
}
