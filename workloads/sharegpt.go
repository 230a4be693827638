package workloads

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// ShareGPTOptions selects which ShareGPT exchanges become requests. Zero values disable a filter.
//
// vLLM's benchmark (`vllm bench serve --dataset-name sharegpt`) keeps the first two turns of
// conversations that have at least two, drops pairs whose prompt or completion has fewer than 4
// tokens, a prompt over 1024 tokens or prompt+completion over 2048 tokens (its
// is_valid_sequence), and shuffles with its seed. DefaultShareGPTFilter gives the same numbers,
// here counted in words (CountWords) rather than in the model's tokens; the file order is kept
// (no shuffle), so the set depends on the file alone.
type ShareGPTOptions struct {
	Max          int // keep at most this many requests, the first in file order (0 = all)
	MinLen       int // skip when the prompt or the reply has fewer words
	MaxPromptLen int // skip when the prompt has more words
	MaxTotalLen  int // skip when prompt + reply have more words
}

// DefaultShareGPTFilter returns vLLM's ShareGPT length filter (4, 1024, 2048), in words.
func DefaultShareGPTFilter() ShareGPTOptions {
	return ShareGPTOptions{MinLen: 4, MaxPromptLen: 1024, MaxTotalLen: 2048}
}

// LoadShareGPT reads a ShareGPT JSON file. See ReadShareGPT.
func LoadShareGPT(path string, opts ShareGPTOptions) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load ShareGPT: %w", err)
	}
	defer f.Close()
	return ReadShareGPT(f, path, opts)
}

// ReadShareGPT reads a ShareGPT file: a JSON array of {"id", "conversations": [{"from", "value"}]}.
// Each entry gives at most one request: its first human turn ("from" "human" or "user") that is
// directly followed by a gpt turn ("gpt", "assistant" or "chatgpt") is the prompt, sent as it
// is; the reply's word count (CountWords, an approximation of its token count) is max_tokens;
// "id" (string or number) becomes the label. Entries without such a pair, with an empty prompt
// or reply, or outside opts' length filters are skipped: Set.Skipped counts them and Set.Notes
// says why. Structural mistakes (an entry that is not an object, a "value" that is neither a
// string nor null, which counts as empty) are errors naming the line of the entry; the whole
// file is checked before anything is returned.
func ReadShareGPT(r io.Reader, name string, opts ShareGPTOptions) (*Set, error) {
	if opts.Max < 0 || opts.MinLen < 0 || opts.MaxPromptLen < 0 || opts.MaxTotalLen < 0 {
		return nil, fmt.Errorf("ShareGPT options must not be negative: %+v", opts)
	}
	lr := &lineTracker{r: bufio.NewReader(r)}
	dec := json.NewDecoder(lr)
	p := &problems{path: name}
	tok, err := dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return nil, &LineError{Path: name, Msg: "no requests: the file is empty (a ShareGPT JSON array expected)"}
	case err != nil:
		return nil, jsonLineError(name, lr, dec, err)
	case tok != json.Delim('['):
		return nil, &LineError{Path: name, Line: 1, Msg: fmt.Sprintf("a ShareGPT file is a JSON array of conversations, got %s", tokenKind(tok))}
	}
	var (
		reqs                      []Request
		noPair, tooShort, tooLong int
		count                     int
	)
	for dec.More() {
		start := dec.InputOffset()
		lr.trim(start)
		line := lr.valueLine(start)
		count++
		// Fast path: decode the entry straight into its shape. Anything else (a type mismatch, an
		// entry that is not an object) is re-read from the kept bytes for a precise message.
		entry := sharegptEntry{}
		err := dec.Decode(&entry)
		var te *json.UnmarshalTypeError
		if err != nil && !errors.As(err, &te) {
			p.addErr(jsonLineError(name, lr, dec, err))
			return nil, p.err() // the rest cannot be located reliably
		}
		var (
			prompt, reply, label string
			found, ok            bool
		)
		if err == nil && lr.firstByte(start) == '{' {
			prompt, reply, label, found, ok = entry.pair(count, line, p)
		} else {
			raw := lr.slice(start, dec.InputOffset())
			if _, _, _, _, ok = sharegptPair(raw, count, line, p); ok {
				p.add(line, "entry %d: %s", count, jsonErrText(err)) // not expected: the slow path agrees
			}
			continue
		}
		switch {
		case !ok:
			continue
		case !found:
			noPair++
			continue
		}
		in, out := CountWords(prompt), CountWords(reply)
		switch {
		case in == 0 || out == 0 || in < opts.MinLen || out < opts.MinLen:
			tooShort++
			continue
		case opts.MaxPromptLen > 0 && in > opts.MaxPromptLen, opts.MaxTotalLen > 0 && in+out > opts.MaxTotalLen:
			tooLong++
			continue
		}
		if opts.Max == 0 || len(reqs) < opts.Max {
			reqs = append(reqs, Request{Label: label, Prompt: prompt, InputTokens: in, MaxTokens: out})
		}
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		p.addErr(jsonLineError(name, lr, dec, err))
	} else if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		p.add(lr.lineAt(dec.InputOffset()), "unexpected data after the ShareGPT array")
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return nil, &LineError{Path: name, Msg: fmt.Sprintf("no requests: none of %d entries has a usable human→gpt exchange (%d without one, %d too short, %d too long)", count, noPair, tooShort, tooLong)}
	}
	set := NewSet(fmt.Sprintf("sharegpt(file=%s)", name), reqs)
	set.Skipped = noPair + tooShort + tooLong
	if noPair > 0 {
		set.Notes = append(set.Notes, fmt.Sprintf("skipped %s without a human→gpt exchange", entries(noPair)))
	}
	if tooShort > 0 {
		why := "an empty prompt or reply"
		if opts.MinLen > 1 {
			why = fmt.Sprintf("a prompt or reply under %d words", opts.MinLen)
		}
		set.Notes = append(set.Notes, fmt.Sprintf("skipped %s with %s", entries(tooShort), why))
	}
	if tooLong > 0 {
		set.Notes = append(set.Notes, fmt.Sprintf("skipped %s with a prompt over %d words or prompt and reply over %d", entries(tooLong), opts.MaxPromptLen, opts.MaxTotalLen))
	}
	if opts.Max > 0 && len(reqs) == opts.Max {
		set.Notes = append(set.Notes, fmt.Sprintf("kept the first %d usable ShareGPT entries", opts.Max))
	}
	return set, nil
}

