package vllm

import (
	"context"
	"slices"
	"sync"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure/records"
)

// NewTap returns the runner r that also keeps vLLM's per-request arrays of every record it
// writes: latencies and queue times, and, detailed (--save-detailed), the other seven.
func NewTap(r sweep.Runner, detailed bool) *Tap {
	return &Tap{Runner: r, detailed: detailed}
}

// Tap is a sweep.Runner that keeps, as a run's records pass to its sink, what vLLM's result
// file holds per request: latencies and queue_times always, and, detailed, the other seven
// arrays.
type Tap struct {
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

func (p *Tap) RunTier(ctx context.Context, plan sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	return p.Runner.RunTier(ctx, plan, tapSink{p: p, sink: sink}, stop)
}

type tapSink struct {
	p    *Tap
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
func (p *Tap) add(r *records.Record) {
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

// Arrays returns the rows as vLLM's arrays, in the requests' order.
func (p *Tap) Arrays() *result.VLLMPerRequest {
	p.mu.Lock()
	rows := slices.Clone(p.rows)
	p.mu.Unlock()
	slices.SortStableFunc(rows, func(a, b tapRow) int { return a.id - b.id })
	out := &result.VLLMPerRequest{}
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

var _ sweep.Runner = (*Tap)(nil)
