package sweep

import (
	"cmp"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
	"gonum.org/v1/gonum/stat/distuv"
)

// The stop rule on hand-fed records: every tier here has a TTFT objective of 500 ms and the
// default parameters (target 99 %, confidence 95 %, so an interim confidence of 1 − 0.05/9).

var stopObjectives = measure.Objectives{TTFT: 500 * time.Millisecond}

// stopOffsets are n arrivals every gap from T0.
func stopOffsets(n int, gap time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for k := range out {
		out[k] = time.Duration(k) * gap
	}
	return out
}

// stopRecord is request k of a tier, planned at planned and sent on time, with its first token
// ttft later and its end inSystem after its arrival.
func stopRecord(k int, planned, ttft, inSystem time.Duration) records.Record {
	r := records.NewRecord(0, k, planned)
	r.Dispatched, r.Slot, r.Sent = planned, planned, planned
	r.FirstEvent, r.First = planned+ttft, planned+ttft
	r.Last, r.End = planned+inSystem, planned+inSystem
	r.OutputTokens, r.Chunks = 5, 5
	return r
}

// byEnd sorts records as a runner hands them over: in the order they end (ties by index).
func byEnd(recs []records.Record) {
	slices.SortStableFunc(recs, func(a, b records.Record) int { return cmp.Or(cmp.Compare(a.End, b.End), cmp.Compare(a.ID, b.ID)) })
}

// feed adds recs one at a time and returns the index in recs of the record after which the
// verdict was decided (−1: never), checking that stop is closed exactly then.
func feed(t *testing.T, r *stopRule, recs []records.Record) int {
	t.Helper()
	for i := range recs {
		r.add(&recs[i])
		closed := false
		select {
		case <-r.stop:
			closed = true
		default:
		}
		if closed != (r.decided != "") {
			t.Fatalf("after record %d: decided %q but stop closed %v", recs[i].ID, r.decided, closed)
		}
		if r.decided != "" {
			return i
		}
	}
	return -1
}

// TestStopMeetsOnceTheBoundReachesTheTarget: a tier of 10 req/s whose every request spends 1 s
// in the system and meets the objective. With no miss the share is 1 and the Wilson lower bound
// on n effective requests is n/(n + z²): it reaches the target q when n ≥ q·z²/(1 − q). At the
// interim confidence 1 − 0.05/9, z = Φ⁻¹(1 − 0.05/18) = 2.773, z² = 7.69, so n ≥ 0.99 × 7.69 /
// 0.01 = 761.4: 762 requests (every request has the same latency, so nothing clusters and the
// variance factor is 1).
//
// The cap is 300 s: looks at 30, 60, 90 s, …, each taken when the first record ending at or after
// it comes in, the request planned 1 s earlier (so the horizon is the look time less 1 s). The
// window runs from 10 × the 1 s median time in system (at most a quarter of the horizon) to the
// horizon:
//
//	look 30 s: horizon 29 s, window [7.25 s, 29 s]: 218 requests, too few;
//	look 60 s: horizon 59 s, window [10 s, 59 s]: 491, too few (enough at the nominal 95 %: 381);
//	look 90 s: horizon 89 s, window [10 s, 89 s]: 791: the tier meets.
func TestStopMeetsOnceTheBoundReachesTheTarget(t *testing.T) {
	p := curve.DefaultParams()
	z := distuv.UnitNormal.Quantile(1 - (1-InterimConfidence(p.Confidence))/2)
	need := math.Ceil(p.TargetShare * z * z / (1 - p.TargetShare))
	if need != 634 {
		t.Fatalf("zero-miss requests needed at the interim confidence: %v, want 634 (z = %v)", need, z)
	}
	nominal := distuv.UnitNormal.Quantile(1 - (1-p.Confidence)/2)
	if n := math.Ceil(p.TargetShare * nominal * nominal / (1 - p.TargetShare)); n != 381 {
		t.Fatalf("zero-miss requests needed at the nominal confidence: %v, want 381", n)
	}

	offsets := stopOffsets(3000, 100*time.Millisecond)
	r := newStopRule(offsets, 300*time.Second, stopObjectives, p, 0, nil)
	if want := InterimConfidence(p.Confidence); math.Abs(r.conf-want) > 1e-15 {
		t.Errorf("interim confidence %v, want %v", r.conf, want)
	}
	for k, at := range r.looks {
		if want := time.Duration(k+1) * 30 * time.Second; at != want {
			t.Errorf("look %d at %v, want %v", k, at, want)
		}
	}
	recs := make([]records.Record, len(offsets))
	for k, o := range offsets {
		recs[k] = stopRecord(k, o, 200*time.Millisecond, time.Second)
	}
	byEnd(recs)
	i := feed(t, r, recs)
	if i < 0 {
		t.Fatal("never decided")
	}
	if rec := recs[i]; r.decided != curve.VerdictMeets || rec.End != 90*time.Second {
		t.Errorf("decided %q after the record ending at %v (request %d), want meets at the 90 s look", r.decided, rec.End, rec.ID)
	}
	if r.next != 3 || r.frontier != 891 {
		t.Errorf("after the decision: next look %d, frontier %d; want 3, 891", r.next, r.frontier)
	}
	// The window of the 90 s look, and of the 60 s one, as computed above.
	for _, c := range []struct {
		horizon time.Duration
		n       int
		meets   bool
	}{{59 * time.Second, 491, false}, {89 * time.Second, 791, true}} {
		st := measure.SteadyState(slices.Clone(r.obs[:c.horizon/(100*time.Millisecond)+1]), c.horizon, measure.SteadyWindow{})
		lo, _ := curve.WilsonN(st.CompliantShare, st.EffectiveRequests, r.conf)
		if st.Requests != c.n || st.VarianceFactor != 1 || (lo >= p.TargetShare) != c.meets {
			t.Errorf("horizon %v: %d requests, factor %v, lower bound %v; want %d, 1, meets %v", c.horizon, st.Requests, st.VarianceFactor, lo, c.n, c.meets)
		}
	}
}

