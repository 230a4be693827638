package workloads

import (
	"fmt"
	"math"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Source builds each tier's request set from one --workload spec. Generated workloads
// (synthetic, shared-prefix, sessions) are drawn per tier from the tier's seed; a file is read
// and validated whole once, and its requests are the same in every tier; a trace is also the
// schedule (Trace). For a workload of sessions (Sessions), tiers count sessions, not requests.
type Source struct {
	Spec  string
	Cache CachePolicy
	// Desc identifies the workload in result files: the generator's parameters or the file.
	Desc string
	// Trace is the trace of a trace replay, nil otherwise.
	Trace *Trace
	// Notes are remarks for the user from reading the workload (skipped entries, short files).
	Notes []string

	opts LoadOptions
	file *Set
}

// NewSource validates the workload a spec names (reading a file whole: nothing is sent before
// the workload is known good) and settles its cache policy: cache "" means cold for generated
// workloads and replay for files and traces. It returns every problem at once, each a
// field.Error naming its input (FieldWorkload, FieldCache, FieldTimeScale, …).
func NewSource(spec string, opts LoadOptions, cache string) (*Source, []error) {
	var errs []error
	opts = opts.withTokenizer()
	s := &Source{Spec: spec, opts: opts}
	if ts := opts.TimeScale; !(ts > 0) || math.IsInf(ts, 0) {
		errs = append(errs, field.Errorf(FieldTimeScale, "must be a finite number > 0, got %v", ts))
	}
	switch spec {
	case KindSynthetic, "":
		g := opts.Synthetic
		g.Seed = opts.Seed
		if e := g.Validate(); len(e) > 0 {
			return s, append(errs, e...)
		}
		s.Desc = g.String()
	case KindSharedPrefix:
		g := opts.SharedPrefix
		g.Seed = opts.Seed
		if e := g.Validate(); len(e) > 0 {
			return s, append(errs, e...)
		}
		s.Desc = g.String()
	case KindSessions:
		g := opts.sessions()
		if e := g.Validate(); len(e) > 0 {
			return s, append(errs, e...)
		}
		s.Desc = g.String()
	default:
		set, tr, err := Load(spec, opts)
		if err != nil {
			return s, append(errs, field.Errorf(FieldWorkload, "%s: %w", spec, err))
		}
		s.file, s.Trace, s.Desc, s.Notes = set, tr, set.Source, set.Notes
	}
	switch {
	case cache == "" && s.Generated():
		s.Cache = CacheCold
	case cache == "":
		s.Cache = CacheReplay
	default:
		p, err := ParseCachePolicy(cache)
		if err != nil {
			errs = append(errs, err)
		}
		s.Cache = p
	}
	return s, errs
}

// Tokenizer is the tokenizer the source's prompts are sized (a file's counted) in, nil for
// words.
func (s *Source) Tokenizer() Tokenizer {
	if s.file != nil {
		return s.file.Tokenizer
	}
	return s.opts.Tokenizer
}

// TokenizerIdentity names the source's tokenizer for a records header: "NAME (sha256:…)",
// "" for words.
func (s *Source) TokenizerIdentity() string { return Identity(s.Tokenizer()) }

// Identity names a tokenizer by its file and contents: "NAME (sha256:…)", "" for nil.
func Identity(tk Tokenizer) string {
	if tk == nil {
		return ""
	}
	return tk.Name() + " (" + tk.ID() + ")"
}

// Generated reports whether the requests are generated per tier (not read from a file).
func (s *Source) Generated() bool { return s.file == nil }

// Sessions reports whether the workload is made of sessions (multi-turn conversations): then
// Size and TierSet count sessions.
func (s *Source) Sessions() bool {
	if s.file == nil {
		return s.Spec == KindSessions
	}
	return s.file.SessionCount() > 0
}

// Size is the number of requests a file or trace holds, or of sessions for a file of sessions
// (0 for generated workloads): the n for which TierSet returns the whole file.
func (s *Source) Size() int {
	if s.file == nil {
		return 0
	}
	if k := s.file.SessionCount(); k > 0 {
		return k
	}
	return len(s.file.Requests)
}

// TierSet returns the n requests of a tier seeded with seed, before any cache policy, and notes
// for the user. A file smaller than n is reused in order. For a workload of sessions, n counts
// sessions: a file's first n, or all of them reused in order, the copies numbered as new
// sessions (the k-th session of the tier is session k).
func (s *Source) TierSet(n int, seed int64) (*Set, []string, error) {
	if err := s.CheckSize(n); err != nil {
		return nil, nil, err
	}
	if s.Generated() {
		o := s.opts
		o.N, o.Seed = n, seed
		set, _, err := Load(s.Spec, o)
		return set, nil, err
	}
	if k := s.file.SessionCount(); k > 0 {
		if n < 1 {
			return nil, nil, fmt.Errorf("a tier of sessions needs at least one session, got %d", n)
		}
		set := cycleSessions(s.file, n)
		if n <= k {
			return set, nil, nil
		}
		note := fmt.Sprintf("the schedule plans %d sessions and %s holds %d: they are reused in order, as new sessions (--cache cold gives each its own nonce; otherwise repeats can hit the prefix cache)",
			n, s.Spec, k)
		return set, []string{note}, nil
	}
	if n <= len(s.file.Requests) {
		if n == len(s.file.Requests) {
			return s.file, nil, nil
		}
		reqs := append([]Request(nil), s.file.Requests[:n]...)
		out := NewSet(fmt.Sprintf("%s[:%d]", s.file.Source, n), reqs)
		out.Tokenizer = s.file.Tokenizer
		return out, nil, nil
	}
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = s.file.Requests[i%len(s.file.Requests)]
	}
	note := fmt.Sprintf("the schedule plans %d requests and %s holds %d: they are reused in order (repeats can hit the prefix cache; --cache cold guards only across tiers)",
		n, s.Spec, len(s.file.Requests))
	out := NewSet(fmt.Sprintf("%s cycled to %d", s.file.Source, n), reqs)
	out.Tokenizer = s.file.Tokenizer
	return out, []string{note}, nil
}

// ApplyCache returns the set to send: with the cold policy, nonce in front of every prompt.
func (s *Source) ApplyCache(set *Set, nonce string) (*Set, error) {
	if s.Cache != CacheCold {
		return set, nil
	}
	return ApplyCold(set, nonce)
}

// TraceOffsets is the schedule of a trace replay.
func (s *Source) TraceOffsets() []time.Duration {
	if s.Trace == nil {
		return nil
	}
	return s.Trace.Offsets
}
