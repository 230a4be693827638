package measure

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/curve/shadow"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Steady is a tier's steady state: the figures a sweep's decisions rest on (METRICS.md, "Steady
// state and the decisions of a sweep"). vLLM's keys keep vLLM's whole-tier definitions; these are
// measured inside a window on planned time that leaves out the warm-up transient at the start
// and the drain after the arrival phase:
//
//   - the window ends where the arrival phase ended (the tier's duration, the time dispatching
//     stopped, or the last planned arrival): requests still running then are counted with their
//     arrival, but nothing after it is throughput of the window;
//   - it starts after a warm-up sized from the observed time in system: WarmupMultiple times the
//     median time in system (end − planned) of the tier's requests, at most MaxWarmupFraction of
//     the arrival phase. A tier starts from an idle deployment, so its first requests meet
//     shorter queues than the steady state: the transient is optimistic, and lasts about as long
//     as a few passes through the system. (Truncation rules that minimise the variance of what
//     is kept, such as MSER, were measured here to cut congestion episodes as if they were
//     warm-up: on M/D/c queues at capacity they raised the compliant share by 0.3 points, a third
//     of the whole 1 % miss budget; this rule does not chase variance.)
//     A window given by the user (--window-warmup, --window-cooldown) replaces the rule.
//
// Inside the window: the realised rate is the arrivals planned in it per second of it; throughputs
// are the completions, and the output tokens, that happened inside it per second of it (a
// request's tokens after the first are spread evenly between its first and last output); the
// compliant share is compliant over issued requests planned in it. Misses come in clusters (a slow
// stretch delays everyone queued behind it), so the share's variance is not binomial. Its
// variance factor f ≥ 1 (the variance of the mean over the independent case) is estimated by
// batch means in planned order, at every batch size b = 1, 2, 4, … that leaves at least
// MinBatches batches, keeping the largest value: of the compliance indicator itself (when it
// has at least MinClusterMisses misses; fewer say nothing about their clustering), and of the
// series that decides compliance, measured well even when misses are rare: each request's
// slack (Objectives.Slack: its largest ratio of a latency metric to its objective, 2 for a
// request that failed or missed its quality check), or, without latency objectives, its time
// in system. What clusters the misses is the correlation of that series (a congested stretch
// raises the latency of every request in it): on M/D/c queues its factor is 1.1 to 1.5 times
// the indicator's, a conservative stand-in. EffectiveRequests = n/f is the sample size the
// share's confidence interval uses.
type Steady struct {
	// Start and End bound the window on planned time, in seconds from T0.
	Start float64
	End   float64
	// Warmup says how Start was chosen: WarmupTimeInSystem, WarmupGiven or WarmupNone.
	Warmup string
	// Requests is the number of issued requests planned in the window, Compliant of them
	// compliant, Ok of them ok.
	Requests, Compliant, Ok int
	// Arrivals is how many of the Requests were arrivals of the schedule: all of them, except
	// for sessions, whose later turns are not (then Arrivals counts sessions).
	Arrivals int
	// RealisedRate is the schedule's arrivals planned in the window per second of it: requests
	// per second, or, for a workload of sessions, sessions per second (their later turns are
	// planned by the turns before them, not by the schedule).
	RealisedRate float64
	// RequestThroughput is ok requests that ended inside the window, per second of it.
	// ArrivalThroughput converts it to the schedule's unit.
	RequestThroughput float64
	// RawOutputThroughput and CompliantOutputThroughput are output tokens received inside the
	// window per second of it: of every request, and of compliant requests.
	RawOutputThroughput       float64
	CompliantOutputThroughput float64
	// CompliantShare is Compliant/Requests.
	CompliantShare float64
	// VarianceFactor is the factor by which clustering inflates the share's variance over the
	// binomial one (≥ 1); EffectiveRequests = Requests/VarianceFactor.
	VarianceFactor    float64
	EffectiveRequests float64
	// Trend tests the time to first token from the planned arrival for growth inside the window.
	Trend Trend
	// Stationary is false when its queueing grows in the window (Trend), or the window holds too
	// few requests to say. TooShort says the latter: too few requests, or (sessions) a window
	// that still holds the ramp-up of the later turns; such a tier says nothing either way.
	Stationary bool
	TooShort   bool
	// Note says why the window is not stationary, or anything else worth knowing; "" when none.
	Note string
	// Controlled is the share estimated with the tier's shadow queue (package shadow), when it had
	// one and the shadow followed the deployment clearly enough; nil otherwise. The verdicts rest
	// on it (Judged). ControlNote says why a tier with a shadow was not controlled.
	Controlled  *Controlled
	ControlNote string
	// Client is what the client's own delays may have done to the window's requests; nil when
	// its records do not say (a virtual clock's client has none).
	Client *ClientDelays
}

