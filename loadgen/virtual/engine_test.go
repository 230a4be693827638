package virtual_test

import (
	"context"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

type recordSink struct{ recs []records.Record }

func (s *recordSink) Write(r *records.Record) error { s.recs = append(s.recs, *r); return nil }

func engineConfig(t *testing.T) sim.Config {
	t.Helper()
	c, err := sim.Profile(sim.ProfileDefault)
	if err != nil {
		t.Fatal(err)
	}
	c.EOSProbability = 0.02
	return c
}

// TestEngineRunnerServesATier: every planned arrival gets a record, in order of its end, with
// the server's usage (the prompt counted as the HTTP server counts it, the tokens it gave), a
// chunk per step, and a stop at EOS or at max_tokens; a stop after the first result keeps the
// requests that had arrived by then and drops the rest.
func TestEngineRunnerServesATier(t *testing.T) {
	for _, cache := range []int{0, 256} {
		cfg := engineConfig(t)
		cfg.PrefixCacheBlocks = cache
		src, errs := workloads.NewSource(workloads.KindSharedPrefix, workloads.LoadOptions{
			SharedPrefix: workloads.SharedPrefix{Groups: 2, PrefixLen: 64, SuffixLen: 16, OutputLen: 40}, TimeScale: 1}, "")
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		run := &virtual.EngineRunner{Config: cfg, Workload: src}
		offs, err := arrival.Spec{Rate: 20, Burstiness: 1}.Arrivals(200, 0, 3, 0)
		if err != nil {
			t.Fatal(err)
		}
		plan := sweep.Plan{Tier: records.Tier{Kind: records.KindTier, Tier: 2, Seed: 3, Planned: len(offs)}, Offsets: offs, ArrivalsEnd: offs[len(offs)-1]}
		sink := &recordSink{}
		id, err := run.RunTier(context.Background(), plan, sink, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(sink.recs) != 200 || id.End == nil || id.End.Reason != records.EndedSchedule || id.WorkloadFingerprint == "" {
			t.Fatalf("cache %d: %d records, end %+v, fingerprint %q", cache, len(sink.recs), id.End, id.WorkloadFingerprint)
		}
		set, _, _ := src.TierSet(200, 3)
		set, _ = src.ApplyCache(set, "x")
		stops, cached := 0, 0
		var last time.Duration
		for _, r := range sink.recs {
			q := set.Requests[r.ID]
			// The tier's nonce is "[run:" and the seed in hex and "]": one word, as "x" is.
			if want, _ := sim.PromptTokens(q.Text(), 0); r.InputTokens != want {
				t.Errorf("cache %d: request %d: %d prompt tokens, the server counts %d", cache, r.ID, r.InputTokens, want)
			}
			if r.End < last || r.Outcome != records.OK || r.OutputTokens < 1 || r.OutputTokens > 40 || len(r.ITL) != r.Chunks-1 || r.First <= r.Planned {
				t.Errorf("cache %d: record %+v", cache, r)
			}
			last = r.End
			if r.FinishReason == "stop" {
				stops++
			}
			cached += r.CachedTokens
		}
		if stops == 0 || stops == 200 {
			t.Errorf("cache %d: %d of 200 stopped at EOS (eos probability 0.02, 40 tokens: about 55 %%)", cache, stops)
		}
		if (cache > 0) != (cached > 0) {
			t.Errorf("cache %d blocks: %d cached prompt tokens", cache, cached)
		}
	}
}
