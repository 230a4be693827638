package virtual

import (
	"context"
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// EngineRunner serves tiers on the embedded deployment's continuous-batching engine run on the
// virtual clock (sim.SimulateEngine: the same scheduling, chunked prefill, KV admission,
// preemption and prefix cache as the HTTP server's, without HTTP and without waiting). Each
// tier's requests are Workload's for the tier (TierSet with the tier's seed, its cache policy
// applied with a nonce derived from the seed), counted as the HTTP server counts them, and
// their lengths at EOS drawn by Config.OutputTarget. A request's record has planned =
// dispatched = slot = sent (a perfect, uncapped client), a chunk at the end of every step that
// gave it tokens, and the server's usage; a prompt too long for the context is an HTTP 400.
// Every tier starts from an idle engine with an empty prefix cache.
type EngineRunner struct {
	Config   sim.Config
	Workload *workloads.Source
	// Chat sends the requests to chat (messages, counted with the template's overhead), not
	// completions; IgnoreEOS sends ignore_eos.
	Chat, IgnoreEOS bool
	Usage
}

var _ sweep.Runner = (*EngineRunner)(nil)

// RunTier implements sweep.Runner on the virtual clock.
func (r *EngineRunner) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	id := p.Tier
	id.StartWall = time.Unix(0, 0).UTC()
	if r.Workload == nil {
		return id, fmt.Errorf("virtual engine: no workload")
	}
	set, _, err := r.Workload.TierSet(len(p.Offsets), p.Tier.Seed)
	if err != nil {
		return id, fmt.Errorf("virtual engine: %w", err)
	}
	fp := set.Fingerprint
	if set, err = r.Workload.ApplyCache(set, fmt.Sprintf("[run:%016x]", uint64(p.Tier.Seed))); err != nil {
		return id, fmt.Errorf("virtual engine: %w", err)
	}
	id, err = r.RunRequests(ctx, p, set.Requests, sink, stop)
	id.WorkloadFingerprint = fp
	return id, err
}

// RunRequests serves the plan's arrivals with the given requests (one per arrival, in order:
// a set its cache policy was applied to), as RunTier serves the workload's.
func (r *EngineRunner) RunRequests(ctx context.Context, p sweep.Plan, set []workloads.Request, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	id := p.Tier
	id.StartWall = time.Unix(0, 0).UTC()
	if err := r.Config.Validate(); err != nil {
		return id, err
	}
	if len(set) < len(p.Offsets) {
		return id, fmt.Errorf("virtual engine: %d requests for %d arrivals", len(set), len(p.Offsets))
	}
	if workloads.Sessions(set) != nil {
		return id, fmt.Errorf("virtual engine: a workload of sessions is not supported")
	}
	reqs, rejected := r.EngineRequests(p.Tier, p.Offsets, set)
	return r.RunEngineRequests(ctx, p, reqs, rejected, sink, stop)
}

// RunEngineRequests serves requests already made for the engine (EngineRequests, their
// arrivals the plan's), with the records of those refused at once, as RunTier serves a tier.
func (r *EngineRunner) RunEngineRequests(ctx context.Context, p sweep.Plan, reqs []sim.EngineRequest, rejected []records.Record, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	id := p.Tier
	id.StartWall = time.Unix(0, 0).UTC()
	if err := r.Config.Validate(); err != nil {
		return id, err
	}
	emitted, last := 0, time.Duration(0)
	stopped, stopAt := false, time.Duration(0)
	var sinkErr error
	write := func(rec records.Record) {
		emitted++
		last = max(last, rec.End)
		if sinkErr == nil {
			sinkErr = sink.Write(&rec)
		}
	}
	// A rejected request ends at its arrival, before any served one that arrived with or after
	// it ends: it is written when the engine's results pass its arrival.
	pending := rejected
	flush := func(upTo time.Duration) {
		for len(pending) > 0 && pending[0].Planned <= upTo && (!stopped || pending[0].Planned <= stopAt) {
			write(pending[0])
			pending = pending[1:]
		}
	}
	err := sim.SimulateEngine(r.Config, reqs, func(res sim.EngineResult) bool {
		flush(res.End())
		q := reqs[res.Index]
		rec := engineRecord(id.Tier, res, q, r.Config.PrefixCacheBlocks > 0)
		if q.Requested > 0 && q.Requested != rec.InputTokens {
			rec.RequestedInputTokens = q.Requested // the request set's own count, as the HTTP client keeps it
		}
		write(rec)
		if stopped {
			return false
		}
		select {
		case <-stop:
			stopped, stopAt = true, res.End()
			return true
		default:
			return ctx.Err() != nil
		}
	})
	if err != nil {
		return id, err
	}
	flush(1<<62 - 1)
	if sinkErr != nil {
		return id, sinkErr
	}
	id.End = tierEnd(ctx, id, emitted, p.ArrivalsEnd, stopped, stopAt)
	r.add(last)
	return id, nil
}

