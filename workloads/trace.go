package workloads

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Trace formats.
const (
	// TraceAzure is the Azure LLM inference trace CSV (Azure/AzurePublicDataset,
	// AzureLLMInferenceTrace_conv.csv and _code.csv, 2023 and 2024): a header naming
	// TIMESTAMP, ContextTokens and GeneratedTokens (any order, other columns ignored), then one
	// request a row. TIMESTAMP is a date-time such as "2023-11-16 18:15:46.6805900" (any number
	// of fractional digits, "T" or space, optional zone "Z", "+00:00" or "+0000"; without a zone
	// UTC is assumed; only differences matter), or a plain number of seconds.
	TraceAzure = "azure"
	// TraceMooncake is the Mooncake trace JSONL (kvcache-ai/Mooncake, FAST25-release/traces):
	// one object a line, {"timestamp": ms since the trace start, "input_length": tokens,
	// "output_length": tokens, "hash_ids": [block ids]}. Each hash id names one block of
	// MooncakeBlockSize prompt tokens (the last block of a prompt may be partial, so a prompt has
	// ⌈input_length/512⌉ ids); requests whose hash_ids share a leading run share that prefix.
	// Other keys are ignored; a conversation id ("session_id", "conversation_id" or "chat_id")
	// only earns a note: its turns are replayed as independent requests.
	TraceMooncake = "mooncake"
)

// MooncakeBlockSize is the number of prompt tokens one Mooncake hash id stands for.
const MooncakeBlockSize = 512

// Trace is a recorded workload: when each request arrived and how long it was. The trace is the
// schedule: Offsets are the planned arrivals, and TraceRequests builds the matching requests.
type Trace struct {
	Offsets    []time.Duration // arrival of each request; the first is 0; non-decreasing
	InputLens  []int           // prompt tokens of each request (0 = absent)
	OutputLens []int           // generated tokens of each request (0 = absent)
	HashIDs    [][]int64       // Mooncake prompt blocks of each request; nil when the trace has none
	Source     string          // e.g. "mooncake(file=trace.jsonl, scale=0.5)"
	Notes      []string        // remarks for the user, e.g. requests without an output length
}

// Len returns the number of requests of the trace.
func (t *Trace) Len() int { return len(t.Offsets) }

// Head returns the trace's first n requests (all of them when n <= 0 or n >= Len).
func (t *Trace) Head(n int) *Trace {
	if n <= 0 || n >= t.Len() {
		return t
	}
	out := &Trace{Offsets: t.Offsets[:n], InputLens: t.InputLens[:n], OutputLens: t.OutputLens[:n],
		Source: fmt.Sprintf("%s[:%d]", t.Source, n), Notes: t.Notes}
	if t.HashIDs != nil {
		out.HashIDs = t.HashIDs[:n]
	}
	return out
}

// TraceFormatOf guesses a trace file's format from its extension: .csv is Azure, .jsonl Mooncake.
func TraceFormatOf(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return TraceAzure, nil
	case ".jsonl":
		return TraceMooncake, nil
	}
	return "", fmt.Errorf("trace %s: cannot tell the format from the extension; name it (%s or %s)", path, TraceAzure, TraceMooncake)
}

// LoadTrace reads a trace file. format is TraceAzure, TraceMooncake or "" (from the extension).
// timeScale multiplies every offset (0.5 replays the trace twice as fast) and must be > 0.
func LoadTrace(path, format string, timeScale float64) (*Trace, error) {
	if format == "" {
		f, err := TraceFormatOf(path)
		if err != nil {
			return nil, err
		}
		format = f
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load trace: %w", err)
	}
	defer f.Close()
	return ReadTrace(f, path, format, timeScale)
}