// TestStopFailsAtTheFirstLookWithEnoughRequests: a tier of 1 req/s where every fifth request
// misses its TTFT objective (20 % misses). Its window starts at 10 s (ten times the time in
// system), so the looks at 30 s … 180 s hold fewer than the MinDecideRequests (200) a decision
// needs, however clear their share: no decision. Look 210 s (horizon 209 s) has [10 s, 209 s]:
// 200 requests, 40 misses, share 0.8, whose Wilson upper bound at the interim confidence
// (z = 2.53) is about 0.86, far below 0.99: the tier fails there.
func TestStopFailsAtTheFirstLookWithEnoughRequests(t *testing.T) {
	offsets := stopOffsets(300, time.Second)
	r := newStopRule(offsets, 300*time.Second, stopObjectives, curve.DefaultParams(), 0, nil)
	recs := make([]records.Record, len(offsets))
	for k, o := range offsets {
		ttft := 200 * time.Millisecond
		if k%5 == 0 {
			ttft = 600 * time.Millisecond
		}
		recs[k] = stopRecord(k, o, ttft, time.Second)
	}
	byEnd(recs)
	i := feed(t, r, recs)
	if i < 0 {
		t.Fatal("never decided")
	}
	if rec := recs[i]; r.decided != curve.VerdictFails || rec.End != 210*time.Second {
		t.Errorf("decided %q after the record ending at %v, want fails at the 210 s look", r.decided, rec.End)
	}
	st := measure.SteadyState(slices.Clone(r.obs[:210]), 209*time.Second, measure.SteadyWindow{})
	_, hi := curve.WilsonN(st.CompliantShare, st.EffectiveRequests, r.conf)
	if st.Requests != 200 || st.Compliant != 160 || math.Abs(hi-0.86) > 0.01 {
		t.Errorf("window of the 210 s look: %d requests, %d compliant, upper bound %v; want 200, 160, 0.86", st.Requests, st.Compliant, hi)
	}
}

// TestStopFrontier: records arriving out of planned order mark their own request ended (the
// first not yet ended at their planned offset, for ties), and the frontier stops at the earliest
// request still running.
func TestStopFrontier(t *testing.T) {
	ms := time.Millisecond
	offsets := []time.Duration{0, 100 * ms, 200 * ms, 300 * ms, 300 * ms, 500 * ms}
	r := newStopRule(offsets, time.Hour, stopObjectives, curve.DefaultParams(), 0, nil)
	steps := []struct {
		planned  time.Duration
		issued   bool
		frontier int
	}{
		{200 * ms, true, 0}, // 0 still runs
		{100 * ms, true, 0},
		{300 * ms, true, 0}, // the first of the two at 300 ms
		{0, true, 4},        // 0 to 3 ended; the second at 300 ms still runs
		{500 * ms, true, 4},
		{300 * ms, false, 6}, // never issued (no observation), but no longer running
	}
	for i, s := range steps {
		rec := stopRecord(i, s.planned, 50*ms, 900*ms)
		if !s.issued {
			rec.Dispatched = records.Unset
		}
		r.add(&rec)
		if r.frontier != s.frontier {
			t.Errorf("after the record planned at %v: frontier %d, want %d (done %v)", s.planned, r.frontier, s.frontier, r.done)
		}
	}
	if len(r.obs) != 5 || r.next != 0 || r.decided != "" {
		t.Errorf("%d observations, next look %d, decided %q; want 5, 0, none", len(r.obs), r.next, r.decided)
	}
}

