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
	"strconv"
	"strings"
	"time"
)

// ShareGPTOptions selects which ShareGPT exchanges become requests. Zero values disable a filter.
//
// vLLM's benchmark (`vllm bench serve --dataset-name sharegpt`) keeps the first two turns of
// conversations that have at least two, drops pairs whose prompt or completion has fewer than 4
// tokens, a prompt over 1024 tokens or prompt+completion over 2048 tokens (its
// is_valid_sequence), and shuffles with its seed. DefaultShareGPTFilter gives the same numbers,
// counted in words (CountWords), or with a Tokenizer in its tokens as vLLM counts them; the file
// order is kept (no shuffle), so the set depends on the file alone.
//
// With MultiTurn, every conversation becomes a session (see ReadShareGPT); Max then counts
// sessions, and the length filters apply to each turn with its history (see ReadShareGPT).
type ShareGPTOptions struct {
	Max          int // keep at most this many requests (sessions), the first in file order (0 = all)
	MinLen       int // skip when the prompt or the reply has fewer words
	MaxPromptLen int // skip when the prompt has more words
	MaxTotalLen  int // skip when prompt + reply have more words
	// MultiTurn makes each conversation a session of all its human→gpt exchanges.
	MultiTurn bool
	// Think is the think time of every session turn after the first (MultiTurn only), rounded
	// to whole microseconds; at most one day.
	Think time.Duration
	// Tokenizer, when set, counts the prompts and replies in its tokens instead of words, as
	// vLLM's loader does with the model's: the length filters, InputTokens and the max_tokens a
	// reply gives.
	Tokenizer Tokenizer
}

