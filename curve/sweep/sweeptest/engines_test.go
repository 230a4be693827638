package sweeptest_test

import (
	"testing"

	"github.com/loadcurve/loadcurve/curve/sweep/sweeptest"
	"github.com/loadcurve/loadcurve/internal/racedetector"
)

// TestEngineTruthsHold: testdata/engine_truth.json holds a truth for every batching deployment
// as it is now (EngineTruths refuses a stale one), and each still brackets the target: on runs
// of 10,000 requests, at 0.85 times the capacity the share meets 99 %, at 1.15 times it does not
// (the share falls from about 99.9 % to 90 % over ±10 % of the rate on these engines, so a
// truth off by the spread of its seeds fails neither).
func TestEngineTruthsHold(t *testing.T) {
	truths, err := sweeptest.EngineTruths()
	if err != nil {
		t.Fatal(err)
	}
	if racedetector.Enabled {
		t.Skip("the runs check the engine's model, not concurrency: natively only")
	}
	for i, d := range sweeptest.DecisionEngines {
		tr := truths[i]
		if tr.StdErr > 0.01*tr.Capacity || len(tr.Seeds) < 2 {
			t.Errorf("%s: capacity %.4g ± %.2g over %d seeds: not a truth", d.Name, tr.Capacity, tr.StdErr, len(tr.Seeds))
		}
		below, err := d.Share(0.85*tr.Capacity, 10_000, 7)
		if err != nil {
			t.Fatal(err)
		}
		above, err := d.Share(1.15*tr.Capacity, 10_000, 7)
		if err != nil {
			t.Fatal(err)
		}
		if below.Share < 0.99 || above.Share >= 0.99 {
			t.Errorf("%s: the share is %.4f at 0.85 times the capacity %.4g and %.4f at 1.15 times it: the truth no longer brackets 99 %%",
				d.Name, below.Share, tr.Capacity, above.Share)
		}
	}
}
