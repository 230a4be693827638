package workloads

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Think is the request's think time (ThinkMS) as a duration.
func (r *Request) Think() time.Duration {
	return time.Duration(math.Round(r.ThinkMS * 1e6))
}

// Sessions returns the requests' sessions as index ranges [start, end) into reqs, in order, or
// nil when the requests are not turns of sessions. It assumes ValidateSessions holds.
func Sessions(reqs []Request) [][2]int {
	if len(reqs) == 0 || reqs[0].Session == 0 {
		return nil
	}
	var out [][2]int
	start := 0
	for i := 1; i <= len(reqs); i++ {
		if i == len(reqs) || reqs[i].Turn == 1 {
			out = append(out, [2]int{start, i})
			start = i
		}
	}
	return out
}

// ValidateSessions checks the session structure of reqs: either no request is a turn, or every
// one is; each session's turns are together, numbered 1, 2, … in order; a first turn has no
// think time and a later one a finite, non-negative one; sessions are not repeated.
func ValidateSessions(reqs []Request) error {
	if len(reqs) == 0 || (reqs[0].Session == 0 && reqs[0].Turn == 0) {
		for i := range reqs {
			if reqs[i].Session != 0 || reqs[i].Turn != 0 {
				return fmt.Errorf("request %d is a turn of session %d but request 0 is not a turn: a set is all sessions or none", i, reqs[i].Session)
			}
		}
		return nil
	}
	seen := make(map[int]bool)
	for i := range reqs {
		r := &reqs[i]
		switch {
		case r.Session < 1 || r.Turn < 1:
			return fmt.Errorf("request %d: session %d, turn %d: both must be >= 1 in a set of sessions", i, r.Session, r.Turn)
		case r.Turn == 1 && seen[r.Session]:
			return fmt.Errorf("request %d: session %d starts again: a session's turns must be together", i, r.Session)
		case r.Turn > 1 && (i == 0 || reqs[i-1].Session != r.Session || reqs[i-1].Turn != r.Turn-1):
			return fmt.Errorf("request %d: turn %d of session %d does not follow turn %d of that session", i, r.Turn, r.Session, r.Turn-1)
		case r.Turn == 1 && r.ThinkMS != 0:
			return fmt.Errorf("request %d: turn 1 of session %d has a think time: only later turns wait for the one before", i, r.Session)
		case !(r.ThinkMS >= 0) || math.IsInf(r.ThinkMS, 1) || r.ThinkMS > maxThinkMS:
			return fmt.Errorf("request %d: think time %v ms must be in [0, %g] ms", i, r.ThinkMS, float64(maxThinkMS))
		}
		seen[r.Session] = true
	}
	return nil
}

// maxThinkMS bounds a think time: one day.
const maxThinkMS = 24 * 3600 * 1000

// SessionCount returns the number of sessions of the set, 0 when its requests are not turns of
// sessions.
func (s *Set) SessionCount() int {
	if len(s.Requests) == 0 || s.Requests[0].Session == 0 {
		return 0
	}
	n := 0
	for i := range s.Requests {
		if s.Requests[i].Turn == 1 {
			n++
		}
	}
	return n
}

// Think-time distributions of SyntheticSessions.
const (
	ThinkFixed       = "fixed"       // every think time is Think (the default)
	ThinkExponential = "exponential" // exponential with mean Think: memoryless users
)

// MaxSessionTurns bounds a session's turns.
const MaxSessionTurns = 10_000

