package tokens

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// unigram is the Unigram model (SentencePiece's): the segmentation of a piece into vocabulary
// entries of the highest total score (Viterbi), unknown characters fused into one unknown token
// or, with byte_fallback, written as byte tokens.
type unigram struct {
	ids          map[string]int32
	scores       []float64
	prefixes     map[string]struct{} // every proper prefix of an entry, to stop looking early
	maxLen       int                 // the longest entry, in bytes
	unk          int32               // -1: none
	fallback     [256]int32
	byteFallback bool
	unkScore     float64 // the lowest score less 10, Hugging Face's penalty for an unknown
	cache        *wordCache
}

// node is the best segmentation of a piece's prefix found so far.
type node struct {
	score float64
	start int // where its last entry starts; -1: not reached
	id    int32
}

func (u *unigram) tokenize(e *encoder, word string) error {
	if word == "" {
		return nil
	}
	if ids, ok := u.cache.get(word); ok {
		e.ids = append(e.ids, ids...)
		return nil
	}
	start := len(e.ids)
	if err := u.viterbi(e, word); err != nil {
		return err
	}
	u.cache.put(word, append([]int32(nil), e.ids[start:]...))
	return nil
}

var errNoUnk = errors.New("a character is not in the vocabulary and the model has no unknown token")

func (u *unigram) viterbi(e *encoder, s string) error {
	best := e.nodes[:0]
	for range len(s) + 1 {
		best = append(best, node{start: -1})
	}
	best[0].start = 0
	for at := 0; at < len(s); {
		here := best[at].score
		_, mb := utf8.DecodeRuneInString(s[at:])
		single := false
		for l := 1; l <= u.maxLen && at+l <= len(s); l++ {
			t := s[at : at+l]
			if id, ok := u.ids[t]; ok {
				n := &best[at+l]
				if sc := here + u.scores[id]; n.start < 0 || sc > n.score {
					*n = node{sc, at, id}
				}
				if l == mb {
					single = true
				}
			}
			if _, more := u.prefixes[t]; !more {
				break
			}
		}
		if !single {
			if u.unk < 0 {
				return errNoUnk
			}
			n := &best[at+mb]
			if sc := here + u.unkScore; n.start < 0 || sc > n.score {
				*n = node{sc, at, u.unk}
			}
		}
		at += mb
	}
	// The pieces from the end, unknown ones fused, then written in order.
	parts := e.spans[:0]
	lastUnk := false
	for end := len(s); end > 0; {
		n := best[end]
		isUnk := u.unk >= 0 && n.id == u.unk
		if isUnk && lastUnk {
			parts[len(parts)-1].start = n.start
		} else {
			parts = append(parts, span{n.start, end})
		}
		lastUnk = isUnk
		end = n.start
	}
	for i := len(parts) - 1; i >= 0; i-- {
		t := s[parts[i].start:parts[i].end]
		if id, ok := u.ids[t]; ok {
			e.ids = append(e.ids, id)
			continue
		}
		if u.byteFallback && u.fallbackAll(t) {
			for j := 0; j < len(t); j++ {
				e.ids = append(e.ids, u.fallback[t[j]])
			}
			continue
		}
		if u.unk < 0 {
			return errNoUnk
		}
		e.ids = append(e.ids, u.unk)
	}
	e.spans = parts[:0]
	e.nodes = best[:0]
	return nil
}

func (u *unigram) fallbackAll(s string) bool {
	for j := 0; j < len(s); j++ {
		if u.fallback[s[j]] < 0 {
			return false
		}
	}
	return true
}

// wordPiece is the WordPiece model (BERT's): the longest vocabulary entry at the start of the
// word, then the longest entry after the prefix (##) for the rest, and so on; a word that
// cannot be covered, or is longer than maxChars, is the unknown token.
type wordPiece struct {
	vocab    map[string]int32
	unk      string
	unkID    int32 // -1: not in the vocabulary
	prefix   string
	maxChars int
}

func (w *wordPiece) tokenize(e *encoder, word string) error {
	unk := func() error {
		if w.unkID < 0 {
			return fmt.Errorf("the unknown token %s is not in the vocabulary", quote(w.unk))
		}
		e.ids = append(e.ids, w.unkID)
		return nil
	}
	if utf8.RuneCountInString(word) > w.maxChars {
		return unk()
	}
	mark := len(e.ids)
	for start := 0; start < len(word); {
		end := len(word)
		found := false
		for start < end {
			key := append(e.buf[:0], word[start:end]...)
			if start > 0 {
				key = append(append(key[:0], w.prefix...), word[start:end]...)
			}
			e.buf = key
			if id, ok := w.vocab[string(key)]; ok {
				e.ids = append(e.ids, id)
				found = true
				break
			}
			_, n := utf8.DecodeLastRuneInString(word[start:end])
			end -= n
		}
		if !found {
			e.ids = e.ids[:mark]
			return unk()
		}
		start = end
	}
	return nil
}

// wordLevel is the WordLevel model: a word is its entry in the vocabulary, or the unknown
// token.
type wordLevel struct {
	vocab map[string]int32
	unk   string
	unkID int32 // -1: not in the vocabulary
}

func (w *wordLevel) tokenize(e *encoder, word string) error {
	if id, ok := w.vocab[word]; ok {
		e.ids = append(e.ids, id)
		return nil
	}
	if w.unkID < 0 {
		return fmt.Errorf("the word %s is not in the vocabulary and the unknown token %s is not either", quote(word), quote(w.unk))
	}
	e.ids = append(e.ids, w.unkID)
	return nil
}