// sharegptEntry is the shape of a ShareGPT entry (other keys are ignored).
type sharegptEntry struct {
	ID            json.RawMessage `json:"id"`
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// pair is sharegptPair for an entry decoded into its shape.
func (e *sharegptEntry) pair(n, line int, p *problems) (prompt, reply, label string, found, ok bool) {
	if e.ID != nil && !isNull(e.ID) {
		var isLabel bool
		if label, isLabel = labelOf(e.ID); !isLabel {
			p.add(line, "entry %d: \"id\" must be a string or a number, got %s", n, describe(e.ID))
			return "", "", "", false, false
		}
	}
	turns := e.Conversations
	for i := 0; i+1 < len(turns); i++ {
		if isHumanTurn(strings.ToLower(turns[i].From)) && isGPTTurn(strings.ToLower(turns[i+1].From)) {
			return turns[i].Value, turns[i+1].Value, label, true, true
		}
	}
	return "", "", label, false, true
}

// labelOf reads a ShareGPT "id": a string, or a number spelt as in the file.
func labelOf(id json.RawMessage) (string, bool) {
	if s, isStr := stringValue(id); isStr {
		return s, true
	}
	var num json.Number
	if json.Unmarshal(id, &num) == nil {
		return num.String(), true
	}
	return "", false
}

// sharegptPair extracts the first human→gpt exchange of entry number n (1-based) starting on
// line; found is false when the entry has none, ok is false after a structural problem.
func sharegptPair(raw json.RawMessage, n, line int, p *problems) (prompt, reply, label string, found, ok bool) {
	where := fmt.Sprintf("entry %d", n)
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		p.add(line, "%s must be an object {\"id\", \"conversations\"}, got %s", where, describe(raw))
		return "", "", "", false, false
	}
	if id := obj["id"]; id != nil && !isNull(id) {
		var isLabel bool
		if label, isLabel = labelOf(id); !isLabel {
			p.add(line, "%s: \"id\" must be a string or a number, got %s", where, describe(id))
			return "", "", "", false, false
		}
		where = fmt.Sprintf("entry %d (id %q)", n, label)
	}
	conv := obj["conversations"]
	if conv == nil || isNull(conv) {
		return "", "", label, false, true // nothing to use: counted as skipped
	}
	var turns []json.RawMessage
	if json.Unmarshal(conv, &turns) != nil {
		p.add(line, "%s: \"conversations\" must be an array, got %s", where, describe(conv))
		return "", "", "", false, false
	}
	froms := make([]string, len(turns))
	values := make([]string, len(turns))
	good := true
	for i, t := range turns {
		var turn struct {
			From  json.RawMessage `json:"from"`
			Value json.RawMessage `json:"value"`
		}
		if json.Unmarshal(t, &turn) != nil || t[0] != '{' {
			p.add(line, "%s: conversations[%d] must be an object {\"from\", \"value\"}, got %s", where, i, describe(t))
			good = false
			continue
		}
		from, isStr := stringValue(turn.From)
		if !isStr {
			p.add(line, "%s: conversations[%d].from must be a string, got %s", where, i, describe(turn.From))
			good = false
		}
		value, isStr := stringValue(turn.Value)
		if !isStr {
			p.add(line, "%s: conversations[%d].value must be a string, got %s", where, i, describe(turn.Value))
			good = false
		}
		froms[i], values[i] = strings.ToLower(from), value
	}
	if !good {
		return "", "", "", false, false
	}
	for i := 0; i+1 < len(turns); i++ {
		if isHumanTurn(froms[i]) && isGPTTurn(froms[i+1]) {
			return values[i], values[i+1], label, true, true
		}
	}
	return "", "", label, false, true
}

