package tokens

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The parts of a tokenizer.json file that decide the tokens of a text. Its post-processor
// (which adds special tokens such as BOS), decoder, truncation and padding are not read:
// loadcurve counts a text's own tokens.
type fileJSON struct {
	AddedTokens  []addedJSON     `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        json.RawMessage `json:"model"`
}

type addedJSON struct {
	ID         int64  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// partJSON is a normalizer or pre-tokenizer: its type and the fields of every type.
type partJSON struct {
	Type          string            `json:"type"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
	Pattern       *struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	} `json:"pattern"`
	Content          *string `json:"content"`
	Prepend          *string `json:"prepend"`
	Behavior         string  `json:"behavior"`
	Invert           bool    `json:"invert"`
	AddPrefixSpace   *bool   `json:"add_prefix_space"`
	UseRegex         *bool   `json:"use_regex"`
	Replacement      string  `json:"replacement"`
	PrependScheme    string  `json:"prepend_scheme"`
	Split            *bool   `json:"split"`
	IndividualDigits bool    `json:"individual_digits"`
	Delimiter        string  `json:"delimiter"`
	StripLeft        bool    `json:"strip_left"`
	StripRight       bool    `json:"strip_right"`
	CleanText        *bool   `json:"clean_text"`
	ChineseChars     *bool   `json:"handle_chinese_chars"`
	StripAccents     *bool   `json:"strip_accents"`
	Lowercase        *bool   `json:"lowercase"`
	Length           *int    `json:"length"`
}

type modelJSON struct {
	Type                    string          `json:"type"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
	UnkToken                *string         `json:"unk_token"`
	UnkID                   *int            `json:"unk_id"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	Dropout                 *float64        `json:"dropout"`
	MaxInputCharsPerWord    *int            `json:"max_input_chars_per_word"`
}

// pipeline is what a file describes: the added tokens, the normalizer, the pre-tokenizers in
// order and the model.
type pipeline struct {
	added addedVocab
	norm  normalizer // nil: none
	pre   []preTokenizer
	model model
}

func parse(data []byte) (*pipeline, error) {
	// Refused before anything is decoded: an unknown model, lists of millions of entries.
	if err := checkShape(data); err != nil {
		return nil, err
	}
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, jsonError(err)
	}
	if isNull(f.Model) {
		return nil, errors.New("it has no model")
	}
	p := &pipeline{}
	var err error
	if p.norm, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	if p.pre, err = parsePreTokenizer(f.PreTokenizer, nil); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	if p.model, err = parseModel(f.Model, p.pre, p.norm); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if err := p.parseAdded(f.AddedTokens); err != nil {
		return nil, fmt.Errorf("added_tokens: %w", err)
	}
	return p, nil
}

func (p *pipeline) parseAdded(list []addedJSON) error {
	a := &p.added
	for i, t := range list {
		if t.Content == "" {
			continue // Hugging Face ignores an empty token
		}
		if t.ID < 0 || t.ID > math.MaxInt32 {
			return fmt.Errorf("entry %d (%s): id %d out of range", i+1, quote(t.Content), t.ID)
		}
		tok := addedToken{id: int32(t.ID), content: t.Content, singleWord: t.SingleWord, lstrip: t.LStrip, rstrip: t.RStrip, normd: t.Normalized}
		a.tokens = append(a.tokens, tok)
		k := len(a.tokens) - 1
		if !t.Normalized {
			if a.raw == nil {
				a.raw = newTrie()
			}
			a.raw.add(t.Content, k)
			continue
		}
		content := t.Content
		if p.norm != nil {
			content, _ = p.norm.normalize(content)
		}
		if content == "" {
			continue
		}
		if a.normalized == nil {
			a.normalized = newTrie()
		}
		a.normalized.add(content, k)
	}
	return nil
}

func isNull(m json.RawMessage) bool {
	m = bytes.TrimSpace(m)
	return len(m) == 0 || string(m) == "null"
}

// jsonError words a decoding error without the text that caused it.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ):
		where := typ.Field
		if where == "" {
			where = "a value"
		}
		return fmt.Errorf("%s is a JSON %s where a %s was expected (at byte %d)", where, typ.Value, typ.Type, typ.Offset)
	}
	return err
}

