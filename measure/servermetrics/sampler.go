package servermetrics

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Sampler scrapes one Scraper during one tier: at start, every interval,
// and at Stop. It is single-use: make one per tier.
type Sampler struct {
	scraper *Scraper
	t0      time.Time
	parent  context.Context
	cancel  context.CancelFunc
	ready   chan struct{} // closed when the first scrape has ended
	done    chan struct{} // closed when the scraping goroutine has ended

	mu       sync.Mutex
	reduced  Reducer    // every successful scrape
	snaps    []Snapshot // the most recent ones (at most 2·KeptSnapshots), for Snapshots
	failures int
	lastErr  string

	stopOnce sync.Once
	result   TierMetrics
}

// StartSampler starts scraping s in the background and returns at once.
// t0 is the tier's start (snapshots are stamped with their offset from it).
// The first scrape is sent immediately; then one every interval (none
// between start and stop when interval ≤ 0). Scrapes never overlap: one
// that outlasts the interval delays the next, skipped ticks are dropped.
// Cancelling ctx ends the periodic scrapes, as Stop does; Stop must still
// be called.
func StartSampler(ctx context.Context, s *Scraper, t0 time.Time, interval time.Duration) *Sampler {
	loopCtx, cancel := context.WithCancel(ctx)
	sm := &Sampler{scraper: s, t0: t0, parent: ctx, cancel: cancel, ready: make(chan struct{}), done: make(chan struct{})}
	go sm.run(loopCtx, interval)
	return sm
}

func (sm *Sampler) run(loopCtx context.Context, interval time.Duration) {
	defer close(sm.done)
	// The first scrape is the tier's baseline: Stop does not abandon it
	// (only ctx and the scrape deadline end it).
	sm.scrape(sm.parent)
	close(sm.ready)
	if interval <= 0 {
		return
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-loopCtx.Done():
			return
		case <-tick.C:
			sm.scrape(loopCtx)
		}
	}
}

// scrape makes one scrape and records its snapshot or its failure; a
// scrape ended by the cancellation of ctx is neither.
func (sm *Sampler) scrape(ctx context.Context) {
	at := time.Since(sm.t0)
	snap, err := sm.scraper.snapshot(ctx)
	sm.mu.Lock()
	defer sm.mu.Unlock()
	switch {
	case err == nil:
		snap.At = at
		sm.reduced.Add(snap)
		sm.snaps = append(sm.snaps, snap)
		if len(sm.snaps) > 2*KeptSnapshots { // amortised: memory stays flat over a long tier
			sm.snaps = append(sm.snaps[:0], sm.snaps[len(sm.snaps)-KeptSnapshots:]...)
		}
	case isCanceled(ctx, err):
	default:
		sm.failures++
		sm.lastErr = err.Error()
	}
}

// Stop ends the periodic scrapes (abandoning one in flight), makes the
// final scrape (bounded by the scrape deadline, even when the Sampler's
// context is cancelled) and returns the tier's metrics. It waits for a
// first scrape still in flight (the tier's baseline), so it returns within
// twice the scrape deadline. Later calls return the same result.
func (sm *Sampler) Stop() TierMetrics {
	sm.stopOnce.Do(func() {
		sm.cancel()
		<-sm.done
		sm.scrape(context.WithoutCancel(sm.parent))
		sm.mu.Lock()
		defer sm.mu.Unlock()
		sm.result = sm.reduced.Result()
		sm.result.Failures = sm.failures
		sm.result.LastError = sm.lastErr
	})
	return sm.result
}

// Ready is closed when the first scrape has ended, successfully or not
// (within the scrape deadline). A caller that wants the baseline taken
// before the tier's first request waits for it; nothing requires that.
func (sm *Sampler) Ready() <-chan struct{} { return sm.ready }

// KeptSnapshots is how many of the latest scrapes a Sampler keeps for Snapshots. The tier's
// metrics are reduced from every scrape as it comes (Reducer), not from these.
const KeptSnapshots = 300

// Snapshots returns a copy of the latest successful scrapes (at most KeptSnapshots), in time
// order.
func (sm *Sampler) Snapshots() []Snapshot {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return slices.Clone(sm.snaps[max(0, len(sm.snaps)-KeptSnapshots):])
}
