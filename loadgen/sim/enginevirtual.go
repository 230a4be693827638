package sim

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// OutputTarget is the number of tokens the deployment generates for its request number idx
// (from 0, in the order it received them), which may produce maxOut: fewer when it ends at EOS
// first (stop), unless ignoreEOS. The length at EOS is EOSLengthMean's log-normal when set,
// else EOSProbability's geometric (P(n) = (1−q)^(n−1)·q), else none: maxOut. The HTTP server
// and a virtual run of the same Config draw the same lengths for the same idx.
func (c Config) OutputTarget(idx uint64, maxOut int, ignoreEOS bool) (target int, stop bool) {
	if ignoreEOS {
		return maxOut, false
	}
	u := unit(mix(uint64(c.Seed), idx, saltEOS))
	var g float64
	switch q := c.EOSProbability; {
	case c.EOSLengthMean > 0:
		sigma2 := math.Log1p(c.EOSLengthCV * c.EOSLengthCV)
		mu := math.Log(c.EOSLengthMean) - sigma2/2
		z := math.Sqrt2 * math.Erfinv(2*u-1)
		g = math.Max(1, math.Round(math.Exp(mu+math.Sqrt(sigma2)*z)))
	case q >= 1:
		g = 1
	case q > 0:
		g = 1 + math.Floor(math.Log1p(-u)/math.Log1p(-q))
	default:
		return maxOut, false
	}
	if g > float64(maxOut) || math.IsNaN(g) {
		return maxOut, false
	}
	return int(g), true
}

// PromptTokens counts a completions prompt as the HTTP server does (a token per
// whitespace-separated word) and, with blockSize > 0, hashes its full blocks for the prefix
// cache.
func PromptTokens(prompt string, blockSize int) (int, []uint64) {
	t := newTokenizer(blockSize)
	t.text(prompt)
	return t.n, t.blocks
}

// ChatMessage is a chat message as ChatTokens counts it.
type ChatMessage struct{ Role, Content string }

// ChatTokens counts chat messages as the HTTP server does (their words and
// MessageOverheadTokens each) and, with blockSize > 0, hashes the full blocks.
func ChatTokens(msgs []ChatMessage, blockSize int) (int, []uint64) {
	t := newTokenizer(blockSize)
	for _, m := range msgs {
		t.messageStart(m.Role)
		t.text(m.Content)
		t.messageEnd()
	}
	return t.n, t.blocks
}

// EngineRequest is one request of SimulateEngine, as the HTTP server makes it of a request it
// received: its prompt's tokens (PromptTokens, ChatTokens) and block hashes, the output it may
// have (max_tokens capped by the context) and the output it will have (OutputTarget).
type EngineRequest struct {
	Arrival   time.Duration // from T0
	PromptLen int
	Blocks    []uint64 // chained hashes of the prompt's full blocks (the prefix cache's keys)
	MaxOut    int
	Target    int // tokens to generate, in [1, MaxOut]
	ID        int // the caller's name for it; SimulateEngine ignores it
	Requested int // the caller's own count of the prompt; SimulateEngine ignores it
}

// EngineResult is the outcome of one request of SimulateEngine, in offsets from T0: when each
// of its chunks of tokens was handed out (a step's end), and how many tokens it got.
type EngineResult struct {
	Index   int // in the requests
	Arrival time.Duration
	// Chunks are the ends of the steps that gave the request tokens, in order: the first is its
	// first token, the last its end. ChunkTokens are the tokens each gave.
	Chunks      []time.Duration
	ChunkTokens []int
	Tokens      int
	Cached      int // prompt tokens found in the prefix cache at its first admission
	Stopped     bool
}

// First is when the first token was handed out; End when the last was.
func (r EngineResult) First() time.Duration { return r.Chunks[0] }

// End is when the request's last token was handed out.
func (r EngineResult) End() time.Duration { return r.Chunks[len(r.Chunks)-1] }

// SimulateEngine runs the continuous-batching engine of cfg (the model the HTTP server runs on
// the real clock: the same scheduling, admission, preemption, prefix cache and step times) on
// a virtual clock, for requests arriving at the given offsets from T0 (non-decreasing). Steps
// follow each other without gaps while there is work, and a request that arrives during a step
// joins at the next step boundary, as on the real clock when the engine keeps time. Faults,
// reasoning and tool calls, which change what is streamed and not how the engine works, are
// not modelled here.
//
// emit receives each request's result when its last token is handed out, in order of that
// time. When emit returns true the run stops admitting: requests arriving after the time of
// the result just emitted are not part of the run and are never emitted, while those that
// arrived by then run to completion and are all emitted. The Chunks and ChunkTokens slices
// are emit's to keep.
//
// It returns an error, before emitting anything, when cfg or a request is invalid or the
// arrivals decrease.
func SimulateEngine(cfg Config, reqs []EngineRequest, emit func(EngineResult) bool) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("sim engine config: %w", err)
	}
	for i, r := range reqs {
		switch {
		case i > 0 && r.Arrival < reqs[i-1].Arrival:
			return fmt.Errorf("sim engine: arrivals must not decrease: request %d at %v is before request %d at %v", i, r.Arrival, i-1, reqs[i-1].Arrival)
		case r.PromptLen < 1 || r.PromptLen >= cfg.MaxModelLen:
			return fmt.Errorf("sim engine: request %d: a prompt of %d tokens, want 1 to %d", i, r.PromptLen, cfg.MaxModelLen-1)
		case r.MaxOut < 1 || r.PromptLen+r.MaxOut > cfg.MaxModelLen:
			return fmt.Errorf("sim engine: request %d: max output %d, want 1 to %d", i, r.MaxOut, cfg.MaxModelLen-r.PromptLen)
		case r.Target < 1 || r.Target > r.MaxOut:
			return fmt.Errorf("sim engine: request %d: target %d outside [1, %d]", i, r.Target, r.MaxOut)
		}
	}
	e := newEngine(cfg)
	epoch := time.Unix(0, 0)
	type active struct {
		res       EngineResult
		generated int
	}
	live := map[*sequence]*active{}
	n := len(reqs)
	stopped := false
	now := time.Duration(0)
	next := 0
	record := func(s *sequence, a *active) {
		if got := s.generated - a.generated; got > 0 {
			a.res.Chunks = append(a.res.Chunks, now)
			a.res.ChunkTokens = append(a.res.ChunkTokens, got)
			a.generated = s.generated
		}
	}
	for {
		for next < n && reqs[next].Arrival <= now {
			r := reqs[next]
			s := &sequence{promptLen: r.PromptLen, blocks: r.Blocks, maxOut: r.MaxOut, target: r.Target, arrival: epoch.Add(r.Arrival)}
			live[s] = &active{res: EngineResult{Index: next, Arrival: r.Arrival}}
			e.waiting.pushBack(s)
			next++
		}
		if len(e.running) == 0 && e.waiting.len() == 0 {
			if next >= n {
				return nil
			}
			now = reqs[next].Arrival
			continue
		}
		now += e.plan()
		e.apply(epoch.Add(now))
		for _, s := range e.progressed {
			record(s, live[s])
		}
		for _, s := range e.finished {
			a := live[s]
			record(s, a)
			delete(live, s)
			a.res.Tokens = s.generated
			a.res.Cached = int(s.cached.Load())
			a.res.Stopped = s.target < s.maxOut
			if emit(a.res) && !stopped {
				stopped = true
				// Arrivals are sorted: those after now are not part of the run.
				n = next + sort.Search(n-next, func(j int) bool { return reqs[next+j].Arrival > now })
			}
		}
	}
}
