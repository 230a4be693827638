package tokens

import (
	"unicode/utf8"
)

// addedToken is an entry of a tokenizer.json file's added_tokens: a string that is one token
// wherever it appears (special tokens such as <|eot_id|>, and others), found before the text
// is split.
type addedToken struct {
	id                                int32
	content                           string
	singleWord, lstrip, rstrip, normd bool
}

// addedVocab finds the added tokens in a text as Hugging Face's AddedVocabulary does: the
// tokens with normalized false in the text as given, the others in the normalized text; at
// each place the longest token that starts there, the leftmost first.
type addedVocab struct {
	tokens          []addedToken
	raw, normalized *trie // nil when there are none of that kind
}

// addedSeg is a part of a text: a token of the vocabulary (tok >= 0, an index into tokens) or
// the text between two (tok < 0).
type addedSeg struct {
	start, end int
	tok        int
}

// trie holds strings by their bytes.
type trie struct {
	edges map[uint64]int32 // node<<8 | byte → child node
	term  []int32          // per node: the index of the string that ends there, or -1
	first [256]bool        // the bytes a string begins with
}

func newTrie() *trie { return &trie{edges: map[uint64]int32{}, term: []int32{-1}} }

func (t *trie) add(s string, index int) {
	node := int32(0)
	for i := 0; i < len(s); i++ {
		key := uint64(node)<<8 | uint64(s[i])
		next, ok := t.edges[key]
		if !ok {
			next = int32(len(t.term))
			t.term = append(t.term, -1)
			t.edges[key] = next
		}
		node = next
	}
	if t.term[node] < 0 { // the first of two equal strings keeps the place
		t.term[node] = int32(index)
	}
	t.first[s[0]] = true
}

// longest returns the end of the longest string that starts at s[i], and its index (-1: none).
func (t *trie) longest(s string, i int) (int, int) {
	node, end, index := int32(0), -1, -1
	for j := i; j < len(s); j++ {
		next, ok := t.edges[uint64(node)<<8|uint64(s[j])]
		if !ok {
			break
		}
		node = next
		if k := t.term[node]; k >= 0 {
			end, index = j+1, int(k)
		}
	}
	return end, index
}

// split appends the parts of s: the tokens of t found in it and the text between them.
func (a *addedVocab) split(t *trie, s string, dst []addedSeg) []addedSeg {
	if t == nil || s == "" {
		return append(dst, addedSeg{0, len(s), -1})
	}
	startOffset := 0
	for i := 0; i < len(s); {
		if !t.first[s[i]] {
			i++
			continue
		}
		end, k := t.longest(s, i)
		if k < 0 {
			i++
			continue
		}
		start, stop := i, end
		i = end // the search goes on after the match, whether or not it is taken
		tok := &a.tokens[k]
		if tok.singleWord {
			startSpace := start == 0 || !endsWithWord(s[:start])
			stopSpace := stop == len(s) || !startsWithWord(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if tok.lstrip {
			start = max(trailingSpaceStart(s[:start]), startOffset)
		}
		if tok.rstrip {
			stop += leadingSpaceEnd(s[stop:])
		}
		if startOffset < start {
			dst = append(dst, addedSeg{startOffset, start, -1})
		}
		dst = append(dst, addedSeg{start, stop, k})
		startOffset = stop
	}
	if startOffset != len(s) {
		dst = append(dst, addedSeg{startOffset, len(s), -1})
	}
	return dst
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWord(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWord(r)
}

// trailingSpaceStart is where the whitespace that ends s begins (len(s) if none).
func trailingSpaceStart(s string) int {
	i := len(s)
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		if !isSpace(r) {
			break
		}
		i -= n
	}
	return i
}

// leadingSpaceEnd is the length of the whitespace that begins s.
func leadingSpaceEnd(s string) int {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isSpace(r) {
			break
		}
		i += n
	}
	return i
}
