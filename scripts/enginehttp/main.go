// Command enginehttp holds the virtual-clock batching engine, the model every engine truth and
// every virtual sweep rests on, to the same engine served over HTTP in real time: one tier of
// one of sweeptest.DecisionEngines, the same arrivals and the same requests, through both
// clocks. It prints, per deployment, the compliant share each clock measured, and how far apart
// the two clocks put each request's TTFT, TPOT and E2EL.
//
//	go run ./scripts/enginehttp -at 0.9 -seconds 120            # every deployment, ~12 minutes
//	go run ./scripts/enginehttp -only "heavy-tailed outputs at EOS" -at 1.0
//
// The HTTP run is real time: on a busy machine the client's and the engine's delays add to what
// the virtual clock computes (its timings are the engine's alone), so the HTTP latencies are the
// virtual ones plus the machine's lag, never less, and a share can only be lower.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/curve/sweep/sweeptest"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
)

func main() {
	at := flag.Float64("at", 0.9, "the tier's rate, as a multiple of the deployment's true capacity")
	seconds := flag.Float64("seconds", 120, "the tier's length in seconds of arrivals (its requests: this times the rate)")
	seed := flag.Int64("seed", 1, "the tier's seed (arrivals and requests)")
	only := flag.String("only", "", "hold this deployment only (by name)")
	flag.Parse()
	if err := run(*at, *seconds, *seed, *only); err != nil {
		fmt.Fprintln(os.Stderr, "enginehttp:", err)
		os.Exit(1)
	}
}

func run(at, seconds float64, seed int64, only string) error {
	truths, err := sweeptest.EngineTruths()
	if err != nil {
		return err
	}
	fmt.Println("| deployment | rate (× truth) | requests | share: virtual, HTTP | requests judged alike | TTFT: median, p90 of HTTP − virtual | TPOT: median, p90 | E2EL: median, p90 | output tokens alike | load average |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for i, d := range sweeptest.DecisionEngines {
		if only != "" && d.Name != only {
			continue
		}
		rate := at * truths[i].Capacity
		n := int(math.Round(seconds * rate))
		if n < 10 {
			return fmt.Errorf("%s: %d requests: give more -seconds", d.Name, n)
		}
		virt, http, err := bothClocks(d, rate, n, seed)
		if err != nil {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
		fmt.Println(compare(d, rate, at, virt, http))
	}
	return nil
}

// bothClocks runs one tier of n arrivals at rate through the virtual engine and through the
// engine served over HTTP, and returns the records of each, indexed by request id.
func bothClocks(d sweeptest.DecisionEngine, rate float64, n int, seed int64) (virt, http []records.Record, err error) {
	run, err := d.Runner()
	if err != nil {
		return nil, nil, err
	}
	offs, err := arrival.Spec{Rate: rate, Burstiness: 1}.Arrivals(n, 0, seed, 0)
	if err != nil {
		return nil, nil, err
	}
	plan := sweep.Plan{Tier: records.Tier{Kind: records.KindTier, Seed: seed, Planned: n}, Offsets: offs, ArrivalsEnd: offs[n-1]}
	set, _, err := run.Workload.TierSet(n, seed)
	if err == nil {
		set, err = run.Workload.ApplyCache(set, fmt.Sprintf("[run:%016x]", uint64(seed)))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("workload: %w", err)
	}
	virt, http = make([]records.Record, n), make([]records.Record, n)
	// A virtual tier draws request i's length at EOS by the tier's seed and i, the HTTP server
	// by the order it received the request in (from 0): drawn as the server draws them, the two
	// clocks serve the same lengths, and the runs compare request by request.
	reqs, rejected := run.EngineRequests(plan.Tier, offs, set.Requests)
	for i := range reqs {
		reqs[i].Target, _ = d.Config.OutputTarget(uint64(reqs[i].ID), reqs[i].MaxOut, d.IgnoreEOS)
	}
	if _, err := run.RunEngineRequests(context.Background(), plan, reqs, rejected, byID(virt), nil); err != nil {
		return nil, nil, fmt.Errorf("virtual: %w", err)
	}

	srv, err := sim.Start(d.Config, "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer srv.Close()
	target := loadgen.Target{BaseURL: srv.URL(), Model: d.Config.ModelName, Endpoint: loadgen.Completions, Timeout: 10 * time.Minute}
	if d.IgnoreEOS {
		target.ExtraBody = json.RawMessage(`{"ignore_eos":true}`)
	}
	client, err := loadgen.NewClient(target, 0)
	if err != nil {
		return nil, nil, err
	}
	tier := loadgen.Tier{Offsets: offs, Requests: set.Requests}
	if _, err := loadgen.Run(context.Background(), client, tier, byID(http), nil); err != nil {
		return nil, nil, fmt.Errorf("http: %w", err)
	}
	return virt, http, nil
}

type byID []records.Record

func (s byID) Write(r *records.Record) error {
	if r.ID < 0 || r.ID >= len(s) {
		return fmt.Errorf("record of request %d: outside the tier's %d", r.ID, len(s))
	}
	s[r.ID] = *r
	return nil
}

// compare is the markdown row of one deployment: the shares, and the quantiles of the
// per-request differences (HTTP minus virtual) of the metrics the objectives judge.
func compare(d sweeptest.DecisionEngine, rate, at float64, virt, http []records.Record) string {
	var dTTFT, dTPOT, dE2EL []float64
	okV, okH, alike, sameOut, n := 0, 0, 0, 0, len(virt)
	for i := range virt {
		v, h := &virt[i], &http[i]
		cv, ch := d.Objectives.Compliant(v), d.Objectives.Compliant(h)
		okV, okH = okV+b2i(cv), okH+b2i(ch)
		alike += b2i(cv == ch)
		sameOut += b2i(v.OutputTokens == h.OutputTokens)
		if v.Outcome != records.OK || h.Outcome != records.OK {
			continue
		}
		dTTFT = append(dTTFT, ms(h.First-h.Sent)-ms(v.First-v.Sent))
		dE2EL = append(dE2EL, ms(h.End-h.Sent)-ms(v.End-v.Sent))
		if v.OutputTokens > 1 && h.OutputTokens > 1 {
			dTPOT = append(dTPOT, ms(h.End-h.First)/float64(h.OutputTokens-1)-ms(v.End-v.First)/float64(v.OutputTokens-1))
		}
	}
	load := "?"
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		var l1 float64
		if _, err := fmt.Sscan(string(data), &l1); err == nil {
			load = fmt.Sprintf("%.1f", l1)
		}
	}
	return fmt.Sprintf("| %s | %.3f req/s (%.2f×) | %d | %.2f %%, %.2f %% | %.1f %% | %s | %s | %s | %.1f %% | %s |", d.Name, rate, at, n,
		100*float64(okV)/float64(n), 100*float64(okH)/float64(n), 100*float64(alike)/float64(n),
		quantiles(dTTFT, "ms"), quantiles(dTPOT, "ms"), quantiles(dE2EL, "ms"), 100*float64(sameOut)/float64(n), load)
}

func quantiles(xs []float64, unit string) string {
	if len(xs) == 0 {
		return "–"
	}
	slices.Sort(xs)
	q := func(p float64) float64 { return xs[min(len(xs)-1, int(p*float64(len(xs))))] }
	return fmt.Sprintf("%+.1f, %+.1f %s", q(0.5), q(0.9), unit)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
