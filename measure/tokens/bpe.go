package tokens

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// A model turns one piece into token ids (Hugging Face's models), appending them to e.ids.
type model interface {
	tokenize(e *encoder, word string) error
}

// bpe is the BPE model: a word starts as its characters (or bytes), and the pair of adjacent
// symbols whose merge has the lowest rank is merged, the leftmost first, until no pair merges.
type bpe struct {
	vocab map[string]int32
	// merges maps a pair of ids (left<<32 | right) to the merge's rank<<32 | the merged id.
	merges       map[uint64]uint64
	unkName      string // the unknown token, "" for none
	unk          int32  // its id, -1 when it is not in the vocabulary
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
	prefix       string // continuing_subword_prefix, before every symbol but the first
	suffix       string // end_of_word_suffix, after the last
	fallback     [256]int32
	// bytes: the words are raw bytes and vocab is kept in bytes (a ByteLevel pre-tokenizer's
	// characters turned back into the bytes they stand for); byteIDs holds each byte's id.
	bytes   bool
	byteIDs [256]int32
	// cuts, for a SentencePiece vocabulary (words begin with ▁), are the entries that hold
	// a ▁ after their start, by the character before it: a word is tokenized in parts cut
	// before each ▁ that none of them covers (see cut).
	cuts  map[rune][]cutRule
	cache *wordCache
}

// cutRule is an entry that covers a ▁ at byte k of it.
type cutRule struct {
	token string
	k     int
}

// wordCache holds the ids of words already tokenized, as Hugging Face's BPE cache does; it
// stops growing at its capacity.
type wordCache struct {
	mu sync.RWMutex
	m  map[string][]int32
}

const (
	cacheCapacity = 1 << 17
	cacheMaxLen   = 256 // longer words are not kept
)

func (c *wordCache) get(word string) ([]int32, bool) {
	c.mu.RLock()
	ids, ok := c.m[word]
	c.mu.RUnlock()
	return ids, ok
}

func (c *wordCache) put(word string, ids []int32) {
	if len(word) >= cacheMaxLen {
		return
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[string][]int32)
	}
	if len(c.m) < cacheCapacity {
		c.m[word] = ids
	}
	c.mu.Unlock()
}

// symbol is a symbol of a word being merged: an id in a doubly linked list over e.syms.
type symbol struct {
	id         int32
	prev, next int32
	gone       bool // merged into the symbol before it
}

// mergeItem is a candidate merge: the pair starting at pos, of rank rank, into id.
type mergeItem struct {
	rank uint32
	pos  int32
	id   int32
}

func (b *bpe) tokenize(e *encoder, word string) error {
	if word == "" {
		return nil
	}
	if b.cuts != nil {
		return b.tokenizeParts(e, word)
	}
	return b.tokenizeWord(e, word)
}

func (b *bpe) tokenizeWord(e *encoder, word string) error {
	if b.ignoreMerges {
		if id, ok := b.vocab[word]; ok {
			e.ids = append(e.ids, id)
			return nil
		}
	}
	if ids, ok := b.cache.get(word); ok {
		e.ids = append(e.ids, ids...)
		return nil
	}
	start := len(e.ids)
	if err := b.merge(e, word); err != nil {
		return err
	}
	b.cache.put(word, append([]int32(nil), e.ids[start:]...))
	return nil
}

// metaspace is SentencePiece's word boundary, the character its vocabularies write for a space.
const metaspaceChar = "\u2581"

// tokenizeParts tokenizes a word in parts cut before every ▁ that no vocabulary entry covers
// there. That gives the ids the whole word gives: two adjacent symbols can only merge into an
// entry of the vocabulary, so no merge ever joins symbols across such a cut, and merges on one
// side never change those on the other. A SentencePiece model's text reaches it as one word
// (nothing splits it before the model), so the parts make the cache work for it.
func (b *bpe) tokenizeParts(e *encoder, word string) error {
	start := 0
	for p := 1; p < len(word); {
		j := strings.Index(word[p:], metaspaceChar)
		if j < 0 {
			break
		}
		p += j
		if b.canCut(word, p) {
			if err := b.tokenizeWord(e, word[start:p]); err != nil {
				return err
			}
			start = p
		}
		p += len(metaspaceChar)
	}
	return b.tokenizeWord(e, word[start:])
}

// canCut reports whether no entry that holds a ▁ after its start covers the ▁ at word[p].
func (b *bpe) canCut(word string, p int) bool {
	before, _ := utf8.DecodeLastRuneInString(word[:p])
	for _, c := range b.cuts[before] {
		if p-c.k >= 0 && strings.HasPrefix(word[p-c.k:], c.token) {
			return false
		}
	}
	return true
}

