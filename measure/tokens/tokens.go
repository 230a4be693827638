// Package tokens counts text in a served model's own tokens, from its Hugging Face tokenizer
// file (tokenizer.json), so that loadcurve can size synthetic prompts and count dataset prompts
// as the model will (vLLM's --tokenizer). It reads only local files: nothing is downloaded.
//
// It is an implementation of the part of Hugging Face's tokenizers that decides a text's
// tokens, held to the Rust library itself on a corpus for every major model family (the tests
// and testdata/README.md say how): added and special tokens found first, the normalizers
// (Unicode forms, Lowercase, Strip, StripAccents, Replace, Prepend, BertNormalizer, Nmt,
// ByteLevel), the pre-tokenizers (ByteLevel, Split with Oniguruma patterns and every split
// behavior, Metaspace, Whitespace, WhitespaceSplit, BertPreTokenizer, Punctuation, Digits,
// CharDelimiterSplit, FixedLength) and the models (BPE with byte-level or SentencePiece
// vocabularies, byte fallback and ignore_merges; Unigram; WordPiece; WordLevel). A file with
// a part it lacks (the Precompiled normalizer, UnicodeScripts) is refused, naming the part.
//
// Patterns with look-around, which Go's regexp cannot compile, are matched with
// github.com/dlclark/regexp2; the patterns of the major families are matched by scanners
// written for them (scan.go), tested against regexp2 on the corpus and random text.
package tokens

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// FileName is the file a model directory holds its tokenizer in.
const FileName = "tokenizer.json"

// MaxFileSize bounds a tokenizer file: the largest of the major families' (Gemma 3's) is
// 33 MB.
const MaxFileSize = 256 << 20

// Tokenizer counts tokens with one model's tokenizer. It is safe for concurrent use.
type Tokenizer struct {
	name string // the file, as given or found
	id   string // sha256 of the file
	p    *pipeline
	pool sync.Pool // *encoder
}

// encoder holds the buffers of one encoding, reused from call to call.
type encoder struct {
	ids          []int32
	raw, normd   []addedSeg
	pieces, next []piece
	spans        []span
	segs         []seg
	bertWords    []piece
	syms         []symbol
	heap         []mergeItem
	nodes        []node
	buf          []byte
}

// Load reads a tokenizer from path: a tokenizer.json file, or a directory holding one (a model
// directory as Hugging Face lays it out).
func Load(path string) (*Tokenizer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read the tokenizer: %w", err)
	}
	file := path
	if st.IsDir() {
		file = filepath.Join(path, FileName)
		if _, err := os.Stat(file); err != nil {
			return nil, fmt.Errorf("%s is a directory without a %s: give the tokenizer file, or the model directory that holds it", path, FileName)
		}
	}
	data, err := readBounded(file)
	if err != nil {
		return nil, err
	}
	t, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// readBounded reads the tokenizer file at path, refusing one larger than MaxFileSize before
// reading it, or, when its size is not known ahead (a pipe, a device), once it passes the bound.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the tokenizer: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileSize {
		return nil, fmt.Errorf("%s: %d MB, more than a tokenizer file holds (at most %d MB): not read", path, st.Size()>>20, MaxFileSize>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read the tokenizer: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: more than a tokenizer file holds (at most %d MB): not read", path, MaxFileSize>>20)
	}
	return data, nil
}

// Parse reads a tokenizer from the contents of a tokenizer.json file; name names it in
// messages and in Name.
func Parse(name string, data []byte) (*Tokenizer, error) {
	p, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a tokenizer file loadcurve can read: %w", name, err)
	}
	sum := sha256.Sum256(data)
	t := &Tokenizer{name: name, id: "sha256:" + hex.EncodeToString(sum[:]), p: p}
	t.pool.New = func() any { return new(encoder) }
	if _, err := t.Count("the quick brown fox"); err != nil {
		return nil, fmt.Errorf("%s: the tokenizer does not encode text: %w", name, err)
	}
	return t, nil
}

// Name is the tokenizer's file.
func (t *Tokenizer) Name() string { return t.name }

// ID identifies the tokenizer by its file's contents: "sha256:" and the hex digest. Two
// tokenizers with one ID count every text alike.
func (t *Tokenizer) ID() string { return t.id }

// Count returns the number of tokens of text, without special tokens (a BOS token or a chat
// template, which the server adds, are not counted): Hugging Face's
// len(tokenizer.encode(text, add_special_tokens=False)).
func (t *Tokenizer) Count(text string) (int, error) {
	e := t.pool.Get().(*encoder)
	defer t.pool.Put(e)
	if err := t.encode(e, text); err != nil {
		return 0, fmt.Errorf("tokenizer %s: %w", t.name, err)
	}
	return len(e.ids), nil
}

// Encode returns the token ids of text, without special tokens.
func (t *Tokenizer) Encode(text string) ([]int, error) {
	e := t.pool.Get().(*encoder)
	defer t.pool.Put(e)
	if err := t.encode(e, text); err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", t.name, err)
	}
	ids := make([]int, len(e.ids))
	for i, id := range e.ids {
		ids[i] = int(id)
	}
	return ids, nil
}

var errInvalidUTF8 = errors.New("the text is not valid UTF-8")

// encode leaves text's ids in e.ids: the added tokens found in the text as given, the rest
// normalized, the added tokens found in the normalized text, the rest pre-tokenized, every
// piece through the model.
func (t *Tokenizer) encode(e *encoder, text string) error {
	e.ids = e.ids[:0]
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, string(utf8.RuneError))
	}
	p := t.p
	e.raw = p.added.split(p.added.raw, text, e.raw[:0])
	for _, r := range e.raw {
		if r.tok >= 0 {
			e.ids = append(e.ids, p.added.tokens[r.tok].id)
			continue
		}
		s, first := text[r.start:r.end], r.start == 0
		if s == "" {
			continue
		}
		if p.norm != nil {
			var kept bool
			s, kept = p.norm.normalize(s)
			first = first && kept
		}
		e.normd = p.added.split(p.added.normalized, s, e.normd[:0])
		for _, n := range e.normd {
			if n.tok >= 0 {
				e.ids = append(e.ids, p.added.tokens[n.tok].id)
				continue
			}
			if n.end == n.start {
				continue
			}
			if err := t.tokenizePiece(e, piece{s[n.start:n.end], first && n.start == 0}); err != nil {
				return err
			}
		}
	}
	return nil
}

// tokenizePiece pre-tokenizes p and tokenizes what comes out.
func (t *Tokenizer) tokenizePiece(e *encoder, p piece) error {
	pieces := append(e.pieces[:0], p)
	for _, pt := range t.p.pre {
		next := e.next[:0]
		for _, q := range pieces {
			next = pt.preTokenize(e, q, next)
		}
		e.next, pieces = pieces[:0], next
	}
	e.pieces = pieces[:0]
	for _, q := range pieces {
		if err := t.p.model.tokenize(e, q.text); err != nil {
			return err
		}
	}
	return nil
}