// EngineRequests makes the requests of tier (arriving at offs) for the engine, in arrival order
// (records' ids are the arrivals' indexes), and the records of those the server refuses at once
// (a prompt that leaves no room for output).
func (r *EngineRunner) EngineRequests(tier records.Tier, offs []time.Duration, set []workloads.Request) ([]sim.EngineRequest, []records.Record) {
	cfg := r.Config
	block := 0
	if cfg.PrefixCacheBlocks > 0 {
		block = cfg.BlockSize
	}
	out := make([]sim.EngineRequest, 0, len(offs))
	var rejected []records.Record
	var msgs []sim.ChatMessage
	for i, at := range offs {
		q := &set[i]
		var n int
		var blocks []uint64
		if r.Chat {
			msgs = msgs[:0]
			if len(q.Messages) == 0 {
				msgs = append(msgs, sim.ChatMessage{Role: "user", Content: q.Text()})
			}
			for _, m := range q.Messages {
				msgs = append(msgs, sim.ChatMessage{Role: m.Role, Content: m.Content})
			}
			n, blocks = sim.ChatTokens(msgs, block)
		} else if block == 0 && q.Generated() {
			n = q.InputTokens // a generated prompt's words, which is what the server counts (TestEngineRunnerServesATier)
		} else {
			n, blocks = sim.PromptTokens(q.Text(), block)
		}
		if n >= cfg.MaxModelLen || n == 0 {
			rec := records.NewRecord(tier.Tier, i, at)
			rec.Dispatched, rec.Slot, rec.Sent, rec.End = at, at, at, at
			rec.Outcome, rec.HTTPStatus, rec.Error = records.HTTPError, 400, "HTTP 400: the prompt leaves no room for output in the context"
			rejected = append(rejected, rec)
			continue
		}
		maxOut := cfg.DefaultMaxTokens
		if q.MaxTokens > 0 {
			maxOut = q.MaxTokens
		}
		maxOut = min(maxOut, cfg.MaxModelLen-n)
		target, _ := cfg.OutputTarget(uint64(tier.Seed)*1_000_003+uint64(i), maxOut, r.IgnoreEOS)
		out = append(out, sim.EngineRequest{Arrival: at, PromptLen: n, Blocks: blocks, MaxOut: maxOut, Target: target, ID: i, Requested: q.InputTokens})
	}
	return out, rejected
}

// engineRecord is the record of a request the virtual engine served.
func engineRecord(tier int, res sim.EngineResult, req sim.EngineRequest, cached bool) records.Record {
	rec := records.NewRecord(tier, req.ID, res.Arrival)
	rec.Dispatched, rec.Slot, rec.Sent = res.Arrival, res.Arrival, res.Arrival
	rec.FirstEvent, rec.First, rec.Last, rec.End = res.First(), res.First(), res.End(), res.End()
	rec.Chunks = len(res.Chunks)
	rec.OutputTokens, rec.OutputTokensSource = res.Tokens, records.SourceUsage
	rec.InputTokens, rec.InputTokensSource = req.PromptLen, records.SourceUsage
	if cached {
		rec.CachedTokens, rec.CachedTokensSource = res.Cached, records.SourceUsage
	}
	rec.FinishReason = "length"
	if res.Stopped {
		rec.FinishReason = "stop"
	}
	if len(res.Chunks) > 1 {
		rec.ITL = make([]time.Duration, len(res.Chunks)-1)
		for k := 1; k < len(res.Chunks); k++ {
			rec.ITL[k-1] = res.Chunks[k] - res.Chunks[k-1]
		}
	}
	return rec
}