// useCuts enables tokenizeParts for a vocabulary that writes spaces as ▁: merges join
// adjacent symbols into entries, and no prefix or suffix is added to them.
func (b *bpe) useCuts() {
	if b.bytes || b.ignoreMerges || b.prefix != "" || b.suffix != "" {
		return
	}
	if _, ok := b.vocab[metaspaceChar]; !ok {
		return
	}
	cuts := map[rune][]cutRule{}
	for t := range b.vocab {
		for k := 1; k < len(t); k++ {
			if strings.HasPrefix(t[k:], metaspaceChar) {
				before, _ := utf8.DecodeLastRuneInString(t[:k])
				cuts[before] = append(cuts[before], cutRule{t, k})
			}
		}
	}
	b.cuts = cuts
}

// merge appends the ids of word (Hugging Face's merge_word and merge_all).
func (b *bpe) merge(e *encoder, word string) error {
	syms := e.syms[:0]
	add := func(id int32) {
		n := int32(len(syms))
		syms = append(syms, symbol{id: id, prev: n - 1, next: n + 1})
	}
	if b.bytes {
		for i := 0; i < len(word); i++ {
			add(b.byteIDs[word[i]])
		}
	} else {
		unk, unkPending := int32(-1), false
		for i := 0; i < len(word); {
			_, n := utf8.DecodeRuneInString(word[i:])
			// The symbol's string: the character, with the prefix after the first and the
			// suffix on the last.
			key := append(e.buf[:0], word[i:i+n]...)
			if i > 0 && b.prefix != "" {
				key = append(append(key[:0], b.prefix...), word[i:i+n]...)
			}
			i += n
			if i == len(word) {
				key = append(key, b.suffix...)
			}
			e.buf = key
			if id, ok := b.vocab[string(key)]; ok {
				if unkPending {
					add(unk)
					unkPending = false
				}
				add(id)
				continue
			}
			if b.byteFallback && b.fallbackAll(key) {
				// As Hugging Face does, an unknown symbol still pending stays so: it is added
				// before the next symbol of the vocabulary, after these bytes.
				for _, c := range key {
					add(b.fallback[c])
				}
				continue
			}
			if b.unkName != "" {
				if b.unk < 0 {
					return fmt.Errorf("the unknown token %s is not in the vocabulary", quote(b.unkName))
				}
				if unkPending && !b.fuseUnk {
					add(unk)
				}
				unk, unkPending = b.unk, true
			}
		}
		if unkPending {
			add(unk)
		}
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	syms = b.mergeAll(e, syms)
	for _, s := range syms {
		if !s.gone {
			e.ids = append(e.ids, s.id)
		}
	}
	e.syms = syms[:0]
	return nil
}

// fallbackAll reports whether every byte of s has a byte token (<0xXX>).
func (b *bpe) fallbackAll(s []byte) bool {
	for _, c := range s {
		if b.fallback[c] < 0 {
			return false
		}
	}
	return true
}

// mergeAll merges the pairs of syms in the order of their ranks, the leftmost first among
// equal ranks, with a heap of candidates that are checked again when they come out.
func (b *bpe) mergeAll(e *encoder, syms []symbol) []symbol {
	h := e.heap[:0]
	for i := 0; i+1 < len(syms); i++ {
		if m, ok := b.merges[uint64(uint32(syms[i].id))<<32|uint64(uint32(syms[i+1].id))]; ok {
			h = heapPush(h, mergeItem{uint32(m >> 32), int32(i), int32(uint32(m))})
		}
	}
	for len(h) > 0 {
		var top mergeItem
		top, h = heapPop(h)
		cur := &syms[top.pos]
		if cur.gone || cur.next < 0 {
			continue
		}
		right := syms[cur.next]
		m, ok := b.merges[uint64(uint32(cur.id))<<32|uint64(uint32(right.id))]
		if !ok || int32(uint32(m)) != top.id {
			continue // stale: one of the two changed since
		}
		cur.id = top.id
		syms[cur.next].gone = true
		cur.next = right.next
		if right.next >= 0 {
			syms[right.next].prev = top.pos
		}
		if cur.prev >= 0 {
			p := syms[cur.prev]
			if m, ok := b.merges[uint64(uint32(p.id))<<32|uint64(uint32(cur.id))]; ok {
				h = heapPush(h, mergeItem{uint32(m >> 32), cur.prev, int32(uint32(m))})
			}
		}
		if cur.next >= 0 {
			n := syms[cur.next]
			if m, ok := b.merges[uint64(uint32(cur.id))<<32|uint64(uint32(n.id))]; ok {
				h = heapPush(h, mergeItem{uint32(m >> 32), top.pos, int32(uint32(m))})
			}
		}
	}
	e.heap = h[:0]
	return syms
}

func less(a, b mergeItem) bool { return a.rank < b.rank || a.rank == b.rank && a.pos < b.pos }

func heapPush(h []mergeItem, m mergeItem) []mergeItem {
	h = append(h, m)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

func heapPop(h []mergeItem) (mergeItem, []mergeItem) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && less(h[l], h[m]) {
			m = l
		}
		if r < n && less(h[r], h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return top, h
}
