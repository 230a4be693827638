package sim_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// How the timing tests bound their error.
//
// The engine sleeps to absolute deadlines, so step k's tokens are handed
// out by D_k + late_k, where D_k is the sum of the modelled step durations
// and late_k ≥ 0 the step's measured lateness (Go timers never fire early),
// and reach
// the client deliv_k later (two goroutine wake-ups and a loopback write and
// read). A mean gap over n gaps, (t_last - t_first)/n, is then off from the
// model by at most (maxLate + deliverySlack)/n, where maxLate is the
// largest step lateness the server measured (Stats.StepLatenessMax) and
// deliverySlack an allowance for deliv (and, for TTFT, reading and
// tokenizing the request) on a loaded 2-core box under -race. When the
// engine fell so far behind that it restarted its step clock (a schedule
// reset), the model no longer applies: such runs skip. What the slack
// covers the engine does not time; a stall probe (timingChecks) measures
// how late this process runs its goroutines, and when it saw more than
// half the slack, a failed bound may be the machine's: the test skips
// instead of failing. The latency tests are not parallel tests, so they
// never run beside the throughput and overload tests, which are: those
// keep the CPU busy with dozens of clients, whose scheduling delays would
// eat the slack.
const deliverySlack = 10 * time.Millisecond

// lateBound returns the measured maximum step lateness, skipping the test
// when the machine was too loaded for the model to hold.
func lateBound(t *testing.T, s *sim.Server) time.Duration {
	t.Helper()
	// The engine logs a step's lateness after handing out its tokens: wait
	// for the step that handed out the last token the test read.
	waitFor(t, 10*time.Second, "the engine to log its last step's lateness", s.LatenessLogged)
	st := s.Stats()
	if st.ScheduleResets > 0 {
		t.Skipf("the engine fell over 250 ms behind (machine overloaded; max step lateness %v): the timing model does not apply", st.StepLatenessMax)
	}
	return st.StepLatenessMax
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// TestLowLoadLatency: one request alone. TTFT is one step that prefills the
// whole prompt; ITL is the single-sequence decode step.
func TestLowLoadLatency(t *testing.T) {
	cfg := testConfig()
	cfg.StepBase = 8 * time.Millisecond
	cfg.StepPerSeq = 500 * time.Microsecond
	cfg.StepPerKVToken = 2 * time.Microsecond
	cfg.PrefillRate = 100000
	r := start(t, cfg)
	chk := newTimingChecks(t, deliverySlack/2)
	const prompt, outTokens = 1000, 40
	res := post(context.Background(), newClient(), r.URL()+"/completions", completionBody(words(prompt, "p"), outTokens))
	out := parseStream(t, res)
	if len(out.times) != outTokens {
		t.Fatalf("%d chunks, want %d", len(out.times), outTokens)
	}
	late := lateBound(t, r.Server())
	// Prefill step: base + 1 sequence + 1000 KV tokens + 1000 tokens at 100k/s.
	wantTTFT := cfg.StepBase + cfg.StepPerSeq + prompt*cfg.StepPerKVToken + 10*time.Millisecond
	// Decode step j (1..39) ends with context 1000 + 1 + j tokens.
	var decode time.Duration
	for j := 1; j < outTokens; j++ {
		decode += cfg.StepBase + cfg.StepPerSeq + time.Duration(prompt+1+j)*cfg.StepPerKVToken
	}
	wantITL := decode / (outTokens - 1)
	ttft := out.times[0].Sub(res.sent)
	itl := out.times[len(out.times)-1].Sub(out.times[0]) / (outTokens - 1)
	t.Logf("TTFT %.2f ms (model %.2f), mean ITL %.3f ms (model %.3f), max step lateness %v, stall probe %v", ms(ttft), ms(wantTTFT), ms(itl), ms(wantITL), late, chk.probe.maxLate())
	// Timers never fire early: the lower bound is exact.
	if ttft < wantTTFT {
		t.Errorf("TTFT %v, shorter than the model's %v", ttft, wantTTFT)
	}
	if ttft > wantTTFT+late+deliverySlack {
		chk.errorf("TTFT %v, want at most %v + lateness %v + slack %v", ttft, wantTTFT, late, deliverySlack)
	}
	if tol := (late + deliverySlack) / (outTokens - 1); (itl - wantITL).Abs() > tol {
		chk.errorf("mean ITL %v, want %v ± %v", itl, wantITL, tol)
	}
	chk.report()
}

// TestITLFollowsStepModel: N sequences decoding together; each step lasts
// StepBase + N·StepPerSeq, and so does each chunk gap. With TokensPerChunk
// k, a chunk gap is still one step but TPOT is a k-th of it.
func TestITLFollowsStepModel(t *testing.T) {
	tests := []struct {
		n, k, outTokens int
		base            time.Duration
	}{
		{n: 1, k: 1, outTokens: 80, base: 4 * time.Millisecond},
		{n: 4, k: 1, outTokens: 80, base: 4 * time.Millisecond},
		{n: 12, k: 1, outTokens: 80, base: 4 * time.Millisecond},
		{n: 2, k: 3, outTokens: 121, base: 4 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("N=%d,k=%d", tt.n, tt.k), func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.StepBase = tt.base
			cfg.StepPerSeq = time.Millisecond
			cfg.TokensPerChunk = tt.k
			r := start(t, cfg)
			chk := newTimingChecks(t, deliverySlack/2)
			client := newClient()
			outs := make([]output, tt.n)
			sent := make([]time.Time, tt.n)
			var wg sync.WaitGroup
			for i := range tt.n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res := post(context.Background(), client, r.URL()+"/completions", completionBody("x y", tt.outTokens))
					outs[i], sent[i] = parseStream(t, res), res.sent
				}()
			}
			wg.Wait()
			late := lateBound(t, r.Server())
			step := cfg.StepBase + time.Duration(tt.n)*cfg.StepPerSeq
			chunks := 1 + (tt.outTokens-1+tt.k-1)/tt.k
			// Gaps from chunk lo to hi: the requests start within a few
			// steps of each other, so in this window all N decode together.
			lo, hi := 8, chunks-8
			var sumITL, sumTPOT time.Duration
			for i, o := range outs {
				if len(o.times) != chunks || len(strings.Fields(o.text)) != tt.outTokens {
					t.Fatalf("stream %d: %d chunks, %d tokens; want %d, %d", i, len(o.times), len(strings.Fields(o.text)), chunks, tt.outTokens)
				}
				sumITL += o.times[hi].Sub(o.times[lo]) / time.Duration(hi-lo)
				sumTPOT += o.times[chunks-1].Sub(o.times[0]) / time.Duration(tt.outTokens-1)
			}
			itl := sumITL / time.Duration(tt.n)
			tpot := sumTPOT / time.Duration(tt.n)
			wantTPOT := step * time.Duration(chunks-1) / time.Duration(tt.outTokens-1)
			t.Logf("mean ITL %.3f ms (model %.3f), TPOT %.3f ms (model %.3f), max lateness %v, stall probe %v", ms(itl), ms(step), ms(tpot), ms(wantTPOT), late, chk.probe.maxLate())
			if tol := (late + deliverySlack) / time.Duration(hi-lo); (itl - step).Abs() > tol {
				chk.errorf("mean ITL %v, want %v ± %v", itl, step, tol)
			}
			// TPOT spans the whole stream, including the steps at either
			// end where not all N had joined yet or some had left: N-1
			// steps each way at most, each StepPerSeq·(N-1) shorter.
			edge := 2 * time.Duration(tt.n-1) * time.Duration(tt.n-1) * cfg.StepPerSeq
			if tol := (late + deliverySlack + edge) / time.Duration(tt.outTokens-1); (tpot - wantTPOT).Abs() > tol {
				chk.errorf("TPOT %v, want %v ± %v", tpot, wantTPOT, tol)
			}
			chk.report()
		})
	}
}