// ReadTrace reads a trace in format (TraceAzure or TraceMooncake) from r; name locates errors.
// Arrival times must not decrease (an error names the line); the first arrival becomes offset 0
// and every offset is (t_i - t_0)·timeScale, rounded to the nanosecond. Token counts must be
// non-negative integers. The whole input is validated before anything is returned.
func ReadTrace(r io.Reader, name, format string, timeScale float64) (*Trace, error) {
	if !(timeScale > 0) || math.IsInf(timeScale, 0) {
		return nil, fmt.Errorf("trace %s: the time scale must be a finite number > 0, got %v", name, timeScale)
	}
	var (
		rows *traceRows
		err  error
	)
	switch format {
	case TraceAzure:
		rows, err = readAzure(r, name)
	case TraceMooncake:
		rows, err = readMooncake(r, name)
	default:
		return nil, fmt.Errorf("trace %s: unknown format %q (%s or %s)", name, format, TraceAzure, TraceMooncake)
	}
	if err != nil {
		return nil, err
	}
	tr := &Trace{InputLens: rows.in, OutputLens: rows.out, HashIDs: rows.hashes,
		Source: fmt.Sprintf("%s(file=%s, scale=%g)", format, name, timeScale)}
	tr.Offsets = make([]time.Duration, len(rows.at))
	for i, at := range rows.at {
		rel := at - rows.at[0]
		if rel < 0 { // the subtraction overflowed: at >= rows.at[0] holds
			return nil, fmt.Errorf("trace %s: request %d arrives more than 292 years after the first", name, i+1)
		}
		d := float64(rel) * timeScale
		if d >= math.MaxInt64 {
			return nil, fmt.Errorf("trace %s: request %d arrives %gs after the first at scale %g, beyond what a schedule can hold", name, i+1, d/1e9, timeScale)
		}
		if d > float64(MaxReplaySpan) {
			return nil, &LineError{Path: name, Line: rows.line[i], Msg: fmt.Sprintf(
				"this request arrives %s after the first (at --trace-time-scale %g): a replay would wait that long, and at most %s is replayed; fix the row, or replay faster with a smaller --trace-time-scale",
				durationText(d), timeScale, durationText(float64(MaxReplaySpan)))}
		}
		tr.Offsets[i] = time.Duration(math.Round(d))
	}
	if rows.sessionKey != "" {
		tr.Notes = append(tr.Notes, fmt.Sprintf("the trace's rows carry %s: multi-turn structure in Mooncake traces is replayed as independent requests, at their timestamps", quoteValue(rows.sessionKey)))
	}
	if n := countZero(rows.out); n > 0 {
		tr.Notes = append(tr.Notes, fmt.Sprintf("%d of %d trace requests have no output length: they are sent without max_tokens", n, len(rows.out)))
	}
	return tr, nil
}

// traceRows is what a trace reader extracts: arrival instants in ns on the file's own clock.
type traceRows struct {
	at      []int64
	in, out []int
	hashes  [][]int64
	line    []int // each row's line in the file, for errors
	// sessionKey is the first conversation id key seen (Mooncake), "" when none.
	sessionKey string
}

// MaxReplaySpan bounds how long after the first request a replayed trace may plan one (after
// --trace-time-scale): a row dated decades ahead (a typo, a sentinel date) would otherwise
// make the run wait for decades.
const MaxReplaySpan = 31 * 24 * time.Hour

// azureColumns are the Azure trace's columns.
var azureColumns = [3]string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}

func readAzure(r io.Reader, name string) (*traceRows, error) {
	cr := csv.NewReader(bufio.NewReader(&lineCapped{r: r}))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	p := &problems{path: name}
	header, err := cr.Read()
	switch {
	case errors.Is(err, io.EOF):
		return nil, &LineError{Path: name, Msg: "empty file (expected the header TIMESTAMP,ContextTokens,GeneratedTokens)"}
	case err != nil:
		return nil, csvError(name, err)
	}
	var col [3]int
	for k, want := range azureColumns {
		col[k] = -1
		for i, h := range header {
			h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
			if strings.EqualFold(h, want) {
				col[k] = i
				break
			}
		}
		if col[k] < 0 {
			p.add(1, "the header has no %s column (expected TIMESTAMP,ContextTokens,GeneratedTokens, got %s)", want, strings.Join(header, ","))
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	width := len(header)
	rows := &traceRows{}
	numeric, haveFirst := false, false
	prev, prevText := int64(0), ""
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			p.addErr(csvError(name, err))
			return nil, p.err()
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a blank line
		}
		if len(rec) != width {
			p.add(line, "%d fields, the header has %d", len(rec), width)
			continue
		}
		ts := strings.TrimSpace(rec[col[0]])
		at, isNum, ok := parseTraceTime(ts)
		switch {
		case !ok:
			p.add(line, "TIMESTAMP %s is neither a date-time like 2023-11-16 18:15:46.6805900 nor a number of seconds", quoteValue(ts))
		case haveFirst && isNum != numeric:
			p.add(line, "TIMESTAMP %s: the first row's TIMESTAMP is %s, and all rows must be alike", quoteValue(ts), map[bool]string{true: "a number", false: "a date-time"}[numeric])
			ok = false
		case haveFirst && at < prev:
			p.add(line, "TIMESTAMP %s is earlier than the previous row's %s: timestamps must not decrease", clip(ts), clip(prevText))
			ok = false
		}
		in, okIn := nonNegInt(rec[col[1]])
		if !okIn {
			p.add(line, "ContextTokens must be a non-negative integer, got %s", quoteValue(rec[col[1]]))
		}
		out, okOut := nonNegInt(rec[col[2]])
		if !okOut {
			p.add(line, "GeneratedTokens must be a non-negative integer, got %s", quoteValue(rec[col[2]]))
		}
		if ok {
			if !haveFirst {
				numeric, haveFirst = isNum, true
			}
			prev, prevText = at, ts
		}
		rows.at = append(rows.at, at)
		rows.in = append(rows.in, in)
		rows.out = append(rows.out, out)
		rows.line = append(rows.line, line)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if len(rows.at) == 0 {
		return nil, &LineError{Path: name, Msg: "no requests: the trace has a header but no rows"}
	}
	return rows, nil
}

// csvError turns an encoding/csv error into a LineError.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &LineError{Path: name, Line: pe.Line, Msg: "not valid CSV: " + pe.Err.Error()}
	}
	return fmt.Errorf("read trace %s: %w", name, err)
}

