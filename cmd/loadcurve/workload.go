package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/workloads"
)

func sourceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "workload", Category: catWorkload, Value: workloads.KindSynthetic,
			Usage: "request source: synthetic, shared-prefix, FILE.jsonl (your requests), FILE.json (ShareGPT), FILE.csv (Azure trace), or FORMAT:FILE with FORMAT jsonl, sharegpt, azure, mooncake"},
		&cli.IntFlag{Name: "random-input-len", Category: catWorkload, Value: defaultInputLen, Usage: "synthetic prompt length in tokens"},
		&cli.IntFlag{Name: "random-output-len", Category: catWorkload, Value: defaultOutputLen, Usage: "synthetic and shared-prefix output length in tokens (sent as max_tokens)"},
		&cli.Float64Flag{Name: "random-range-ratio", Category: catWorkload, Usage: "uniform: lengths in [len·(1-r), len·(1+r)]; normal/lognormal: coefficient of variation"},
		&cli.StringFlag{Name: "random-length-dist", Category: catWorkload, Value: workloads.DistUniform, Usage: "synthetic length distribution: uniform, normal or lognormal (mean = the length)"},
		&cli.IntFlag{Name: "shared-prefix-groups", Category: catWorkload, Value: 8, Usage: "shared-prefix: number of groups (request i belongs to group i mod G)"},
		&cli.IntFlag{Name: "shared-prefix-len", Category: catWorkload, Value: 512, Usage: "shared-prefix: tokens of the prefix common to a group"},
		&cli.IntFlag{Name: "shared-suffix-len", Category: catWorkload, Value: 64, Usage: "shared-prefix: tokens unique to each request"},
		&cli.Float64Flag{Name: "trace-time-scale", Category: catWorkload, Value: 1, Usage: "trace replay: multiply the trace's arrival times (0.5 = twice as fast)"},
		&cli.StringFlag{Name: "cache", Category: catWorkload, Usage: "cache policy: cold (a fresh nonce in front of every prompt, per tier), warm (send the tier's requests once unmeasured first) or replay (send exactly as given) (default: cold for generated workloads, replay for files and traces)"},
	}
}

// workloadSource builds each tier's request set. Generated workloads are drawn per tier from
// the tier's seed; a file is read (and validated whole) once and its requests are the same in
// every tier; a trace is also the schedule.
type workloadSource struct {
	spec  string
	opts  workloads.LoadOptions
	cache workloads.CachePolicy
	file  *workloads.Set
	trace *workloads.Trace
	desc  string
	notes []string
}

func (w *workloadSource) generated() bool { return w.file == nil }

func newWorkloadSource(c *cli.Context) (*workloadSource, []error) {
	var errs []error
	w := &workloadSource{spec: c.String("workload")}
	w.opts = workloads.LoadOptions{
		Synthetic: workloads.Synthetic{InputLen: c.Int("random-input-len"), OutputLen: c.Int("random-output-len"),
			RangeRatio: c.Float64("random-range-ratio"), Dist: c.String("random-length-dist")},
		SharedPrefix: workloads.SharedPrefix{Groups: c.Int("shared-prefix-groups"), PrefixLen: c.Int("shared-prefix-len"),
			SuffixLen: c.Int("shared-suffix-len"), OutputLen: c.Int("random-output-len")},
		TimeScale: c.Float64("trace-time-scale"),
	}
	if ts := w.opts.TimeScale; !(ts > 0) || math.IsInf(ts, 0) {
		errs = append(errs, fmt.Errorf("--trace-time-scale must be a finite number > 0, got %v", ts))
	}
	seed := c.Int64("seed")
	switch w.spec {
	case workloads.KindSynthetic, "":
		s := w.opts.Synthetic
		s.Seed = seed
		if e := s.Validate(); len(e) > 0 {
			return w, append(errs, e...)
		}
		w.desc = s.String()
	case workloads.KindSharedPrefix:
		s := w.opts.SharedPrefix
		s.Seed = seed
		if e := s.Validate(); len(e) > 0 {
			return w, append(errs, e...)
		}
		w.desc = s.String()
	default:
		// Read and validate the whole file now: nothing is sent before the workload is known good.
		o := w.opts
		o.Seed = seed
		set, tr, err := workloads.Load(w.spec, o)
		if err != nil {
			return w, append(errs, fmt.Errorf("--workload %s: %w", w.spec, err))
		}
		w.file, w.trace, w.desc, w.notes = set, tr, set.Source, set.Notes
		if tr != nil {
			if _, err := arrival.FromOffsets(tr.Offsets); err != nil {
				errs = append(errs, fmt.Errorf("--workload %s: %w", w.spec, err))
			}
		}
	}
	policy := c.String("cache")
	switch {
	case policy == "" && w.generated():
		w.cache = workloads.CacheCold
	case policy == "":
		w.cache = workloads.CacheReplay
	default:
		p, err := workloads.ParseCachePolicy(policy)
		if err != nil {
			errs = append(errs, fmt.Errorf("--cache: %w", err))
		}
		w.cache = p
	}
	return w, errs
}

// size is the number of requests a file or trace holds (0 for generated workloads).
func (w *workloadSource) size() int {
	if w.file == nil {
		return 0
	}
	return len(w.file.Requests)
}

// tierSet returns the n requests of a tier seeded with seed, before any cache policy.
func (w *workloadSource) tierSet(n int, seed int64) (*workloads.Set, []string, error) {
	if w.generated() {
		o := w.opts
		o.N, o.Seed = n, seed
		set, _, err := workloads.Load(w.spec, o)
		return set, nil, err
	}
	if n <= len(w.file.Requests) {
		if n == len(w.file.Requests) {
			return w.file, nil, nil
		}
		reqs := append([]workloads.Request(nil), w.file.Requests[:n]...)
		return workloads.NewSet(fmt.Sprintf("%s[:%d]", w.file.Source, n), reqs), nil, nil
	}
	// The schedule needs more requests than the file holds: reuse them in order.
	reqs := make([]workloads.Request, n)
	for i := range reqs {
		reqs[i] = w.file.Requests[i%len(w.file.Requests)]
	}
	note := fmt.Sprintf("the schedule plans %d requests and %s holds %d: they are reused in order (repeats can hit the prefix cache; --cache cold guards only across tiers)",
		n, w.spec, len(w.file.Requests))
	return workloads.NewSet(fmt.Sprintf("%s cycled to %d", w.file.Source, n), reqs), []string{note}, nil
}

// applyCache returns the set to send: with the cold policy, nonce in front of every prompt.
func (w *workloadSource) applyCache(set *workloads.Set, nonce string) (*workloads.Set, error) {
	if w.cache != workloads.CacheCold {
		return set, nil
	}
	return workloads.ApplyCold(set, nonce)
}

// traceOffsets is the schedule of a trace replay, cut to n arrivals when n > 0.
func (w *workloadSource) traceOffsets(n int) []time.Duration {
	off := w.trace.Offsets
	if n > 0 && n < len(off) {
		off = off[:n]
	}
	return off
}

func printNotes(wr io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(wr, "loadcurve: workload: %s\n", strings.TrimSpace(n))
	}
}