// SyntheticSessions describes random multi-turn conversations. Each session has a number of
// turns drawn uniformly from the integers in [⌊Turns·(1-TurnsRangeRatio)⌋ (at least 1),
// ⌊Turns·(1+TurnsRangeRatio)⌋], as vLLM's range ratio (0 gives Turns turns every time). Every
// turn is a chat request of one user message whose length and max_tokens are drawn as Synthetic
// draws a request's (InputLen, OutputLen, RangeRatio and Dist of the embedded Synthetic; its Seed
// seeds the whole set). With SystemLen > 0, a system prompt of that many words, different for
// every session, opens each session's first turn.
//
// A later turn waits a think time after the previous turn's response: Think itself ("fixed", the
// default) or drawn from the exponential distribution with mean Think ("exponential"). Think
// times are rounded to whole microseconds (so ThinkMS prints exactly) and capped at one day;
// they are drawn from a stream of their own, so the think time settings change no prompt.
//
// The same SyntheticSessions and n give the same set on every machine, and the first k sessions
// of a larger set equal a set of k.
type SyntheticSessions struct {
	Synthetic               // per-turn lengths and the seed
	Turns           int     // turns per session (mean, with TurnsRangeRatio)
	TurnsRangeRatio float64 // in [0, 1): the spread of the number of turns
	Think           time.Duration
	ThinkDist       string // "" (= fixed), "fixed" or "exponential"
	SystemLen       int    // words of each session's system prompt (0 = none)
}

// Validate returns every problem at once, each a field.Error naming its input.
func (s SyntheticSessions) Validate() []error {
	var errs []error
	bad := func(name, format string, a ...any) { errs = append(errs, field.Errorf(name, format, a...)) }
	if s.Turns < 1 || s.Turns > MaxSessionTurns {
		bad(FieldTurns, "must be in [1, %d], got %d", MaxSessionTurns, s.Turns)
	}
	if !(s.TurnsRangeRatio >= 0 && s.TurnsRangeRatio < 1) {
		bad(FieldTurnsRangeRatio, "must be in [0, 1), got %v", s.TurnsRangeRatio)
	}
	if s.Think < 0 || s.Think > maxThinkMS*time.Millisecond {
		bad(FieldThink, "must be in [0, %v], got %v", maxThinkMS*time.Millisecond, s.Think)
	}
	switch s.ThinkDist {
	case "", ThinkFixed, ThinkExponential:
	default:
		bad(FieldThinkDist, "must be %s or %s, got %q", ThinkFixed, ThinkExponential, s.ThinkDist)
	}
	if s.SystemLen < 0 || s.SystemLen > MaxSyntheticLen {
		bad(FieldSystemLen, "must be in [0, %d], got %d", MaxSyntheticLen, s.SystemLen)
	}
	return append(errs, s.Synthetic.Validate()...)
}

// String names the set's recipe, e.g.
// "sessions(turns=4, think=2s fixed, input=1024, output=128, range=0, seed=0)".
func (s SyntheticSessions) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sessions(turns=%d", s.Turns)
	if s.TurnsRangeRatio != 0 {
		fmt.Fprintf(&b, ", turns-range=%g", s.TurnsRangeRatio)
	}
	dist := s.ThinkDist
	if dist == "" {
		dist = ThinkFixed
	}
	fmt.Fprintf(&b, ", think=%v %s", s.Think, dist)
	if s.SystemLen > 0 {
		fmt.Fprintf(&b, ", system=%d", s.SystemLen)
	}
	fmt.Fprintf(&b, ", %s)", s.Synthetic.params())
	return b.String()
}