// traceTimeLayouts are the accepted date-time forms (fractional seconds are always accepted).
var traceTimeLayouts = []string{
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05Z0700",
}

// parseTraceTime parses a TIMESTAMP into ns on the file's clock: a date-time (ns since the Unix
// epoch, zone-less ones as UTC) or a number of seconds.
func parseTraceTime(s string) (ns int64, numeric, ok bool) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(v) || math.Abs(v) > 9e9 {
			return 0, true, false
		}
		return int64(math.Round(v * 1e9)), true, true
	}
	for _, layout := range traceTimeLayouts {
		t, err := time.Parse(layout, s)
		if err == nil {
			if y := t.UTC().Year(); y < 1700 || y > 2200 {
				return 0, false, false // outside what UnixNano represents
			}
			return t.UnixNano(), false, true
		}
	}
	return 0, false, false
}

func nonNegInt(s string) (int, bool) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 || v > int64(maxInt) {
		return 0, false
	}
	return int(v), true
}

func readMooncake(r io.Reader, name string) (*traceRows, error) {
	br := bufio.NewReader(&lineCapped{r: r})
	p := &problems{path: name}
	rows := &traceRows{}
	hasHashes, havePrev := false, false
	prev, prevText := int64(0), ""
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if lineNo == 1 {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			at, atText, in, out, hashes, ok := parseMooncakeLine(trimmed, lineNo, p, &rows.sessionKey)
			if ok && havePrev && at < prev {
				p.add(lineNo, "timestamp %s is earlier than the previous line's %s: timestamps must not decrease", clip(atText), clip(prevText))
			}
			if ok {
				prev, prevText, havePrev = at, atText, true
			}
			hasHashes = hasHashes || hashes != nil
			rows.at = append(rows.at, at)
			rows.in = append(rows.in, in)
			rows.out = append(rows.out, out)
			rows.hashes = append(rows.hashes, hashes)
			rows.line = append(rows.line, lineNo)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read trace %s: %w", name, err)
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if len(rows.at) == 0 {
		return nil, &LineError{Path: name, Msg: "no requests: the file is empty (one Mooncake JSON object a line expected)"}
	}
	if !hasHashes {
		rows.hashes = nil
	}
	return rows, nil
}

// parseMooncakeLine parses one Mooncake line; the arrival is returned in ns.
// The first conversation id key seen is recorded in *sessionKey.
func parseMooncakeLine(line []byte, lineNo int, p *problems, sessionKey *string) (at int64, atText string, in, out int, hashes []int64, ok bool) {
	obj, isObj := jsonObject(line, lineNo, p)
	if !isObj {
		return 0, "", 0, 0, nil, false
	}
	if *sessionKey == "" {
		for _, k := range [...]string{"session_id", "conversation_id", "chat_id"} {
			if v, has := obj[k]; has && !isNull(v) {
				*sessionKey = k
				break
			}
		}
	}
	before := len(p.errs) + p.more
	ts, has := obj["timestamp"]
	switch {
	case !has || isNull(ts):
		p.add(lineNo, `"timestamp" (ms) is missing`)
	default:
		atText = string(ts)
		var okTS bool
		if at, okTS = msToNS(ts); !okTS {
			p.add(lineNo, `"timestamp" must be a number of milliseconds >= 0, got %s`, describe(ts))
		}
	}
	if raw, has := obj["input_length"]; !has || isNull(raw) {
		p.add(lineNo, `"input_length" is missing`)
	} else if v, okV := intValue(raw, 0); !okV {
		p.add(lineNo, `"input_length" must be a non-negative integer, got %s`, describe(raw))
	} else {
		in = v
	}
	if raw, has := obj["output_length"]; has && !isNull(raw) {
		if v, okV := intValue(raw, 0); !okV {
			p.add(lineNo, `"output_length" must be a non-negative integer, got %s`, describe(raw))
		} else {
			out = v
		}
	}
	if raw, has := obj["hash_ids"]; has && !isNull(raw) {
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			p.add(lineNo, `"hash_ids" must be an array of non-negative integers, got %s`, describe(raw))
		} else {
			hashes = make([]int64, 0, len(items))
			for i, item := range items {
				v, err := strconv.ParseInt(string(item), 10, 64)
				if err != nil || v < 0 {
					p.add(lineNo, `hash_ids[%d] must be a non-negative integer, got %s`, i, describe(item))
					break
				}
				hashes = append(hashes, v)
			}
		}
	}
	return at, atText, in, out, hashes, len(p.errs)+p.more == before
}

