package sim

import (
	"math"
	"testing"
	"time"
)

// newSeq makes a sequence of promptLen prompt tokens and maxOut output
// tokens. Prompts with equal tags are equal (their block hashes chain from
// the tag); different tags share no prefix.
func newSeq(cfg Config, tag, promptLen, maxOut int) *sequence {
	s := &sequence{promptLen: promptLen, maxOut: maxOut, target: maxOut, notify: make(chan struct{}, 1)}
	if cfg.PrefixCacheBlocks > 0 {
		s.blocks = make([]uint64, promptLen/cfg.BlockSize)
		for i := range s.blocks {
			s.blocks[i] = mix(uint64(tag), uint64(i), 99)
		}
	}
	return s
}

// virtualRun drives the engine's plan/apply on a virtual clock with a
// closed loop of clients requests: they join evenly spread over one request
// lifetime (so that, as with independent real clients, completions are
// staggered rather than in lock-step waves), then each finished request is
// replaced at once. It returns the output throughput (tokens per virtual
// second) over measure steps taken after the ramp and warm more steps.
func virtualRun(cfg Config, inputLen, outputLen, clients, warm, measure int) (float64, *engine) {
	e := newEngine(cfg)
	life := 1 + (outputLen-1+cfg.TokensPerChunk-1)/cfg.TokensPerChunk // steps, roughly
	spacing := float64(life) / float64(min(clients, cfg.MaxNumSeqs))
	tag := 0
	var now time.Time
	var elapsed time.Duration
	var tokens int64
	ramp := int(spacing*float64(clients)) + 1
	for i := 0; i < ramp+warm+measure; i++ {
		for tag < clients && float64(tag)*spacing <= float64(i) {
			e.waiting.pushBack(newSeq(cfg, tag, inputLen, outputLen))
			tag++
		}
		if i == ramp+warm {
			elapsed, tokens = 0, e.genTokens.Load()
		}
		d := e.plan()
		elapsed += d
		now = now.Add(d)
		e.apply(now)
		for range e.finished {
			e.waiting.pushBack(newSeq(cfg, tag, inputLen, outputLen))
			tag++
		}
	}
	return float64(e.genTokens.Load()-tokens) / elapsed.Seconds(), e
}

// TestTheoryMatchesVirtualEngine checks TheoreticalPeakOutput against the
// engine itself, run on a virtual clock (no timers, so no noise): the
// plateau of a closed loop that always has requests waiting. The formula is
// an approximation (see its comment); the 1% bound is what the package
// documentation promises for these profiles and workloads.
func TestTheoryMatchesVirtualEngine(t *testing.T) {
	tests := []struct {
		profile string
		in, out int
	}{
		{ProfileLatency, 1024, 128},
		{ProfileLatency, 2048, 64},
		{ProfileLatency, 100, 1000},
		{ProfileMedium, 1024, 128},
		{ProfileMedium, 2048, 64},      // KV binds: 63 sequences, with preemptions
		{ProfileDefault, 1024, 128},    // 8 tokens a step
		{ProfileThroughput, 1024, 128}, // KV binds too
		{ProfileThroughput, 2048, 64},
	}
	for _, tt := range tests {
		cfg, err := Profile(tt.profile)
		if err != nil {
			t.Fatal(err)
		}
		theory := cfg.TheoreticalPeakOutput(tt.in, tt.out)
		// A queue that never empties: a quarter more clients than slots.
		got, _ := virtualRun(cfg, tt.in, tt.out, cfg.MaxNumSeqs+cfg.MaxNumSeqs/4+1, 300, 1500)
		t.Logf("%s %d/%d: virtual %.1f tok/s, theory %.1f, ratio %.4f", tt.profile, tt.in, tt.out, got, theory, got/theory)
		if r := got / theory; math.Abs(r-1) > 0.01 {
			t.Errorf("%s %d/%d: virtual engine %.1f tok/s, theory %.1f (ratio %.4f)", tt.profile, tt.in, tt.out, got, theory, r)
		}
	}
	// The configuration of the real-time plateau test.
	cfg := plateauConfig()
	theory := cfg.TheoreticalPeakOutput(plateauIn, plateauOut)
	got, _ := virtualRun(cfg, plateauIn, plateauOut, 2*cfg.MaxNumSeqs, 100, 2000)
	if r := got / theory; math.Abs(r-1) > 0.01 {
		t.Errorf("plateau test config: virtual engine %.1f tok/s, theory %.1f (ratio %.4f)", got, theory, r)
	}
}

