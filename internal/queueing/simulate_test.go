package queueing_test

import (
	"math"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/internal/queueing"
)

// TestSimulateMatchesFormula compares the share of waits ≤ x over a
// long Poisson run of Simulate with MDCWaitCDF, within 4 batch-means standard errors.
func TestSimulateMatchesFormula(t *testing.T) {
	cfg := queueing.Config{Servers: 4, Service: 400 * time.Millisecond} // the embedded deployment's default queue
	const rho = 0.8
	lambda := rho * float64(cfg.Servers) / cfg.Service.Seconds()
	arrivals, err := arrival.Spec{Rate: lambda, Burstiness: 1}.Arrivals(1_000_000, 0, 2, 0) // Poisson, seeded
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var res []queueing.Result
	if err := queueing.Simulate(cfg, arrivals, func(r queueing.Result) bool { res = append(res, r); return false }); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests simulated in %v", len(res), time.Since(start))
	waits := make([]time.Duration, len(arrivals))
	for _, r := range res {
		waits[r.Index] = r.Wait()
	}
	waits = waits[20_000:] // warm-up from the empty queue
	for _, x := range []time.Duration{0, 100 * time.Millisecond, 400 * time.Millisecond, 900 * time.Millisecond} {
		y := make([]bool, len(waits))
		for i, w := range waits {
			y[i] = w <= x
		}
		mc, se := batchMeans(y, 100)
		p, err := queueing.MDCWaitCDF(lambda, cfg.Service, cfg.Servers, x)
		if err != nil {
			t.Fatal(err)
		}
		z := (mc - p) / se
		t.Logf("%+v ρ=%v x=%v: formula %.5f, Simulate %.5f ± %.5f (%+.2f SE)", cfg, rho, x, p, mc, se, z)
		if se == 0 || math.Abs(z) > 4 {
			t.Errorf("x=%v: formula %.5f, Simulate %.5f ± %.5f", x, p, mc, se)
		}
	}
}