// msToNS converts a JSON number of milliseconds (>= 0) to ns, exactly for integers.
func msToNS(raw json.RawMessage) (int64, bool) {
	s := string(bytes.TrimSpace(raw))
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		if v < 0 || v > math.MaxInt64/1_000_000 {
			return 0, false
		}
		return v * 1e6, true
	}
	if len(s) == 0 || s[0] == '"' {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0) || v*1e6 >= math.MaxInt64 {
		return 0, false
	}
	return int64(math.Round(v * 1e6)), true
}

func countZero(xs []int) int {
	n := 0
	for _, x := range xs {
		if x == 0 {
			n++
		}
	}
	return n
}

// TraceRequests builds the requests of a trace, one per arrival, with synthetic words (see
// Synthetic) of the trace's lengths: InputLens[i] words of prompt (one word when the trace has
// none: a request needs text) and MaxTokens = OutputLens[i] (0, i.e. no max_tokens, when absent).
//
// Without hash ids every prompt is drawn afresh from the seeded stream, so no two share a prefix
// by more than chance. With Mooncake hash ids, a prompt is the concatenation of its blocks: the
// block of hash id h is MooncakeBlockSize words drawn from a stream seeded by (seed, h) alone, so
// the same id gives the same words in every request and requests sharing leading ids share that
// prefix word for word. A partial last block uses the first words of its block; a prompt longer
// than its blocks is completed with fresh words, and one shorter than its ids is cut at
// InputLens[i] words. The same trace and seed give the same set.
func TraceRequests(tr *Trace, seed int64) (*Set, error) { return SizedTraceRequests(tr, seed, nil) }

