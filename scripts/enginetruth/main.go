// Command enginetruth finds, by brute force, the true capacity of each continuous-batching
// deployment the sweep's decisions are held to (sweeptest.DecisionEngines): the rate at which
// the share of requests meeting its objectives crosses 99 % in steady state, by bisection over
// long virtual runs (sim.SimulateEngine, the HTTP deployment's own model), and the oracle's
// least load to certify it to ±10 % (sweeptest.DecisionEngine.EngineOracle). It writes them to
// curve/sweep/sweeptest/testdata/engine_truth.json, which the time-to-decision benchmark reads, and
// prints them as markdown.
//
//	go run ./scripts/enginetruth                 # about 15 minutes on 2 cores
//	go run ./scripts/enginetruth -seeds 3        # the capacity again with seeds 2 and 3
//	go run ./scripts/enginetruth -oracle-precision 0.05   # the oracle for ±5 % of the truths in the file (about 10 minutes)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/loadcurve/loadcurve/curve/sweep/sweeptest"
)

func main() {
	n := flag.Int("requests", 200_000, "requests per run of the bisection")
	oracleN := flag.Int("oracle-requests", 400_000, "requests per run at 0.9 and 1.1 times the capacity")
	rel := flag.Float64("rel", 0.005, "stop the bisection when its two rates are this close (relative)")
	seeds := flag.Int("seeds", 4, "seeds to find the capacity with: the truth is the mean of their capacities")
	out := flag.String("out", "curve/sweep/sweeptest/testdata/engine_truth.json", "the file to write")
	only := flag.String("only", "", "find the truth of this deployment only (by name), keeping the others' in the file")
	oraclePrecision := flag.Float64("oracle-precision", 0, "only print the oracle's least load to certify the truths in the file to ±this (e.g. 0.05), writing nothing")
	flag.Parse()
	if *oraclePrecision > 0 {
		if err := oracleOnly(*out, *oracleN, *oraclePrecision); err != nil {
			fmt.Fprintln(os.Stderr, "enginetruth:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*n, *oracleN, *rel, *seeds, *out, *only); err != nil {
		fmt.Fprintln(os.Stderr, "enginetruth:", err)
		os.Exit(1)
	}
}

func run(n, oracleN int, rel float64, seeds int, out, only string) error {
	const target, confidence, precision = 0.99, 0.95, 0.1
	var truths []sweeptest.EngineTruth
	if data, err := os.ReadFile(out); err == nil {
		_ = json.Unmarshal(data, &truths) // a file that does not read is written anew
	}
	fmt.Println("| deployment | true capacity (± s.e.) | seed 1's bracketing runs (share ± s.e.) | each seed's | variance factor at 0.9·T, 1.1·T | oracle | CPU |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, d := range sweeptest.DecisionEngines {
		if only != "" && d.Name != only {
			continue
		}
		start := time.Now()
		lo, hi, err := bracket(d, target)
		if err != nil {
			return err
		}
		t, err := d.Capacity(target, lo, hi, n, rel, 1)
		if err != nil {
			return err
		}
		t.Seeds = []float64{t.Capacity}
		for seed := int64(2); seed <= int64(seeds); seed++ {
			o, err := d.Capacity(target, t.Below.Rate*0.95, t.Above.Rate*1.05, n, rel, seed)
			if err != nil {
				return err
			}
			t.Seeds = append(t.Seeds, o.Capacity)
		}
		var sum, sumSq float64
		for _, c := range t.Seeds {
			sum, sumSq = sum+c, sumSq+c*c
		}
		k := float64(len(t.Seeds))
		t.Capacity = sum / k
		if k > 1 {
			t.StdErr = math.Sqrt(math.Max(0, (sumSq-k*t.Capacity*t.Capacity)/(k-1)) / k)
		}
		others := ""
		for _, c := range t.Seeds {
			others += fmt.Sprintf("%.4g ", c)
		}
		if t.Oracle, err = d.EngineOracle(t.Capacity, target, confidence, precision, oracleN, 1); err != nil {
			return err
		}
		truths = slices.DeleteFunc(truths, func(o sweeptest.EngineTruth) bool { return o.Name == t.Name })
		truths = append(truths, t)
		if err := write(out, truths); err != nil {
			return err
		}
		fmt.Printf("| %s | %.4g req/s (± %.2f %%) | %.4g: %.4f ± %.4f, %.4g: %.4f ± %.4f | %s| %.1f, %.1f | %.0f s | %v |\n", d.Name, t.Capacity, 100*t.StdErr/t.Capacity,
			t.Below.Rate, t.Below.Share, t.Below.StdErr, t.Above.Rate, t.Above.Share, t.Above.StdErr, others,
			t.Oracle.Below.VarianceFactor, t.Oracle.Above.VarianceFactor, t.Oracle.Seconds, time.Since(start).Round(time.Second))
	}
	return nil
}

// oracleOnly prints, for every truth in the file at out, the oracle's least load to certify it
// to ±precision: what any method judging requests by whether they complied needs at least.
func oracleOnly(out string, oracleN int, precision float64) error {
	const target, confidence = 0.99, 0.95
	data, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	var truths []sweeptest.EngineTruth
	if err := json.Unmarshal(data, &truths); err != nil {
		return fmt.Errorf("read %s: %w", out, err)
	}
	fmt.Printf("| deployment | true capacity | share at %.2g·T, variance factor, seconds | share at %.2g·T, variance factor, seconds | oracle for ±%.3g %% |\n", 1-precision, 1+precision, 100*precision)
	fmt.Println("| --- | --- | --- | --- | --- |")
	for _, d := range sweeptest.DecisionEngines {
		i := slices.IndexFunc(truths, func(t sweeptest.EngineTruth) bool { return t.Name == d.Name })
		if i < 0 {
			return fmt.Errorf("%s: no truth in %s (run enginetruth without -oracle-precision first)", d.Name, out)
		}
		o, err := d.EngineOracle(truths[i].Capacity, target, confidence, precision, oracleN, 1)
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %.4g req/s | %.5f, %.1f, %.0f s | %.5f, %.1f, %.0f s | %.0f s |\n", d.Name, truths[i].Capacity,
			o.Below.Share, o.Below.VarianceFactor, o.Below.Seconds, o.Above.Share, o.Above.VarianceFactor, o.Above.Seconds, o.Seconds)
	}
	return nil
}

// write keeps the truths found so far, in the order of sweeptest.DecisionEngines.
func write(out string, truths []sweeptest.EngineTruth) error {
	order := func(name string) int {
		return slices.IndexFunc(sweeptest.DecisionEngines, func(d sweeptest.DecisionEngine) bool { return d.Name == name })
	}
	slices.SortFunc(truths, func(a, b sweeptest.EngineTruth) int { return order(a.Name) - order(b.Name) })
	data, err := json.MarshalIndent(truths, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(data, '\n'), 0o644)
}

// bracket finds two rates a factor 1.25 apart whose shares, on short runs, lie on either side
// of target; the bisection then starts from a little outside them.
func bracket(d sweeptest.DecisionEngine, target float64) (float64, float64, error) {
	rate := 0.5
	for range 40 {
		s, err := d.Share(rate, 8000, 1)
		if err != nil {
			return 0, 0, err
		}
		if s.Share < target {
			return rate / 1.25 / 1.1, rate * 1.1, nil
		}
		rate *= 1.25
	}
	return 0, 0, fmt.Errorf("%s: no rate up to %.4g req/s misses the target", d.Name, rate)
}
