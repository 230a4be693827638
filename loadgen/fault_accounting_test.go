package loadgen_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// TestFaultAccounting runs tiers against the simulated deployment with fault mixes (HTTP 500/503,
// streams that stall, connections cut mid-stream) and checks that nothing is lost or counted
// twice: every planned id has exactly one record, planned = ok + http_error + timeout +
// stream_error + canceled, Result agrees with the records, the server received exactly the
// attempts the records count, and each outcome carries the evidence of its fault. Also when the
// run is canceled in the middle, and with retries.
func TestFaultAccounting(t *testing.T) {
	watchStalls(t)
	const (
		n         = 80
		gap       = 4 * time.Millisecond // dispatching takes 316 ms
		maxTokens = 8
		timeout   = 300 * time.Millisecond
	)
	tests := []struct {
		name                           string
		errorRate, stallRate, dropRate float64
		retries                        int
		cancelAt                       time.Duration // 0: not canceled
		conc                           int
	}{
		{name: "errors, stalls and drops", errorRate: 0.2, stallRate: 0.15, dropRate: 0.2},
		{name: "errors, stalls and drops through 8 slots", errorRate: 0.2, stallRate: 0.15, dropRate: 0.2, conc: 8},
		{name: "errors retried twice", errorRate: 0.3, stallRate: 0.1, dropRate: 0.1, retries: 2},
		{name: "canceled mid-run", errorRate: 0.2, stallRate: 0.15, dropRate: 0.2, cancelAt: 200 * time.Millisecond, conc: 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := sim.Profile(sim.ProfileMedium)
			if err != nil {
				t.Fatal(err)
			}
			cfg.StepBase, cfg.StepPerSeq, cfg.StepPerKVToken = time.Millisecond, 0, 0
			cfg.ErrorRate, cfg.StallRate, cfg.DropRate, cfg.Seed = tc.errorRate, tc.stallRate, tc.dropRate, 7
			srv, err := sim.Start(cfg, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			c := newClient(t, loadgen.Target{BaseURL: srv.URL(), Model: cfg.ModelName, Timeout: timeout}, tc.conc)

			reqs := make([]workloads.Request, n)
			for i := range reqs {
				reqs[i] = workloads.Request{ID: i, Prompt: "count the words of this prompt", InputTokens: 6, MaxTokens: maxTokens}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelAt > 0 {
				time.AfterFunc(tc.cancelAt, cancel)
			}
			sink := &memSink{}
			var progress loadgen.Progress
			start := time.Now()
			res, err := loadgen.Run(ctx, c, loadgen.Tier{
				Offsets: evenly(n, gap), Requests: reqs, MaxConcurrency: tc.conc, Retries: tc.retries,
			}, sink, &progress)
			if err != nil {
				t.Fatal(err)
			}
			recs := sink.byID(t, n) // every planned id exactly once
			stalled := worstStall(start) > stallLimit

			var count [5]int
			attempts, unsure := 0, 0
			for _, r := range recs {
				count[r.Outcome]++
				if r.Sent != records.Unset {
					attempts += max(r.Attempts, 1)
				}
				if r.Outcome == records.Timeout && r.HTTPStatus == 0 {
					unsure++ // no answer before the deadline: maybe never written
				}
				if err := checkEvidence(r, maxTokens, timeout, tc.retries, stalled); err != nil {
					t.Errorf("request %d (%v): %v; record %+v", r.ID, r.Outcome, err, r)
				}
			}
			t.Logf("ok %d, http_error %d, timeout %d, stream_error %d, canceled %d; %d attempts for %d requests dispatched",
				count[records.OK], count[records.HTTPError], count[records.Timeout], count[records.StreamError], count[records.Canceled], attempts, res.Dispatched)
			if sum := count[0] + count[1] + count[2] + count[3] + count[4]; sum != n || res.Planned != n {
				t.Errorf("outcomes add up to %d, Result.Planned %d, planned %d", sum, res.Planned, n)
			}
			if res.Canceled != count[records.Canceled] || progress.Done.Load() != int64(res.Dispatched) ||
				progress.Errors.Load() != int64(n-count[records.OK]-(n-res.Dispatched)) || progress.InFlight.Load() != 0 {
				t.Errorf("Result %+v / progress done %d errors %d in flight %d disagree with the records %v",
					res, progress.Done.Load(), progress.Errors.Load(), progress.InFlight.Load(), count)
			}
			if tc.cancelAt == 0 {
				// Each fault kind has probability ≥ 0.1 per request; over 80 requests the chance
				// that a kind never occurs is at most 0.9^80 ≈ 2e-4, and the draw is seeded, so
				// each kind must show. With retries, errors are re-sent, so only timeouts and
				// stream errors are sure to remain.
				if count[records.Canceled] != 0 || res.Dispatched != n ||
					count[records.Timeout] == 0 || count[records.StreamError] == 0 || (tc.retries == 0 && count[records.HTTPError] == 0) {
					t.Errorf("outcomes %v: every fault kind should show, none canceled", count)
				}
				// Every attempt reached the server, and no other request did. An attempt whose
				// deadline passed before any answer may not have been written at all (on a
				// starved machine the deadline can pass before the request leaves), so those
				// are the only tolerance. Earlier attempts of a retried request all had an answer
				// (a 5xx) or a broken connection, never a timeout.
				if got := srv.Server().Stats().RequestsReceived; got > int64(attempts) || got < int64(attempts-unsure) {
					t.Errorf("the server received %d requests, the records count %d attempts (%d maybe never sent)", got, attempts, unsure)
				}
			} else if count[records.Canceled] == 0 || res.Stopped == "" || res.Dispatched == n {
				// The cancellation comes 116 ms before the last dispatch: a stall of the process
				// about half as long lets the dispatcher catch up with its schedule first.
				errorfUnlessStalled(t, start, 50*time.Millisecond, "canceled at %v: %d canceled, %d dispatched, Stopped %q",
					tc.cancelAt, count[records.Canceled], res.Dispatched, res.Stopped)
			}
		})
	}
}

// checkEvidence checks that a record's outcome agrees with the rest of it, for the sim's faults:
// an error answer has a 5xx status and no output; a cut connection leaves some output (the sim
// cuts after at least one token) counted in the tokens; a stall ends at the deadline; an ok
// request got all its tokens from the usage message; a failure after output is never retried,
// and an error is retried until the retries run out. stalled says that this process stalled for
// longer than the slack absorbs during the run.
func checkEvidence(r records.Record, maxTokens int, timeout time.Duration, retries int, stalled bool) error {
	if len(r.Error) > maxRecordError {
		return fmt.Errorf("error of %d bytes", len(r.Error))
	}
	if r.Attempts > 1 && !strings.Contains(r.Error, "earlier attempts") {
		return fmt.Errorf("retried without saying so")
	}
	switch r.Outcome {
	case records.OK:
		if r.OutputTokens != maxTokens || r.OutputTokensSource != records.SourceUsage || r.FinishReason != "length" {
			return fmt.Errorf("ok with %d tokens from %q, finish %q", r.OutputTokens, r.OutputTokensSource, r.FinishReason)
		}
	case records.HTTPError:
		if (r.HTTPStatus != 500 && r.HTTPStatus != 503) || r.Chunks != 0 || !strings.Contains(r.Error, "simulated") {
			return fmt.Errorf("http_error with status %d, %d chunks, error %q", r.HTTPStatus, r.Chunks, r.Error)
		}
		if retries > 0 && r.Attempts != retries+1 {
			return fmt.Errorf("a 5xx after %d attempts of %d allowed", r.Attempts, retries+1)
		}
	case records.StreamError:
		if r.Chunks < 1 || r.OutputTokens != r.Chunks || !strings.Contains(r.Error, "connection closed by the server in the middle") {
			return fmt.Errorf("stream_error with %d chunks, %d tokens, error %q", r.Chunks, r.OutputTokens, r.Error)
		}
	case records.Timeout:
		// The client arms the deadline from a clock reading taken just before sent, so a
		// scheduling stall between the two makes End-Sent short of the timeout: slack covers
		// ordinary stalls, and in a run where the stall watch saw a longer one the end is not
		// checked. A request that got no answer at all may have been starved for the whole
		// timeout before it was sent (seen at load 10 on 2 cores under -race), so its end is
		// only checked to follow sent. TestFaultSuite checks the deadline itself.
		if r.End-r.Sent < timeout-slack && r.HTTPStatus != 0 && !stalled || r.OutputTokens != r.Chunks {
			return fmt.Errorf("timeout after %v with %d tokens for %d chunks", r.End-r.Sent, r.OutputTokens, r.Chunks)
		}
	case records.Canceled:
		if r.Error == "" {
			return fmt.Errorf("canceled without a reason")
		}
	}
	return nil
}