// TestEngineInvariants runs a KV-starved engine with and without preemption
// and checks, after every step, that the KV and sequence budgets hold and
// that the KV bookkeeping adds up; every request must end with exactly its
// tokens, in chunk-aligned steps.
func TestEngineInvariants(t *testing.T) {
	for _, preempt := range []bool{true, false} {
		cfg, _ := Profile(ProfileMedium)
		cfg.MaxModelLen = 400
		cfg.KVCacheTokens = 1000
		cfg.MaxNumSeqs = 8
		cfg.MaxBatchedTokens = 256
		cfg.Preempt = preempt
		cfg.TokensPerChunk = 3
		cfg.BlockSize = 16
		e := newEngine(cfg)
		var all []*sequence
		for i := 0; i < 40; i++ {
			s := newSeq(cfg, i%5, 150, 100) // five shared prompts
			all = append(all, s)
			e.waiting.pushBack(s)
		}
		var now time.Time
		for step := 0; e.waiting.len() > 0 || len(e.running) > 0; step++ {
			if step > 100000 {
				t.Fatalf("preempt=%v: engine did not finish", preempt)
			}
			before := map[*sequence]int{}
			for _, s := range e.running {
				before[s] = s.generated
			}
			now = now.Add(e.plan())
			if e.kvHeld > cfg.KVCacheTokens || len(e.running) > cfg.MaxNumSeqs {
				t.Fatalf("preempt=%v step %d: kv %d/%d, running %d/%d", preempt, step, e.kvHeld, cfg.KVCacheTokens, len(e.running), cfg.MaxNumSeqs)
			}
			sum := 0
			for _, s := range e.running {
				sum += s.held
				if s.held < s.promptLen+s.generated {
					t.Fatalf("step %d: sequence holds %d KV for context %d", step, s.held, s.promptLen+s.generated)
				}
			}
			if sum != e.kvHeld {
				t.Fatalf("step %d: kvHeld %d, sum of holds %d", step, e.kvHeld, sum)
			}
			e.apply(now)
			for s, g := range before {
				if s.generated != g && s.generated != chunkEnd(g, cfg.TokensPerChunk, s.target) {
					t.Fatalf("step %d: sequence went from %d to %d tokens, not one chunk", step, g, s.generated)
				}
			}
		}
		for i, s := range all {
			if g, st := s.load(); g != 100 || st != stateDone {
				t.Errorf("preempt=%v: request %d ended with %d tokens, state %d", preempt, i, g, st)
			}
		}
		if p := e.preemptions.Load(); (p > 0) != preempt {
			t.Errorf("preempt=%v: %d preemptions", preempt, p)
		}
		if q, h := e.prefixQueries.Load(), e.prefixHits.Load(); q != 40*150 || h == 0 || h%16 != 0 {
			t.Errorf("preempt=%v: prefix queries %d (want %d), hits %d (want > 0, whole blocks)", preempt, q, 40*150, h)
		}
	}
}

func TestPrefixCacheLRU(t *testing.T) {
	c := newPrefixCache(4)
	c.insert([]uint64{1, 2, 3})
	if n := c.lookup([]uint64{1, 2, 3, 4}); n != 3 {
		t.Fatalf("lookup = %d, want 3", n)
	}
	if n := c.lookup([]uint64{2, 3}); n != 2 {
		t.Fatalf("lookup of a suffix chain = %d, want 2 (hashes are looked up as given)", n)
	}
	// Order now, most recent first: 3, 2, 1. Touch 1, then insert two new:
	// evicts the two least recently used (2, then 3... after 4 fills).
	c.lookup([]uint64{1})
	c.insert([]uint64{10, 11})
	if c.len() != 4 {
		t.Fatalf("len = %d, want capacity 4", c.len())
	}
	for h, want := range map[uint64]bool{1: true, 10: true, 11: true, 3: true, 2: false} {
		if got := c.lookup([]uint64{h}) == 1; got != want {
			t.Errorf("block %d cached = %v, want %v", h, got, want)
		}
	}
	if n := c.lookup([]uint64{1, 2, 3}); n != 1 {
		t.Errorf("chain with an evicted middle block: lookup = %d, want 1", n)
	}
}

func TestDeque(t *testing.T) {
	var q deque
	seqs := make([]*sequence, 40)
	index := map[*sequence]int{}
	for i := range seqs {
		seqs[i] = &sequence{}
		index[seqs[i]] = i
	}
	for i := 10; i < 40; i++ {
		q.pushBack(seqs[i])
	}
	for i := 9; i >= 0; i-- {
		q.pushFront(seqs[i])
	}
	q.filter(func(s *sequence) bool { return index[s]%2 == 0 })
	if q.len() != 20 {
		t.Fatalf("len = %d, want 20", q.len())
	}
	for i := 0; i < 40; i += 2 {
		if s := q.popFront(); s != seqs[i] {
			t.Fatalf("popFront = sequence %d, want %d", index[s], i)
		}
	}
}

func TestChunkEnd(t *testing.T) {
	tests := []struct{ from, k, target, want int }{
		{0, 3, 10, 1},  // the first chunk is the first token alone
		{1, 3, 10, 4},  // then k tokens
		{7, 3, 10, 10}, // the last chunk is cut at the target
		{0, 1, 1, 1},   // a one-token answer
		{5, 1, 100, 6}, // k = 1: one token per chunk
	}
	for _, tt := range tests {
		if got := chunkEnd(tt.from, tt.k, tt.target); got != tt.want {
			t.Errorf("chunkEnd(%d,%d,%d) = %d, want %d", tt.from, tt.k, tt.target, got, tt.want)
		}
	}
}
