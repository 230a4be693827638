package sweep

import (
	"context"
	"math"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
)

// TrialTier is one rehearsal tier of a plan: the forecast's peak, flat, sent to the replicas
// a Runner stands for, seeded, within its bounds.
type TrialTier struct {
	Peak float64
	Seed int64
	// TierRequests bounds the arrivals the tier plans. 0: as long in time as the sweep's
	// confirmation needed to be (ConfirmRequests, with misses as clustered as the sweep
	// measured them, times the peak over the operating point's rate: misses cluster in time, so
	// N replicas' tier at N times the rate needs N times the requests for the same evidence), and
	// at least TrialTierRequests.
	TierRequests int
	// MaxTierDuration bounds the tier's arrival phase. 0: TrialMaxTierDuration, a confirmation
	// tier's.
	MaxTierDuration time.Duration
	// Log, when not nil, gets the sweep's progress lines.
	Log func(format string, a ...any)
}

// The bounds of a rehearsal tier nobody chose: a confirmation tier's.
const (
	TrialTierRequests    = ConfirmFactor * DefaultTierRequests
	TrialMaxTierDuration = ConfirmFactor * DefaultMaxTierDuration
)

// RunTrial runs one rehearsal tier of the sweep res on runner (the replicas behind their
// balancer): the peak, flat, with res's burstiness and settings (objectives, target share,
// confidence, steady-state window), until the tier's verdict is decided, as a sweep's
// confirmation tier is. Each replica then sees the peak over the replicas with the same
// burstiness: a plan's scale-out assumption. It returns the tier's verdict; ran is false when
// the tier gave none. A configuration error is returned as Config.Validate names it.
func RunTrial(ctx context.Context, res *result.Result, runner Runner, t TrialTier) (v curve.PointVerdict, ran bool, err error) {
	cfg, err := t.config(res)
	if err != nil {
		return v, false, err
	}
	out, err := (&Executor{Config: cfg, Runner: runner, Log: t.Log}).Run(ctx)
	if err != nil {
		return v, false, err
	}
	for _, p := range out.Analysis.Points {
		v, ran = p, true
	}
	return v, ran, nil
}

// Validate returns what RunTrial would refuse in t for a rehearsal of res, before anything is
// started: a configuration error as Config.Validate names it.
func (t TrialTier) Validate(res *result.Result) error {
	_, err := t.config(res)
	return err
}

// config is the one-tier sweep of a trial.
func (t TrialTier) config(res *result.Result) (Config, error) {
	burst := arrival.DefaultBurstiness
	if len(res.Tiers) > 0 {
		if b := float64(res.Tiers[0].Tier.Burstiness); b > 0 && !math.IsInf(b, 0) {
			burst = arrival.Burstiness(b)
		}
	}
	n := t.TierRequests
	if n == 0 {
		var sums []measure.Summary
		for _, tr := range res.Tiers {
			sums = append(sums, tr.Summary)
		}
		scale := 1.0
		if op := res.Analysis.OperatingPoint; op != nil && op.Rate > 0 && t.Peak > op.Rate {
			scale = t.Peak / op.Rate
		}
		n = max(TrialTierRequests, int(math.Ceil(scale*ConfirmRequests(sums, res.Settings.Params))))
	}
	maxDur := t.MaxTierDuration
	if maxDur == 0 {
		maxDur = TrialMaxTierDuration
	}
	// A trial is as long as its tier says, not cut by a sweep's budget (a stated zero: none).
	cfg := Config{Rates: Rates{List: []float64{t.Peak}}, Burstiness: burst, Seed: t.Seed, Settings: res.Settings,
		TierRequests: n, MaxTierDuration: maxDur, MinTierDuration: min(DefaultMinTierDuration, maxDur), Given: Given{Budget: true}}
	if errs := cfg.Validate(); len(errs) > 0 {
		return cfg, errs[0]
	}
	return cfg, nil
}
