package virtual

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/records"
)

// collect keeps every record.
type collect []records.Record

func (c *collect) Write(r *records.Record) error { *c = append(*c, *r); return nil }

func poissonOffsets(n int, rate float64, seed uint64) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]time.Duration, n)
	at := 0.0
	for i := range out {
		at += rng.ExpFloat64() / rate
		out[i] = time.Duration(at * float64(time.Second))
	}
	return out
}

var clusterQueue = sim.QueueConfig{ModelName: "m", Servers: 4, Service: 400 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: 4}

// TestClusterOfOneIsTheQueue: one replica behind the balancer serves exactly as QueueRunner.
func TestClusterOfOneIsTheQueue(t *testing.T) {
	offsets := poissonOffsets(3000, 9, 1)
	p := sweep.Plan{Offsets: offsets, ArrivalsEnd: offsets[len(offsets)-1]}
	var a, b collect
	idA, err := (&QueueRunner{Config: clusterQueue}).RunTier(context.Background(), p, &a, nil)
	if err != nil {
		t.Fatal(err)
	}
	idB, err := (&ClusterQueueRunner{Config: clusterQueue, Replicas: 1, Policy: sim.BalanceRandom, Seed: 3}).RunTier(context.Background(), p, &b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(idA.End, idB.End) {
		t.Errorf("one replica differs from the queue: %d vs %d records, ends %+v vs %+v", len(a), len(b), idA.End, idB.End)
	}
}

// TestClusterRandomIsTheThinnedQueue: a random balancer over N replicas gives each a Poisson
// stream at rate/N, so the share of waits within a bound is the M/D/c one at rate/N
// (queueing.MDCWaitCDF). Measured on 120,000 arrivals in 20 batches (the first tenth dropped): the
// mean is within four batch-means standard errors of the truth. Round-robin, a smoother stream,
// waits less than that.
func TestClusterRandomIsTheThinnedQueue(t *testing.T) {
	const replicas, perReplica, n, batches = 3, 8.5, 120_000, 20
	bound := 200 * time.Millisecond
	truth, err := queueing.MDCWaitCDF(perReplica, clusterQueue.Service, clusterQueue.Servers, bound)
	if err != nil {
		t.Fatal(err)
	}
	offsets := poissonOffsets(n, replicas*perReplica, 5)
	p := sweep.Plan{Offsets: offsets, ArrivalsEnd: offsets[n-1]}
	share := func(policy string) (mean, se float64) {
		var recs collect
		if _, err := (&ClusterQueueRunner{Config: clusterQueue, Replicas: replicas, Policy: policy, Seed: 11}).RunTier(context.Background(), p, &recs, nil); err != nil {
			t.Fatal(err)
		}
		if len(recs) != n {
			t.Fatalf("%s: %d records of %d arrivals", policy, len(recs), n)
		}
		met := make([]float64, batches)
		from := n / 10
		size := (n - from) / batches
		for _, r := range recs {
			if r.ID < from || r.ID >= from+batches*size {
				continue
			}
			if r.First-clusterQueue.FirstToken-r.Sent <= bound {
				met[(r.ID-from)/size]++
			}
		}
		var sum, sq float64
		for i := range met {
			met[i] /= float64(size)
			sum += met[i]
		}
		mean = sum / batches
		for _, m := range met {
			sq += (m - mean) * (m - mean)
		}
		return mean, math.Sqrt(sq / (batches - 1) / batches)
	}
	got, se := share(sim.BalanceRandom)
	if math.Abs(got-truth) > 4*se {
		t.Errorf("random over %d replicas: %.4f of waits within %v (± %.4f), the M/D/%d truth at %g req/s is %.4f", replicas, got, bound, se, clusterQueue.Servers, perReplica, truth)
	}
	rr, rse := share(sim.BalanceRoundRobin)
	if !(rr > truth+2*rse) {
		t.Errorf("round-robin over %d replicas: %.4f (± %.4f) within %v, want more than the Poisson stream's %.4f", replicas, rr, rse, bound, truth)
	}
	t.Logf("within %v: truth %.4f, random %.4f ± %.4f, round-robin %.4f ± %.4f", bound, truth, got, se, rr, rse)
}
