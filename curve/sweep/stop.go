package sweep

import (
	"slices"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/shadow"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// MinDecideRequests is the fewest requests a tier's window must hold before its stop rule may
// decide: fewer leave its variance factor (how much its misses cluster) unmeasured, and a tier
// stopped within seconds by a chance burst would be judged on a transient.
const MinDecideRequests = 200

// StopLooks is the number of interim looks a sequential tier takes at its verdict, evenly
// spread over its cap (at 1/10, 2/10, … 9/10 of it); the cap is the last.
const StopLooks = 9

// stopRule decides, while a tier runs, when its verdict is known well enough to stop the
// arrival phase. At each look it takes the requests planned before the earliest one still
// running (so every one of them has ended and none is missing), computes their steady state
// (measure.SteadyState) and its interval at the interim confidence, and stops the tier when it
// meets (lower bound ≥ target, settled) or fails (upper bound < target).
//
// Looking several times at a growing sample and stopping at the first clear answer would raise
// the chance of a wrong answer above the nominal α = 1 − confidence; each interim look therefore
// uses a stricter confidence (InterimConfidence: the group-sequential boundary for the looks),
// so that all the interim looks together err on either side with probability at most α/2. The
// verdict itself is then stated at the nominal confidence on the whole tier, from its records
// (curve.Analyze): a wrong verdict needs a wrong interim stop or a wrong final reading, so its
// probability is at most 2α in the worst case, and about α in practice (the final reading of a
// tier that stopped early is far from the target).
type stopRule struct {
	offsets  []time.Duration
	done     []bool
	frontier int // index of the earliest request not yet ended
	looks    []time.Duration
	next     int
	obs      []measure.Obs
	obj      measure.Objectives
	target   float64
	conf     float64 // interim two-sided confidence
	shadow   *shadow.Control
	stop     chan struct{}
	decided  curve.Verdict
}

// newStopRule is the stop rule of a tier with these arrivals and cap. interim is the confidence
// of its interim looks; 0 means the sweep's confidence corrected for the looks
// (InterimConfidence). A locating tier, which only has to show a direction, gives a lower one.
func newStopRule(offsets []time.Duration, cap time.Duration, obj measure.Objectives, p curve.Params, interim float64, sh *shadow.Control) *stopRule {
	p = p.WithDefaults()
	if interim <= 0 {
		interim = InterimConfidence(p.Confidence)
	}
	r := &stopRule{offsets: offsets, done: make([]bool, len(offsets)), obj: obj, target: p.TargetShare,
		conf: interim, shadow: sh, stop: make(chan struct{})}
	for k := 1; k <= StopLooks; k++ {
		r.looks = append(r.looks, cap*time.Duration(k)/(StopLooks+1))
	}
	return r
}

// add takes one record; it closes stop when the verdict is decided.
func (r *stopRule) add(rec *records.Record) {
	if rec.Dispatched != records.Unset {
		r.obs = append(r.obs, r.obj.Observe(rec))
	}
	// The first not-yet-ended request planned at this offset is this one (ties are alike).
	i, _ := slices.BinarySearch(r.offsets, rec.Planned)
	for i < len(r.done) && r.done[i] && r.offsets[i] == rec.Planned {
		i++
	}
	if i < len(r.done) && r.offsets[i] == rec.Planned {
		r.done[i] = true
	}
	for r.frontier < len(r.done) && r.done[r.frontier] {
		r.frontier++
	}
	if r.decided != "" || r.next >= len(r.looks) || rec.End < r.looks[r.next] {
		return
	}
	for r.next < len(r.looks) && rec.End >= r.looks[r.next] {
		r.next++
	}
	r.look()
}

// look evaluates the steady state of the requests planned before the frontier.
func (r *stopRule) look() {
	if r.frontier == 0 {
		return
	}
	horizon := r.offsets[r.frontier-1]
	sample := make([]measure.Obs, 0, len(r.obs))
	for _, o := range r.obs {
		if o.Planned <= horizon {
			sample = append(sample, o)
		}
	}
	st := measure.SteadyState(sample, horizon, measure.SteadyWindow{Shadow: r.shadow})
	if st == nil || st.Requests < MinDecideRequests {
		return
	}
	share, eff := st.Judged()
	lo, hi := curve.WilsonN(share, eff, r.conf)
	switch {
	case lo >= r.target && st.Stationary:
		r.decided = curve.VerdictMeets
	case hi < r.target:
		r.decided = curve.VerdictFails
	default:
		return
	}
	close(r.stop)
}