// TestThroughputPlateau: a closed loop that keeps the queue non-empty
// reaches TheoreticalPeakOutput. The formula agrees with the engine run on
// a virtual clock within 1% (TestTheoryMatchesVirtualEngine checks this
// configuration); in real time, the tokens credited in a window of length W
// can be off by the tokens of one step plus the lateness at each edge:
// 2·B·k·(1 + maxLate/minStep) tokens. Faster than that is a defect
// whatever the machine; slower also when the clients could not keep the
// queue filled, which takes a stall of about one request lifetime (the
// queue holds one batch, ~220 ms of output): the checks skip a shortfall
// on a machine that stalled goroutines for more than 50 ms.
func TestThroughputPlateau(t *testing.T) {
	t.Parallel()
	cfg := sim.PlateauConfig()
	r := start(t, cfg)
	srv := r.Server()
	chk := newTimingChecks(t, 50*time.Millisecond)
	client := newClient()
	theory := cfg.TheoreticalPeakOutput(sim.PlateauIn, sim.PlateauOut)
	body := fmt.Sprintf(`{"prompt":%q,"max_tokens":%d}`, words(sim.PlateauIn, "q"), sim.PlateauOut)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Twice as many clients as slots, joining spread over one request
	// lifetime so that they do not run in lock-step.
	clients := 2 * cfg.MaxNumSeqs
	life := time.Duration(float64(sim.PlateauOut) / theory * float64(cfg.MaxNumSeqs) * float64(time.Second))
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(time.Duration(i) * life / time.Duration(cfg.MaxNumSeqs)):
			case <-ctx.Done():
				return
			}
			for ctx.Err() == nil {
				post(ctx, client, r.URL()+"/completions", body)
			}
		}()
	}
	ramp := time.Duration(clients)*life/time.Duration(cfg.MaxNumSeqs) + life
	time.Sleep(ramp)
	const window = 2 * time.Second
	// Clock readings bracket each Stats read (the test goroutine may be
	// descheduled around it), so the window the counted tokens were
	// generated in lasts between inner and outer.
	a0 := time.Now()
	s0 := srv.Stats()
	b0 := time.Now()
	time.Sleep(window)
	a1 := time.Now()
	s1 := srv.Stats()
	b1 := time.Now()
	cancel()
	wg.Wait()
	late := lateBound(t, srv)
	tokens := float64(s1.GeneratedTokens - s0.GeneratedTokens)
	inner, outer := a1.Sub(b0), b1.Sub(a0)
	fast, slow := tokens/inner.Seconds(), tokens/outer.Seconds() // the rate lies between
	edge := 2 * float64(cfg.MaxNumSeqs*cfg.TokensPerChunk) * (1 + float64(late)/float64(cfg.StepBase))
	tol := 0.01 + edge/(theory*inner.Seconds())
	t.Logf("plateau %.1f to %.1f tok/s, theory %.1f, tolerance %.1f%%, max lateness %v, waiting %d, stall probe %v",
		slow, fast, theory, 100*tol, late, s1.Waiting, chk.probe.maxLate())
	if slow > theory*(1+tol) {
		t.Errorf("plateau at least %.1f tok/s, theory %.1f + %.1f%%", slow, theory, 100*tol)
	}
	if fast < theory*(1-tol) {
		chk.errorf("plateau at most %.1f tok/s, theory %.1f - %.1f%%", fast, theory, 100*tol)
	}
	if s1.Running != cfg.MaxNumSeqs && s0.Running != cfg.MaxNumSeqs {
		chk.errorf("batch not full at saturation: %d then %d running", s0.Running, s1.Running)
	}
	chk.report()
}

