// Package workloads builds request sets: the exact requests a run sends, in order, materialised
// before any load starts and fingerprinted so that two runs can prove they sent the same traffic.
//
// Synthetic prompts are made of common English words that are one token each in the usual BPE
// vocabularies and exactly one token in the embedded simulated deployment's tokenizer model, so
// an input length in tokens is what the server will (approximately, for real tokenizers) count.
package workloads

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
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
type Request struct {
	ID          int          `json:"id"`
	Prompt      string       `json:"prompt,omitempty"`
	Messages    []Message    `json:"messages,omitempty"`
	InputTokens int          `json:"input_tokens"` // the workload's own count
	MaxTokens   int          `json:"max_tokens"`
	PrefixGroup int          `json:"prefix_group,omitempty"` // shared-prefix group (1-based; 0 = none)
	Expect      *Expectation `json:"expected,omitempty"`
}

// Set is a materialised request set.
type Set struct {
	Source      string    // how it was made, e.g. "random(input=1024, output=128, range=0, seed=0)"
	Requests    []Request // in sending order; Requests[i].ID == i
	Fingerprint string    // sha256 of the canonical encoding of Requests
}

// Fingerprint hashes the canonical JSON encoding of the requests, in order. Any change to any
// request, or to their order, changes it.
func Fingerprint(reqs []Request) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for i := range reqs {
		// Encoding these plain structs cannot fail.
		_ = enc.Encode(&reqs[i])
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

// Synthetic describes a random request set with vLLM's flag names: --random-input-len,
// --random-output-len and --random-range-ratio. Lengths are drawn uniformly from the integers in
// [len·(1-ratio), len·(1+ratio)], as vLLM does.
type Synthetic struct {
	InputLen   int
	OutputLen  int
	RangeRatio float64
	Seed       int64
}

// Validate returns every problem at once, naming the flags.
func (s Synthetic) Validate() []error {
	var errs []error
	if s.InputLen < 1 {
		errs = append(errs, fmt.Errorf("--random-input-len must be >= 1, got %d", s.InputLen))
	}
	if s.OutputLen < 1 {
		errs = append(errs, fmt.Errorf("--random-output-len must be >= 1, got %d", s.OutputLen))
	}
	if !(s.RangeRatio >= 0 && s.RangeRatio < 1) {
		errs = append(errs, fmt.Errorf("--random-range-ratio must be in [0, 1), got %v", s.RangeRatio))
	}
	return errs
}

func (s Synthetic) String() string {
	return fmt.Sprintf("random(input=%d, output=%d, range=%g, seed=%d)", s.InputLen, s.OutputLen, s.RangeRatio, s.Seed)
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
	rng := rand.New(rand.NewPCG(uint64(s.Seed), 0x6c6f6164637572)) // "loadcur"
	reqs := make([]Request, n)
	var sb strings.Builder
	for i := range reqs {
		in := uniformLen(rng, s.InputLen, s.RangeRatio)
		out := uniformLen(rng, s.OutputLen, s.RangeRatio)
		sb.Reset()
		writeWords(&sb, rng, in)
		reqs[i] = Request{Prompt: sb.String(), InputTokens: in, MaxTokens: out}
	}
	return NewSet(s.String(), reqs), nil
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

// writeWords writes n words separated by single spaces.
func writeWords(sb *strings.Builder, rng *rand.Rand, n int) {
	sb.Grow(n * 5)
	for j := 0; j < n; j++ {
		if j > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(vocabulary[rng.IntN(len(vocabulary))])
	}
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
func CountWords(s string) int { return len(strings.Fields(s)) }
