package measure

import (
	"slices"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

// Sessions summarises the turns of conversations in a tier: how many sessions started, at what
// rate, how long they lasted, and every metric by turn index, the length of the history the
// turn was sent with. A session belongs to the window when its first turn was planned inside it;
// a turn, like any request, when it was planned inside it.
type Sessions struct {
	Sessions    int    `json:"sessions"`     // sessions whose first turn was issued in the window
	SessionRate Number `json:"session_rate"` // Sessions / the summary's duration
	// Completed counts the sessions whose recorded turns all ended ok.
	Completed int     `json:"completed_sessions"`
	MeanTurns Number  `json:"mean_turns"` // recorded turns per session
	Duration  Quantum `json:"session_duration_s"`
	// ByTurn has one entry per turn index, in order.
	ByTurn []TurnStats `json:"by_turn"`
}

// Quantum is the mean, median, p90 and p99 of a quantity.
type Quantum struct {
	Count  int    `json:"count"`
	Mean   Number `json:"mean"`
	Median Number `json:"median"`
	P90    Number `json:"p90"`
	P99    Number `json:"p99"`
}

// TurnStats are the metrics of the k-th turns of every session.
type TurnStats struct {
	Turn      int `json:"turn"`
	Requests  int `json:"requests"` // issued
	Ok        int `json:"ok"`
	Compliant int `json:"compliant"`
	// MeanInputTokens is the mean prompt length of the ok turns, history included.
	MeanInputTokens Number `json:"mean_input_tokens"`
	// CachedPromptShare is the share of the prompt tokens the server found in its prefix cache,
	// over the ok turns that reported cached tokens (null when none did).
	CachedPromptShare Number  `json:"cached_prompt_share"`
	TTFT              Quantum `json:"ttft_ms"`
	TPOT              Quantum `json:"tpot_ms"`
	E2EL              Quantum `json:"e2el_ms"`
}

// sessionAcc accumulates Sessions; exact keeps values, else sketches of relative error alpha.
type sessionAcc struct {
	alpha    float64 // 0: exact
	sessions map[int]*sessionState
	turns    []*turnAcc
}

type sessionState struct {
	start      time.Duration // the first turn's planned arrival (Unset until seen)
	end        time.Duration // the latest end of its turns
	turns, oks int
	inWindow   bool // its first turn was issued inside the window
}

type turnAcc struct {
	requests, ok, compliant     int
	input, cached, cachedOfBase int
	ttft, tpot, e2el            values
}

// values are the values of one quantity, in milliseconds (or seconds), exact or sketched.
type values struct {
	exact  []float64
	sketch *Sketch
}

func (v *values) add(x float64) {
	if v.sketch != nil {
		v.sketch.Add(x)
		return
	}
	v.exact = append(v.exact, x)
}

func (v *values) quantum() Quantum {
	var st Stats
	if v.sketch != nil {
		st = v.sketch.Stats(1, []float64{90, 99})
	} else {
		st = describe(v.exact, 1, []float64{90, 99})
	}
	if st.Count == 0 {
		return Quantum{Mean: Number(nan), Median: Number(nan), P90: Number(nan), P99: Number(nan)}
	}
	return Quantum{Count: st.Count, Mean: Number(st.Mean), Median: Number(st.Median),
		P90: Number(st.Percentiles["p90"]), P99: Number(st.Percentiles["p99"])}
}

func (a *sessionAcc) newValues() values {
	if a.alpha == 0 {
		return values{}
	}
	s, _ := NewSketch(a.alpha) // alpha was validated with the accumulator's own sketches
	return values{sketch: s}
}

// add counts an issued turn r; inWindow says whether it was planned inside the window.
func (a *sessionAcc) add(r *records.Record, inWindow, compliant bool) {
	if r.Session == 0 {
		return
	}
	if a.sessions == nil {
		a.sessions = make(map[int]*sessionState)
	}
	st := a.sessions[r.Session]
	if st == nil {
		st = &sessionState{start: records.Unset}
		a.sessions[r.Session] = st
	}
	st.turns++
	st.end = max(st.end, r.End)
	if r.Outcome == records.OK {
		st.oks++
	}
	if r.Turn == 1 {
		st.start, st.inWindow = r.Planned, inWindow
	}
	if !inWindow {
		return
	}
	for len(a.turns) < r.Turn {
		a.turns = append(a.turns, &turnAcc{ttft: a.newValues(), tpot: a.newValues(), e2el: a.newValues()})
	}
	t := a.turns[r.Turn-1]
	t.requests++
	if r.Outcome != records.OK {
		return
	}
	t.ok++
	if compliant {
		t.compliant++
	}
	t.input += r.InputTokens
	if r.CachedTokensSource != "" {
		t.cached += r.CachedTokens
		t.cachedOfBase += r.InputTokens
	}
	if v, ok := r.TTFT(); ok {
		t.ttft.add(ms(v))
	}
	if v, ok := tpotMS(r); ok {
		t.tpot.add(v)
	}
	if v, ok := r.E2EL(); ok {
		t.e2el.add(ms(v))
	}
}

// summary returns the sessions' summary over a window of length duration (seconds), nil when
// the tier had no session turns.
func (a *sessionAcc) summary(duration float64) *Sessions {
	if a.sessions == nil {
		return nil
	}
	out := &Sessions{}
	var durations values
	if a.alpha > 0 {
		durations = a.newValues()
	}
	turns := 0
	for _, st := range a.sessions {
		if st.start == records.Unset || !st.inWindow {
			continue
		}
		out.Sessions++
		turns += st.turns
		if st.oks == st.turns {
			out.Completed++
			durations.add((st.end - st.start).Seconds())
		}
	}
	out.SessionRate = Number(ratio(float64(out.Sessions), duration))
	out.MeanTurns = Number(ratio(float64(turns), float64(out.Sessions)))
	if a.alpha == 0 {
		slices.Sort(durations.exact) // map order must not move the means' last bits
	}
	out.Duration = durations.quantum()
	for i, t := range a.turns {
		out.ByTurn = append(out.ByTurn, TurnStats{
			Turn: i + 1, Requests: t.requests, Ok: t.ok, Compliant: t.compliant,
			MeanInputTokens:   Number(ratio(float64(t.input), float64(t.ok))),
			CachedPromptShare: Number(ratio(float64(t.cached), float64(t.cachedOfBase))),
			TTFT:              t.ttft.quantum(), TPOT: t.tpot.quantum(), E2EL: t.e2el.quantum(),
		})
	}
	return out
}
