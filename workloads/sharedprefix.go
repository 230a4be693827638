package workloads

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/loadcurve/loadcurve/internal/field"
)

// SharedPrefix describes a prefix-caching workload: Groups groups, each with its own common prefix
// of PrefixLen words; every request is its group's prefix, a space, and a suffix of SuffixLen
// words of its own, and asks for OutputLen tokens. Request i belongs to group i mod Groups
// (round-robin, so the groups interleave) and has PrefixGroup = i mod Groups + 1.
//
// Guarantees (for the word-level tokenizer of the simulated deployment; real BPE tokenizers see
// about the same structure):
//   - the requests of a group share exactly PrefixLen leading words: each suffix's first word
//     differs from that of the previous request of the same group;
//   - all suffixes are distinct, so no two requests are equal;
//   - the groups' prefixes are distinct and, with at most DistinctWords groups, even start with
//     different words, so no two groups share a leading token.
//
// The same SharedPrefix and n give the same set on every machine, and the first k requests of a
// larger set equal a set of k.
//
// With a Tokenizer, lengths are in its tokens: each prefix counts PrefixLen tokens and each
// whole prompt PrefixLen+SuffixLen (its suffix's words are sized to make it so).
type SharedPrefix struct {
	Groups    int
	PrefixLen int
	SuffixLen int
	OutputLen int
	Seed      int64
	Tokenizer Tokenizer
}

// DistinctWords returns the number of distinct words synthetic prompts are drawn from.
func DistinctWords() int { return len(distinctVocabulary) }

// Validate returns every problem at once.
func (s SharedPrefix) Validate() []error {
	var errs []error
	check := func(name string, v, lo, hi int) {
		if v < lo || v > hi {
			errs = append(errs, field.Errorf(name, "must be in [%d, %d], got %d", lo, hi, v))
		}
	}
	check(FieldGroups, s.Groups, 1, 1<<20)
	check(FieldGroupPrefixLen, s.PrefixLen, 1, MaxSyntheticLen)
	check(FieldSuffixLen, s.SuffixLen, 1, MaxSyntheticLen)
	check(FieldOutputLen, s.OutputLen, 1, MaxSyntheticLen)
	if s.Groups >= 1 && s.PrefixLen >= 1 && !enough(DistinctWords(), s.PrefixLen, s.Groups) {
		errs = append(errs, field.Errorf(FieldGroupPrefixLen, "%d distinct prefixes of %d words cannot be drawn from %d words; raise the prefix length",
			s.Groups, s.PrefixLen, DistinctWords()))
	}
	return errs
}

func (s SharedPrefix) String() string {
	extra := ""
	if s.Tokenizer != nil {
		extra = ", tokenizer=" + ShortID(s.Tokenizer)
	}
	return fmt.Sprintf("shared-prefix(groups=%d, prefix=%d, suffix=%d, output=%d, seed=%d%s)",
		s.Groups, s.PrefixLen, s.SuffixLen, s.OutputLen, s.Seed, extra)
}

// Generate materialises n requests.
func (s SharedPrefix) Generate(n int) (*Set, error) {
	if errs := s.Validate(); len(errs) > 0 {
		return nil, errs[0]
	}
	if n < 1 {
		return nil, fmt.Errorf("a request set needs at least one request, got %d", n)
	}
	// Distinct suffixes whose first word also differs from the group's previous one need enough
	// possible suffixes: (DistinctWords()-1)^SuffixLen >= n is a sufficient, conservative bound.
	if !enough(DistinctWords()-1, s.SuffixLen, n) {
		return nil, fmt.Errorf("shared-prefix: %d distinct suffixes of %d words cannot be drawn from %d words; raise the suffix length",
			n, s.SuffixLen, DistinctWords())
	}
	prefixes, err := s.prefixes()
	if err != nil {
		return nil, err
	}
	leads := make([]string, len(prefixes)) // each group's prefix and its space, shared by its requests
	for g, p := range prefixes {
		leads[g] = p + " "
	}
	src := rand.NewPCG(uint64(s.Seed), 0x73756666697873) // "suffixs"
	rng := rand.New(src)
	seen := make(map[string]struct{}, n)
	lastFirst := make([]int, s.Groups) // index+1 in distinctVocabulary of the group's last suffix's first word
	reqs := make([]Request, n)
	for i := range reqs {
		g := i % s.Groups
		var gen *generated
		for {
			first := rng.IntN(len(distinctVocabulary))
			if first+1 == lastFirst[g] {
				continue
			}
			own := distinctVocabulary[first]
			if s.SuffixLen > 1 {
				own += " "
			}
			gen = newGenerated(leads[g], own, src, s.SuffixLen-1)
			if s.Tokenizer != nil {
				head, err := leadTokens(leads[g]+own, s.Tokenizer)
				if err == nil {
					err = fitTokens(gen, s.PrefixLen+s.SuffixLen, head, s.Tokenizer)
				}
				if err != nil && !errors.Is(err, errTooShort) {
					return nil, err
				}
			}
			suffix := string(gen.appendText(nil)[len(leads[g]):])
			if _, dup := seen[suffix]; !dup {
				seen[suffix] = struct{}{}
				lastFirst[g] = first + 1
				break
			}
		}
		in := s.PrefixLen + s.SuffixLen
		if s.Tokenizer != nil && gen.fit == 0 {
			c, err := s.Tokenizer.Count(string(gen.appendText(nil)))
			if err != nil {
				return nil, err
			}
			in = c
		}
		reqs[i] = Request{gen: gen, InputTokens: in, MaxTokens: s.OutputLen, PrefixGroup: g + 1}
	}
	set := NewSet(s.String(), reqs)
	set.Tokenizer = s.Tokenizer
	return set, nil
}

// prefixes draws the groups' prefixes: distinct, and with distinct first words while there are
// enough words; with a Tokenizer, each sized to PrefixLen tokens.
func (s SharedPrefix) prefixes() ([]string, error) {
	src := rand.NewPCG(uint64(s.Seed), 0x707265666978) // "prefix"
	rng := rand.New(src)
	firsts := rng.Perm(len(distinctVocabulary))
	out := make([]string, s.Groups)
	seen := make(map[string]struct{}, s.Groups)
	for g := range out {
		for {
			var first string
			if g < len(firsts) {
				first = distinctVocabulary[firsts[g]]
			} else {
				first = distinctVocabulary[rng.IntN(len(distinctVocabulary))]
			}
			if s.PrefixLen > 1 {
				first += " "
			}
			gen := newGenerated("", first, src, s.PrefixLen-1)
			if s.Tokenizer != nil {
				head, err := leadTokens(first, s.Tokenizer)
				if err == nil {
					err = fitTokens(gen, s.PrefixLen, head, s.Tokenizer)
				}
				if err != nil && !errors.Is(err, errTooShort) {
					return nil, err
				}
			}
			text := string(gen.appendText(nil))
			if _, dup := seen[text]; !dup {
				out[g] = text
				break
			}
		}
		seen[out[g]] = struct{}{}
	}
	return out, nil
}

// enough reports whether words^length >= n, i.e. n distinct sequences of length words exist.
func enough(words, length, n int) bool {
	p := 1
	for range length {
		if p >= n {
			return true
		}
		p *= words // p < n, a count of requests or groups, far below 2^63/words: no overflow
	}
	return p >= n
}

// distinctVocabulary is vocabulary without repetitions, in its order.
var distinctVocabulary = func() []string {
	seen := make(map[string]bool, len(vocabulary))
	var out []string
	for _, w := range vocabulary {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}()