func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var p partJSON
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, jsonError(err)
	}
	orTrue := func(b *bool) bool { return b == nil || *b }
	switch p.Type {
	case "Sequence":
		var seq sequence
		for i, r := range p.Normalizers {
			n, err := parseNormalizer(r)
			if err != nil {
				return nil, fmt.Errorf("Sequence entry %d: %w", i+1, err)
			}
			if n != nil {
				seq = append(seq, n)
			}
		}
		switch len(seq) {
		case 0:
			return nil, nil
		case 1:
			return seq[0], nil
		}
		return seq, nil
	case "NFC":
		return unicodeForm{norm.NFC}, nil
	case "NFD":
		return unicodeForm{norm.NFD}, nil
	case "NFKC":
		return unicodeForm{norm.NFKC}, nil
	case "NFKD":
		return unicodeForm{norm.NFKD}, nil
	case "Lowercase":
		return lowercase{}, nil
	case "Strip":
		return strip{p.StripLeft, p.StripRight}, nil
	case "StripAccents":
		return stripAccents{}, nil
	case "Nmt":
		return nmt{}, nil
	case "ByteLevel":
		return byteLevelNormalizer{}, nil
	case "Prepend":
		if p.Prepend == nil {
			return nil, errors.New("Prepend without its prepend string")
		}
		return prepend{*p.Prepend}, nil
	case "Replace":
		m, err := parsePattern(p.Pattern)
		if err != nil {
			return nil, fmt.Errorf("Replace: %w", err)
		}
		if p.Content == nil {
			return nil, errors.New("Replace without its content")
		}
		return replace{m, *p.Content}, nil
	case "BertNormalizer":
		lower := orTrue(p.Lowercase)
		accents := lower
		if p.StripAccents != nil {
			accents = *p.StripAccents
		}
		return bertNormalizer{cleanText: orTrue(p.CleanText), chineseChars: orTrue(p.ChineseChars), stripAccents: accents, lowercase: lower}, nil
	case "Precompiled":
		return nil, errors.New("the Precompiled normalizer (a SentencePiece character map compiled into the file) is not supported; the model families loadcurve is held to (Llama, Qwen, DeepSeek, gpt-oss, Gemma, Mistral, GPT-2) do not use it")
	case "":
		return nil, errors.New("an entry without a type")
	}
	return nil, fmt.Errorf("unknown normalizer type %s", quote(p.Type))
}

// parsePattern reads a Split or Replace pattern: {"String": s} or {"Regex": r}.
func parsePattern(p *struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}) (matcher, error) {
	switch {
	case p == nil:
		return nil, errors.New("no pattern")
	case p.String != nil:
		if *p.String == "" {
			return nil, errors.New("an empty String pattern")
		}
		return literal(*p.String), nil
	case p.Regex != nil:
		return compileRegex(*p.Regex)
	}
	return nil, errors.New("a pattern that is neither String nor Regex")
}

// parsePreTokenizer appends the steps raw describes to steps (a Sequence's steps in order).
func parsePreTokenizer(raw json.RawMessage, steps []preTokenizer) ([]preTokenizer, error) {
	if isNull(raw) {
		return steps, nil
	}
	var p partJSON
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, jsonError(err)
	}
	switch p.Type {
	case "Sequence":
		for i, r := range p.PreTokenizers {
			var err error
			if steps, err = parsePreTokenizer(r, steps); err != nil {
				return nil, fmt.Errorf("Sequence entry %d: %w", i+1, err)
			}
		}
		return steps, nil
	case "ByteLevel":
		b := &byteLevel{addPrefixSpace: p.AddPrefixSpace == nil || *p.AddPrefixSpace, mapChars: true}
		if p.UseRegex == nil || *p.UseRegex {
			m, err := compileRegex(gpt2Pattern)
			if err != nil {
				return nil, err
			}
			b.split = &splitter{m: m, behavior: isolated}
		}
		return append(steps, b), nil
	case "Split":
		m, err := parsePattern(p.Pattern)
		if err != nil {
			return nil, fmt.Errorf("Split: %w", err)
		}
		be, err := parseBehavior(p.Behavior)
		if err != nil {
			return nil, fmt.Errorf("Split: %w", err)
		}
		return append(steps, &splitter{m: m, behavior: be, invert: p.Invert}), nil
	case "Metaspace":
		r := p.Replacement
		if utf8.RuneCountInString(r) != 1 {
			return nil, fmt.Errorf("Metaspace: the replacement must be one character, got %s", quote(r))
		}
		m := &metaspace{replacement: r, split: p.Split == nil || *p.Split}
		switch p.PrependScheme {
		case "", "always":
			m.prepend = prependAlways
		case "first":
			m.prepend = prependFirst
		case "never":
			m.prepend = prependNever
		default:
			return nil, fmt.Errorf("Metaspace: prepend_scheme %s: want always, first or never", quote(p.PrependScheme))
		}
		if p.AddPrefixSpace != nil && !*p.AddPrefixSpace {
			m.prepend = prependNever
		}
		return append(steps, m), nil
	case "Whitespace":
		return append(steps, &splitter{m: wordsAndPunct{}, behavior: removed, invert: true}), nil
	case "WhitespaceSplit":
		return append(steps, whitespaceSplit), nil
	case "BertPreTokenizer":
		return append(steps, bert{}), nil
	case "Punctuation":
		be := isolated
		if p.Behavior != "" {
			var err error
			if be, err = parseBehavior(p.Behavior); err != nil {
				return nil, fmt.Errorf("Punctuation: %w", err)
			}
		}
		return append(steps, &splitter{m: charClass(isPunct), behavior: be}), nil
	case "Digits":
		be := contiguous
		if p.IndividualDigits {
			be = isolated
		}
		return append(steps, &splitter{m: charClass(isNumber), behavior: be}), nil
	case "CharDelimiterSplit":
		d := []rune(p.Delimiter)
		if len(d) != 1 {
			return nil, fmt.Errorf("CharDelimiterSplit: the delimiter must be one character, got %s", quote(p.Delimiter))
		}
		return append(steps, &splitter{m: charClass(func(r rune) bool { return r == d[0] }), behavior: removed}), nil
	case "FixedLength":
		n := 5
		if p.Length != nil {
			n = *p.Length
		}
		if n < 1 {
			return nil, fmt.Errorf("FixedLength: the length must be at least 1, got %d", n)
		}
		return append(steps, fixedLength{n}), nil
	case "UnicodeScripts":
		return nil, errors.New("the UnicodeScripts pre-tokenizer is not supported")
	case "":
		return nil, errors.New("an entry without a type")
	}
	return nil, fmt.Errorf("unknown pre-tokenizer type %s", quote(p.Type))
}

