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
	// ID identifies the tokenizer by its contents ("sha256:…"): two sets sized by tokenizers
	// with different IDs are not the same requests.
	ID() string
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

// fitTokens sizes g so that its whole text, lead included, counts exactly total tokens of tk:
// it keeps the longest run of g's own words that fits after the lead, g's literal own part and
// its blocks (sized already, blockTokens), and makes up the rest with one-token filler words.
// fixed is the count of the lead and own part without their closing space (leadTokens), which
// callers share between the requests that share a lead. The count of the text written is
// checked with tk; when it is not total, the filler is adjusted (twice at most) and a prompt
// still not total is errInexact. When what stands before g's own words counts total tokens or
// more, nothing of its own follows and errTooShort says so: the prompt is then longer than
// asked (a lead alone, or a trace's blocks).
func fitTokens(g *generated, total, fixed int, tk Tokenizer) error {
	wc, err := costs(tk)
	if err != nil {
		return err
	}
	g.fit, g.filler = total, wc.filler
	head := g.lead + g.own
	after := head != "" || len(g.blocks) > 0 // g's words follow other text, after a space
	budget := total - fixed - g.blockTokens
	if budget < 0 || budget == 0 && after {
		g.words, g.tail = 0, ""
		if len(g.blocks) == 0 {
			g.lead, g.own = strings.TrimRight(head, " "), ""
		}
		text := g.appendText(nil)
		g.size = len(text)
		if n, err := tk.Count(string(text)); err != nil {
			return err
		} else if n == total {
			return nil
		}
		g.fit = 0
		return errTooShort
	}
	// The words g would write, drawn as appendWords draws them.
	state := g.state
	rng := rand.New(&state)
	sum, w := 0, 0
	for ; w < g.words; w++ {
		i := rng.IntN(len(vocabulary))
		c := wc.next[i]
		if w == 0 && !after {
			c = wc.first[i]
		}
		if sum+c > budget {
			break
		}
		sum += c
	}
	fitted := *g
	fitted.words, fitted.tail = w, ""
	fill := budget - sum
	for try := 0; ; try++ {
		fitted.tail = fillerText(wc.filler, fill, w == 0 && !after)
		text := string(fitted.appendText(nil))
		got, err := tk.Count(text)
		if err != nil {
			return err
		}
		if got == total {
			g.words, g.tail = fitted.words, fitted.tail
			g.size = len(text)
			return nil
		}
		if try == 2 || fill+total-got < 0 {
			return fmt.Errorf("%w: a prompt sized to %d tokens of %s counts %d", errInexact, total, tk.Name(), got)
		}
		fill += total - got
	}
}

// errInexact is fitTokens' answer for a prompt it could not bring to the count asked.
var errInexact = errors.New("this tokenizer's counts do not add up over words")

// fitBlock sizes a trace's block (the words of its stream, (blockSeed, id)) to k tokens of tk
// as it stands in a prompt: first, or after a space.
func fitBlock(tk Tokenizer, wc *wordCosts, blockSeed uint64, id int64, k int, first bool) (blockFit, error) {
	rng := rand.New(rand.NewPCG(blockSeed, uint64(id)))
	sum, w := 0, 0
	for ; w < MooncakeBlockSize; w++ {
		i := rng.IntN(len(vocabulary))
		c := wc.next[i]
		if w == 0 && first {
			c = wc.first[i]
		}
		if sum+c > k {
			break
		}
		sum += c
	}
	const anchor = "the"
	base := 0
	if !first {
		n, err := tk.Count(anchor)
		if err != nil {
			return blockFit{}, err
		}
		base = n
	}
	f := blockFit{words: int32(w), fill: int32(k - sum)}
	for try := 0; ; try++ {
		b := appendWords(nil, rand.NewPCG(blockSeed, uint64(id)), int(f.words))
		b = appendFiller(b, wc.filler, int(f.fill), f.words == 0)
		text := string(b)
		if !first {
			text = anchor + " " + text
		}
		got, err := tk.Count(text)
		if err != nil {
			return f, err
		}
		got -= base
		if got == k {
			return f, nil
		}
		if try == 2 || int(f.fill)+k-got < 0 {
			return f, fmt.Errorf("%w: a block sized to %d tokens of %s counts %d", errInexact, k, tk.Name(), got)
		}
		f.fill += int32(k - got)
	}
}

// errTooShort is fitTokens' answer for a prompt whose lead leaves no room for its own words.
var errTooShort = errors.New("the prompt's lead counts as many tokens as the prompt may")

// leadTokens counts a lead (and a literal own part) as it stands before a prompt's words: its
// closing space goes with the first word, as every tokenizer of served models splits it.
func leadTokens(head string, tk Tokenizer) (int, error) {
	head = strings.TrimRight(head, " ")
	if head == "" {
		return 0, nil
	}
	return tk.Count(head)
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
// words are counted) with tk, replacing their word counts; a generated workload's prompts
// are sized by its Tokenizer instead, and a trace's lengths are the trace's.
func (s *Source) CountInputTokens(tk Tokenizer) error {
	if s.file == nil || s.Trace != nil {
		return nil
	}
	s.file.Tokenizer = tk
	for i := range s.file.Requests {
		r := &s.file.Requests[i]
		n, err := countRequest(r, tk)
		if err != nil {
			return fmt.Errorf("%s: request %d: %w", s.file.Source, i+1, err)
		}
		if n > 0 {
			r.InputTokens = n
		}
	}
	s.file.Fingerprint = Fingerprint(s.file.Requests)
	return nil
}

// countRequest counts r's prompt in tk's tokens: its messages' contents, or its prompt when it
// has none (0 for a request with no text).
func countRequest(r *Request, tk Tokenizer) (int, error) {
	if len(r.Messages) == 0 {
		return tk.Count(r.Text())
	}
	n := 0
	for _, m := range r.Messages {
		c, err := tk.Count(m.Content)
		if err != nil {
			return 0, err
		}
		n += c
	}
	return n, nil
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
		if err := fitTokens(g, s.PrefixLen, 0, s.Tokenizer); err != nil {
			return "", err
		}
	}
	return string(g.appendText(nil)), nil
}
