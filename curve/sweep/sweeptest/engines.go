package sweeptest

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// DecisionEngine is a continuous-batching deployment (the embedded deployment's engine, served
// on the virtual clock by virtual.EngineRunner) with its workload and objectives. Unlike an
// M/D/c queue its steady state has no closed form: its capacity is found by brute force
// (Capacity), from long runs whose share of compliant requests is known far more precisely
// than a sweep's decisions need.
type DecisionEngine struct {
	Name   string
	Config sim.Config
	// Workload is the request set's spec and options (workloads.Load); Cache its policy ("" for
	// the default: cold for generated sets).
	Workload   string
	Options    workloads.LoadOptions
	Cache      string
	IgnoreEOS  bool
	Objectives measure.Objectives
}

// Fingerprint identifies the deployment, its workload and objectives (and the engine's model
// version: what the truth was computed with).
func (d DecisionEngine) Fingerprint() string {
	data, err := json.Marshal(struct {
		Config                 sim.Config
		Workload, Cache, Synth string
		Shared                 workloads.SharedPrefix
		IgnoreEOS              bool
		Objectives             string
	}{d.Config, d.Workload, d.Cache, d.Options.Synthetic.String(), d.Options.SharedPrefix, d.IgnoreEOS, d.Objectives.String()})
	if err != nil {
		panic(err) // plain data always marshals
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

//go:embed testdata/engine_truth.json
var engineTruthJSON []byte

// EngineTruths are the DecisionEngines' capacities found by scripts/enginetruth (kept in
// testdata/engine_truth.json), in the order of DecisionEngines. It fails when the file does not
// hold one for each deployment as it is now: run the script again.
func EngineTruths() ([]EngineTruth, error) {
	var ts []EngineTruth
	if err := json.Unmarshal(engineTruthJSON, &ts); err != nil {
		return nil, fmt.Errorf("testdata/engine_truth.json: %w", err)
	}
	out := make([]EngineTruth, len(DecisionEngines))
	for i, d := range DecisionEngines {
		k := slices.IndexFunc(ts, func(t EngineTruth) bool { return t.Name == d.Name })
		if k < 0 || ts[k].Deployment != d.Fingerprint() {
			return nil, fmt.Errorf("testdata/engine_truth.json holds no truth for %q as it is now: run go run ./scripts/enginetruth", d.Name)
		}
		out[i] = ts[k]
	}
	return out, nil
}

// Runner is a fresh virtual runner of the deployment.
func (d DecisionEngine) Runner() (*virtual.EngineRunner, error) {
	src, errs := workloads.NewSource(d.Workload, d.Options, d.Cache)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: workload: %w", d.Name, errors.Join(errs...))
	}
	return &virtual.EngineRunner{Config: d.Config, Workload: src, IgnoreEOS: d.IgnoreEOS}, nil
}

// ShareEstimate is a long run's share of requests meeting the objectives, with its standard
// error by batch means over consecutive requests (misses cluster, so not the binomial one).
type ShareEstimate struct {
	Rate     float64 `json:"rate"`
	Share    float64 `json:"share"`
	StdErr   float64 `json:"std_err"`
	Requests int     `json:"requests"` // those counted: the run's, less its first and last
	// VarianceFactor is how much the misses cluster: the variance of the share over batches of
	// BatchRequests consecutive requests, over the binomial variance at that size (1 when the
	// share is 0 or 1).
	VarianceFactor float64 `json:"variance_factor"`
	BatchRequests  int     `json:"batch_requests"`
	// MedianSojournS is the median time in system (end − planned), in seconds.
	MedianSojournS float64 `json:"median_sojourn_s"`
}

// truthBatches is the number of batches of consecutive requests the standard error is taken
// over; truthTrim the share of a run's first requests, and of its last, left out: the engine
// starts idle, and the last requests meet a batch that no longer grows.
const (
	truthBatches = 40
	truthTrim    = 0.05
)

// Share runs n Poisson arrivals at rate with seed through the engine and measures the share
// of them that meet the objectives, leaving out the first and the last truthTrim of them.
func (d DecisionEngine) Share(rate float64, n int, seed int64) (ShareEstimate, error) {
	run, err := d.Runner()
	if err != nil {
		return ShareEstimate{}, err
	}
	offs, err := arrival.Spec{Rate: rate, Burstiness: 1}.Arrivals(n, 0, seed, 0)
	if err != nil {
		return ShareEstimate{}, err
	}
	plan := sweep.Plan{Tier: records.Tier{Kind: records.KindTier, Seed: seed, Planned: n}, Offsets: offs, ArrivalsEnd: offs[len(offs)-1]}
	reqs, err := d.requests(run, plan)
	if err != nil {
		return ShareEstimate{}, err
	}
	met := make([]int8, n)
	sojourn := make([]float64, 0, n)
	sink := sinkFunc(func(r *records.Record) error {
		if d.Objectives.Compliant(r) {
			met[r.ID] = 1
		}
		sojourn = append(sojourn, (r.End - r.Planned).Seconds())
		return nil
	})
	if _, err := run.RunEngineRequests(context.Background(), plan, reqs, nil, sink, nil); err != nil {
		return ShareEstimate{}, err
	}
	trim := int(truthTrim * float64(n))
	counted := met[trim : n-trim]
	per := len(counted) / truthBatches
	if per < 1 {
		return ShareEstimate{}, fmt.Errorf("%s: %d requests are too few for %d batches", d.Name, n, truthBatches)
	}
	var sum, sumSq float64
	total, ok := 0, 0
	for b := range truthBatches {
		m := 0
		for _, v := range counted[b*per : (b+1)*per] {
			m += int(v)
		}
		x := float64(m) / float64(per)
		sum, sumSq = sum+x, sumSq+x*x
		total, ok = total+per, ok+m
	}
	mean := sum / truthBatches
	v := math.Max(0, sumSq/truthBatches-mean*mean) * truthBatches / (truthBatches - 1)
	est := ShareEstimate{Rate: rate, Share: float64(ok) / float64(total), StdErr: math.Sqrt(v / truthBatches), Requests: total,
		VarianceFactor: 1, BatchRequests: per}
	if binom := mean * (1 - mean) / float64(per); binom > 0 {
		est.VarianceFactor = math.Max(1, v/binom)
	}
	slices.Sort(sojourn)
	est.MedianSojournS = sojourn[len(sojourn)/2]
	return est, nil
}

// requestsOf keeps the engine's requests of the last run of Share: the bisection runs one
// request set (one seed) at every rate, only its arrivals scaled, and making the set (writing
// and counting thousands of prompts) costs more than running it.
var requestsOf struct {
	sync.Mutex
	key  string
	reqs []sim.EngineRequest
}

// requests are the engine's requests of plan's tier for d, their arrivals plan's.
func (d DecisionEngine) requests(run *virtual.EngineRunner, plan sweep.Plan) ([]sim.EngineRequest, error) {
	key := fmt.Sprintf("%s/%d/%d", d.Fingerprint(), len(plan.Offsets), plan.Tier.Seed)
	requestsOf.Lock()
	defer requestsOf.Unlock()
	if requestsOf.key != key {
		set, _, err := run.Workload.TierSet(len(plan.Offsets), plan.Tier.Seed)
		if err == nil {
			set, err = run.Workload.ApplyCache(set, fmt.Sprintf("[run:%016x]", uint64(plan.Tier.Seed)))
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		reqs, rejected := run.EngineRequests(plan.Tier, plan.Offsets, set.Requests)
		if len(rejected) > 0 {
			return nil, fmt.Errorf("%s: %d requests too long for the context", d.Name, len(rejected))
		}
		requestsOf.key, requestsOf.reqs = key, reqs
	}
	out := slices.Clone(requestsOf.reqs)
	for i := range out {
		out[i].Arrival = plan.Offsets[i]
	}
	return out, nil
}

type sinkFunc func(*records.Record) error

func (f sinkFunc) Write(r *records.Record) error { return f(r) }

// EngineTruth is a deployment's capacity found by brute force: the rate at which its
// steady-state share crosses the target, and the rates around it whose shares bracket it.
type EngineTruth struct {
	Name string `json:"name"`
	// Deployment is the Fingerprint of the deployment it was found for: a truth is stale when
	// the deployment it names has changed since.
	Deployment string  `json:"deployment"`
	Capacity   float64 `json:"capacity"`
	// Below and Above are the two long runs the capacity is interpolated between; Runs every
	// run of the bisection.
	Below    ShareEstimate   `json:"below"`
	Above    ShareEstimate   `json:"above"`
	Runs     []ShareEstimate `json:"runs"`
	Requests int             `json:"requests"` // per run
	Seed     int64           `json:"seed"`
	// Seeds are the capacities found with seeds 1, 2, …, each its own bisection; Capacity is
	// their mean, StdErr its standard error (their spread over √k).
	Seeds  []float64 `json:"seeds,omitempty"`
	StdErr float64   `json:"std_err,omitempty"`
	// Oracle is the least load that certifies the capacity to ±10 % (EngineOracle).
	Oracle OracleResult `json:"oracle"`
}

// Capacity finds the rate where the share crosses target by bisection over runs of n requests
// (the same seed at every rate: one stream of arrivals, scaled, so the share falls smoothly
// with the rate), between lo and hi req/s, until they are within rel of each other, then
// interpolates linearly between the two runs that bracket it.
func (d DecisionEngine) Capacity(target float64, lo, hi float64, n int, rel float64, seed int64) (EngineTruth, error) {
	t := EngineTruth{Name: d.Name, Deployment: d.Fingerprint(), Requests: n, Seed: seed}
	eval := func(rate float64) (ShareEstimate, error) {
		s, err := d.Share(rate, n, seed)
		if err == nil {
			t.Runs = append(t.Runs, s)
		}
		return s, err
	}
	below, err := eval(lo)
	if err != nil {
		return t, err
	}
	above, err := eval(hi)
	if err != nil {
		return t, err
	}
	if below.Share < target || above.Share >= target {
		return t, fmt.Errorf("%s: the shares at %.4g and %.4g req/s (%.4f, %.4f) do not bracket %.4g", d.Name, lo, hi, below.Share, above.Share, target)
	}
	for above.Rate/below.Rate > 1+rel {
		mid := math.Sqrt(below.Rate * above.Rate)
		s, err := eval(mid)
		if err != nil {
			return t, err
		}
		if s.Share >= target {
			below = s
		} else {
			above = s
		}
	}
	t.Below, t.Above = below, above
	f := (below.Share - target) / (below.Share - above.Share)
	t.Capacity = below.Rate + f*(above.Rate-below.Rate)
	return t, nil
}

// EngineOracle is Oracle's least load that certifies a capacity to ±precision, for an engine:
// one tier at (1 − precision)·T that meets the target and one at (1 + precision)·T that misses
// it, each just long enough for its interval (Wilson's on the effective sample) to exclude the
// target, plus the sweep's warm-up. The shares and how much their misses cluster come from long
// runs of n requests there (ShareEstimate's variance factor over batches, standing for the
// oracle's independent tiers).
func (d DecisionEngine) EngineOracle(truth, target, confidence, precision float64, n int, seed int64) (OracleResult, error) {
	res := OracleResult{Capacity: truth}
	for i, m := range []float64{1 - precision, 1 + precision} {
		s, err := d.Share(m*truth, n, seed)
		if err != nil {
			return res, err
		}
		eff, err := curve.NeededEffective(s.Share, target, confidence)
		if err != nil {
			return res, fmt.Errorf("%s at %.4g req/s: %w", d.Name, s.Rate, err)
		}
		t := OracleTier{Rate: s.Rate, Share: s.Share, VarianceFactor: s.VarianceFactor, EffectiveRequests: eff, Requests: eff * s.VarianceFactor}
		phase := t.Requests / t.Rate
		warm := math.Min(measure.WarmupMultiple*s.MedianSojournS, measure.MaxWarmupFraction/(1-measure.MaxWarmupFraction)*phase)
		t.Seconds = phase + warm
		if i == 0 {
			res.Below = t
		} else {
			res.Above = t
		}
	}
	res.Seconds = res.Below.Seconds + res.Above.Seconds
	return res, nil
}

// engineBase is the engine every DecisionEngine starts from: the embedded deployment's default
// profile with one token a step and no early stop.
func engineBase() sim.Config {
	c, err := sim.Profile(sim.ProfileDefault)
	if err != nil {
		panic(err)
	}
	c.TokensPerChunk, c.EOSProbability, c.MaxModelLen, c.PrefixCacheBlocks = 1, 0, 8192, 0
	return c
}

// DecisionEngines are the continuous-batching deployments the sweep's decisions are held to
// besides the M/D/c queues (DecisionQueues): a step's time grows with the batch and the KV it
// attends to, prefills share steps with decodes, output lengths end at EOS, a prefix cache makes
// some prompts cheap, and preemption some requests dear. Their capacities are EngineTruths.
var DecisionEngines = func() []DecisionEngine {
	// Decode-bound: 32 sequences whose steps lengthen with the batch (0.3 ms a sequence) and
	// with the KV it attends to (20 ns a token): TPOT binds as the batch fills.
	decode := engineBase()
	decode.MaxNumSeqs, decode.KVCacheTokens, decode.MaxBatchedTokens = 32, 131072, 2048
	decode.StepBase, decode.StepPerSeq, decode.StepPerKVToken, decode.PrefillRate = 8*time.Millisecond, 300*time.Microsecond, 20*time.Nanosecond, 50_000

	// Prefill-bound: prompts of 2,000 to 4,000 tokens prefilled in chunks of 512 that share steps
	// with the decodes beside them, at 20,000 prompt tokens a second: TTFT binds, and every
	// admission stalls the decodes a little.
	prefill := engineBase()
	prefill.MaxNumSeqs, prefill.KVCacheTokens, prefill.MaxBatchedTokens = 16, 131072, 512
	prefill.StepBase, prefill.StepPerSeq, prefill.StepPerKVToken, prefill.PrefillRate = 6*time.Millisecond, 200*time.Microsecond, 5*time.Nanosecond, 20_000

	// Heavy tail: outputs end at EOS with a log-normal length of mean 200 tokens and coefficient
	// of variation 1.5 (a median of 111, one in a hundred beyond 1,300), max_tokens 2,048.
	tail := engineBase()
	tail.MaxNumSeqs, tail.KVCacheTokens, tail.MaxBatchedTokens = 32, 262144, 2048
	tail.StepBase, tail.StepPerSeq, tail.StepPerKVToken, tail.PrefillRate = 8*time.Millisecond, 300*time.Microsecond, 10*time.Nanosecond, 50_000
	tail.EOSLengthMean, tail.EOSLengthCV = 200, 1.5

	// Shared prefix: 8 groups of requests sharing 1,536 tokens of prompt ahead of 128 of their
	// own, with the prefix cache on (16-token blocks): a request whose group's prefix is cached
	// prefills a tenth of its prompt.
	prefix := engineBase()
	prefix.MaxNumSeqs, prefix.KVCacheTokens, prefix.MaxBatchedTokens = 32, 131072, 2048
	prefix.StepBase, prefix.StepPerSeq, prefix.StepPerKVToken, prefix.PrefillRate = 8*time.Millisecond, 300*time.Microsecond, 10*time.Nanosecond, 25_000
	prefix.BlockSize, prefix.PrefixCacheBlocks = 16, 4096

	// Preemption: KV for 16,384 tokens, with optimistic admission: 32 sequences of 512 + 512
	// tokens outgrow it, and the newest is preempted and recomputed.
	preempt := engineBase()
	preempt.MaxNumSeqs, preempt.KVCacheTokens, preempt.MaxBatchedTokens, preempt.Preempt = 32, 16384, 2048, true
	preempt.StepBase, preempt.StepPerSeq, preempt.StepPerKVToken, preempt.PrefillRate = 8*time.Millisecond, 300*time.Microsecond, 10*time.Nanosecond, 50_000

	synthetic := func(in, out int, ratio float64) workloads.LoadOptions {
		return workloads.LoadOptions{Synthetic: workloads.Synthetic{InputLen: in, OutputLen: out, RangeRatio: ratio}, TimeScale: 1}
	}
	return []DecisionEngine{
		{Name: "decode-bound, 32 seqs", Config: decode, Workload: workloads.KindSynthetic, Options: synthetic(512, 128, 0), IgnoreEOS: true,
			Objectives: measure.Objectives{TTFT: time.Second, TPOT: 25 * time.Millisecond}},
		{Name: "prefill-bound, 3k-token prompts", Config: prefill, Workload: workloads.KindSynthetic, Options: synthetic(3000, 64, 0.33), IgnoreEOS: true,
			Objectives: measure.Objectives{TTFT: 2 * time.Second, TPOT: 40 * time.Millisecond}},
		{Name: "heavy-tailed outputs at EOS", Config: tail, Workload: workloads.KindSynthetic, Options: synthetic(256, 2048, 0),
			Objectives: measure.Objectives{TTFT: time.Second, TPOT: 25 * time.Millisecond}},
		{Name: "shared prefix, prefix cache on", Config: prefix, Workload: workloads.KindSharedPrefix,
			Options:    workloads.LoadOptions{SharedPrefix: workloads.SharedPrefix{Groups: 8, PrefixLen: 1536, SuffixLen: 128, OutputLen: 128}, TimeScale: 1},
			IgnoreEOS:  true,
			Objectives: measure.Objectives{TTFT: time.Second, TPOT: 25 * time.Millisecond}},
		{Name: "preemption, 16k tokens of KV", Config: preempt, Workload: workloads.KindSynthetic, Options: synthetic(512, 512, 0), IgnoreEOS: true,
			Objectives: measure.Objectives{TTFT: 2 * time.Second, TPOT: 40 * time.Millisecond}},
	}
}()