// TestOverCapacity: offered twice the plateau, the queue grows by
// (λ-μ)·Δt and the time to first token grows with it, by the queue
// length over μ. The assertions ask for half of each: a margin of about
// 100 ms of arrivals for the queue (requests still on their way to the
// server when it is sampled are not in it) and 300 ms for TTFT, which a
// machine that stalls goroutines for more than 25 ms may eat into.
func TestOverCapacity(t *testing.T) {
	t.Parallel()
	cfg := sim.PlateauConfig()
	r := start(t, cfg)
	srv := r.Server()
	chk := newTimingChecks(t, 25*time.Millisecond)
	client := newClient()
	mu := cfg.TheoreticalPeakOutput(sim.PlateauIn, sim.PlateauOut) / sim.PlateauOut // req/s
	lambda := 2 * mu
	const offered = 600 * time.Millisecond
	n := int(lambda * offered.Seconds())
	gap := time.Duration(float64(time.Second) / lambda)
	ttft := make([]time.Duration, n)
	var wg sync.WaitGroup
	var waiting []int
	start := time.Now()
	next := start
	sample := offered / 3
	for i := range n {
		time.Sleep(time.Until(next))
		if time.Since(start) >= sample*time.Duration(len(waiting)+1) {
			waiting = append(waiting, srv.Stats().Waiting)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := post(context.Background(), client, r.URL()+"/completions", completionBody(words(sim.PlateauIn, "o"), sim.PlateauOut))
			out := parseStream(t, res)
			if len(out.times) > 0 {
				ttft[i] = out.times[0].Sub(res.sent)
			}
		}()
		next = next.Add(gap)
	}
	waiting = append(waiting, srv.Stats().Waiting)
	wg.Wait()
	lateBound(t, srv)
	growth := (lambda - mu) * (offered.Seconds() - sample.Seconds()) // queue growth, first sample to last
	t.Logf("λ %.1f req/s, μ %.1f req/s, waiting samples %v, theory growth %.1f, stall probe %v", lambda, mu, waiting, growth, chk.probe.maxLate())
	if len(waiting) < 2 || float64(waiting[len(waiting)-1]-waiting[0]) < growth/2 {
		chk.errorf("waiting queue %v did not grow by half of %.1f", waiting, growth)
	}
	k := max(3, n/10)
	mean := func(d []time.Duration) time.Duration {
		var s time.Duration
		for _, x := range d {
			if x == 0 {
				t.Fatalf("a request got no token")
			}
			s += x
		}
		return s / time.Duration(len(d))
	}
	first, last := mean(ttft[:k]), mean(ttft[n-k:])
	// The last requests queue behind (λ-μ)·T requests served at μ.
	wantRise := time.Duration((lambda - mu) * offered.Seconds() / mu * float64(time.Second))
	t.Logf("mean TTFT of the first %d: %v, of the last %d: %v (theory rise %v)", k, first, k, last, wantRise)
	if last-first < wantRise/2 {
		chk.errorf("TTFT rose by %v, want at least half of %v", last-first, wantRise)
	}
	chk.report()
}