// DefaultShareGPTFilter returns vLLM's ShareGPT length filter (4, 1024, 2048), in words (or a
// Tokenizer's tokens).
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
// is; several human turns in a row before the gpt turn are joined into that one prompt, a blank
// line between them, and counted in Set.Notes (vLLM's loader sends conversations[0] as the
// prompt whatever follows it: the joined prompt starts with it, and loses nothing after it); the reply's word count (CountWords, an approximation of its token count) is max_tokens;
// "id" (string or number) becomes the label. Entries without such a pair, with an empty prompt
// or reply, or outside opts' length filters are skipped: Set.Skipped counts them and Set.Notes
// says why. Structural mistakes (an entry that is not an object, a "value" that is neither a
// string nor null, which counts as empty) are errors naming the line of the entry; the whole
// file is checked before anything is returned.
//
// With opts.MultiTurn, each entry gives at most one session, whose turns are all its human→gpt
// exchanges in order: every human message directly followed by a gpt message is a turn, one chat
// request of that user message (consecutive ones joined, as for a single request), with the
// reply's word count as max_tokens. A trailing human message, never answered, is dropped, and so
// are system messages and replies without a question; the client sends the server's actual replies in the history, not the file's. Turn
// labels are "ID#TURN" (none without an id); turns after the first wait opts.Think.
//
// The length filters then apply turn by turn, each turn with the history it is sent after, in
// words, with the file's replies standing for the server's (max_tokens bounds those): MinLen to
// the turn's prompt and reply, MaxPromptLen to the history and the prompt (what the server
// prefills), MaxTotalLen to the history, the prompt and the reply (the context the turn ends
// with). A session is cut before its first turn outside a filter, so every session is a
// conversation's true beginning; an entry whose first turn is outside the filters is skipped as
// a single request would be. Notes count the sessions cut short and the turns dropped.
func ReadShareGPT(r io.Reader, name string, opts ShareGPTOptions) (*Set, error) {
	if err := opts.check(); err != nil {
		return nil, err
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
	t := sharegptTally{opts: opts, thinkMS: thinkMSOf(opts.Think)}
	for dec.More() {
		start := dec.InputOffset()
		lr.trim(start)
		line := lr.valueLine(start)
		t.count++
		// Fast path: decode the entry straight into its shape. Anything else (a type mismatch, an
		// entry that is not an object) is re-read from the kept bytes for a precise message.
		entry := sharegptEntry{}
		err := dec.Decode(&entry)
		var te *json.UnmarshalTypeError
		if err != nil && !errors.As(err, &te) {
			p.addErr(jsonLineError(name, lr, dec, err))
			return nil, p.err() // the rest cannot be located reliably
		}
		if err != nil || lr.firstByte(start) != '{' {
			raw := lr.slice(start, dec.InputOffset())
			if _, _, ok := sharegptExchanges(raw, t.count, line, p, opts.MultiTurn); ok {
				p.add(line, "entry %d: %s", t.count, jsonErrText(err)) // not expected: the slow path agrees
			}
			continue
		}
		if exs, label, ok := entry.exchanges(t.count, line, p, opts.MultiTurn); ok {
			if err := t.add(exs, label); err != nil {
				return nil, fmt.Errorf("%s: entry %d: %w", name, t.count, err)
			}
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
	return t.set(name)
}

// check refuses options no reading can honour.
func (opts ShareGPTOptions) check() error {
	if opts.Max < 0 || opts.MinLen < 0 || opts.MaxPromptLen < 0 || opts.MaxTotalLen < 0 {
		return fmt.Errorf("ShareGPT options must not be negative: %+v", opts)
	}
	if opts.Think < 0 || opts.Think > maxThinkMS*time.Millisecond {
		return fmt.Errorf("ShareGPT think time must be in [0, %v], got %v", maxThinkMS*time.Millisecond, opts.Think)
	}
	if opts.Think != 0 && !opts.MultiTurn {
		return fmt.Errorf("a ShareGPT think time (%v) is the wait between a session's turns: it needs multi-turn sessions", opts.Think)
	}
	return nil
}

// sharegptTally is ReadShareGPT's reading so far: the requests made, and the counts its notes
// give.
type sharegptTally struct {
	opts                      ShareGPTOptions
	thinkMS                   float64
	reqs                      []Request
	noPair, tooShort, tooLong int
	count, kept               int // entries read, and made requests (sessions)
	cut, dropped              int // sessions cut short, and the turns they lost
	joined                    int // requests (turns) whose prompt joins consecutive human messages
}

// add takes one entry's exchanges: the ones that pass the filters, each with the history
// before it, become a request (or a session's turns).
func (t *sharegptTally) add(exs []exchange, label string) error {
	if len(exs) == 0 {
		t.noPair++
		return nil
	}
	n, short, err := t.fitting(exs)
	switch {
	case err != nil:
		return err
	case n == 0 && short:
		t.tooShort++
		return nil
	case n == 0:
		t.tooLong++
		return nil
	case n < len(exs):
		t.cut++
		t.dropped += len(exs) - n
	}
	if t.opts.Max > 0 && t.kept >= t.opts.Max {
		return nil // the rest of the file is still checked
	}
	t.kept++
	for _, ex := range exs[:n] {
		if ex.joined {
			t.joined++
		}
	}
	if !t.opts.MultiTurn {
		ex := exs[0]
		t.reqs = append(t.reqs, Request{Label: label, Prompt: ex.prompt, InputTokens: ex.in, MaxTokens: ex.out})
		return nil
	}
	for j, ex := range exs[:n] {
		r := Request{Messages: []Message{{Role: "user", Content: ex.prompt}}, InputTokens: ex.in,
			MaxTokens: ex.out, Session: t.kept, Turn: j + 1, SessionID: label}
		if j > 0 {
			r.ThinkMS = t.thinkMS
		}
		if label != "" {
			r.Label = label + "#" + strconv.Itoa(j+1)
		}
		t.reqs = append(t.reqs, r)
	}
	return nil
}

// fitting counts the exchanges, in order, that pass the length filters with the history
// before each; short says the first that does not was too short.
func (t *sharegptTally) fitting(exs []exchange) (n int, short bool, err error) {
	o, history := t.opts, 0
	for k := range exs {
		ex := &exs[k]
		if err := ex.count(o.Tokenizer); err != nil {
			return n, short, err
		}
		in, out := ex.in, ex.out
		short = in == 0 || out == 0 || in < o.MinLen || out < o.MinLen
		long := o.MaxPromptLen > 0 && history+in > o.MaxPromptLen || o.MaxTotalLen > 0 && history+in+out > o.MaxTotalLen
		if short || long {
			break
		}
		history += in + out
		n++
	}
	return n, short, nil
}

// set is the request set read, with its notes: what was skipped, joined, cut or kept.
func (t *sharegptTally) set(name string) (*Set, error) {
	opts := t.opts
	if len(t.reqs) == 0 {
		return nil, &LineError{Path: name, Msg: fmt.Sprintf("no requests: none of %d entries has a usable human→gpt exchange (%d without one, %d too short, %d too long)", t.count, t.noPair, t.tooShort, t.tooLong)}
	}
	source := fmt.Sprintf("sharegpt(file=%s)", name)
	first := ""
	if opts.MultiTurn {
		if err := ValidateSessions(t.reqs); err != nil { // the rules above imply it: a safety net
			return nil, &LineError{Path: name, Msg: err.Error()}
		}
		source = fmt.Sprintf("sharegpt(file=%s, multi-turn, think=%v)", name, opts.Think)
		first = " in its first turn"
	}
	set := NewSet(source, t.reqs)
	set.Skipped = t.noPair + t.tooShort + t.tooLong
	set.Tokenizer = opts.Tokenizer
	set.Notes = append(set.Notes, t.notes(first)...)
	return set, nil
}

// notes say what the reading left out or changed; first is how a session's filters are said.
func (t *sharegptTally) notes(first string) []string {
	opts, unit := t.opts, "words"
	if opts.Tokenizer != nil {
		unit = "tokens"
	}
	var notes []string
	if t.noPair > 0 {
		notes = append(notes, fmt.Sprintf("skipped %s without a human→gpt exchange", entries(t.noPair)))
	}
	if t.tooShort > 0 {
		why := "an empty prompt or reply"
		if opts.MinLen > 1 {
			why = fmt.Sprintf("a prompt or reply under %d %s", opts.MinLen, unit)
		}
		notes = append(notes, fmt.Sprintf("skipped %s with %s%s", entries(t.tooShort), why, first))
	}
	if t.tooLong > 0 {
		notes = append(notes, fmt.Sprintf("skipped %s with a prompt over %d %s or prompt and reply over %d%s", entries(t.tooLong), opts.MaxPromptLen, unit, opts.MaxTotalLen, first))
	}
	if t.joined > 0 {
		notes = append(notes, fmt.Sprintf("joined consecutive human messages into one prompt (a blank line between them) in %s: the prompt starts with the first of them, as vLLM's loader sends a conversation's first message, and keeps the rest",
			plural(t.joined, "request")))
	}
	if t.cut > 0 && opts.MultiTurn {
		notes = append(notes, fmt.Sprintf("cut %s short before their first turn outside the length filters (with its history): %s dropped",
			plural(t.cut, "session"), plural(t.dropped, "later turn")))
	}
	if opts.Max > 0 && t.kept == opts.Max {
		what := "entries"
		if opts.MultiTurn {
			what = "entries, as sessions"
		}
		notes = append(notes, fmt.Sprintf("kept the first %d usable ShareGPT %s", opts.Max, what))
	}
	return notes
}

// sharegptEntry is the shape of a ShareGPT entry (other keys are ignored).
type sharegptEntry struct {
	ID            json.RawMessage `json:"id"`
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// exchange is a human message (or several in a row, joined) and the gpt reply directly after.
type exchange struct {
	prompt, reply string
	joined        bool // the prompt joins consecutive human messages
	in, out       int  // the prompt's and the reply's length, in words or a tokenizer's tokens (count)
}

// count measures the exchange in tk's tokens, or in words without one.
func (ex *exchange) count(tk Tokenizer) error {
	if tk == nil {
		ex.in, ex.out = CountWords(ex.prompt), CountWords(ex.reply)
		return nil
	}
	var err error
	if ex.in, err = tk.Count(ex.prompt); err != nil {
		return err
	}
	ex.out, err = tk.Count(ex.reply)
	return err
}

// exchangesOf returns the human→gpt exchanges of a conversation of n messages, in order: every
// run of human messages directly followed by a gpt one, the run's messages joined into one
// prompt by a blank line (empty ones left out); only the first when !all.
func exchangesOf(n int, message func(i int) (from, value string), all bool) []exchange {
	var out []exchange
	for i := 0; i < n; i++ {
		if from, _ := message(i); !isHumanTurn(from) {
			continue
		}
		j := i + 1 // the message after the run of human ones
		for j < n {
			if from, _ := message(j); !isHumanTurn(from) {
				break
			}
			j++
		}
		if j == n {
			break // a trailing question, never answered
		}
		next, reply := message(j)
		if !isGPTTurn(next) {
			i = j // answered by neither: a system message or another role
			continue
		}
		ex := exchange{reply: reply, joined: j-i > 1}
		if ex.joined {
			var parts []string
			for k := i; k < j; k++ {
				if _, v := message(k); v != "" {
					parts = append(parts, v)
				}
			}
			ex.prompt = strings.Join(parts, "\n\n")
		} else {
			_, ex.prompt = message(i)
		}
		out = append(out, ex)
		if !all {
			break
		}
		i = j
	}
	return out
}

// exchanges is sharegptExchanges for an entry decoded into its shape.
func (e *sharegptEntry) exchanges(n, line int, p *problems, all bool) (exs []exchange, label string, ok bool) {
	if e.ID != nil && !isNull(e.ID) {
		var isLabel bool
		if label, isLabel = labelOf(e.ID); !isLabel {
			p.add(line, "entry %d: \"id\" must be a string or a number, got %s", n, describe(e.ID))
			return nil, "", false
		}
	}
	turns := e.Conversations
	return exchangesOf(len(turns), func(i int) (string, string) { return strings.ToLower(turns[i].From), turns[i].Value }, all), label, true
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

// sharegptExchanges extracts the human→gpt exchanges (only the first unless all) of entry number
// n (1-based) starting on line; ok is false after a structural problem.
func sharegptExchanges(raw json.RawMessage, n, line int, p *problems, all bool) (exs []exchange, label string, ok bool) {
	where := fmt.Sprintf("entry %d", n)
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		p.add(line, "%s must be an object {\"id\", \"conversations\"}, got %s", where, describe(raw))
		return nil, "", false
	}
	if id := obj["id"]; id != nil && !isNull(id) {
		var isLabel bool
		if label, isLabel = labelOf(id); !isLabel {
			p.add(line, "%s: \"id\" must be a string or a number, got %s", where, describe(id))
			return nil, "", false
		}
		where = fmt.Sprintf("entry %d (id %s)", n, quoteValue(label))
	}
	conv := obj["conversations"]
	if conv == nil || isNull(conv) {
		return nil, label, true // nothing to use: counted as skipped
	}
	var turns []json.RawMessage
	if json.Unmarshal(conv, &turns) != nil {
		p.add(line, "%s: \"conversations\" must be an array, got %s", where, describe(conv))
		return nil, "", false
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
		return nil, "", false
	}
	return exchangesOf(len(turns), func(i int) (string, string) { return froms[i], values[i] }, all), label, true
}

// entries spells a count of ShareGPT entries.
func entries(n int) string {
	if n == 1 {
		return "1 ShareGPT entry"
	}
	return fmt.Sprintf("%d ShareGPT entries", n)
}

// plural spells a count of things: "1 session", "2 sessions".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
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
	var long *LineTooLongError
	if errors.As(err, &long) {
		return fmt.Errorf("%s: %w", name, err)
	}
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
	entry int64  // offset of the entry being read (the last trim point)
}

func (t *lineTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.buf = append(t.buf, p[:n]...)
	if t.base+int64(len(t.buf))-t.entry > int64(maxLineLen)+64<<10 { // the decoder reads a little ahead
		return n, &LineTooLongError{Line: t.lineAt(t.entry), Entry: true}
	}
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
	t.entry = off
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
