package workloads

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/loadcurve/loadcurve/internal/field"
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
// Without a tokenizer, InputTokens grow by the nonce's word count. With one (set.Tokenizer), a
// generated prompt keeps the length it was sized to: its own words make room for the nonce, so
// the whole text, nonce included, counts InputTokens tokens (a prompt shorter than the nonce is
// the nonce alone, counted as it is, and a note says so); a file's prompts are counted again
// with the nonce in front. The copy keeps the original Fingerprint, so two cold runs of one
// set, with different nonces, remain comparable; Set.Nonce records the nonce. set is not
// modified.
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
	c := coldCopy{tk: set.Tokenizer, fixed: map[string]int{}}
	reqs := make([]Request, len(set.Requests))
	lead := nonce + " " // shared by every generated prompt: not a copy of each prompt
	for i, r := range set.Requests {
		var err error
		switch {
		case r.Session == 0:
			r, err = c.withNonce(r, nonce, lead, words)
		case r.Turn == 1:
			n := SessionNonce(nonce, r.Session)
			r, err = c.withNonce(r, n, n+" ", CountWords(n))
		}
		if err != nil {
			return nil, fmt.Errorf("apply cold cache policy: request %d: %w", i, err)
		}
		reqs[i] = r
	}
	out := *set
	out.Requests = reqs
	out.Source = set.Source + " +cold"
	out.Nonce = nonce
	out.Notes = append([]string(nil), set.Notes...)
	if c.short > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d prompts are shorter than the cold-cache nonce (%d tokens or more): they are sent as the nonce alone, longer than asked (--cache replay sends them as asked)",
			c.short, c.shortest))
	}
	if c.blocked > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d trace prompts are made of shared blocks alone, which the cold-cache nonce cannot take room from: they are sent longer than asked by the nonce (--cache replay sends them as asked)",
			c.blocked))
	}
	return &out, nil
}

// coldCopy puts nonces in front of a set's prompts.
type coldCopy struct {
	tk       Tokenizer
	fixed    map[string]int // leadTokens of the leads met so far
	short    int            // prompts the nonce left no room in
	shortest int            // the fewest tokens such a prompt counts
	blocked  int            // trace prompts of shared blocks alone, the nonce added to them
}

// withNonce puts nonce (lead is nonce and a space) in front of r's prompt and first message.
func (c *coldCopy) withNonce(r Request, nonce, lead string, words int) (Request, error) {
	if c.tk == nil {
		return withNonce(r, nonce, lead, words), nil
	}
	switch {
	case r.Generated() && r.gen.fit > 0:
		g, n, err := c.refit(r.gen.withLead(lead), r.gen.fit)
		if err != nil {
			return r, err
		}
		r.gen, r.InputTokens = g, n
		return r, nil
	case r.first != nil && r.first.fit > 0 && len(r.Messages) > 0:
		g, n, err := c.refit(r.first.withLead(lead), r.first.fit)
		if err != nil {
			return r, err
		}
		msgs := append([]Message(nil), r.Messages...)
		msgs[0].Content = string(g.appendText(nil))
		r.InputTokens += n - r.first.fit // n is fit unless the nonce left no room
		r.Messages, r.first = msgs, g
		return r, nil
	}
	r = withNonce(r, nonce, lead, 0)
	n, err := countRequest(&r, c.tk)
	if err != nil {
		return r, err
	}
	if n > 0 {
		r.InputTokens = n
	}
	return r, nil
}

// refit sizes g (a recipe with the nonce in its lead) to total tokens, and returns it with the
// tokens its text counts: total, or more for a prompt the nonce leaves no room in.
func (c *coldCopy) refit(g *generated, total int) (*generated, int, error) {
	head := g.lead + g.own
	fixed, ok := c.fixed[head]
	if !ok {
		var err error
		if fixed, err = leadTokens(head, c.tk); err != nil {
			return nil, 0, err
		}
		c.fixed[head] = fixed
	}
	err := fitTokens(g, total, fixed, c.tk)
	if err == nil {
		return g, total, nil
	}
	if !errors.Is(err, errTooShort) {
		return nil, 0, err
	}
	n, err := c.tk.Count(string(g.appendText(nil)))
	if err != nil {
		return nil, 0, err
	}
	if len(g.blocks) > 0 {
		c.blocked++
		return g, n, nil
	}
	if c.short == 0 || n < c.shortest {
		c.shortest = n
	}
	c.short++
	return g, n, nil
}

// withNonce puts nonce (lead is nonce and a space) in front of r's prompt and first message,
// its InputTokens grown by words.
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
