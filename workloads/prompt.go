package workloads

import (
	"encoding/json"
	"math/rand/v2"
)

// generated is a generated prompt kept as the recipe that writes it instead of its text: a fixed
// lead shared between requests (a cold nonce, a group's prefix), a literal part of the request's
// own, and words drawn from vocabulary by a generator from a saved state. Writing it gives the
// same text every time. A 1024-word synthetic prompt is about 5.4 KB as text and under 100 bytes
// as a recipe, which is what lets an hour-long run at a high rate hold its request set.
type generated struct {
	lead string // written first; ends with a space when anything follows
	own  string // then this literal text
	// then, space-separated, the blocks (Mooncake hash ids): block j is MooncakeBlockSize words
	// (lastBlock for the last one) drawn from a stream seeded by (blockSeed, blocks[j]) alone;
	blocks    []int64 // shared with the trace
	blockSeed uint64
	lastBlock int
	// then words words, drawn by appendWords from this state.
	state rand.PCG
	words int
	// then this literal text: the one-token words that make up a prompt sized in a tokenizer's
	// tokens (fitTokens); it starts with a space when anything comes before it.
	tail string
	size int // bytes of the whole text
	// fit, for a prompt sized in a tokenizer's tokens, is the count of its whole text: what
	// a lead put in front later (ApplyCold's nonce) is made room for within it.
	fit int
	// blockFits, for blocks sized in a tokenizer's tokens (a trace's, with one), holds each
	// block's words and the one-token filler words after them; blockTokens their sum of
	// tokens; filler the filler word.
	blockFits   []blockFit
	blockTokens int
	filler      string
}

// blockFit is a block sized in a tokenizer's tokens: its first words of its stream, then fill
// filler words.
type blockFit struct{ words, fill int32 }

// newGenerated records words words to be drawn from src's current state, after lead and own,
// and advances src exactly as writing them would (src must be the source of the stream's
// rand.Rand, so that the draws stay in step). own, when non-empty and followed by words, must
// end with a space.
func newGenerated(lead, own string, src *rand.PCG, words int) *generated {
	g := &generated{lead: lead, own: own, state: *src, words: words}
	g.size = len(lead) + len(own) + wordsSize(src, words)
	return g
}

// appendText appends the prompt's text to b.
func (g *generated) appendText(b []byte) []byte {
	b = append(b, g.lead...)
	b = append(b, g.own...)
	sep := false
	for j, id := range g.blocks {
		if sep {
			b = append(b, ' ')
		}
		if g.blockFits != nil {
			f := g.blockFits[j]
			b = appendWords(b, rand.NewPCG(g.blockSeed, uint64(id)), int(f.words))
			b = appendFiller(b, g.filler, int(f.fill), f.words == 0)
		} else {
			b = appendWords(b, rand.NewPCG(g.blockSeed, uint64(id)), g.blockWords(j))
		}
		sep = true
	}
	if g.words > 0 {
		if sep {
			b = append(b, ' ')
		}
		state := g.state
		b = appendWords(b, &state, g.words)
	}
	return append(b, g.tail...)
}

func (g *generated) blockWords(j int) int {
	if j == len(g.blocks)-1 {
		return g.lastBlock
	}
	return MooncakeBlockSize
}

// appendFiller appends k copies of word, each after a space (the first without one when first).
func appendFiller(b []byte, word string, k int, first bool) []byte {
	for i := range k {
		if i > 0 || !first {
			b = append(b, ' ')
		}
		b = append(b, word...)
	}
	return b
}

// appendWords appends n words of vocabulary drawn from src, separated by single spaces: the
// one way every generated prompt's words are drawn.
func appendWords(b []byte, src *rand.PCG, n int) []byte {
	rng := rand.New(src)
	for j := 0; j < n; j++ {
		if j > 0 {
			b = append(b, ' ')
		}
		b = append(b, vocabulary[rng.IntN(len(vocabulary))]...)
	}
	return b
}

// wordsSize returns the bytes of n words drawn from src (which it advances) with their spaces.
func wordsSize(src *rand.PCG, n int) int {
	rng := rand.New(src)
	size := max(n-1, 0)
	for range n {
		size += len(vocabulary[rng.IntN(len(vocabulary))])
	}
	return size
}

// withLead returns a copy of g with lead written before its own lead.
func (g *generated) withLead(lead string) *generated {
	c := *g
	c.lead = lead + g.lead
	c.size += len(lead)
	return &c
}

// Text returns the prompt: Prompt, or, for a generated request whose Prompt is empty, the text
// its recipe writes (a new string on every call).
func (r *Request) Text() string {
	if r.Prompt != "" || r.gen == nil {
		return r.Prompt
	}
	return string(r.gen.appendText(make([]byte, 0, r.gen.size)))
}

// TextLen returns len(r.Text()) without writing the text.
func (r *Request) TextLen() int {
	if r.Prompt != "" || r.gen == nil {
		return len(r.Prompt)
	}
	return r.gen.size
}

// AppendText appends r.Text() to b without allocating beyond b's growth.
func (r *Request) AppendText(b []byte) []byte {
	if r.Prompt != "" || r.gen == nil {
		return append(b, r.Prompt...)
	}
	return r.gen.appendText(b)
}

// Generated reports whether the prompt is kept as a recipe (Text writes it on demand). Its text
// is then made of vocabulary words, spaces and the leads ApplyCold adds.
func (r *Request) Generated() bool { return r.Prompt == "" && r.gen != nil }

// requestJSON is Request's JSON form without its methods.
type requestJSON Request

// MarshalJSON encodes the request with its prompt's text, so a generated request encodes (and
// fingerprints) exactly as the same request with the text in Prompt.
func (r Request) MarshalJSON() ([]byte, error) {
	var text []byte
	return json.Marshal(plainJSON(&r, &text))
}

// plainJSON returns r in the form encoding/json encodes without calling MarshalJSON (whose output
// the encoder would scan again): a generated prompt's text is written into *text (reused between
// calls) and copied into Prompt.
func plainJSON(r *Request, text *[]byte) *requestJSON {
	p := (*requestJSON)(r)
	if !r.Generated() {
		return p
	}
	*text = r.gen.appendText((*text)[:0])
	c := *p
	c.Prompt = string(*text)
	return &c
}
