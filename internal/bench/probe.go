package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// probeReaderSize is the probe's line buffer: the bench server's events are about 200 bytes.
const probeReaderSize = 4 << 10

var probeReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, probeReaderSize) }}

var (
	dataPrefix = []byte("data:")
	doneLine   = []byte("data: [DONE]")
)

// probe is the physical-limit client: one dispatcher sleeping to absolute deadlines on one
// reused timer, one goroutine per request, and a body reader that only counts "data:" lines.
// With Job.Spin it wakes Spin early and busy-waits for the deadline.
type probe struct {
	hc   *http.Client
	body []byte
	t0   time.Time
	sem  chan struct{} // nil without a concurrency cap

	lines atomic.Int64
	oks   atomic.Int64
	sent  []time.Duration // per request, from t0; -1 if never sent
	ttft  []time.Duration // per request; -1 without a data line
}

func runProbe(ctx context.Context, job Job) (ChildResult, error) {
	var res ChildResult
	offs, err := job.schedule()
	if err != nil {
		return res, err
	}
	idle := 4096
	if job.MaxConcurrency > 0 {
		idle = job.MaxConcurrency + 2
	}
	tr := &http.Transport{
		MaxIdleConns: idle, MaxIdleConnsPerHost: idle, IdleConnTimeout: 90 * time.Second,
		DisableCompression: true,
	}
	defer tr.CloseIdleConnections()
	p := &probe{hc: &http.Client{Transport: tr}, body: job.body()}
	if job.MaxConcurrency > 0 {
		p.sem = make(chan struct{}, job.MaxConcurrency)
	}
	url := job.URL + "/chat/completions"
	if job.Stall == 0 {
		// Warm one keep-alive connection, as loadcurve's preflight does.
		if ok, err := p.warm(ctx, url); err != nil || !ok {
			return res, fmt.Errorf("warm-up request to %s failed: %v", url, err)
		}
	} else {
		url = stallURL(job.URL) + "/chat/completions"
	}
	if err := resetServer(ctx, p.hc, job.URL); err != nil {
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

	reqCtx, cancelReqs := context.WithCancel(ctx)
	defer cancelReqs()
	var wg sync.WaitGroup
	lags := p.dispatch(ctx, reqCtx, &wg, url, offs, job.Spin)
	if job.Stall > 0 {
		err = holdStalled(ctx, job.URL, job.Stall, 30*time.Second, job.HeapProfile, &res)
		res.BaselineRSS = baseline
		cancelReqs()
	}
	wg.Wait()
	res.WallS = time.Since(p.t0).Seconds()
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("stopped: %w", context.Cause(ctx))
	}

	p.tally(&res, offs, lags)
	return res, nil
}

// dispatch sends a request at each of offs from p.t0 (set here), each on its own goroutine
// under wg with reqCtx, busy-waiting for the last spin before each, until ctx ends; it returns
// each dispatched request's lag behind its offset.
func (p *probe) dispatch(ctx, reqCtx context.Context, wg *sync.WaitGroup, url string, offs []time.Duration, spin time.Duration) []time.Duration {
	n := len(offs)
	p.sent = make([]time.Duration, n)
	p.ttft = make([]time.Duration, n)
	lags := make([]time.Duration, 0, n)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	p.t0 = time.Now()
	for i, off := range offs {
		if d := off - time.Since(p.t0); d > spin {
			timer.Reset(d - spin)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return lags
			}
		}
		for spin > 0 && time.Since(p.t0) < off {
			// Busy-wait, without yielding, for the last Spin before the deadline: the limit of
			// what a spinning pacer can do on this machine (loadgen's Tier.Spin yields instead).
		}
		lags = append(lags, time.Since(p.t0)-off)
		p.sent[i], p.ttft[i] = -1, -1
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.one(reqCtx, url, i)
		}()
	}
	return lags
}

// tally fills res from what the probe counted: requests, chunks, rates, lags and TTFT.
func (p *probe) tally(res *ChildResult, offs, lags []time.Duration) {
	n := len(offs)
	res.Planned = n
	res.OK = int(p.oks.Load())
	res.Chunks = p.lines.Load()
	res.OfferedRate = offeredRate(offs)
	if last := offs[n-1]; last > 0 {
		res.RealisedRate = float64(n) / last.Seconds()
	}
	var lastSent time.Duration
	var ttfts []time.Duration
	for i := range lags {
		if p.sent[i] >= 0 {
			res.Sent++
			lastSent = max(lastSent, p.sent[i])
		}
		if p.ttft[i] >= 0 {
			ttfts = append(ttfts, p.ttft[i])
		}
	}
	if lastSent > 0 {
		res.DeliveredRate = float64(res.Sent) / lastSent.Seconds()
	}
	res.LagP50Ms, res.LagP99Ms = p50p99Ms(lags)
	if len(lags) > 0 {
		res.LagMaxMs = ms(slices.Max(lags))
	}
	res.TTFTP50Ms, _ = p50p99Ms(ttfts)
}

// warm sends one request outside the measurement.
func (p *probe) warm(ctx context.Context, url string) (bool, error) {
	p.sent, p.ttft = make([]time.Duration, 1), make([]time.Duration, 1)
	p.t0 = time.Now()
	p.one(ctx, url, 0)
	ok := p.oks.Load() == 1
	p.oks.Store(0)
	p.lines.Store(0)
	if !ok {
		return false, errors.New("no complete stream")
	}
	return true, nil
}

// one sends request i and counts the data lines of its stream.
func (p *probe) one(ctx context.Context, url string, i int) {
	if p.sem != nil {
		select {
		case p.sem <- struct{}{}:
			defer func() { <-p.sem }()
		case <-ctx.Done():
			return
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(p.body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	sent := time.Now()
	p.sent[i] = sent.Sub(p.t0)
	resp, err := p.hc.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	br := probeReaders.Get().(*bufio.Reader)
	br.Reset(resp.Body)
	var lines int64
	done := false
	for {
		line, err := br.ReadSlice('\n')
		if bytes.HasPrefix(line, dataPrefix) {
			if lines == 0 {
				p.ttft[i] = time.Since(sent)
			}
			lines++
			done = done || bytes.HasPrefix(line, doneLine)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	br.Reset(nil)
	probeReaders.Put(br)
	p.lines.Add(lines)
	if done {
		p.oks.Add(1)
	}
}
