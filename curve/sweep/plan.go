package sweep

import (
	"context"
	"hash/fnv"
	"math"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Plan is one tier as the executor hands it to a Runner: its identity and its arrivals.
type Plan struct {
	// Tier is the tier's identity, written as its tier line (Planned = len(Offsets)). The runner
	// fills in what only it knows: WorkloadFingerprint, StartWall and the closing line.
	Tier records.Tier
	// Offsets are the planned arrivals from T0, non-decreasing.
	Offsets []time.Duration
	// ArrivalsEnd is where the arrival phase ends when nothing stops it early: the tier's
	// duration or cap for a duration-bound tier, the last offset for a count-bound one.
	ArrivalsEnd time.Duration
	// Grace is how long requests still running may go on after the arrival phase before they
	// are canceled (the tier's second deadline).
	Grace time.Duration
	// StartAt is the wall-clock T0 shared by every shard of a sharded run; zero: at once.
	StartAt time.Time
	// Label names the tier in progress output, e.g. "tier 3 of at most 31 (8.02 req/s)", and
	// Status, when set, says beside its counters how long the tier may still run and, in a
	// sweep with a budget, the load used of it and the time left at most, given the time since
	// the tier started (loadgen.Progress.Status).
	Label  string
	Status func(elapsed time.Duration) string
	// Pool and StopAfter are a closed-loop tier's (on curve.AxisUsers; Offsets are then the users'
	// starts): the requests its users draw from, and when they stop sending (0: when the pool
	// is empty).
	Pool      int
	StopAfter time.Duration
}

// Requests is how many requests the tier's request set holds: one per planned arrival, or
// the pool a closed loop's users draw from.
func (p Plan) Requests() int {
	if curve.AxisOfTier(p.Tier) == curve.AxisUsers {
		return p.Pool
	}
	return len(p.Offsets)
}

// Sink receives a tier's records, from one goroutine, as its requests end. It may keep the
// record's ITL slice (the runner drops its own reference), but not the record itself.
type Sink interface {
	Write(*records.Record) error
}

// Runner runs one tier against a deployment.
type Runner interface {
	// RunTier sends the plan's arrivals and hands every request's record to sink. Once stop is
	// closed it dispatches nothing more: requests planned after that are not part of the tier,
	// those in flight run on under the plan's Grace. It returns the tier's identity as its
	// records file states it, closing line included (End set). An error means the tier could
	// not be run (or its records not be written), not that requests failed; a *RecordsLostError
	// means the tier ran to its end and sink has all of its records, but the records file does
	// not.
	RunTier(ctx context.Context, p Plan, sink Sink, stop <-chan struct{}) (records.Tier, error)
}

// RecordsLostError is a Runner's report that its records file could not be written (a full
// disk, an I/O error) during a tier that otherwise ran to its end with every record handed to
// the sink: the tier's summary is whole, the records file is not. The executor keeps the tier
// and stops the sweep.
type RecordsLostError struct{ Err error }

func (e *RecordsLostError) Error() string {
	return "the records file is incomplete (" + e.Err.Error() + "): it ends with its last whole line, and a line saying it was cut short where the disk had room for one; " +
		"the tier ran to its end, and its summary, from the records in memory, is whole"
}

func (e *RecordsLostError) Unwrap() error { return e.Err }

// TierSeed derives a tier's seed from the run's seed and the tier's rate, so that two
// deployments swept with the same arguments receive identical traffic at equal rates, and
// different tiers do not repeat each other's prompts (which would warm prefix caches across
// tiers). salt separates tiers that share a rate but must not share traffic (a confirmation, a
// repetition).
func TierSeed(seed int64, rate float64, salt uint64) int64 {
	h := fnv.New64a()
	var b [24]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(uint64(seed) >> (8 * i))
		b[8+i] = byte(math.Float64bits(rate) >> (8 * i))
		b[16+i] = byte(salt >> (8 * i))
	}
	if salt == 0 {
		h.Write(b[:16]) // the seeds of earlier versions, so their sweeps are repeatable
	} else {
		h.Write(b[:])
	}
	return int64(h.Sum64() >> 1)
}