// SizedTraceRequests is TraceRequests with lengths in tk's tokens (words when tk is nil): each
// block of a hash id counts its tokens wherever it stands, the same text in every request, and
// each prompt counts its input length, its fresh words sized to make it so. A prompt whose
// blocks alone do not come to its length (a tokenizer whose counts do not add up over them) is
// counted as it is, and a note says how many.
func SizedTraceRequests(tr *Trace, seed int64, tk Tokenizer) (*Set, error) {
	if tr == nil || tr.Len() == 0 {
		return nil, fmt.Errorf("trace requests: the trace is empty")
	}
	n := tr.Len()
	if len(tr.InputLens) != n || len(tr.OutputLens) != n || tr.HashIDs != nil && len(tr.HashIDs) != n {
		return nil, fmt.Errorf("trace requests: inconsistent trace (%d offsets, %d input and %d output lengths, %d hash id lists)",
			n, len(tr.InputLens), len(tr.OutputLens), len(tr.HashIDs))
	}
	fresh := rand.NewPCG(uint64(seed), 0x7472616365) // "trace"
	blockSeed := uint64(seed) ^ 0x626c6f636b         // "block"
	blockSizes := map[int64]int{}                    // bytes of each full block, drawn once
	reqs := make([]Request, n)
	for i := range reqs {
		words := max(tr.InputLens[i], 1)
		if tr.InputLens[i] < 0 || tr.OutputLens[i] < 0 || words > MaxSyntheticLen {
			return nil, fmt.Errorf("trace requests: request %d has lengths %d/%d outside [0, %d]", i, tr.InputLens[i], tr.OutputLens[i], MaxSyntheticLen)
		}
		// The prompt is kept as its recipe (see generated): its blocks, then fresh words.
		g := &generated{blockSeed: blockSeed}
		left := words
		if tr.HashIDs != nil {
			ids := tr.HashIDs[i]
			used := 0
			for _, id := range ids {
				if left == 0 {
					break
				}
				k := min(left, MooncakeBlockSize)
				if used > 0 {
					g.size++
				}
				if k == MooncakeBlockSize {
					sz, ok := blockSizes[id]
					if !ok {
						sz = wordsSize(rand.NewPCG(blockSeed, uint64(id)), k)
						blockSizes[id] = sz
					}
					g.size += sz
				} else {
					g.size += wordsSize(rand.NewPCG(blockSeed, uint64(id)), k)
				}
				g.lastBlock = k
				left -= k
				used++
			}
			g.blocks = ids[:used:used]
		}
		if left > 0 {
			if len(g.blocks) > 0 {
				g.size++
			}
			g.state, g.words = *fresh, left
			g.size += wordsSize(fresh, left)
		}
		reqs[i] = Request{gen: g, InputTokens: words, MaxTokens: tr.OutputLens[i]}
	}
	source := fmt.Sprintf("%s, prompts(seed=%d)", tr.Source, seed)
	if tk == nil {
		return NewSet(source, reqs), nil
	}
	inexact, err := sizeTrace(reqs, tk, blockSeed)
	if err != nil {
		return nil, fmt.Errorf("trace requests: %w", err)
	}
	set := NewSet(fmt.Sprintf("%s, prompts(seed=%d, tokenizer=%s)", tr.Source, seed, ShortID(tk)), reqs)
	set.Tokenizer = tk
	if inexact > 0 {
		set.Notes = append(set.Notes, fmt.Sprintf("%d of %d trace prompts do not count their input length in the tokenizer's tokens (their blocks' counts do not add up); each is counted as it is", inexact, len(reqs)))
	}
	return set, nil
}

// sizeTrace sizes trace prompts in tk's tokens (SizedTraceRequests) and returns how many could
// not be brought to their length.
func sizeTrace(reqs []Request, tk Tokenizer, blockSeed uint64) (int, error) {
	wc, err := costs(tk)
	if err != nil {
		return 0, err
	}
	type key struct {
		id    int64
		k     int
		first bool
	}
	fits := map[key]blockFit{}
	inexact := 0
	for i := range reqs {
		g, total := reqs[i].gen, reqs[i].InputTokens
		if len(g.blocks) > 0 {
			g.blockFits = make([]blockFit, len(g.blocks))
			g.filler = wc.filler
			for j, id := range g.blocks {
				kk := key{id, g.blockWords(j), j == 0}
				f, ok := fits[kk]
				if !ok {
					if f, err = fitBlock(tk, wc, blockSeed, id, kk.k, kk.first); err != nil && !errors.Is(err, errInexact) {
						return 0, err
					}
					fits[kk] = f
				}
				g.blockFits[j] = f
				g.blockTokens += kk.k
			}
		}
		err := fitTokens(g, total, 0, tk)
		if err == nil {
			continue
		}
		if !errors.Is(err, errInexact) && !errors.Is(err, errTooShort) {
			return 0, err
		}
		text := g.appendText(nil)
		n, err := tk.Count(string(text))
		if err != nil {
			return 0, err
		}
		g.fit, g.size = 0, len(text)
		reqs[i].InputTokens = n
		inexact++
	}
	return inexact, nil
}

// durationText prints ns as days, hours or a Go duration, whichever reads best.
func durationText(ns float64) string {
	switch d := ns / float64(time.Hour); {
	case d >= 24*365:
		return fmt.Sprintf("%.1f years", d/(24*365.25))
	case d >= 48:
		return fmt.Sprintf("%.1f days", d/24)
	}
	return time.Duration(ns).Round(time.Second).String()
}
