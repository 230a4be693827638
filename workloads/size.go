package workloads

import (
	"fmt"
	"math"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Bounds of one request set, checked before anything is allocated (a set of 10⁸ requests of
// 10⁵ words once ended in out-of-memory instead of a refusal).
const (
	// MaxRequests is the most requests (turns, for sessions) one set may hold: as many as one
	// tier may plan (arrival.MaxArrivals).
	MaxRequests = 2_000_000
	// MaxPromptWords is the most prompt words one set may hold in all: every prompt is
	// generated and hashed for the set's fingerprint before the first request is sent (on the
	// order of a minute per 10⁹ words), and written out by `loadcurve workload --out`. The
	// default 1,024-word prompts reach MaxRequests first.
	MaxPromptWords = 1 << 31
	// requestBytes is what one request of a set costs in memory (264 B measured for a
	// synthetic set, whose prompts are recipes until sent); wordBytes is the size of a prompt
	// word as text, its space included (5.15 B measured).
	requestBytes = 264
	wordBytes    = 5.15
)

// SizeError refuses a request set too large to hold or to generate, before it is made.
type SizeError struct {
	Requests        float64 // requests the set would hold (expected, for sessions)
	MeanPromptWords float64 // their mean prompt length in words
	What            string  // what is counted: "requests" or "turns"
}

func (e *SizeError) Error() string {
	words := e.Requests * e.MeanPromptWords
	if e.Requests > MaxRequests {
		return fmt.Sprintf("a request set of %s %s is more than the %s one set may hold (it would take about %s of memory before the first request): ask for fewer (--num-requests, or a shorter --duration or lower rate)",
			count(e.Requests), e.What, count(MaxRequests), field.Bytes(e.Requests*requestBytes))
	}
	return fmt.Sprintf("a request set of %s %s of %s prompt words on average is %s words of prompts, more than the %s one set may hold (about %s of text to generate and fingerprint before the first request): lower the prompt length (--random-input-len) or the number of requests",
		count(e.Requests), e.What, count(e.MeanPromptWords), count(words), count(MaxPromptWords), field.Bytes(words*wordBytes))
}

// checkSize refuses a set of requests requests of meanWords prompt words each on average.
func checkSize(requests, meanWords float64, what string) error {
	if requests > MaxRequests || requests*meanWords > MaxPromptWords {
		return &SizeError{Requests: requests, MeanPromptWords: meanWords, What: what}
	}
	return nil
}

// checkGeneratedSize refuses a generated set of opts.N requests (sessions) that would exceed
// the bounds, from the lengths asked (means: a drawn length is capped at MaxSyntheticLen).
func checkGeneratedSize(kind string, opts LoadOptions) error {
	n := float64(opts.N)
	switch kind {
	case KindSynthetic:
		return checkSize(n, meanLen(opts.Synthetic.InputLen), "requests")
	case KindSharedPrefix:
		return checkSize(n, meanLen(opts.SharedPrefix.PrefixLen)+meanLen(opts.SharedPrefix.SuffixLen), "requests")
	case KindSessions:
		s := opts.Sessions
		turns := float64(max(s.Turns, 1))
		words := meanLen(opts.Synthetic.InputLen) + meanLen(s.SystemLen)/turns
		return checkSize(n*turns, words, "turns")
	}
	return nil
}

// meanLen is a length as a mean, within what a drawn length can be.
func meanLen(n int) float64 { return float64(min(max(n, 0), MaxSyntheticLen)) }

// count writes a count with thousands separators (1e8 as 100,000,000), or in e-notation
// beyond 10¹⁵.
func count(x float64) string {
	if x >= 1e15 || x != math.Trunc(x) && x >= 1e6 {
		x = math.Round(x)
	}
	if x >= 1e15 {
		return fmt.Sprintf("%.3g", x)
	}
	if x != math.Trunc(x) {
		return fmt.Sprintf("%.4g", x)
	}
	s := fmt.Sprintf("%.0f", x)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// CheckSize refuses a tier of n requests (of n sessions, for a workload of sessions) too large
// to hold or to generate (a *SizeError), before any of it is made. A file's own requests are
// already held: only a tier that reuses them beyond the file's size is checked.
func (s *Source) CheckSize(n int) error {
	if s.file == nil {
		kind := s.Spec
		if kind == "" {
			kind = KindSynthetic
		}
		o := s.opts
		o.N = n
		return checkGeneratedSize(kind, o)
	}
	reqs, size := s.file.Requests, s.Size()
	if n <= size || len(reqs) == 0 {
		return nil
	}
	words := 0.0
	for i := range reqs {
		words += float64(reqs[i].InputTokens)
	}
	what := "requests"
	if s.Sessions() {
		what = "turns"
	}
	return checkSize(float64(n)*float64(len(reqs))/float64(size), words/float64(len(reqs)), what)
}