// ClientDelays is what a tier's client, busy, may have added to the latencies of the requests
// in its window, and what timing their tokens at the socket took out. Dispatch lag (dispatched
// − planned) is not in a latency counted from sent; it changes what the deployment was offered,
// which the summary's client-bound rule judges.
type ClientDelays struct {
	// Requests is how many of the window's requests say when they were written to the socket.
	Requests int `json:"requests"`
	// SendP50 and SendP99 are the percentiles of written − sent, ms: the client's own time to
	// get a connection and write each request, inside TTFT and E2EL.
	SendP50 float64 `json:"send_p50_ms"`
	SendP99 float64 `json:"send_p99_ms"`
	// ReadP50 and ReadP99 are the percentiles of first_read − first, ms: how long after its
	// arrival the client read each first token; not in TTFT, which is timed at the arrival.
	ReadP50 float64 `json:"read_p50_ms"`
	ReadP99 float64 `json:"read_p99_ms"`
	// SendMisses is how many missed the objectives and would have met them counted from their
	// written moment: at most this many of the window's misses are the client's, so the share
	// without its delays is at most (compliant + SendMisses) / requests.
	SendMisses int `json:"send_misses"`
	// ReadMisses is how many met the objectives and would have missed them had their first
	// token been timed when the client read it: the misses timing at the socket took out.
	ReadMisses int `json:"read_misses"`
}

// ShareWithout is the most the window's compliant share could have been without the client's
// send delays (Requests of the window, Compliant of them compliant).
func (c *ClientDelays) ShareWithout(compliant, requests int) float64 {
	return ratio(float64(compliant+c.SendMisses), float64(requests))
}

// Text says what the client's delays did, in a clause: "the client's own delays: p99 0.49 ms
// from sent to the request written (inside TTFT and E2EL; at most 2 of the misses would have
// met the objectives without it), p99 6.2 ms from a first token's arrival to its reading (not
// counted: tokens are timed at their arrival; timed when read, 5 more would have missed)".
func (c *ClientDelays) Text() string {
	s := fmt.Sprintf("the client's own delays: p99 %s ms from sent to the request written (inside TTFT and E2EL; ", msText(c.SendP99))
	if c.SendMisses > 0 {
		s += fmt.Sprintf("at most %d of the misses would have met the objectives without it", c.SendMisses)
	} else {
		s += "no miss would have met the objectives without it"
	}
	s += fmt.Sprintf("), p99 %s ms from a first token's arrival to its reading (not counted: tokens are timed at their arrival", msText(c.ReadP99))
	if c.ReadMisses > 0 {
		s += fmt.Sprintf("; timed when read, %d more would have missed", c.ReadMisses)
	}
	return s + ")"
}

// NotableSendP99 is the p99 of the client's own writing delay, ms, from which it is said beside
// a tier's verdict even when it decided no request: a few milliseconds is what a loopback write
// costs an idle client (0.5–2.2 ms p99 on the 2-core box), so below this it is noise.
const NotableSendP99 = 5

// Notable reports whether the client's delays are worth saying beside a tier's verdict: a
// miss they may have made, or a writing delay (inside the latencies) of NotableSendP99 or more at
// p99. Reading late is not counted in the latencies, so neither its p99 nor the misses timing at
// the socket took out are said there (the sweep's Client line and summary.json keep them): on a
// busy machine they are in every tier.
func (c *ClientDelays) Notable() bool {
	return c.SendMisses > 0 || c.SendP99 >= NotableSendP99
}

