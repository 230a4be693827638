package workloads

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/loadcurve/loadcurve/field"
)

// CachePolicy says how a run treats the deployment's prefix (KV) cache. Cold and warm numbers
// answer different questions and must never share a table silently; the policy is recorded in
// every records header.
type CachePolicy int

const (
	// CacheReplay sends the set as it is: prefixes cached by an earlier run of the same set (or
	// any other traffic) may hit. The zero value, and what runs did before policies existed.
	CacheReplay CachePolicy = iota
	// CacheCold puts a per-run nonce in front of every prompt (ApplyCold): nothing cached by an
	// earlier run can hit, while prefixes shared within the run's own workload still can.
	CacheCold
	// CacheWarm sends the set once unmeasured, then measures it: every reusable prefix is cached.
	// Carried out by the CLI, not by this package.
	CacheWarm
)

var cachePolicyNames = [...]string{CacheReplay: "replay", CacheCold: "cold", CacheWarm: "warm"}

// ParseCachePolicy parses "cold", "warm" or "replay"; anything else is a field.Error naming
// FieldCache.
func ParseCachePolicy(s string) (CachePolicy, error) {
	for p, name := range cachePolicyNames {
		if s == name {
			return CachePolicy(p), nil
		}
	}
	return 0, field.Errorf(FieldCache, "must be cold, warm or replay, got %q", s)
}

func (p CachePolicy) String() string {
	if p >= 0 && int(p) < len(cachePolicyNames) {
		return cachePolicyNames[p]
	}
	return fmt.Sprintf("CachePolicy(%d)", int(p))
}

// MarshalText encodes the policy by name.
func (p CachePolicy) MarshalText() ([]byte, error) {
	if p < 0 || int(p) >= len(cachePolicyNames) {
		return nil, fmt.Errorf("invalid cache policy %d", int(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText decodes a policy name.
func (p *CachePolicy) UnmarshalText(text []byte) error {
	v, err := ParseCachePolicy(string(text))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// NewNonce returns a fresh random nonce for ApplyCold: one word, "[run:" + 16 hex digits + "]",
// so it is a single token for the simulated deployment and a handful for a BPE tokenizer.
func NewNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it crashes the program instead)
	return "[run:" + hex.EncodeToString(b[:]) + "]"
}

// ApplyCold returns a copy of set in which nonce and a space are put in front of every prompt
// and, for chat requests, in front of the first message's content (the earliest text a chat
// template renders, usually the system prompt). Use one nonce per run (NewNonce): every request
// of the run then starts with the same words, so no request can hit a prefix cached by an
// earlier run, while prefixes shared within the workload (shared-prefix groups, a common system
// prompt) still share, one nonce longer.
//
// In a set of sessions, each session gets a nonce of its own, SessionNonce(nonce, session),
// put in front of its first turn only: the client sends every later turn after the session's
// history, which starts with the first turn, so the whole conversation is cold. Sessions thus
// share no cached prefix with each other either, not even a common system prompt; that keeps a
// session repeated in one run (a file's sessions cycled by Source.TierSet) cold as well.
//
// InputTokens grow by the nonce's word count. The copy keeps the original Fingerprint, so two
// cold runs of one set, with different nonces, remain comparable; Set.Nonce records the nonce.
// set is not modified.
func ApplyCold(set *Set, nonce string) (*Set, error) {
	if set == nil {
		return nil, fmt.Errorf("apply cold cache policy: no request set")
	}
	if set.Nonce != "" {
		return nil, fmt.Errorf("apply cold cache policy: the set already carries nonce %q", set.Nonce)
	}
	words := CountWords(nonce)
	if words == 0 || strings.TrimSpace(nonce) != nonce {
		return nil, fmt.Errorf("apply cold cache policy: the nonce must be non-empty text without surrounding space, got %q", nonce)
	}
	if err := ValidateSessions(set.Requests); err != nil {
		return nil, fmt.Errorf("apply cold cache policy: %w", err)
	}
	reqs := make([]Request, len(set.Requests))
	lead := nonce + " " // shared by every generated prompt: not a copy of each prompt
	for i, r := range set.Requests {
		switch {
		case r.Session == 0:
			r = withNonce(r, nonce, lead, words)
		case r.Turn == 1:
			n := SessionNonce(nonce, r.Session)
			r = withNonce(r, n, n+" ", CountWords(n))
		}
		reqs[i] = r
	}
	out := *set
	out.Requests = reqs
	out.Source = set.Source + " +cold"
	out.Nonce = nonce
	out.Notes = append([]string(nil), set.Notes...)
	return &out, nil
}

// withNonce puts nonce (lead is nonce and a space) in front of r's prompt and first message.
func withNonce(r Request, nonce, lead string, words int) Request {
	if r.Generated() {
		r.gen = r.gen.withLead(lead) // a generated prompt is never empty
	} else if r.Prompt != "" || len(r.Messages) == 0 {
		r.Prompt = joinNonce(nonce, r.Prompt)
	}
	if len(r.Messages) > 0 {
		msgs := make([]Message, len(r.Messages))
		copy(msgs, r.Messages)
		msgs[0].Content = joinNonce(nonce, msgs[0].Content)
		r.Messages = msgs
	}
	r.InputTokens += words
	return r
}

func joinNonce(nonce, text string) string {
	if text == "" {
		return nonce
	}
	return nonce + " " + text
}
