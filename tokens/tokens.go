// Package tokens counts text in a served model's own tokens, from its Hugging Face tokenizer
// file (tokenizer.json), so that loadcurve can size synthetic prompts and count dataset prompts
// as the model will (vLLM's --tokenizer). It reads only a local file: nothing is downloaded.
//
// The file is read by github.com/sugarme/tokenizer, a pure-Go port of Hugging Face's tokenizers
// (BPE, WordPiece, WordLevel and Unigram models; byte-level, whitespace and Metaspace
// pre-tokenizers; the usual normalizers). A file it cannot read is refused with its reason.
package tokens

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/pretrained"
)

// FileName is the file a model directory holds its tokenizer in.
const FileName = "tokenizer.json"

// Tokenizer counts tokens with one model's tokenizer. It is safe for concurrent use.
type Tokenizer struct {
	path string
	mu   sync.Mutex // the library's encoder keeps state between calls
	tk   *tokenizer.Tokenizer
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
	tk, err := load(file)
	if err != nil {
		return nil, fmt.Errorf("%s: not a tokenizer file loadcurve can read: %w", file, err)
	}
	t := &Tokenizer{path: file, tk: tk}
	if _, err := t.Count("the quick brown fox"); err != nil {
		return nil, fmt.Errorf("%s: the tokenizer does not encode text: %w", file, err)
	}
	return t, nil
}

// load reads the file, turning the library's panics on malformed input into errors.
func load(file string) (tk *tokenizer.Tokenizer, err error) {
	defer func() {
		if r := recover(); r != nil {
			tk, err = nil, fmt.Errorf("malformed: %v", r)
		}
	}()
	tk, err = pretrained.FromFile(file)
	if err == nil && tk == nil {
		err = errors.New("no tokenizer in the file")
	}
	return tk, err
}

// Name is the tokenizer's file.
func (t *Tokenizer) Name() string { return t.path }

// Count returns the number of tokens of text, without special tokens (a BOS token or a chat
// template, which the server adds, are not counted).
func (t *Tokenizer) Count(text string) (n int, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("tokenizer %s: %v", t.path, r)
		}
	}()
	en, err := t.tk.EncodeSingle(text, false)
	if err != nil {
		return 0, fmt.Errorf("tokenizer %s: %w", t.path, err)
	}
	return len(en.Ids), nil
}