func msText(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// Controlled is a window's share controlled with its shadow queue: an unbiased estimate of the
// same share, with less of the noise the arrivals' bursts put in it.
type Controlled struct {
	// Share is the controlled share; EffectiveRequests the sample its interval rests on, the
	// plain effective requests times Gain, the variance reduction credited (at most
	// shadow.MaxGain).
	Share             float64 `json:"share"`
	EffectiveRequests float64 `json:"effective_requests"`
	Gain              float64 `json:"gain"`
	// ShadowShare is the shadow's share over the window's requests, Expected its expectation
	// under the tier's arrival process, Beta the coefficient, Correlation the 95 % lower bound of
	// the correlation of the two shares.
	ShadowShare float64 `json:"shadow_share"`
	Expected    float64 `json:"shadow_expected"`
	Beta        float64 `json:"beta"`
	Correlation float64 `json:"correlation"`
}

// Judged is the share a verdict rests on and the effective sample of its interval: the
// controlled ones when the window was controlled, the plain ones otherwise.
func (st *Steady) Judged() (share, effectiveRequests float64) {
	if c := st.Controlled; c != nil {
		return c.Share, c.EffectiveRequests
	}
	return st.CompliantShare, st.EffectiveRequests
}

// How a steady-state window's start was chosen.
const (
	WarmupTimeInSystem = "time-in-system" // WarmupMultiple × the median time in system
	WarmupGiven        = "given"          // the user's --window-warmup
	WarmupNone         = "none"           // no request ended: the window starts at T0
	WarmupSessions     = "session-span"   // sessions: the p95 of a session's span, when longer
)

// Constants of the steady-state window and its statistics.
const (
	// WarmupMultiple and MaxWarmupFraction size the warm-up: this many median times in system,
	// at most this fraction of the arrival phase.
	WarmupMultiple    = 10
	MaxWarmupFraction = 0.25
	// MaxSessionWarmupFraction bounds the warm-up of a tier of sessions, which lasts until
	// the sessions started at T0 have sent their last turns (the request rate only reaches its
	// steady value then).
	MaxSessionWarmupFraction = 0.5
	// MinSteadyRequests is the fewest requests a window must hold to describe a steady state.
	MinSteadyRequests = 30
	// MinBatches is the fewest batches a batch-means estimate of the variance factor rests on.
	MinBatches = 20
	// MinClusterMisses is the fewest misses whose clustering the compliance indicator's own
	// variance factor is estimated from.
	MinClusterMisses = 20
)

// Obs is what the steady state needs of one request: its moments, output tokens, standing and
// slack. It is 48 bytes, so a bounded-memory summary can keep one per request of a long tier.
type Obs struct {
	Planned, First, Last, End time.Duration // records.Unset when the moment never came
	// Dispatched is when the client released the request (records.Unset: never).
	Dispatched time.Duration
	Tokens     int32 // output tokens received, whatever the outcome
	// Slack is how close the request came to missing its latency objectives (Objectives.Slack),
	// when Flags has ObsSlack.
	Slack float32
	// Session is the request's session (records.Record.Session; 0: not a turn).
	Session int32
	// Send and Read are the client's own delays, in ms, when Flags has ObsClientTimed: from sent
	// to its request's last bytes written to the socket (inside the latencies counted from
	// sent), and from its first token's arrival at the socket to its reading of it (not inside
	// them).
	Send, Read float32
	Flags      uint8 // ObsOK | ObsCompliant | ObsSlack | ObsLaterTurn | ObsAtEnd | ObsClientTimed | ObsSendMiss | ObsReadMiss
}

// Flags of an Obs.
const (
	ObsOK        uint8 = 1 << iota // the request ended ok
	ObsCompliant                   // ok, every objective met and the quality check passed
	ObsSlack                       // Slack is set
	// ObsLaterTurn marks a turn after the first of a session: it is not an arrival of the
	// schedule (the turn before it and the think time planned it), so it does not count in
	// the realised rate, which is then sessions per second.
	ObsLaterTurn
	// ObsAtEnd marks Tokens delivered whole at End, not streamed from First to Last: the input
	// tokens of an embeddings request (ObserveIn).
	ObsAtEnd
	// ObsClientTimed: the record says when its request was written to the socket (Send and Read
	// are set).
	ObsClientTimed
	// ObsSendMiss: the request missed its objectives, and would have met them had its latencies
	// been counted from when it was written to the socket: the client's own delay may have made
	// the miss.
	ObsSendMiss
	// ObsReadMiss: the request met its objectives, and would have missed them had its first
	// token been timed when the client read it: what timing tokens at their arrival took out.
	ObsReadMiss
)

// Observe is the observation of an issued record under objectives o: its compliance and, when
// o sets a latency objective, its slack.
func (o Objectives) Observe(r *records.Record) Obs {
	x := ObsOf(r, o.Compliant(r))
	if !o.IsZero() {
		x.Slack, x.Flags = o.Slack(r), x.Flags|ObsSlack
		x.Flags |= o.clientMisses(r, x.Flags&ObsCompliant != 0)
	}
	return x
}

// clientMisses says whether the client's own delays decided r's compliance (ObsSendMiss,
// ObsReadMiss): r judged on a copy whose latencies count from its written moment, or whose first
// token is timed when it was read.
func (o Objectives) clientMisses(r *records.Record, compliant bool) uint8 {
	switch {
	case !compliant && r.Written != records.Unset && r.Sent != records.Unset && r.Written > r.Sent:
		c := *r
		c.Sent = r.Written
		if o.Compliant(&c) {
			return ObsSendMiss
		}
	case compliant && r.FirstRead != records.Unset && r.FirstRead > r.First:
		c := *r
		c.First = r.FirstRead
		if c.ReasoningChunks == 0 && c.FirstAnswer == records.Unset {
			c.Last = max(c.Last, c.First)
		}
		if !o.Compliant(&c) {
			return ObsReadMiss
		}
	}
	return 0
}

// ObserveIn is Observe for a result whose throughputs count u (records.Header.Unit): under
// UnitInputTokens the observation's Tokens are the record's input tokens when it ended ok,
// delivered at its end (ObsAtEnd).
func (o Objectives) ObserveIn(u records.Unit, r *records.Record) Obs {
	x := o.Observe(r)
	if u.Or() != records.UnitOutputTokens {
		x.Tokens, x.Flags = int32(min(u.Tokens(r), math.MaxInt32)), x.Flags|ObsAtEnd
	}
	return x
}

// ObsOf is the observation of an issued record.
func ObsOf(r *records.Record, compliant bool) Obs {
	o := Obs{Planned: r.Planned, Dispatched: r.Dispatched, First: r.First, Last: r.Last, End: r.End, Tokens: int32(min(r.OutputTokens, math.MaxInt32)),
		Session: int32(min(r.Session, math.MaxInt32))}
	if r.Outcome == records.OK {
		o.Flags |= ObsOK
	}
	if compliant {
		o.Flags |= ObsCompliant
	}
	if r.Turn > 1 {
		o.Flags |= ObsLaterTurn
	}
	if r.Written != records.Unset && r.Sent != records.Unset {
		o.Flags |= ObsClientTimed
		o.Send = float32(r.Written-r.Sent) / 1e6
		if r.FirstRead != records.Unset && r.First != records.Unset {
			o.Read = float32(r.FirstRead-r.First) / 1e6
		}
	}
	return o
}

// sessionSpan is the 95th percentile, over the sessions in obs, of the time from a session's
// first turn to its last turn planned; false when obs holds no later turn. Until that long after
// T0, the sessions that started early are still adding turns: the request rate is still rising.
func sessionSpan(obs []Obs) (time.Duration, bool) {
	type span struct{ first, last time.Duration }
	spans := map[int32]span{}
	later := false
	for _, o := range obs {
		if o.Session == 0 {
			continue
		}
		later = later || o.Flags&ObsLaterTurn != 0
		s, ok := spans[o.Session]
		if !ok {
			s = span{o.Planned, o.Planned}
		}
		s.first, s.last = min(s.first, o.Planned), max(s.last, o.Planned)
		spans[o.Session] = s
	}
	if !later {
		return 0, false
	}
	xs := make([]time.Duration, 0, len(spans))
	for _, s := range spans {
		xs = append(xs, s.last-s.first)
	}
	slices.Sort(xs)
	return time.Duration(percentile(xs, 1, 95)), true
}

// ArrivalThroughput is RequestThroughput in the unit of the schedule's arrivals: requests per
// second, or, for sessions, sessions per second (requests over the requests a session makes).
func (st *Steady) ArrivalThroughput() float64 {
	if st.Arrivals == 0 || st.Arrivals == st.Requests {
		return st.RequestThroughput
	}
	return st.RequestThroughput * float64(st.Arrivals) / float64(st.Requests)
}

// SteadyWindow is an optional fixed window on planned time (the zero value means "search"), and
// the tier's shadow queue, when it has one (nil: none).
type SteadyWindow struct {
	Given      bool
	Start, End time.Duration
	Shadow     *shadow.Control
}

// SteadyState computes the steady state of a tier from the observations of its issued requests
// (in any order; obs is sorted in place) and the end of its arrival phase (0: the last planned
// arrival). It returns nil when there is no observation.
func SteadyState(obs []Obs, arrivalsEnd time.Duration, w SteadyWindow) *Steady {
	if len(obs) == 0 {
		return nil
	}
	slices.SortStableFunc(obs, func(a, b Obs) int { return cmp.Compare(a.Planned, b.Planned) })
	st := &Steady{Warmup: WarmupNone}
	start, end, sessionNote := steadyWindow(st, obs, arrivalsEnd, w)
	lo := sortSearch(obs, start)
	hi := sortSearch(obs, end+1)
	win := obs[lo:hi]
	st.Start, st.End = start.Seconds(), end.Seconds()
	length := (end - start).Seconds()

	t := tallyWindow(st, win, end)
	var completions int
	var raw, compliant float64
	for _, o := range obs { // tokens and completions of every request, whenever planned, that fell inside
		if o.Flags&ObsOK != 0 && o.End != records.Unset && o.End >= start && o.End <= end {
			completions++
		}
		tok := tokensWithin(o, start, end)
		raw += tok
		if o.Flags&ObsCompliant != 0 {
			compliant += tok
		}
	}
	st.Arrivals = t.arrivals
	st.RealisedRate = ratio(float64(t.arrivals), length)
	st.RequestThroughput = ratio(float64(completions), length)
	st.RawOutputThroughput = ratio(raw, length)
	st.CompliantOutputThroughput = ratio(compliant, length)
	st.CompliantShare = ratio(float64(st.Compliant), float64(st.Requests))
	st.VarianceFactor = varianceFactor(t.tis)
	if t.misses >= MinClusterMisses {
		st.VarianceFactor = math.Max(st.VarianceFactor, varianceFactor(t.xs))
	}
	st.EffectiveRequests = float64(st.Requests) / st.VarianceFactor
	st.Trend = TrendTest(t.tps, t.tvs)
	if c := t.client; c.Requests > 0 {
		slices.Sort(t.sends)
		slices.Sort(t.reads)
		c.SendP50, c.SendP99 = Percentile(t.sends, 50), Percentile(t.sends, 99)
		c.ReadP50, c.ReadP99 = Percentile(t.reads, 50), Percentile(t.reads, 99)
		st.Client = &c
	}
	if w.Shadow != nil && len(win) > 0 {
		control(st, obs, lo, hi, w.Shadow)
	}
	st.Stationary = true
	switch {
	case st.Requests < MinSteadyRequests:
		st.Stationary, st.TooShort = false, true
		st.Note = fmt.Sprintf("the window holds %d requests, fewer than the %d a steady state needs: the tier is too short to say anything", st.Requests, MinSteadyRequests)
	case st.Trend.Growing:
		st.Stationary = false
		st.Note = "no steady state: queueing grows inside the window (" + st.Trend.Reason + ")"
	case sessionNote != "":
		st.Stationary, st.TooShort = false, true
		st.Note = "no steady state: " + sessionNote
	}
	return st
}

// steadyWindow is the steady-state window of obs (sorted by planned arrival) and how its start
// was chosen (st.Warmup): given, or after a warm-up of a few median times in system, or after
// the sessions' span (sessionNote says when that leaves the window short of the steady load).
func steadyWindow(st *Steady, obs []Obs, arrivalsEnd time.Duration, w SteadyWindow) (start, end time.Duration, sessionNote string) {
	end = arrivalsEnd
	if end <= 0 {
		end = obs[len(obs)-1].Planned
	}
	if w.Given && w.End > 0 && w.End < end {
		end = w.End
	}
	switch {
	case w.Given:
		start, st.Warmup = w.Start, WarmupGiven
	default:
		if m, ok := medianTimeInSystem(obs); ok {
			start = min(time.Duration(WarmupMultiple*float64(m)), time.Duration(MaxWarmupFraction*float64(end)))
			st.Warmup = WarmupTimeInSystem
		}
		if span, ok := sessionSpan(obs); ok && span > start {
			limit := time.Duration(MaxSessionWarmupFraction * float64(end))
			start, st.Warmup = min(span, limit), WarmupSessions
			if span > limit {
				sessionNote = fmt.Sprintf("sessions span %.3g s (p95, first to last turn planned), more than half of the %.3g s arrival phase: the window still holds the ramp-up of their later turns, so its load is below the steady one; run longer tiers",
					span.Seconds(), end.Seconds())
			}
		}
	}
	return start, max(end, start), sessionNote // a given window that ends before it starts is empty, not an error
}

// windowTally is what the requests planned inside the window show: their arrivals (first
// turns), compliance indicators and slacks (for the variance factor), first-token delays by
// planned time (for the trend), and the client's own delays.
type windowTally struct {
	arrivals, misses int
	xs, tis          []float64
	tps, tvs         []float64
	sends, reads     []float64
	client           ClientDelays
}

// tallyWindow counts win's requests into st (Requests, Compliant, Ok) and t.
func tallyWindow(st *Steady, win []Obs, end time.Duration) windowTally {
	t := windowTally{xs: make([]float64, 0, len(win)), tis: make([]float64, 0, len(win))}
	st.Requests = len(win)
	for _, o := range win {
		if o.Flags&ObsClientTimed != 0 {
			if t.sends == nil {
				t.sends, t.reads = make([]float64, 0, len(win)), make([]float64, 0, len(win))
			}
			t.client.Requests++
			t.sends = append(t.sends, float64(o.Send))
			t.reads = append(t.reads, float64(o.Read))
			if o.Flags&ObsSendMiss != 0 {
				t.client.SendMisses++
			}
			if o.Flags&ObsReadMiss != 0 {
				t.client.ReadMisses++
			}
		}
		if o.Flags&ObsLaterTurn == 0 {
			t.arrivals++
		}
		x := 0.0
		if o.Flags&ObsCompliant != 0 {
			st.Compliant++
			x = 1
		} else {
			t.misses++
		}
		t.xs = append(t.xs, x)
		if o.Flags&ObsSlack != 0 {
			t.tis = append(t.tis, float64(o.Slack))
		} else {
			t.tis = append(t.tis, timeInSystem(o, end).Seconds())
		}
		if o.Flags&ObsOK != 0 {
			st.Ok++
			if o.First != records.Unset {
				t.tps = append(t.tps, o.Planned.Seconds())
				t.tvs = append(t.tvs, float64(o.First-o.Planned)/1e6)
			}
		}
	}
	return t
}

// control estimates the window's share (obs[lo:hi], in planned order) with the shadow queue fed
// every issued request as the client sent it.
func control(st *Steady, obs []Obs, lo, hi int, sh *shadow.Control) {
	sent := make([]time.Duration, len(obs))
	for i, o := range obs {
		sent[i] = o.Dispatched
		if o.Dispatched == records.Unset {
			sent[i] = o.Planned
		}
	}
	comply := sh.Comply(sent)
	real := make([]bool, hi-lo)
	for i, o := range obs[lo:hi] {
		real[i] = o.Flags&ObsCompliant != 0
	}
	res, err := shadow.Estimate(real, comply[lo:hi], sh.Expected)
	if err != nil {
		st.ControlNote = "the shadow queue did not control the share: " + strings.TrimPrefix(err.Error(), shadow.ErrNoControl.Error()+": ")
		return
	}
	st.Controlled = &Controlled{Share: res.Share, EffectiveRequests: st.EffectiveRequests * res.Gain, Gain: res.Gain,
		ShadowShare: res.ShadowShare, Expected: res.Expected, Beta: res.Beta, Correlation: res.Correlation}
}

// sortSearch returns the index of the first observation planned at or after t.
func sortSearch(obs []Obs, t time.Duration) int {
	i, _ := slices.BinarySearchFunc(obs, t, func(o Obs, t time.Duration) int { return cmp.Compare(o.Planned, t) })
	for i > 0 && obs[i-1].Planned >= t {
		i--
	}
	return i
}

// timeInSystem is end − planned; a request still running at the end of the arrival phase has
// at least end − planned in system (it counts as that).
func timeInSystem(o Obs, end time.Duration) time.Duration {
	stop := o.End
	if stop == records.Unset {
		stop = max(end, o.Planned)
	}
	return stop - o.Planned
}

// medianTimeInSystem is the median time in system of the requests that ended.
func medianTimeInSystem(obs []Obs) (time.Duration, bool) {
	xs := make([]float64, 0, len(obs))
	for _, o := range obs {
		if o.End != records.Unset {
			xs = append(xs, float64(o.End-o.Planned))
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return time.Duration(medianInPlace(xs)), true
}

// tokensWithin is the output tokens of o received inside [start, end]: the first at First, the
// others spread evenly over (First, Last]; tokens delivered at the end (ObsAtEnd) all at End.
func tokensWithin(o Obs, start, end time.Duration) float64 {
	if o.Flags&ObsAtEnd != 0 {
		if o.Tokens > 0 && o.End != records.Unset && o.End >= start && o.End <= end {
			return float64(o.Tokens)
		}
		return 0
	}
	if o.Tokens <= 0 || o.First == records.Unset {
		return 0
	}
	in := 0.0
	if o.First >= start && o.First <= end {
		in = 1
	}
	rest := float64(o.Tokens - 1)
	if rest <= 0 {
		return in
	}
	last := o.Last
	if last == records.Unset || last < o.First {
		last = o.First
	}
	if last == o.First {
		if o.First >= start && o.First <= end {
			in += rest
		}
		return in
	}
	a, b := max(o.First, start), min(last, end)
	if b > a {
		in += rest * float64(b-a) / float64(last-o.First)
	}
	return in
}

// varianceFactor estimates by batch means how much autocorrelation inflates the variance of the
// mean of xs over the independent case: at each batch size b = 1, 2, 4, … leaving at least
// MinBatches batches, f_b = b·s²_batch / s²_x (batch means over b consecutive values, the last
// partial batch left out); f is the largest f_b, floored at 1. The factor grows with b until
// the batches are longer than the correlation, then levels off: the largest value is the
// conservative reading of that level. It is 1 when xs does not vary.
func varianceFactor(xs []float64) float64 {
	n := len(xs)
	if n < 2*MinBatches {
		return 1
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	v0 := 0.0
	for _, x := range xs {
		v0 += (x - mean) * (x - mean)
	}
	v0 /= float64(n - 1)
	// A series that does not vary can still show a variance of rounding errors (the mean of
	// 1,000 values of 0.42 is not exactly 0.42): below that scale it is constant.
	if !(v0 > 1e-18*max(mean*mean, 1e-300)) {
		return 1
	}
	f := 1.0
	for b := 2; n/b >= MinBatches; b *= 2 {
		k := n / b
		m, sum := 0.0, make([]float64, k)
		for j := range sum {
			s := 0.0
			for _, x := range xs[j*b : (j+1)*b] {
				s += x
			}
			sum[j] = s / float64(b)
			m += sum[j]
		}
		m /= float64(k)
		ss := 0.0
		for _, v := range sum {
			ss += (v - m) * (v - m)
		}
		f = math.Max(f, float64(b)*ss/float64(k-1)/v0)
	}
	return f
}

// Throughputs are the tier's raw and compliant output throughputs: its steady state's, or, when
// it has no steady-state window of any length (a burst at rate inf), the whole tier's.
func (s *Summary) Throughputs() (raw, compliant float64, steady bool) {
	if st := s.Steady; st != nil && st.End > st.Start && isFinite(st.RawOutputThroughput) {
		return st.RawOutputThroughput, st.CompliantOutputThroughput, true
	}
	return s.RawOutputThroughput, s.CompliantOutputThroughput, false
}

// Share is the tier's compliant request share: its steady state's, or the whole tier's (see
// Throughputs).
func (s *Summary) Share() float64 {
	if st := s.Steady; st != nil && st.End > st.Start && st.Requests > 0 {
		return st.CompliantShare
	}
	return s.CompliantRequestShare
}

// PoolSteady is the steady state of tiers run at the same rate, one after the other, taken
// together: a tier extended by running again at its rate. Their windows are independent
// stretches of the same process, so requests, compliant requests and effective samples add up,
// rates and throughputs are averages weighted by window length, and the pool is stationary only
// when every part is. Start, End and the trend are the first part's (the pool has no one
// window). It returns nil without a part, and the part itself for one.
func PoolSteady(parts ...*Steady) *Steady {
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	p := *parts[0]
	p.Requests, p.Compliant, p.Ok, p.Arrivals = 0, 0, 0, 0
	p.EffectiveRequests, p.Note, p.Stationary, p.TooShort = 0, "", true, true
	var length, completions, raw, compliant float64
	var notes []string
	for _, s := range parts {
		l := s.End - s.Start
		length += l
		p.Requests += s.Requests
		p.Compliant += s.Compliant
		p.Ok += s.Ok
		p.Arrivals += s.Arrivals
		p.EffectiveRequests += s.EffectiveRequests
		completions += s.RequestThroughput * l
		raw += s.RawOutputThroughput * l
		compliant += s.CompliantOutputThroughput * l
		p.Stationary = p.Stationary && s.Stationary
		p.TooShort = p.TooShort && s.TooShort
		if s.Note != "" {
			notes = append(notes, s.Note)
		}
	}
	// The pool is controlled when any part was: its share weighted by each part's effective
	// sample, which add up, a controlled part counting with its controlled share and sample and
	// any other with its own (independent estimates of one share, each weighted by the inverse of
	// its variance). Requiring every part to be controlled dropped the control of 18,000
	// requests because a 30-second tier beside them had none, and the pool then read weaker
	// than each of its controlled tiers.
	var ceff, cshare float64
	controlled := false
	for _, s := range parts {
		share, eff := s.CompliantShare, s.EffectiveRequests
		if s.Controlled != nil {
			controlled = true
			share, eff = s.Controlled.Share, s.Controlled.EffectiveRequests
		}
		ceff += eff
		cshare += eff * share
	}
	p.Controlled, p.ControlNote = nil, ""
	if controlled && ceff > 0 {
		p.Controlled = &Controlled{Share: cshare / ceff, EffectiveRequests: ceff, Gain: ceff / p.EffectiveRequests}
	}
	p.RealisedRate = ratio(float64(p.Arrivals), length)
	p.RequestThroughput = ratio(completions, length)
	p.RawOutputThroughput = ratio(raw, length)
	p.CompliantOutputThroughput = ratio(compliant, length)
	p.CompliantShare = ratio(float64(p.Compliant), float64(p.Requests))
	p.VarianceFactor = ratio(float64(p.Requests), p.EffectiveRequests)
	if len(notes) > 0 {
		p.Note = strings.Join(notes, "; ")
	}
	return &p
}