// TestKVBudgetLimitsConcurrency: prompts of 100 tokens, 50 output tokens,
// KV 400 tokens. Reserving prompt + max tokens (150) fits 2 sequences;
// vLLM's optimistic admission (prompt + 1 = 101) fits 3, which then outgrow
// the budget (3 × 150 > 400) and force preemptions. Either way every
// request completes with all its tokens, streamed once.
func TestKVBudgetLimitsConcurrency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		preempt     bool
		wantRunning int
	}{
		{false, 2},
		{true, 3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("preempt=%v", tt.preempt), func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.MaxModelLen = 256
			cfg.KVCacheTokens = 400
			cfg.Preempt = tt.preempt
			r := start(t, cfg)
			client := newClient()
			const reqs = 6
			outs := make([]output, reqs)
			var wg sync.WaitGroup
			for i := range reqs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs[i] = parseStream(t, post(context.Background(), client, r.URL()+"/completions", completionBody(words(100, fmt.Sprint(i)), 50)))
				}()
			}
			wg.Wait()
			s := r.Server().Stats()
			t.Logf("peak running %d, peak KV %d/%d, preemptions %d", s.PeakRunning, s.PeakKVUsedTokens, s.KVCapacityTokens, s.Preemptions)
			if s.PeakRunning != tt.wantRunning {
				t.Errorf("peak running %d, want %d", s.PeakRunning, tt.wantRunning)
			}
			if s.PeakKVUsedTokens > cfg.KVCacheTokens {
				t.Errorf("peak KV %d exceeds the budget %d", s.PeakKVUsedTokens, cfg.KVCacheTokens)
			}
			if (s.Preemptions > 0) != tt.preempt {
				t.Errorf("%d preemptions with preempt=%v", s.Preemptions, tt.preempt)
			}
			// Preempted sequences resume where they were: no token is
			// streamed twice or skipped. Reference: a lone request's text.
			ref := parseStream(t, post(context.Background(), client, r.URL()+"/completions", completionBody("ref", 50)))
			if len(strings.Fields(ref.text)) != 50 {
				t.Fatalf("reference text %q", ref.text)
			}
			for i, o := range outs {
				if o.text != ref.text || o.finish != "length" || !o.done || len(o.times) != 50 {
					t.Errorf("request %d: %d chunks %q, finish %q, done %v; want the 50-token reference", i, len(o.times), o.text, o.finish, o.done)
				}
			}
		})
	}
}

