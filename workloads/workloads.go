// Package workloads builds request sets: the exact requests a run sends, in order, materialised
// before any load starts and fingerprinted so that two runs can prove they sent the same traffic.
//
// Sources:
//   - Synthetic: random prompts with lengths drawn from a fixed, uniform (vLLM's
//     --random-range-ratio), normal or log-normal distribution.
//   - SharedPrefix: groups of requests sharing a common prefix, interleaved round-robin.
//   - SyntheticSessions: random multi-turn conversations (sessions, below).
//   - LoadJSONL: the user's own requests (or a set written by Save), one JSON object a line;
//     lines with a "session" make a set of sessions.
//   - LoadShareGPT: the first human→gpt exchange of each ShareGPT conversation, or, with
//     ShareGPTOptions.MultiTurn, each conversation as a session of all its exchanges.
//   - LoadTrace and TraceRequests: Azure LLM inference CSV and Mooncake JSONL traces, which are a
//     schedule and a request set at once (a Mooncake trace's conversations are replayed as
//     independent requests).
//   - Load: one dispatcher for all of the above, for the CLI's --workload.
//
// Sessions: a set may be made of multi-turn conversations. Its requests are then the turns of
// each session, together and in order, with Session and Turn (both 1-based) and ThinkMS (the
// think time before the turn, 0 for a first turn) set; ValidateSessions checks the structure,
// Sessions and Set.SessionCount read it. A turn's Messages are only what the turn adds (its user
// message; a system message may open turn 1) and its InputTokens count only that: the client
// sends the whole history (every earlier turn's messages and the server's actual replies) before
// them. For sessions, Load's and Source's request counts count sessions.
//
// ApplyCold puts a per-run nonce in front of every prompt so a run never hits a prefix cached by
// an earlier one (CachePolicy); in a set of sessions, a per-session nonce in front of each
// session's first turn.
//
// Synthetic prompts are made of common English words that are one token each in the usual BPE
// vocabularies and exactly one token in the embedded simulated deployment's tokenizer model, so
// an input length in tokens is what the server will (approximately, for real tokenizers) count.
// Text from files is counted with CountWords, the same word count: an approximation of a real
// tokenizer's count (English prose usually has somewhat more BPE tokens than words).
package workloads

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Expectation is a request's quality check, evaluated on the generated text and finish reason.
type Expectation struct {
	Exact        string `json:"exact,omitempty"`
	Contains     string `json:"contains,omitempty"`
	Regex        string `json:"regex,omitempty"`
	FinishReason string `json:"finish_reason,omitempty"`
	MinTokens    int    `json:"min_tokens,omitempty"`
}

// Request is one request of a set. Prompt is used for the completions endpoint and, wrapped as a
// single user message, for chat; Messages, when present, are sent to chat as they are (and joined
// into one prompt for completions).
//
// MaxTokens 0 means the request carries no max_tokens (the server's default applies); it is then
// left out of the JSON encoding, which therefore equals the encoding of earlier versions for every
// request with a max_tokens. Label is the request's name in the user's file (its "id"), if any;
// a session turn read from a file without a name of its own is labelled "SESSION#TURN".
type Request struct {
	ID          int          `json:"id"`
	Label       string       `json:"label,omitempty"`
	Prompt      string       `json:"prompt,omitempty"`
	Messages    []Message    `json:"messages,omitempty"`
	InputTokens int          `json:"input_tokens"` // the workload's own count
	MaxTokens   int          `json:"max_tokens,omitempty"`
	PrefixGroup int          `json:"prefix_group,omitempty"` // shared-prefix group (1-based; 0 = none)
	Expect      *Expectation `json:"expected,omitempty"`
	// Session and Turn make the request a turn of a conversation (both 1-based; 0 = not one).
	// A set with sessions holds each session's turns together and in order (ValidateSessions).
	// A turn's Messages are only what it adds (its user message; a system message may open
	// turn 1): the client sends the whole history before them, every earlier turn's messages
	// and the assistant's actual replies. InputTokens counts only what the turn adds.
	Session int `json:"session,omitempty"`
	Turn    int `json:"turn,omitempty"`
	// SessionID is the session's id in the file it came from ("session": "chat-7"), which its
	// records keep beside the session's number; "" for generated sessions. Not part of the
	// request's JSON (a saved set numbers its sessions), so not of its fingerprint.
	SessionID string `json:"-"`
	// ThinkMS is the user's think time before this turn, in milliseconds: the turn is sent
	// this long after the previous turn's response ended (0 for a first turn).
	ThinkMS float64 `json:"think_ms,omitempty"`
	// Tools is the request's OpenAI tools array, sent as it is (chat only).
	Tools json.RawMessage `json:"tools,omitempty"`

	gen *generated // a generated prompt's recipe, when Prompt is "" (see Text)
	// first, for a turn of sessions sized in a tokenizer's tokens, is the recipe of
	// Messages[0].Content, so ApplyCold can make room in it for the session's nonce.
	first *generated
}