// entries spells a count of ShareGPT entries.
func entries(n int) string {
	if n == 1 {
		return "1 ShareGPT entry"
	}
	return fmt.Sprintf("%d ShareGPT entries", n)
}

func isHumanTurn(from string) bool { return from == "human" || from == "user" }

func isGPTTurn(from string) bool { return from == "gpt" || from == "assistant" || from == "chatgpt" }

func tokenKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an object"
	case string:
		return "a string"
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%v", tok)
	}
}

// jsonLineError locates a decoding error of a streamed JSON file by line.
func jsonLineError(name string, lr *lineTracker, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &LineError{Path: name, Line: lr.lineAt(se.Offset), Msg: "not valid JSON: " + se.Error()}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &LineError{Path: name, Line: lr.lineAt(math.MaxInt64), Msg: "not valid JSON: the file ends in the middle of a value"}
	}
	return &LineError{Path: name, Line: lr.lineAt(dec.InputOffset()), Msg: jsonErrText(err)}
}

// lineTracker passes a reader through and maps byte offsets to line numbers. It keeps the bytes
// read since the last trim, so an offset at or after the last trim point can be located; the
// caller trims at the start of every entry, which bounds the memory to about one entry plus the
// decoder's read-ahead. Offsets asked for mostly increase: a cursor remembers the line count at
// the last one, so locating every entry of a file costs time linear in its size.
type lineTracker struct {
	r     io.Reader
	base  int64  // offset of buf[0]
	buf   []byte // bytes read since base
	lines int    // newlines before base
	cur   int    // a position in buf ...
	curNL int    // ... and the newlines in buf[:cur]
}

func (t *lineTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.buf = append(t.buf, p[:n]...)
	return n, err
}

// index converts an offset to a position in buf, clamped.
func (t *lineTracker) index(off int64) int {
	return int(min(max(off-t.base, 0), int64(len(t.buf))))
}

// newlinesBefore returns the newlines in buf[:k], moving the cursor to k.
func (t *lineTracker) newlinesBefore(k int) int {
	if k >= t.cur {
		t.curNL += bytes.Count(t.buf[t.cur:k], []byte{'\n'})
	} else {
		t.curNL -= bytes.Count(t.buf[k:t.cur], []byte{'\n'})
	}
	t.cur = k
	return t.curNL
}

// trim forgets the bytes before off (off >= the last trim point) once they are at least half of
// what is kept, so the copying stays linear in the file size.
func (t *lineTracker) trim(off int64) {
	k := t.index(off)
	if k < len(t.buf)/2 {
		return
	}
	t.lines += t.newlinesBefore(k)
	t.buf = t.buf[:copy(t.buf, t.buf[k:])]
	t.base += int64(k)
	t.cur, t.curNL = 0, 0
}

// lineAt returns the 1-based line of byte offset off (clamped to what is known).
func (t *lineTracker) lineAt(off int64) int {
	return t.lines + t.newlinesBefore(t.index(off)) + 1
}

// firstByte returns the first byte at or after off that is neither white space nor a comma.
func (t *lineTracker) firstByte(off int64) byte {
	k := t.skipSeparators(t.index(off))
	if k < len(t.buf) {
		return t.buf[k]
	}
	return 0
}

// slice returns the kept bytes from off to end, without leading separators.
func (t *lineTracker) slice(off, end int64) []byte {
	return bytes.TrimSpace(t.buf[t.skipSeparators(t.index(off)):t.index(end)])
}

func (t *lineTracker) skipSeparators(k int) int {
	for k < len(t.buf) && bytes.IndexByte([]byte(" \t\r\n,"), t.buf[k]) >= 0 {
		k++
	}
	return k
}

// valueLine returns the line of the first byte at or after off that is neither white space nor
// a separating comma: where the next value of an array starts.
func (t *lineTracker) valueLine(off int64) int {
	return t.lines + t.newlinesBefore(t.skipSeparators(t.index(off))) + 1
}