func parseModel(raw json.RawMessage, pre []preTokenizer, n normalizer) (model, error) {
	var m modelJSON
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, jsonError(err)
	}
	typ := m.Type
	if typ == "" { // files from before the type was written
		switch {
		case !isNull(m.Merges):
			typ = "BPE"
		case bytes.HasPrefix(bytes.TrimSpace(m.Vocab), []byte("[")):
			typ = "Unigram"
		case m.MaxInputCharsPerWord != nil:
			typ = "WordPiece"
		default:
			typ = "WordLevel"
		}
	}
	switch typ {
	case "BPE":
		return parseBPE(m, pre, n)
	case "Unigram":
		return parseUnigram(m)
	case "WordPiece", "WordLevel":
		vocab, err := parseVocab(m.Vocab)
		if err != nil {
			return nil, err
		}
		unk := "[UNK]"
		if m.UnkToken != nil {
			unk = *m.UnkToken
		}
		unkID, ok := vocab[unk]
		if !ok {
			unkID = -1
		}
		if typ == "WordLevel" {
			return &wordLevel{vocab: vocab, unk: unk, unkID: unkID}, nil
		}
		w := &wordPiece{vocab: vocab, unk: unk, unkID: unkID, prefix: "##", maxChars: 100}
		if m.ContinuingSubwordPrefix != nil {
			w.prefix = *m.ContinuingSubwordPrefix
		}
		if m.MaxInputCharsPerWord != nil {
			w.maxChars = *m.MaxInputCharsPerWord
		}
		return w, nil
	}
	return nil, fmt.Errorf("unknown model type %s", quote(typ))
}

func parseVocab(raw json.RawMessage) (map[string]int32, error) {
	if isNull(raw) {
		return nil, errors.New("no vocab")
	}
	var vocab map[string]int32
	if err := json.Unmarshal(raw, &vocab); err != nil {
		return nil, fmt.Errorf("vocab: %w", jsonError(err))
	}
	for t, id := range vocab {
		if id < 0 {
			return nil, fmt.Errorf("vocab: %s has the negative id %d", quote(t), id)
		}
	}
	return vocab, nil
}

func parseBPE(m modelJSON, pre []preTokenizer, n normalizer) (model, error) {
	vocab, err := parseVocab(m.Vocab)
	if err != nil {
		return nil, err
	}
	if m.Dropout != nil && *m.Dropout > 0 {
		return nil, fmt.Errorf("BPE with dropout %g tokenizes at random; loadcurve needs a tokenizer that gives one count per text", *m.Dropout)
	}
	b := &bpe{vocab: vocab, merges: make(map[uint64]uint64), unk: -1, cache: new(wordCache), fuseUnk: m.FuseUnk,
		byteFallback: m.ByteFallback, ignoreMerges: m.IgnoreMerges}
	if m.UnkToken != nil {
		b.unkName = *m.UnkToken
		if id, ok := vocab[b.unkName]; ok {
			b.unk = id
		}
	}
	if m.ContinuingSubwordPrefix != nil {
		b.prefix = *m.ContinuingSubwordPrefix
	}
	if m.EndOfWordSuffix != nil {
		b.suffix = *m.EndOfWordSuffix
	}
	for c := range 256 {
		b.fallback[c] = -1
		if id, ok := vocab[fmt.Sprintf("<0x%02X>", c)]; ok {
			b.fallback[c] = id
		}
	}
	pairs, err := parseMerges(m.Merges)
	if err != nil {
		return nil, err
	}
	var buf []byte
	for rank, pr := range pairs {
		a, ok1 := vocab[pr[0]]
		c, ok2 := vocab[pr[1]]
		if !ok1 || !ok2 {
			missing := pr[0]
			if ok1 {
				missing = pr[1]
			}
			return nil, fmt.Errorf("merge %d (%s %s): %s is not in the vocabulary", rank+1, quote(pr[0]), quote(pr[1]), quote(missing))
		}
		right := pr[1] // the right token loses the prefix it carries (Hugging Face cuts its length)
		if len(right) >= len(b.prefix) {
			right = right[len(b.prefix):]
		}
		buf = append(append(buf[:0], pr[0]...), right...)
		merged, ok := vocab[string(buf)]
		if !ok {
			return nil, fmt.Errorf("merge %d (%s %s): the merged token %s is not in the vocabulary", rank+1, quote(pr[0]), quote(pr[1]), quote(string(buf)))
		}
		b.merges[uint64(uint32(a))<<32|uint64(uint32(c))] = uint64(rank)<<32 | uint64(uint32(merged))
	}
	b.useBytes(pre, n)
	b.useCuts()
	return b, nil
}