// Set is a materialised request set.
type Set struct {
	Source      string    // how it was made, e.g. "random(input=1024, output=128, range=0, seed=0)"
	Requests    []Request // in sending order; Requests[i].ID == i
	Fingerprint string    // sha256 of the canonical encoding of Requests (before any cold nonce)
	// Nonce is the per-run nonce ApplyCold put in front of every prompt ("" if none). Fingerprint
	// is then still that of the set without it, so two cold runs of one set stay comparable.
	Nonce string
	// Skipped counts the entries of a source file that did not become requests or sessions
	// (ShareGPT entries without a human→gpt exchange or outside the length filters); Notes says
	// why, for the user.
	Skipped int
	Notes   []string
	// Tokenizer is the tokenizer whose tokens the prompts were sized (or, from a file, counted)
	// in; nil when they are counted in words, the embedded deployment's tokens.
	Tokenizer Tokenizer
}

// Fingerprint hashes the canonical JSON encoding of the requests, in order. Any change to any
// request, or to their order, changes it.
func Fingerprint(reqs []Request) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	var text []byte
	for i := range reqs {
		// Encoding these plain structs cannot fail.
		_ = enc.Encode(plainJSON(&reqs[i], &text))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// NewSet numbers reqs 0..n-1 and fingerprints them.
func NewSet(source string, reqs []Request) *Set {
	for i := range reqs {
		reqs[i].ID = i
	}
	return &Set{Source: source, Requests: reqs, Fingerprint: Fingerprint(reqs)}
}

// Defaults of vLLM's random dataset.
const (
	DefaultInputLen  = 1024
	DefaultOutputLen = 128
)

// Length distributions of Synthetic.
const (
	DistUniform   = "uniform"   // integers in [len·(1-ratio), len·(1+ratio)], as vLLM (the default)
	DistNormal    = "normal"    // normal with mean len and standard deviation len·ratio
	DistLogNormal = "lognormal" // log-normal with mean len and standard deviation len·ratio
)

// MaxSyntheticLen caps a drawn length (in words), so a heavy log-normal tail cannot ask for a
// prompt no model accepts or a machine can hold.
const MaxSyntheticLen = 1 << 20

// Synthetic describes a random request set with vLLM's flag names: --random-input-len,
// --random-output-len and --random-range-ratio.
//
// Dist chooses how each request's input and output lengths are drawn (independently):
//   - "" or "uniform": uniformly from the integers in [⌊len·(1-ratio)⌋, ⌊len·(1+ratio)⌋], as vLLM
//     does; ratio in [0, 1), and 0 gives fixed lengths.
//   - "normal": Normal(μ = len, σ = len·ratio), rounded to the nearest integer.
//   - "lognormal": the log-normal distribution with mean len and standard deviation len·ratio,
//     i.e. ln X ~ Normal(μ, σ) with σ² = ln(1+ratio²) and μ = ln(len) - σ²/2; rounded.
//
// For normal and log-normal, ratio is thus the coefficient of variation (any value >= 0; 0 gives
// fixed lengths). Every drawn length is clamped to [1, MaxSyntheticLen]; the clamp at 1 biases a
// normal's mean upwards once ratio approaches 1/3 (then P(X < 1) ≈ P(Z < -3)).
type Synthetic struct {
	InputLen   int
	OutputLen  int
	RangeRatio float64
	Dist       string // "" (= uniform), "uniform", "normal" or "lognormal"
	Seed       int64
	// PrefixLen, when > 0, puts one prefix of this many tokens, drawn once and shared by every
	// request, before each request's own part (vLLM's --random-prefix-len): the input length is
	// PrefixLen plus the drawn length.
	PrefixLen int
	// Tokenizer, when set, sizes the prompts in its tokens (vLLM's --tokenizer) instead of in
	// words (the embedded deployment's tokens).
	Tokenizer Tokenizer
}

// ShortID names a tokenizer in a set's description by its contents, not its path (the same
// file found in two places sizes the same prompts): "sha256:" and 12 hex digits.
func ShortID(tk Tokenizer) string {
	id := tk.ID()
	if len(id) > len("sha256:")+12 {
		id = id[:len("sha256:")+12]
	}
	return id
}

// Validate returns every problem at once, each a field.Error naming its input.
func (s Synthetic) Validate() []error {
	var errs []error
	bad := func(name, format string, a ...any) { errs = append(errs, field.Errorf(name, format, a...)) }
	if s.InputLen < 1 || s.InputLen > MaxSyntheticLen {
		bad(FieldInputLen, "must be in [1, %d], got %d", MaxSyntheticLen, s.InputLen)
	}
	if s.OutputLen < 1 || s.OutputLen > MaxSyntheticLen {
		bad(FieldOutputLen, "must be in [1, %d], got %d", MaxSyntheticLen, s.OutputLen)
	}
	if s.PrefixLen < 0 || s.PrefixLen > MaxSyntheticLen {
		bad(FieldPrefixLen, "must be in [0, %d], got %d", MaxSyntheticLen, s.PrefixLen)
	}
	switch s.Dist {
	case "", DistUniform:
		if !(s.RangeRatio >= 0 && s.RangeRatio < 1) {
			bad(FieldRangeRatio, "must be in [0, 1), got %v", s.RangeRatio)
		}
	case DistNormal, DistLogNormal:
		if !(s.RangeRatio >= 0 && s.RangeRatio <= MaxLengthCV) {
			bad(FieldRangeRatio, "is the coefficient of variation of the %s distribution: it must be in [0, %g], got %v",
				s.Dist, float64(MaxLengthCV), s.RangeRatio)
		}
	default:
		bad(FieldLengthDist, "must be %s, %s or %s, got %q", DistUniform, DistNormal, DistLogNormal, s.Dist)
	}
	return errs
}

// MaxLengthCV bounds the coefficient of variation of normal and log-normal lengths. Beyond it
// the draws are no longer lengths around a mean: a normal one is mostly clamped to 1 token, and
// a log-normal one's σ² = ln(1 + cv²) overflows (cv 1e308 made every length 1).
const MaxLengthCV = 10

// String names the set's recipe. The uniform form is the one earlier versions printed.
func (s Synthetic) String() string { return "random(" + s.params() + ")" }

// params lists the lengths and the seed, as String prints them.
func (s Synthetic) params() string {
	extra := ""
	if s.PrefixLen > 0 {
		extra += fmt.Sprintf(", prefix=%d", s.PrefixLen)
	}
	if s.Tokenizer != nil {
		extra += ", tokenizer=" + ShortID(s.Tokenizer)
	}
	if s.Dist == "" || s.Dist == DistUniform {
		return fmt.Sprintf("input=%d, output=%d, range=%g, seed=%d", s.InputLen, s.OutputLen, s.RangeRatio, s.Seed) + extra
	}
	return fmt.Sprintf("input=%d, output=%d, dist=%s, ratio=%g, seed=%d", s.InputLen, s.OutputLen, s.Dist, s.RangeRatio, s.Seed) + extra
}

// Generate materialises n requests. The same Synthetic and n give the same set on every machine,
// and the first k requests of a larger set equal a set of k.
func (s Synthetic) Generate(n int) (*Set, error) {
	if errs := s.Validate(); len(errs) > 0 {
		return nil, errs[0]
	}
	if n < 1 {
		return nil, fmt.Errorf("a request set needs at least one request, got %d", n)
	}
	src := rand.NewPCG(uint64(s.Seed), 0x6c6f6164637572) // "loadcur"
	rng := rand.New(src)
	draw := s.lengthDraw(src, rng)
	lead := ""
	if s.PrefixLen > 0 {
		p, err := s.randomPrefix()
		if err != nil {
			return nil, err
		}
		lead = p + " "
	}
	fixed := s.PrefixLen // the prefix is sized alone to PrefixLen tokens
	reqs := make([]Request, n)
	for i := range reqs {
		in := draw(s.InputLen)
		out := draw(s.OutputLen)
		// The prompt is kept as its recipe: the words appendWords would draw here, from here.
		g := newGenerated(lead, "", src, in)
		if s.Tokenizer != nil {
			if err := fitTokens(g, s.PrefixLen+in, fixed, s.Tokenizer); err != nil {
				return nil, err
			}
		}
		reqs[i] = Request{gen: g, InputTokens: s.PrefixLen + in, MaxTokens: out}
	}
	set := NewSet(s.String(), reqs)
	set.Tokenizer = s.Tokenizer
	return set, nil
}

// lengthDraw returns the length sampler of s.Dist. Each call consumes the same amount of the
// random stream whatever the ratio, so the stream does not depend on the ratio's value.
func (s Synthetic) lengthDraw(src rand.Source, rng *rand.Rand) func(l int) int {
	r := s.RangeRatio
	switch s.Dist {
	case DistNormal:
		return func(l int) int {
			mean := float64(l)
			return clampLen(distuv.Normal{Mu: mean, Sigma: mean * r, Src: src}.Rand())
		}
	case DistLogNormal:
		sigma2 := math.Log1p(r * r)
		sigma := math.Sqrt(sigma2)
		return func(l int) int {
			mu := math.Log(float64(l)) - sigma2/2
			return clampLen(distuv.LogNormal{Mu: mu, Sigma: sigma, Src: src}.Rand())
		}
	default:
		return func(l int) int { return uniformLen(rng, l, r) }
	}
}

// clampLen rounds a drawn length to the nearest integer in [1, MaxSyntheticLen].
func clampLen(x float64) int {
	x = math.Round(x)
	switch {
	case !(x >= 1): // also NaN
		return 1
	case x > MaxSyntheticLen:
		return MaxSyntheticLen
	}
	return int(x)
}

// uniformLen draws from the integers in [⌊l(1-r)⌋, ⌊l(1+r)⌋], at least 1. One draw per call
// whatever r is, so the random stream does not depend on the ratio's branch.
func uniformLen(rng *rand.Rand, l int, r float64) int {
	lo, hi := int(float64(l)*(1-r)), int(float64(l)*(1+r))
	lo = max(lo, 1)
	hi = max(hi, lo)
	u := rng.Uint64()
	return lo + int(u%uint64(hi-lo+1))
}

// vocabulary holds short, frequent English words: each is a single token in common BPE
// vocabularies when preceded by a space.
var vocabulary = strings.Fields(`the of and to in is was for on that with as by at from his
it an were are which this be has had or not first one their its new after but who they have
her she two been other when there all during into school time may years more most only over
city some world would where later up such used many can state about national out known
university united then made also between part through american year both under three include
group during well early area second film new while high could game him than won what life
back around family served people series day work last did these each since said much make
four great same small how very old long most way end just good own still city place come
music show side home man water next line best air land food light name open plan power point
play house run set case fact week month order book word form lead team line`)

// CountWords returns the number of whitespace-separated words of s: the token count of the
// embedded simulated deployment's tokenizer model.
// It counts as strings.Fields splits, without allocating.
func CountWords(s string) int {
	n, inWord := 0, false
	for i := 0; i < len(s); {
		c := s[i]
		var space bool
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
			i += size
		}
		if !space && !inWord {
			n++
		}
		inWord = !space
	}
	return n
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}
