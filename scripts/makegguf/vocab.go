package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// llama.cpp's token types (enum llama_token_type in include/llama.h), which the
// tokenizer.ggml.token_type array holds.
const (
	tokenNormal      int32 = 1
	tokenControl     int32 = 3
	tokenUserDefined int32 = 4
	tokenUnused      int32 = 5
)

// vocab is a tokenizer.json's byte-level BPE vocabulary in the layout llama.cpp's "gpt2"
// tokenizer reads: tokens by id, their types, and the merges by rank.
type vocab struct {
	tokens []string
	types  []int32
	merges []string // "left right", in rank order
	ids    map[string]int
}

// byteLevel maps the characters of a byte-level BPE token back to its bytes: GPT-2's table,
// which keeps the printable bytes '!'..'~', '¡'..'¬' and '®'..'ÿ' as themselves and moves the
// other 68 bytes, in order, to U+0100 and up.
var byteLevel = func() map[rune]byte {
	m := make(map[rune]byte, 256)
	next := rune(256)
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae {
			m[rune(b)] = byte(b)
		} else {
			m[next] = byte(b)
			next++
		}
	}
	return m
}()

// tokenBytes returns the bytes a byte-level token stands for, or false if a character of it
// is not in the table.
func tokenBytes(tok string) ([]byte, bool) {
	out := make([]byte, 0, len(tok))
	for _, r := range tok {
		b, ok := byteLevel[r]
		if !ok {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}

// suppressed lists the tokens a model of random weights should never generate, for
// tokenizer.ggml.suppress_tokens (llama.cpp's sampler gives them a logit of -inf): a model
// token whose bytes are not UTF-8 by themselves (a stray byte or a piece of a character: a
// real model completes the character, random weights seldom do, and llama-server answers a
// completion whose text holds such bytes with HTTP 500, "The model produced output that does
// not match the expected ... format"), and the added tokens but keep (chat markup such as
// <|im_start|> or <tool_call>, which a served model does not put in its content: the control
// ones stream as empty text, the others as markup).
func (v *vocab) suppressed(keep ...string) []int32 {
	var out []int32
	for id, tok := range v.tokens {
		switch v.types[id] {
		case tokenNormal:
			if b, ok := tokenBytes(tok); !ok || !utf8.Valid(b) {
				out = append(out, int32(id))
			}
		case tokenControl, tokenUserDefined:
			if !slices.Contains(keep, tok) {
				out = append(out, int32(id))
			}
		}
	}
	return out
}

// tokenizerFile is the part of a Hugging Face tokenizer.json read here.
type tokenizerFile struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Model struct {
		Type   string          `json:"type"`
		Vocab  map[string]int  `json:"vocab"`
		Merges json.RawMessage `json:"merges"`
	} `json:"model"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
}

// findTokenizer resolves a relative path that does not exist from the working directory
// against the module's root (the nearest directory above holding go.mod), so that the default
// works from anywhere inside the repository.
func findTokenizer(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	if _, err := os.Stat(path); err == nil {
		return path
	}
	dir, err := os.Getwd()
	if err != nil {
		return path
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, path)
		}
		up := filepath.Dir(dir)
		if up == dir {
			return path
		}
		dir = up
	}
}

// parseVocab lays out a byte-level BPE tokenizer.json for llama.cpp as its converter
// (convert_hf_to_gguf.py) does: the model's tokens as NORMAL, an added token marked special,
// or looking special (<|...|>), as CONTROL, any other added token as USER_DEFINED, and an id
// no token has (none in Qwen3's file) as an UNUSED "[PAD<id>]".
func parseVocab(data []byte) (*vocab, error) {
	var f tokenizerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	if f.Model.Type != "BPE" {
		return nil, fmt.Errorf("model type %q: only byte-level BPE (llama.cpp's gpt2 tokenizer) is laid out here", f.Model.Type)
	}
	if !bytes.Contains(f.PreTokenizer, []byte(`"ByteLevel"`)) {
		return nil, errors.New("the pre-tokenizer is not byte-level: only byte-level BPE (llama.cpp's gpt2 tokenizer) is laid out here")
	}
	n := 0
	for _, id := range f.Model.Vocab {
		n = max(n, id+1)
	}
	for _, a := range f.AddedTokens {
		n = max(n, a.ID+1)
	}
	if n == 0 {
		return nil, errors.New("no tokens")
	}
	v := &vocab{tokens: make([]string, n), types: make([]int32, n), ids: make(map[string]int, n)}
	set := make([]bool, n)
	for tok, id := range f.Model.Vocab {
		if id < 0 || set[id] {
			return nil, fmt.Errorf("token id %d twice or negative", id)
		}
		v.tokens[id], v.types[id], set[id] = tok, tokenNormal, true
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 {
			return nil, fmt.Errorf("added token %q: id %d", a.Content, a.ID)
		}
		if set[a.ID] && v.tokens[a.ID] != a.Content {
			return nil, fmt.Errorf("added token %q: id %d is %q in the model's vocabulary", a.Content, a.ID, v.tokens[a.ID])
		}
		typ := tokenUserDefined
		if a.Special || strings.HasPrefix(a.Content, "<|") && strings.HasSuffix(a.Content, "|>") {
			typ = tokenControl
		}
		v.tokens[a.ID], v.types[a.ID], set[a.ID] = a.Content, typ, true
	}
	for id := range v.tokens {
		if !set[id] {
			v.tokens[id], v.types[id] = fmt.Sprintf("[PAD%d]", id), tokenUnused
		}
		if _, dup := v.ids[v.tokens[id]]; dup {
			return nil, fmt.Errorf("token %q twice", v.tokens[id])
		}
		v.ids[v.tokens[id]] = id
	}
	merges, err := parseMerges(f.Model.Merges)
	if err != nil {
		return nil, err
	}
	v.merges = merges
	return v, nil
}

// parseMerges reads the merges in either of tokenizer.json's forms: pairs (["a", "b"], the
// form since tokenizers 0.20) or strings ("a b"). llama.cpp splits a merge at its first space
// after the first byte, so a side holding a space cannot be written; byte-level vocabularies
// have none (a space is "Ġ").
func parseMerges(raw json.RawMessage) ([]string, error) {
	var pairs [][]string
	if err := json.Unmarshal(raw, &pairs); err == nil {
		out := make([]string, len(pairs))
		for i, p := range pairs {
			if len(p) != 2 || p[0] == "" || p[1] == "" || strings.Contains(p[0], " ") || strings.Contains(p[1], " ") {
				return nil, fmt.Errorf("merge %d: %q is not a pair llama.cpp can read", i, p)
			}
			out[i] = p[0] + " " + p[1]
		}
		return out, nil
	}
	var strs []string
	if err := json.Unmarshal(raw, &strs); err != nil {
		return nil, errors.New("merges are neither pairs nor strings")
	}
	for i, s := range strs {
		if a, b, ok := strings.Cut(s, " "); !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return nil, fmt.Errorf("merge %d: %q is not a pair llama.cpp can read", i, s)
		}
	}
	return strs, nil
}