// useBytes keeps the vocabulary in bytes when the last pre-tokenizer is ByteLevel (and nothing
// else writes byte-level characters): the model then reads a piece's bytes directly and the
// pre-tokenizer need not write them as characters. Every byte must be a token.
func (b *bpe) useBytes(pre []preTokenizer, n normalizer) {
	if len(pre) == 0 || b.prefix != "" || b.suffix != "" || b.byteFallback {
		return
	}
	last, ok := pre[len(pre)-1].(*byteLevel)
	if !ok {
		return
	}
	if _, bl := n.(byteLevelNormalizer); bl {
		return
	}
	for _, p := range pre[:len(pre)-1] {
		if _, bl := p.(*byteLevel); bl {
			return
		}
	}
	for c := range 256 {
		id, ok := b.vocab[string(byteChars[c])]
		if !ok {
			return
		}
		b.byteIDs[c] = id
	}
	raw := make(map[string]int32, len(b.vocab))
	var buf []byte
	for t, id := range b.vocab {
		bs, ok := fromByteLevel(t, buf)
		if ok {
			raw[string(bs)] = id
		}
		buf = bs
	}
	b.vocab = raw
	b.bytes = true
	last.mapChars = false
}

// parseMerges reads merges as "a b" strings or as [a, b] pairs.
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var pairs [][2]string
	if err := json.Unmarshal(raw, &pairs); err == nil {
		return pairs, nil
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return nil, fmt.Errorf("merges: neither \"a b\" strings nor [a, b] pairs: %w", jsonError(err))
	}
	pairs = make([][2]string, len(lines))
	for i, l := range lines {
		a, c, ok := strings.Cut(l, " ")
		if !ok || strings.Contains(c, " ") {
			return nil, fmt.Errorf("merge %d: %s is not two tokens separated by a space", i+1, quote(l))
		}
		pairs[i] = [2]string{a, c}
	}
	return pairs, nil
}

func parseUnigram(m modelJSON) (model, error) {
	var rows [][2]json.RawMessage
	if err := json.Unmarshal(m.Vocab, &rows); err != nil {
		return nil, fmt.Errorf("vocab: %w", jsonError(err))
	}
	u := &unigram{ids: make(map[string]int32, len(rows)), prefixes: make(map[string]struct{}), unk: -1, cache: new(wordCache)}
	u.scores = make([]float64, len(rows))
	minScore := math.Inf(1)
	for i, r := range rows {
		var piece string
		var score float64
		if err := json.Unmarshal(r[0], &piece); err != nil {
			return nil, fmt.Errorf("vocab entry %d: the piece is not a string", i+1)
		}
		if err := json.Unmarshal(r[1], &score); err != nil {
			return nil, fmt.Errorf("vocab entry %d: the score is not a number", i+1)
		}
		u.ids[piece] = int32(i)
		u.scores[i] = score
		minScore = min(minScore, score)
		u.maxLen = max(u.maxLen, len(piece))
		for j := 1; j < len(piece); j++ {
			u.prefixes[piece[:j]] = struct{}{}
		}
	}
	u.unkScore = minScore - 10
	if m.UnkID != nil {
		if *m.UnkID < 0 || *m.UnkID >= len(rows) {
			return nil, fmt.Errorf("unk_id %d is not an entry of the vocabulary", *m.UnkID)
		}
		u.unk = int32(*m.UnkID)
	}
	u.byteFallback = m.ByteFallback
	for c := range 256 {
		u.fallback[c] = -1
		if id, ok := u.ids[fmt.Sprintf("<0x%02X>", c)]; ok {
			u.fallback[c] = id
		}
	}
	return u, nil
}
