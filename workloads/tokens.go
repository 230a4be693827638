package workloads

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
)

// Tokenizer counts text in a model's tokens (vLLM's --tokenizer): with one, synthetic prompts
// are sized, and dataset prompts counted, in the served model's tokens instead of in words.
type Tokenizer interface {
	// Count returns the number of tokens of text, without special tokens (BOS, a chat template).
	Count(text string) (int, error)
	// Name names the tokenizer in a set's description (its file).
	Name() string
}

// wordCosts is what each vocabulary word costs in a tokenizer's tokens: first at the start of
// a text, next after a space. Every tokenizer of served models splits text at spaces before it
// merges (a whitespace or byte-level pre-tokenizer, or SentencePiece's ▁), so a text of
// vocabulary words costs the sum of its words' costs; fit checks the sum on every prompt
// anyway.
type wordCosts struct {
	first, next []int
	// filler is a vocabulary word that costs one token after a space: a prompt's shortfall is
	// made up with copies of it.
	filler string
}

var costsOf sync.Map // Tokenizer → *wordCosts or error

// costs measures (once per tokenizer) what each vocabulary word costs.
func costs(tk Tokenizer) (*wordCosts, error) {
	if v, ok := costsOf.Load(tk); ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v.(*wordCosts), nil
	}
	wc, err := measureCosts(tk)
	if err != nil {
		costsOf.Store(tk, err)
		return nil, err
	}
	costsOf.Store(tk, wc)
	return wc, nil
}

func measureCosts(tk Tokenizer) (*wordCosts, error) {
	wc := &wordCosts{first: make([]int, len(vocabulary)), next: make([]int, len(vocabulary))}
	const anchor = "the"
	base, err := tk.Count(anchor)
	if err != nil {
		return nil, err
	}
	for i, w := range vocabulary {
		if wc.first[i], err = tk.Count(w); err != nil {
			return nil, err
		}
		n, err := tk.Count(anchor + " " + w)
		if err != nil {
			return nil, err
		}
		wc.next[i] = n - base
		if wc.first[i] < 1 || wc.next[i] < 1 {
			return nil, fmt.Errorf("tokenizer %s: the word %q counts %d tokens alone and %d after a space: it does not split text at spaces, so prompts cannot be sized in its tokens",
				tk.Name(), w, wc.first[i], wc.next[i])
		}
	}
	for i, w := range vocabulary {
		if wc.next[i] != 1 {
			continue
		}
		// Copies of a one-token word stay one token each (no merge across the spaces).
		if n, err := tk.Count(anchor + strings.Repeat(" "+w, 16)); err == nil && n == base+16 {
			wc.filler = w
			break
		}
	}
	if wc.filler == "" {
		return nil, fmt.Errorf("tokenizer %s: no word of loadcurve's vocabulary is a single token after a space, so prompts cannot be sized exactly in its tokens", tk.Name())
	}
	return wc, nil
}

// fitTokens sizes g's own words (those after its lead) to exactly n tokens of tk: it keeps the
// longest run of its words that costs at most n, and makes up the rest with one-token filler
// words. g's lead is not counted. The count of the text written is checked with tk; when it is
// not n, the filler is adjusted (twice at most) and a prompt still not n is an error.
func fitTokens(g *generated, n int, tk Tokenizer) error {
	wc, err := costs(tk)
	if err != nil {
		return err
	}
	// The words g would write, drawn as appendWords draws them.
	state := g.state
	rng := rand.New(&state)
	sum, w := 0, 0
	for ; w < g.words; w++ {
		i := rng.IntN(len(vocabulary))
		c := wc.next[i]
		if w == 0 {
			c = wc.first[i]
		}
		if sum+c > n {
			break
		}
		sum += c
	}
	own := *g
	own.lead, own.words, own.size = "", w, 0
	fill := n - sum
	for try := 0; ; try++ {
		own.tail = fillerText(wc.filler, fill, w == 0)
		text := string(own.appendText(nil))
		got, err := tk.Count(text)
		if err != nil {
			return err
		}
		if got == n {
			g.words, g.tail = own.words, own.tail
			g.size = len(g.lead) + len(text)
			return nil
		}
		if try == 2 || fill+n-got < 0 {
			return fmt.Errorf("tokenizer %s: a prompt sized to %d tokens counts %d: this tokenizer's counts do not add up over words", tk.Name(), n, got)
		}
		fill += n - got
	}
}

// fillerText is k copies of word, each after a space (the first without one when the prompt
// has no words before it).
func fillerText(word string, k int, first bool) string {
	if k <= 0 {
		return ""
	}
	s := strings.Repeat(" "+word, k)
	if first {
		s = s[1:]
	}
	return s
}

// CountInputTokens counts the prompts of a file's requests (prompt and message contents, as the
// words are counted) with count, replacing their word counts; a generated workload's prompts
// are sized by its Tokenizer instead, and a trace's lengths are the trace's.
func (s *Source) CountInputTokens(count func(string) (int, error)) error {
	if s.file == nil || s.Trace != nil {
		return nil
	}
	for i := range s.file.Requests {
		r := &s.file.Requests[i]
		n := 0
		if r.Prompt != "" && len(r.Messages) == 0 {
			c, err := count(r.Text())
			if err != nil {
				return fmt.Errorf("%s: request %d: %w", s.file.Source, i+1, err)
			}
			n = c
		}
		for _, m := range r.Messages {
			c, err := count(m.Content)
			if err != nil {
				return fmt.Errorf("%s: request %d: %w", s.file.Source, i+1, err)
			}
			n += c
		}
		if n > 0 {
			r.InputTokens = n
		}
	}
	s.file.Fingerprint = Fingerprint(s.file.Requests)
	return nil
}

// SetMaxTokens makes every request of a file ask for n output tokens (vLLM's
// --sharegpt-output-len, --custom-output-len); a generated workload has its own lengths.
func (s *Source) SetMaxTokens(n int) {
	if s.file == nil || n < 1 {
		return
	}
	for i := range s.file.Requests {
		s.file.Requests[i].MaxTokens = n
	}
	s.file.Fingerprint = Fingerprint(s.file.Requests)
	s.Desc += fmt.Sprintf(" (max_tokens %d)", n)
}

// errNoPrefix is returned by randomPrefix for a zero length.
var errNoPrefix = errors.New("no prefix")

// randomPrefix is the prefix shared by every request of a synthetic set with PrefixLen > 0 (vLLM's
// --random-prefix-len): PrefixLen words (tokens, with a Tokenizer) drawn from a stream of its own.
func (s Synthetic) randomPrefix() (string, error) {
	if s.PrefixLen <= 0 {
		return "", errNoPrefix
	}
	src := rand.NewPCG(uint64(s.Seed), 0x707265666978) // "prefix"
	g := newGenerated("", "", src, s.PrefixLen)
	if s.Tokenizer != nil {
		if err := fitTokens(g, s.PrefixLen, s.Tokenizer); err != nil {
			return "", err
		}
	}
	return string(g.appendText(nil)), nil
}
