package report_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/compare"
	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/curve/result"
	lcsweep "github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/measure/timeseries"
)

// The results of every page type, made on virtual M/D/c queues (package virtual: no HTTP, no wall
// clock), with the time series of their tiers, as the commands make them.

// pageQueue is the deployment the page fixtures measure: 4 slots of 400 ms, the first token
// after 20 ms; at a 500 ms TTFT objective its capacity is about 6 req/s.
var pageQueue = sim.QueueConfig{ModelName: "m", Servers: 4, Service: 400 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: 16}

// slowQueue is a slower deployment for B of a comparison.
var slowQueue = sim.QueueConfig{ModelName: "m", Servers: 4, Service: 600 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: 16}

const pageObjective = 500 * time.Millisecond

// seriesRunner runs tiers on a virtual runner and keeps every tier's time series.
type seriesRunner struct {
	lcsweep.Runner
	series map[int]*timeseries.Builder
}

type seriesSink struct {
	lcsweep.Sink
	b *timeseries.Builder
}

func (s seriesSink) Write(r *records.Record) error {
	s.b.Add(r)
	return s.Sink.Write(r)
}

func (s *seriesRunner) RunTier(ctx context.Context, p lcsweep.Plan, sink lcsweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	if s.series == nil {
		s.series = map[int]*timeseries.Builder{}
	}
	b := timeseries.NewBuilder(report.TimeSeriesSlice)
	s.series[p.Tier.Tier] = b
	return s.Runner.RunTier(ctx, p, seriesSink{Sink: sink, b: b}, stop)
}

func (s *seriesRunner) timeSeries() map[int]timeseries.Series {
	out := map[int]timeseries.Series{}
	for t, b := range s.series {
		out[t] = b.Series()
	}
	return out
}

// pageResult is a result and its tiers' time series.
type pageResult struct {
	res *result.Result
	ts  map[int]timeseries.Series
}

// pageSettings are the objectives and the analysis of every fixture.
func pageSettings() result.Settings {
	return result.Settings{Measure: measure.Options{Objectives: measure.Objectives{TTFT: pageObjective}}, Params: curve.DefaultParams()}
}

// runPage runs cfg on runner and gives the result the header cmd would.
func runPage(t *testing.T, cfg lcsweep.Config, runner lcsweep.Runner, cmd records.Command, workload, arrival string) pageResult {
	t.Helper()
	sr := &seriesRunner{Runner: runner}
	res, err := (&lcsweep.Executor{Config: cfg, Runner: sr}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res.Header = records.Header{Kind: records.KindHeader, Tool: "loadcurve", Version: "test", MetricsVersion: records.MetricsVersion,
		Command: cmd, Target: "virtual M/D/c queue", Endpoint: "chat", Model: "m", Workload: workload, Arrival: arrival, Seed: cfg.Seed,
		CachePolicy: "cold", StartWall: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), Sim: "mdc"}
	return pageResult{res: res, ts: sr.timeSeries()}
}

var (
	pageOnce                                sync.Once
	ratePage, fastPage, slowPage, usersPage pageResult
	runPageR                                pageResult
	sessionsPage, burstPage                 pageResult
)

// pageResults makes every fixture once for the package's tests.
func pageResults(t *testing.T) {
	t.Helper()
	pageOnce.Do(func() {
		// Made under the first test that asks; a failure there leaves them nil for the others.
		ft := struct{ T *testing.T }{t}
		auto := lcsweep.Config{Rates: lcsweep.Rates{Auto: true}, Seed: 1, Confirm: true, Settings: pageSettings()}
		ratePage = runPage(ft.T, auto, &virtual.QueueRunner{Config: pageQueue}, records.CommandSweep, "random(input=1, output=16)", "sweep(auto, burstiness=1)")
		listed := lcsweep.Config{Rates: lcsweep.Rates{List: []float64{2, 3, 4, 5, 6, 7, 8}}, Seed: 1, Confirm: true, Settings: pageSettings()}
		fastPage = runPage(ft.T, listed, &virtual.QueueRunner{Config: pageQueue}, records.CommandSweep, "random(input=1, output=16)", "sweep(2,3,4,5,6,7,8)")
		slowPage = runPage(ft.T, listed, &virtual.QueueRunner{Config: slowQueue}, records.CommandSweep, "random(input=1, output=16)", "sweep(2,3,4,5,6,7,8)")
		users := lcsweep.Config{Concurrency: lcsweep.Concurrency{Auto: true}, Seed: 1, Confirm: true, Settings: pageSettings()}
		usersPage = runPage(ft.T, users, &virtual.ClosedQueueRunner{Config: pageQueue}, records.CommandSweep, "random(input=1, output=16)", "sweep(concurrency auto)")
		one := lcsweep.Config{Rates: lcsweep.Rates{List: []float64{4}}, Requests: 600, Seed: 1, Settings: pageSettings()}
		runPageR = runPage(ft.T, one, &virtual.QueueRunner{Config: pageQueue}, records.CommandRun, "random(input=1, output=16)", "poisson(rate=4/s)")
		sessions := lcsweep.Config{Rates: lcsweep.Rates{List: []float64{1}}, Requests: 200, Seed: 1, Settings: pageSettings()}
		sessionsPage = runPage(ft.T, sessions, &virtual.SessionQueueRunner{Config: pageQueue, Turns: 3, Think: 10 * pageQueue.Service},
			records.CommandRun, "sessions(turns=3)", "poisson(rate=1/s)")
		burst := lcsweep.Config{Rates: lcsweep.Rates{List: []float64{math.Inf(1)}}, Requests: 64, Seed: 1, Settings: pageSettings()}
		burstPage = runPage(ft.T, burst, &virtual.QueueRunner{Config: pageQueue}, records.CommandRun, "random(input=1, output=16)", "inf")
	})
	if ratePage.res == nil || usersPage.res == nil || runPageR.res == nil || sessionsPage.res == nil || burstPage.res == nil {
		t.Fatal("the page fixtures could not be made (see the first test's log)")
	}
}

// comparison is A (pageQueue) against B (slowQueue), swept at the same rates, priced in USD.
func comparison(t *testing.T) compare.Result {
	t.Helper()
	pageResults(t)
	res, err := compare.Results(compare.Side{Name: "A", Path: "out/a", Result: fastPage.res}, compare.Side{Name: "B", Path: "out/b", Result: slowPage.res},
		compare.Options{Costs: &compare.Costs{A: 4, B: 3, Currency: "USD"}})
	if err != nil {
		t.Fatal(err, res.Mismatches)
	}
	return res
}

// plans are A and B planned for a day's profile, in currency (none: cost units).
func plans(t *testing.T, currency string) ([]plan.Result, *plan.Comparison) {
	t.Helper()
	pageResults(t)
	var ds []plan.Deployment
	for i, r := range []*result.Result{fastPage.res, slowPage.res} {
		d, _, err := plan.FromAnalysis([]string{"A", "B"}[i], r.Analysis)
		if err != nil {
			t.Fatal(err)
		}
		d.CostPerHour = []float64{4, 2.5}[i]
		ds = append(ds, d)
	}
	f := plan.Forecast{Period: plan.Day, Points: []plan.Point{{T: 0, Rate: 5}, {T: 6 * time.Hour, Rate: 30}, {T: 9 * time.Hour, Rate: 61}, {T: 18 * time.Hour, Rate: 25}}}
	c, err := plan.CompareDeployments(ds[0], ds[1], f, plan.Options{ScaleUpLag: 10 * time.Minute, Currency: currency})
	if err != nil {
		t.Fatal(err)
	}
	return []plan.Result{c.A, c.B}, &c
}
