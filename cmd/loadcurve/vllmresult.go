package main

import (
	"context"
	"slices"
	"sync"

	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/sweep"
)

// perRequestTap keeps, as a run's records pass to its sink, what vLLM's result file holds per
// request: latencies and queue_times always, and with --save-detailed the other seven arrays.
type perRequestTap struct {
	sweep.Runner
	detailed bool
	mu       sync.Mutex
	rows     []tapRow
}

// tapRow is one request's entries of vLLM's arrays (seconds).
type tapRow struct {
	id, in, out          int
	ttft, latency, start float64
	queue                float64
	itl                  []float64
	err                  string
}

func (p *perRequestTap) RunTier(ctx context.Context, plan sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	return p.Runner.RunTier(ctx, plan, tapSink{p: p, sink: sink}, stop)
}

type tapSink struct {
	p    *perRequestTap
	sink sweep.Sink
}

func (s tapSink) Write(r *records.Record) error {
	s.p.add(r)
	if s.sink == nil {
		return nil
	}
	return s.sink.Write(r)
}

// add keeps r's entries. vLLM writes 0 for the times and output length of a failed request,
// and its error text; its queue time (waiting for the concurrency gate) and start time are
// kept for every request.
func (p *perRequestTap) add(r *records.Record) {
	row := tapRow{id: r.ID, in: r.InputTokens}
	if v, ok := r.ClientQueueTime(); ok {
		row.queue = v.Seconds()
	}
	if r.Sent != records.Unset {
		row.start = r.Sent.Seconds()
	}
	if r.Outcome == records.OK {
		row.out = r.OutputTokens
		if v, ok := r.TTFT(); ok {
			row.ttft = v.Seconds()
		}
		if v, ok := r.E2EL(); ok {
			row.latency = v.Seconds()
		}
		if p.detailed {
			row.itl = make([]float64, len(r.ITL))
			for i, g := range r.ITL {
				row.itl[i] = g.Seconds()
			}
		}
	} else if p.detailed {
		row.err = r.Error
		if row.err == "" {
			row.err = r.Outcome.String()
		}
	}
	p.mu.Lock()
	p.rows = append(p.rows, row)
	p.mu.Unlock()
}

// arrays returns the rows as vLLM's arrays, in the requests' order.
func (p *perRequestTap) arrays() *sweep.VLLMPerRequest {
	p.mu.Lock()
	rows := slices.Clone(p.rows)
	p.mu.Unlock()
	slices.SortStableFunc(rows, func(a, b tapRow) int { return a.id - b.id })
	out := &sweep.VLLMPerRequest{}
	for _, r := range rows {
		out.Latencies = append(out.Latencies, r.latency)
		out.QueueTimes = append(out.QueueTimes, r.queue)
		if !p.detailed {
			continue
		}
		out.InputLens = append(out.InputLens, r.in)
		out.OutputLens = append(out.OutputLens, r.out)
		out.TTFTs = append(out.TTFTs, r.ttft)
		out.ITLs = append(out.ITLs, nonNilFloats(r.itl))
		out.StartTimes = append(out.StartTimes, r.start)
		out.GeneratedTexts = append(out.GeneratedTexts, "") // loadcurve keeps no response text
		out.Errors = append(out.Errors, r.err)
	}
	return out
}

func nonNilFloats(f []float64) []float64 {
	if f == nil {
		return []float64{}
	}
	return f
}

// tap returns the executor option that keeps the per-request arrays of the result file (none
// when no file is asked for).
func (vr *vllmResult) tap() func(*sweep.Executor) {
	return func(x *sweep.Executor) {
		if vr == nil {
			return
		}
		vr.requests = &perRequestTap{Runner: x.Runner, detailed: vr.opts.Detailed}
		x.Runner = vr.requests
	}
}