// TestPrefixCacheCutsTTFT: the same 2000-token prompt twice. The second
// time 124 blocks of 16 (1984 tokens: whole blocks, at most the prompt
// minus one token) come from the cache, so its prefill step is
// 1984/PrefillRate = 19.8 ms shorter; /metrics counts queries and hits in
// tokens.
func TestPrefixCacheCutsTTFT(t *testing.T) {
	cfg := testConfig()
	cfg.StepBase = 5 * time.Millisecond
	cfg.PrefillRate = 100000
	cfg.BlockSize = 16
	cfg.PrefixCacheBlocks = 1000
	cfg.MaxModelLen = 4096
	r := start(t, cfg)
	chk := newTimingChecks(t, deliverySlack/2)
	client := newClient()
	prompt := words(2000, "shared")
	var ttft [2]time.Duration
	for i := range ttft {
		res := post(context.Background(), client, r.URL()+"/completions", completionBody(prompt, 2))
		out := parseStream(t, res)
		if len(out.times) == 0 {
			t.Fatalf("request %d: no tokens", i)
		}
		ttft[i] = out.times[0].Sub(res.sent)
	}
	late := lateBound(t, r.Server())
	saving := time.Duration(1984 / cfg.PrefillRate * float64(time.Second))
	t.Logf("TTFT cold %v, warm %v, model saving %v, stall probe %v", ttft[0], ttft[1], saving, chk.probe.maxLate())
	if ttft[0]-ttft[1] < saving-late-deliverySlack {
		chk.errorf("prefix cache cut TTFT by %v, want %v (less lateness %v and slack %v)", ttft[0]-ttft[1], saving, late, deliverySlack)
	}
	_, _, body := getMetrics(t, r)
	label := `{model_name="` + cfg.ModelName + `"}`
	if q := metricValue(t, body, "vllm:prefix_cache_queries_total"+label); q != 4000 {
		t.Errorf("prefix_cache_queries_total = %v, want 4000", q)
	}
	if h := metricValue(t, body, "vllm:prefix_cache_hits_total"+label); h != 1984 {
		t.Errorf("prefix_cache_hits_total = %v, want 1984", h)
	}
	if s := r.Server().Stats(); s.PrefixCacheHits != 1984 || s.PrefixCacheQueries != 4000 {
		t.Errorf("Stats prefix %d/%d, want 1984/4000", s.PrefixCacheHits, s.PrefixCacheQueries)
	}
	chk.report()
}

func getMetrics(t *testing.T, r *sim.Running) (int, string, string) {
	t.Helper()
	resp, err := newClient().Get("http://" + r.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b.String()
}
