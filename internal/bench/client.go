package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// clientTimeout is the per-request deadline of the client child: no benchmark stream lasts
// anywhere near this long unless something is wrong.
const clientTimeout = time.Minute

// collector is the sink of `loadcurve run`: it keeps a copy of every record for the summary and
// appends it to records.jsonl.
type collector struct {
	recs []records.Record
	w    *records.Writer
}

func (c *collector) Write(r *records.Record) error {
	c.recs = append(c.recs, *r)
	if err := c.w.Write(r); err != nil {
		return fmt.Errorf("bench client: %w", err)
	}
	return nil
}

// runClient sends the job's schedule through loadcurve's real path: loadgen.Run with records
// streamed to a file, then measure.Summarize.
func runClient(ctx context.Context, job Job) (ChildResult, error) {
	var res ChildResult
	offs, err := job.schedule()
	if err != nil {
		return res, err
	}
	base := job.URL
	if job.Stall > 0 {
		base = stallURL(job.URL)
	}
	c, err := loadgen.NewClient(loadgen.Target{BaseURL: base, Model: "bench", Timeout: clientTimeout}, job.MaxConcurrency)
	if err != nil {
		return res, err
	}
	defer c.Close()
	if job.Stall == 0 {
		if err := c.Preflight(ctx, loadgen.PreflightRequest()); err != nil {
			return res, fmt.Errorf("preflight: %w", err)
		}
	}

	n := len(offs)
	reqs := make([]workloads.Request, n)
	for i := range reqs {
		reqs[i] = workloads.Request{ID: i, Prompt: "hi", InputTokens: 1, MaxTokens: job.MaxTokens}
	}
	spec := arrival.Spec{Rate: job.Rate, Burstiness: 1}
	if job.Stall > 0 {
		spec.Burstiness = arrival.Burstiness(math.Inf(1))
	}
	w, cleanup, err := openBenchRecords(job, base, spec, n)
	if err != nil {
		return res, err
	}
	defer cleanup()
	closeRecords := sync.OnceValue(w.Close)
	defer closeRecords()
	col := &collector{w: w, recs: make([]records.Record, 0, n)}

	if err := resetServer(ctx, &http.Client{Timeout: 5 * time.Second}, job.URL); err != nil {
		return res, err
	}
	var baseline int64
	if job.Stall > 0 {
		settle()
		baseline = currentRSS()
	}
	stopProfile, err := startProfile(job.CPUProfile)
	if err != nil {
		return res, err
	}
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	var result loadgen.Result
	var runErr error
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		result, runErr = loadgen.Run(runCtx, c, loadgen.Tier{Offsets: offs, Requests: reqs,
			MaxConcurrency: job.MaxConcurrency, Spin: job.Spin}, col, nil)
	}()
	if job.Stall > 0 {
		err = holdStalled(ctx, job.URL, job.Stall, 30*time.Second, job.HeapProfile, &res)
		res.BaselineRSS = baseline
		cancelRun()
	}
	<-done
	if werr := closeRecords(); werr != nil && err == nil {
		err = werr
	}
	sum := measure.Summarize(col.recs, records.Tier{Arrival: spec.String(), RequestRate: records.Rate(job.Rate),
		Burstiness: records.Rate(spec.Burstiness), MaxConcurrency: job.MaxConcurrency, Planned: n}, measure.Options{})
	res.WallS = time.Since(start).Seconds()
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	switch {
	case err != nil:
		return res, err
	case runErr != nil:
		return res, runErr
	case result.SinkErr != nil:
		return res, fmt.Errorf("records: %w", result.SinkErr)
	case ctx.Err() != nil:
		return res, fmt.Errorf("stopped: %w", context.Cause(ctx))
	case len(col.recs) != n:
		return res, errors.New("loadgen.Run did not hand over one record per planned request")
	}

	res.tally(col.recs, offs, sum)
	return res, nil
}

// openBenchRecords creates the job's records file (a temporary one when the job names none,
// removed by cleanup) with its header and the tier's line.
func openBenchRecords(job Job, base string, spec arrival.Spec, n int) (w *records.Writer, cleanup func(), err error) {
	cleanup = func() {}
	path := job.RecordsPath
	if path == "" {
		f, err := os.CreateTemp("", "loadcurve-bench-*.jsonl")
		if err != nil {
			return nil, cleanup, fmt.Errorf("records file: %w", err)
		}
		path = f.Name()
		f.Close()
		cleanup = func() { os.Remove(path) }
	}
	w, err = records.Create(path, records.Header{
		Command: "bench", Target: loadgen.SanitizeURL(base), Endpoint: loadgen.Chat.String(), Model: "bench",
		Workload: "bench(prompt=hi)", Arrival: spec.String(), Seed: job.Seed, MaxConcurrency: job.MaxConcurrency,
		CachePolicy: "replay", TimeoutS: clientTimeout.Seconds(), StartWall: time.Now(),
	})
	if err != nil {
		return nil, cleanup, err
	}
	if err := w.WriteTier(records.Tier{Arrival: spec.String(), RequestRate: records.Rate(job.Rate),
		Burstiness: records.Rate(spec.Burstiness), Seed: job.Seed, Planned: n, StartWall: time.Now()}); err != nil {
		w.Close()
		return nil, cleanup, err
	}
	return w, cleanup, nil
}

// tally fills the result's counts, rates, lags and TTFT from the tier's records and summary.
func (res *ChildResult) tally(recs []records.Record, offs []time.Duration, sum measure.Summary) {
	res.Planned = len(recs)
	var maxLag time.Duration
	for i := range recs {
		r := &recs[i]
		if r.Sent != records.Unset {
			res.Sent++
		}
		if r.Outcome == records.OK {
			res.OK++
		}
		res.Chunks += int64(r.Chunks)
		if lag, ok := r.ScheduleLag(); ok {
			maxLag = max(maxLag, lag)
		}
	}
	res.OfferedRate = offeredRate(offs)
	res.RealisedRate = sum.RealisedRate
	res.DeliveredRate = sum.DeliveredRate
	res.LagP50Ms = sum.ScheduleLag.Percentiles[measure.PercentileKey(50)]
	res.LagP99Ms = sum.ScheduleLag.Percentiles[measure.PercentileKey(99)]
	res.LagMaxMs = ms(maxLag)
	if sum.TTFT.Count > 0 {
		res.TTFTP50Ms = sum.TTFT.Median
	}
	res.ClientBound, res.ClientBoundReason = sum.ClientBound, sum.ClientBoundReason
}