// Generate materialises nSessions sessions: their turns, session after session.
func (s SyntheticSessions) Generate(nSessions int) (*Set, error) {
	if errs := s.Validate(); len(errs) > 0 {
		return nil, errs[0]
	}
	if nSessions < 1 {
		return nil, fmt.Errorf("a set of sessions needs at least one session, got %d", nSessions)
	}
	src := rand.NewPCG(uint64(s.Seed), 0x73657373696f6e) // "session"
	rng := rand.New(src)
	draw := s.lengthDraw(src, rng)
	thinkRNG := rand.New(rand.NewPCG(uint64(s.Seed), 0x7468696e6b)) // "think"
	reqs := make([]Request, 0, nSessions*s.Turns)
	for k := 1; k <= nSessions; k++ {
		turns := uniformLen(rng, s.Turns, s.TurnsRangeRatio)
		for t := 1; t <= turns; t++ {
			r := Request{Session: k, Turn: t}
			if t == 1 && s.SystemLen > 0 {
				text, g, err := s.message(src, s.SystemLen)
				if err != nil {
					return nil, err
				}
				r.Messages = append(r.Messages, Message{Role: "system", Content: text})
				r.InputTokens = s.SystemLen
				r.first = g
			}
			in := draw(s.InputLen)
			r.MaxTokens = draw(s.OutputLen)
			text, g, err := s.message(src, in)
			if err != nil {
				return nil, err
			}
			r.Messages = append(r.Messages, Message{Role: "user", Content: text})
			r.InputTokens += in
			if t == 1 && r.first == nil {
				r.first = g
			}
			if t > 1 {
				r.ThinkMS = s.thinkMS(thinkRNG)
			}
			reqs = append(reqs, r)
		}
	}
	set := NewSet(s.String(), reqs)
	set.Tokenizer = s.Tokenizer
	return set, nil
}

// message writes a message of n words drawn from src (n tokens of s.Tokenizer, with one), and
// returns its recipe when it was sized in tokens (nil otherwise).
func (s SyntheticSessions) message(src *rand.PCG, n int) (string, *generated, error) {
	g := newGenerated("", "", src, n)
	if s.Tokenizer == nil {
		return string(g.appendText(nil)), nil, nil
	}
	if err := fitTokens(g, n, 0, s.Tokenizer); err != nil {
		return "", nil, err
	}
	return string(g.appendText(nil)), g, nil
}

// thinkMS draws a think time in ms, rounded to whole microseconds and capped at maxThinkMS.
func (s SyntheticSessions) thinkMS(rng *rand.Rand) float64 {
	us := float64(s.Think) / float64(time.Microsecond)
	if s.ThinkDist == ThinkExponential {
		us *= rng.ExpFloat64()
	}
	return min(math.Round(us), maxThinkMS*1000) / 1000
}

// thinkMSOf is a fixed think time in ms, rounded to whole microseconds.
func thinkMSOf(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)/time.Microsecond) / 1000
}

// SessionNonce is the cold-cache nonce of one session of a run (ApplyCold): the run's nonce
// with the session's number inside its closing bracket ("[run:…:s3]"), or after a slash when it
// has none ("nonce/s3"). It is one word, as the run's nonce.
func SessionNonce(nonce string, session int) string {
	if len(nonce) > 1 && strings.HasSuffix(nonce, "]") {
		return nonce[:len(nonce)-1] + ":s" + strconv.Itoa(session) + "]"
	}
	return nonce + "/s" + strconv.Itoa(session)
}

// headSessions keeps a session set's first n sessions (all when n is 0 or larger than the set).
func headSessions(set *Set, n int) *Set {
	ranges := Sessions(set.Requests)
	if n <= 0 || n >= len(ranges) {
		return set
	}
	end := ranges[n-1][1]
	out := NewSet(fmt.Sprintf("%s[:%d sessions]", set.Source, n), set.Requests[:end:end])
	out.Notes, out.Tokenizer = set.Notes, set.Tokenizer
	return out
}

// cycleSessions returns n sessions of set: its first n, or all of it repeated in order as
// often as needed, the copies renumbered so every session keeps a number of its own (the k-th
// session of the result is session k).
func cycleSessions(set *Set, n int) *Set {
	ranges := Sessions(set.Requests)
	if n <= len(ranges) {
		return headSessions(set, n)
	}
	var reqs []Request
	for k := range n {
		rg := ranges[k%len(ranges)]
		for _, r := range set.Requests[rg[0]:rg[1]] {
			r.Session = k + 1
			reqs = append(reqs, r)
		}
	}
	out := NewSet(fmt.Sprintf("%s cycled to %d sessions", set.Source, n), reqs)
	out.Notes, out.Tokenizer = set.Notes, set.Tokenizer
	return out
}