// TestStopWaitsForTheEarliestRunningRequest: a tier of 10 req/s in which request 700 (planned at
// 70 s) runs until 200 s, and every request after it misses its objective. Until it ends, the
// looks see only the 600 compliant requests planned in [10 s, 69.9 s] (too few to meet: 762 are
// needed); the misses behind it, ended long before, must not count. Once it has ended, the next
// look (210 s: horizon 209 s) sees the misses and the tier fails.
func TestStopWaitsForTheEarliestRunningRequest(t *testing.T) {
	offsets := stopOffsets(3000, 100*time.Millisecond)
	r := newStopRule(offsets, 300*time.Second, stopObjectives, curve.DefaultParams(), 0, nil)
	recs := make([]records.Record, len(offsets))
	for k, o := range offsets {
		switch {
		case k < 700:
			recs[k] = stopRecord(k, o, 200*time.Millisecond, time.Second)
		case k == 700:
			recs[k] = stopRecord(k, o, 200*time.Millisecond, 130*time.Second)
		default:
			recs[k] = stopRecord(k, o, 600*time.Millisecond, time.Second)
		}
	}
	byEnd(recs)
	decided := -1
	stuckSeen := false
	for i := range recs {
		r.add(&recs[i])
		stuckSeen = stuckSeen || recs[i].ID == 700
		if !stuckSeen && r.frontier > 700 {
			t.Fatalf("after request %d: frontier %d passed request 700, still running", recs[i].ID, r.frontier)
		}
		if r.decided != "" {
			decided = i
			break
		}
	}
	if decided < 0 {
		t.Fatal("never decided")
	}
	if rec := recs[decided]; r.decided != curve.VerdictFails || rec.End != 210*time.Second {
		t.Errorf("decided %q after the record ending at %v (request %d), want fails at the 210 s look", r.decided, rec.End, rec.ID)
	}
}

// TestStopLooksOnlyWhenARecordPassesTheLookTime: a tier of 100 req/s, all compliant, cap 300 s.
// By the record ending at 29.99 s the ended prefix would already meet (2,175 requests in its
// window), but the first look is at 30 s: it is taken by the record ending exactly then, not
// before. A record passing several look times at once takes one look and moves past them all.
func TestStopLooksOnlyWhenARecordPassesTheLookTime(t *testing.T) {
	offsets := stopOffsets(30000, 10*time.Millisecond)
	r := newStopRule(offsets, 300*time.Second, stopObjectives, curve.DefaultParams(), 0, nil)
	recs := make([]records.Record, len(offsets))
	for k, o := range offsets {
		recs[k] = stopRecord(k, o, 200*time.Millisecond, time.Second)
	}
	i := feed(t, r, recs)
	if i < 0 {
		t.Fatal("never decided")
	}
	if rec := recs[i]; r.decided != curve.VerdictMeets || rec.End != 30*time.Second || r.next != 1 {
		t.Errorf("decided %q after the record ending at %v, next look %d; want meets at exactly 30 s, next 1", r.decided, rec.End, r.next)
	}

	// Request 0 ends first, at 95 s: it passes the looks at 30, 60 and 90 s at once (its own
	// look has only itself before the frontier, too few to decide).
	r = newStopRule(offsets, 300*time.Second, stopObjectives, curve.DefaultParams(), 0, nil)
	rec := stopRecord(0, 0, 200*time.Millisecond, 95*time.Second)
	r.add(&rec)
	if r.next != 3 || r.decided != "" || r.frontier != 1 {
		t.Errorf("after a record ending at 95 s: next look %d, decided %q, frontier %d; want 3, none, 1", r.next, r.decided, r.frontier)
	}
}
