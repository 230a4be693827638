// Package records defines records.jsonl, the raw truth of a loadcurve run: a header line that
// identifies the run, optional tier lines that open each tier of a sweep, and one line per request
// with every timestamp of METRICS.md as an offset from the tier's start T0. Everything loadcurve
// reports is derived from these lines alone.
//
// Request lines are encoded by hand (AppendJSON) so that writing them costs no reflection and no
// allocation beyond the output buffer; they decode with encoding/json.
package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// MetricsVersion names the metric definitions (METRICS.md) these records and their summaries follow.
// Results with different versions are never compared silently. Version 3 times a stream's
// messages when their bytes arrived at the client's socket (the kernel's receive timestamp, on
// Linux), not when the client read them (version 2): the same moment on an idle client, earlier
// by the client's own delay on a busy one.
const MetricsVersion = "loadcurve-metrics/3"

// Unset marks a moment that never came (for example first for a request that failed before any
// output). Every real offset is >= 0.
const Unset time.Duration = -1

// Outcome is how a request ended.
type Outcome uint8

// The outcomes of METRICS.md.
const (
	OK          Outcome = iota // completed stream
	HTTPError                  // non-2xx status (kept in HTTPStatus)
	Timeout                    // the client's per-request deadline passed
	StreamError                // broken, malformed or error-carrying stream, or a transport failure
	Canceled                   // the run was stopped before the request finished
	numOutcomes
)

var outcomeNames = [...]string{"ok", "http_error", "timeout", "stream_error", "canceled"}

// Outcomes lists every outcome in order.
func Outcomes() []Outcome { return []Outcome{OK, HTTPError, Timeout, StreamError, Canceled} }

func (o Outcome) String() string {
	if o < numOutcomes {
		return outcomeNames[o]
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// MarshalText implements encoding.TextMarshaler.
func (o Outcome) MarshalText() ([]byte, error) {
	if o >= numOutcomes {
		return nil, fmt.Errorf("invalid outcome %d", o)
	}
	return []byte(outcomeNames[o]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, n := range outcomeNames {
		if string(b) == n {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("unknown outcome %s (want one of ok, http_error, timeout, stream_error, canceled)", quoteInput(string(b)))
}

// ClientResourcesPrefix starts the Error of a request that failed because the client ran out of
// its own resources (file descriptors, local ports, buffers) rather than because of the server:
// such a tier is client-bound, not the server's figure.
const ClientResourcesPrefix = "client out of resources: "

// StallPrefix starts the Error of a request the tier's drain deadline ended after the server had
// sent nothing for the whole drain: a stall, the server's failure, recorded as a Timeout (not
// Canceled: the run did not stop it early, the server never finished it).
const StallPrefix = "stalled: "

// MaxFinishReasonLen bounds the finish_reason a record keeps, in bytes: the values servers send
// ("stop", "length", "tool_calls", "content_filter", ...) are a few bytes, and a server that
// sends megabytes there must not make every record, and the memory that holds it, that big.
// A longer one is cut (BoundText) and says it was.
const MaxFinishReasonLen = 64

// MaxNoteLen bounds the other texts a record keeps about a request (UsageRejected), in bytes.
const MaxNoteLen = 512

// BoundText returns s when it has at most limit bytes, else its first bytes (whole UTF-8
// characters) followed by a note of its length, at most limit bytes in all (when limit leaves
// room for the note), so that a cut value never passes for the value the server sent.
func BoundText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	return CutText(s, len(s), limit)
}

// CutText is BoundText for a text of which only the start, head, is at hand: total is the
// whole text's length in bytes, which the note states.
func CutText(head string, total, limit int) string {
	note := "…(cut from " + strconv.Itoa(total) + " bytes)"
	keep := min(max(limit-len(note), 0), len(head))
	for keep > 0 && keep < len(head) && !utf8.RuneStart(head[keep]) {
		keep-- // do not split a character
	}
	return head[:keep] + note
}

// Token-count sources.
const (
	SourceUsage  = "usage"  // from the server's usage message
	SourceChunks = "chunks" // output: counted output-bearing messages (no usage was sent)
	// SourceChunksBadUsage: output counted as SourceChunks because the usage message sent could
	// not be believed (a negative, fractional or absurd count, no completion_tokens, or 0 after
	// output chunks).
	SourceChunksBadUsage = "chunks_bad_usage"
	SourceWorkload       = "workload" // input: the workload's own count (no usage was sent)
	// SourceWorkloadBadUsage: input counted as SourceWorkload because the usage message's
	// prompt_tokens could not be believed (more than the request could carry).
	SourceWorkloadBadUsage = "workload_bad_usage"
)

// Quality is the result of a workload's quality check on a request.
type Quality int8

// Quality values. QualityUnchecked means the request carried no expectation.
const (
	QualityUnchecked Quality = 0
	QualityPass      Quality = 1
	QualityFail      Quality = -1
)

// Record is one request: who it was, how it ended, and when each moment of METRICS.md happened,
// as offsets from the tier's T0 on the monotonic clock (Unset when the moment never came).
type Record struct {
	ID    int // index of the request in the tier's request set
	Tier  int
	Shard int // shard index in a sharded run, 0 otherwise

	Outcome Outcome

	Planned    time.Duration // arrival time the schedule gave
	Dispatched time.Duration // released by the dispatcher
	Slot       time.Duration // admitted by the max-concurrency gate
	Sent       time.Duration // just before the HTTP request was written
	// Written is when the request's last bytes were handed to the socket (the start of the
	// write that carried them): Sent plus the client's own time to get a connection and write.
	Written    time.Duration
	FirstEvent time.Duration // first SSE message with a choices entry
	First      time.Duration // first output-bearing message
	Last       time.Duration // last output-bearing message
	End        time.Duration // stream closed
	// FirstRead is when the client read the first output-bearing message, kept when it is later
	// than First: the messages' moments are when their bytes arrived at the socket (the kernel's
	// receive timestamp, where the system gives one), and FirstRead − First is how long the
	// client, busy, took to read the first token after it had arrived.
	FirstRead time.Duration

	ITL    []time.Duration // gaps between consecutive output-bearing messages after the first
	Chunks int             // output-bearing messages received

	InputTokens       int
	InputTokensSource string
	// RequestedInputTokens is the request set's own count of the prompt (words, or the
	// --tokenizer's tokens), kept when the server's usage replaced it with a different number,
	// so that requested and served lengths can be set side by side; 0 when they agree.
	RequestedInputTokens int
	OutputTokens         int
	OutputTokensSource   string
	// UsageRejected says why the server's usage message was not believed (OutputTokensSource
	// SourceChunksBadUsage, InputTokensSource SourceWorkloadBadUsage, or both; "" otherwise):
	// for example a completion_tokens beyond both the max_tokens sent and what the streamed
	// output could carry, or a prompt_tokens beyond what the request's bytes could carry. At
	// most MaxNoteLen bytes.
	UsageRejected string
	// MaxTokens is the max_tokens the request's body actually carried (the workload's, or
	// --extra-body's max_tokens or max_completion_tokens, the larger when both were sent); 0 when
	// none was sent or its value was not a count.
	MaxTokens    int
	FinishReason string // at most MaxFinishReasonLen bytes (BoundText)
	HTTPStatus   int
	Error        string
	Quality      Quality
	Attempts     int // 0 or 1: one attempt; more when --retries re-sent the request

	// Session and Turn place a request in a conversation (both 1-based; 0: not a turn of one).
	Session, Turn int
	// SessionID is the session's id in the workload file ("" for generated sessions), at most
	// MaxNoteLen bytes.
	SessionID string

	// Reasoning models stream reasoning before the answer. ReasoningChunks counts the
	// output-bearing messages that carried reasoning only. When it is > 0, FirstAnswer is the
	// first message carrying answer output (content, text or a tool call; Unset when none came)
	// and AnswerITL the gaps between consecutive answer-bearing messages. When it is 0, every
	// output message was an answer: FirstAnswer stays Unset and AnswerITL nil, and the answer's
	// moments are First and ITL (TTFA, AnswerGaps).
	FirstAnswer     time.Duration
	ReasoningChunks int
	AnswerITL       []time.Duration
	// ReasoningTokens is the part of OutputTokens that was reasoning: from the usage message's
	// completion_tokens_details.reasoning_tokens (source "usage"), else ReasoningChunks (source
	// "chunks"); source "" when the response had no reasoning at all.
	ReasoningTokens       int
	ReasoningTokensSource string
	// CachedTokens is usage.prompt_tokens_details.cached_tokens: the prompt tokens the server
	// found in its prefix cache, when it said (source "usage"; "" when it did not).
	CachedTokens       int
	CachedTokensSource string
}

// NewRecord returns a record with every moment Unset.
func NewRecord(tier, id int, planned time.Duration) Record {
	return Record{ID: id, Tier: tier, Outcome: OK, Planned: planned,
		Dispatched: Unset, Slot: Unset, Sent: Unset, Written: Unset, FirstEvent: Unset, First: Unset, Last: Unset, End: Unset,
		FirstRead: Unset, FirstAnswer: Unset}
}

// TTFA, the time to the first answer token, is FirstAnswer - Sent: what the user of a reasoning
// model waits for. It equals TTFT when the response has no reasoning.
func (r *Record) TTFA() (time.Duration, bool) {
	if r.ReasoningChunks == 0 {
		return r.TTFT()
	}
	return span(r.Sent, r.FirstAnswer)
}

// AnswerGaps are the gaps between consecutive answer-bearing messages: AnswerITL when the
// response had reasoning, else ITL.
func (r *Record) AnswerGaps() []time.Duration {
	if r.ReasoningChunks > 0 {
		return r.AnswerITL
	}
	return r.ITL
}

// AnswerTokens is OutputTokens less the reasoning tokens.
func (r *Record) AnswerTokens() int { return max(r.OutputTokens-r.ReasoningTokens, 0) }

// TTFT is First - Sent, or false when either is missing.
func (r *Record) TTFT() (time.Duration, bool) { return span(r.Sent, r.First) }

// E2EL is Last - Sent.
func (r *Record) E2EL() (time.Duration, bool) { return span(r.Sent, r.Last) }

// TPOT is (E2EL - TTFT) / (output_tokens - 1) for output_tokens > 1.
func (r *Record) TPOT() (time.Duration, bool) {
	if r.OutputTokens <= 1 || r.First == Unset || r.Last == Unset {
		return 0, false
	}
	return (r.Last - r.First) / time.Duration(r.OutputTokens-1), true
}

// ScheduleLag is Dispatched - Planned.
func (r *Record) ScheduleLag() (time.Duration, bool) { return span(r.Planned, r.Dispatched) }

// ClientQueueTime is Slot - Planned (it includes any schedule lag).
func (r *Record) ClientQueueTime() (time.Duration, bool) { return span(r.Planned, r.Slot) }

// E2ELIncludingClientQueue is Last - Planned.
func (r *Record) E2ELIncludingClientQueue() (time.Duration, bool) { return span(r.Planned, r.Last) }

func span(from, to time.Duration) (time.Duration, bool) {
	if from == Unset || to == Unset {
		return 0, false
	}
	return to - from, true
}

// AppendJSON appends the record as one JSON object (no newline). Times are seconds with nanosecond
// digits, ITL gaps milliseconds with nanosecond digits, so decoding restores them exactly.
func (r *Record) AppendJSON(b []byte) []byte {
	b = appendInt(b, `{"id":`, r.ID)
	b = appendInt(b, `,"tier":`, r.Tier)
	if r.Shard != 0 {
		b = appendInt(b, `,"shard":`, r.Shard)
	}
	b = append(b, `,"outcome":"`...)
	b = append(b, r.Outcome.String()...)
	b = append(b, '"')
	b = appendSeconds(b, `,"planned_s":`, r.Planned)
	b = appendSeconds(b, `,"dispatched_s":`, r.Dispatched)
	b = appendSeconds(b, `,"slot_s":`, r.Slot)
	b = appendSeconds(b, `,"sent_s":`, r.Sent)
	b = appendSeconds(b, `,"written_s":`, r.Written)
	b = appendSeconds(b, `,"first_event_s":`, r.FirstEvent)
	b = appendSeconds(b, `,"first_s":`, r.First)
	b = appendSeconds(b, `,"first_read_s":`, r.FirstRead)
	b = appendSeconds(b, `,"last_s":`, r.Last)
	b = appendSeconds(b, `,"end_s":`, r.End)
	b = appendInt(b, `,"chunks":`, r.Chunks)
	b = appendGaps(append(b, `,"itl_ms":`...), r.ITL)
	b = appendInt(b, `,"input_tokens":`, r.InputTokens)
	if r.InputTokensSource != "" {
		b = strconv.AppendQuote(append(b, `,"input_tokens_source":`...), r.InputTokensSource)
	}
	if r.RequestedInputTokens > 0 && r.RequestedInputTokens != r.InputTokens {
		b = appendInt(b, `,"requested_input_tokens":`, r.RequestedInputTokens)
	}
	b = appendInt(b, `,"output_tokens":`, r.OutputTokens)
	if r.OutputTokensSource != "" {
		b = strconv.AppendQuote(append(b, `,"output_tokens_source":`...), r.OutputTokensSource)
	}
	if r.UsageRejected != "" {
		b = appendJSONString(append(b, `,"usage_rejected":`...), BoundText(r.UsageRejected, MaxNoteLen))
	}
	if r.MaxTokens > 0 {
		b = appendInt(b, `,"max_tokens":`, r.MaxTokens)
	}
	if r.FinishReason != "" {
		b = appendJSONString(append(b, `,"finish_reason":`...), BoundText(r.FinishReason, MaxFinishReasonLen))
	}
	if r.HTTPStatus != 0 {
		b = appendInt(b, `,"http_status":`, r.HTTPStatus)
	}
	if r.Error != "" {
		b = appendJSONString(append(b, `,"error":`...), r.Error)
	}
	switch r.Quality {
	case QualityPass:
		b = append(b, `,"quality_ok":true`...)
	case QualityFail:
		b = append(b, `,"quality_ok":false`...)
	}
	if r.Attempts > 1 {
		b = appendInt(b, `,"attempts":`, r.Attempts)
	}
	if r.Session != 0 {
		b = appendInt(b, `,"session":`, r.Session)
		b = appendInt(b, `,"turn":`, r.Turn)
		if r.SessionID != "" {
			b = appendJSONString(append(b, `,"session_id":`...), BoundText(r.SessionID, MaxNoteLen))
		}
	}
	// The answer's moments only where they differ from the output's: a response with reasoning.
	if r.ReasoningChunks > 0 {
		b = appendSeconds(b, `,"first_answer_s":`, r.FirstAnswer)
		b = appendInt(b, `,"reasoning_chunks":`, r.ReasoningChunks)
		b = appendGaps(append(b, `,"answer_itl_ms":`...), r.AnswerITL)
	}
	if r.ReasoningTokensSource != "" {
		b = appendInt(b, `,"reasoning_tokens":`, r.ReasoningTokens)
		b = strconv.AppendQuote(append(b, `,"reasoning_tokens_source":`...), r.ReasoningTokensSource)
	}
	if r.CachedTokensSource != "" {
		b = appendInt(b, `,"cached_tokens":`, r.CachedTokens)
		b = strconv.AppendQuote(append(b, `,"cached_tokens_source":`...), r.CachedTokensSource)
	}
	return append(b, '}')
}

// appendInt appends key and v.
func appendInt(b []byte, key string, v int) []byte {
	return strconv.AppendInt(append(b, key...), int64(v), 10)
}

// appendGaps appends gaps as a JSON array of milliseconds with nanosecond digits.
func appendGaps(b []byte, gaps []time.Duration) []byte {
	b = append(b, '[')
	for i, g := range gaps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFixed(b, g, 1e6, 6)
	}
	return append(b, ']')
}

func appendSeconds(b []byte, key string, d time.Duration) []byte {
	if d == Unset {
		return b
	}
	b = append(b, key...)
	return appendFixed(b, d, 1e9, 9)
}

// appendFixed writes d/unit with exactly digits decimals, from integers, so no precision is lost.
func appendFixed(b []byte, d time.Duration, unit int64, digits int) []byte {
	n := int64(d)
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	b = strconv.AppendInt(b, n/unit, 10)
	b = append(b, '.')
	frac := n % unit
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], frac, 10)
	for i := len(s); i < digits; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// appendJSONString appends s as a JSON string, escaping what JSON requires.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20 || c == 0x7f:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// wireRecord is the decoding shape of a request line.
type wireRecord struct {
	ID                 *int            `json:"id"`
	Tier               int             `json:"tier"`
	Shard              int             `json:"shard"`
	Outcome            *Outcome        `json:"outcome"`
	Planned            *float64        `json:"planned_s"`
	Dispatched         *float64        `json:"dispatched_s"`
	Slot               *float64        `json:"slot_s"`
	Sent               *float64        `json:"sent_s"`
	Written            *float64        `json:"written_s"`
	FirstEvent         *float64        `json:"first_event_s"`
	First              *float64        `json:"first_s"`
	FirstRead          *float64        `json:"first_read_s"`
	Last               *float64        `json:"last_s"`
	End                *float64        `json:"end_s"`
	Chunks             int             `json:"chunks"`
	ITL                json.RawMessage `json:"itl_ms"` // decoded by parseGaps: faster than reflection
	InputTokens        int             `json:"input_tokens"`
	InputTokensSource  string          `json:"input_tokens_source"`
	RequestedInput     int             `json:"requested_input_tokens"`
	OutputTokens       int             `json:"output_tokens"`
	OutputTokensSource string          `json:"output_tokens_source"`
	UsageRejected      string          `json:"usage_rejected"`
	MaxTokens          int             `json:"max_tokens"`
	FinishReason       string          `json:"finish_reason"`
	HTTPStatus         int             `json:"http_status"`
	Error              string          `json:"error"`
	QualityOK          *bool           `json:"quality_ok"`
	Attempts           int             `json:"attempts"`

	Session               int             `json:"session"`
	Turn                  int             `json:"turn"`
	SessionID             string          `json:"session_id"`
	FirstAnswer           *float64        `json:"first_answer_s"`
	ReasoningChunks       int             `json:"reasoning_chunks"`
	AnswerITL             json.RawMessage `json:"answer_itl_ms"`
	ReasoningTokens       int             `json:"reasoning_tokens"`
	ReasoningTokensSource string          `json:"reasoning_tokens_source"`
	CachedTokens          int             `json:"cached_tokens"`
	CachedTokensSource    string          `json:"cached_tokens_source"`
}

// MarshalJSON implements json.Marshaler with AppendJSON's encoding.
func (r Record) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// UnmarshalJSON implements json.Unmarshaler. id, outcome and planned_s are required.
func (r *Record) UnmarshalJSON(b []byte) error {
	var w wireRecord
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	switch {
	case w.ID == nil:
		return fmt.Errorf("request line has no \"id\"")
	case w.Outcome == nil:
		return fmt.Errorf("request line has no \"outcome\"")
	case w.Planned == nil:
		return fmt.Errorf("request line has no \"planned_s\"")
	}
	for _, v := range []*float64{w.Planned, w.Dispatched, w.Slot, w.Sent, w.Written, w.FirstEvent, w.First, w.FirstRead, w.Last, w.End, w.FirstAnswer} {
		if v != nil && !(*v >= 0 && *v <= maxSeconds) {
			return fmt.Errorf("a moment of %v s is outside [0, %g] s", *v, maxSeconds)
		}
	}
	itl, err := decodeGaps("itl_ms", w.ITL)
	if err != nil {
		return err
	}
	answerITL, err := decodeGaps("answer_itl_ms", w.AnswerITL)
	if err != nil {
		return err
	}
	switch {
	case w.Session < 0 || w.Turn < 0 || (w.Session == 0) != (w.Turn == 0):
		return fmt.Errorf("session %d, turn %d: both are 1-based, and a turn needs its session", w.Session, w.Turn)
	case w.ReasoningChunks < 0 || w.ReasoningTokens < 0 || w.CachedTokens < 0:
		return fmt.Errorf("negative reasoning_chunks, reasoning_tokens or cached_tokens")
	case w.MaxTokens < 0:
		return fmt.Errorf("max_tokens %d: want a count >= 0", w.MaxTokens)
	case w.InputTokens < 0 || w.RequestedInput < 0 || w.OutputTokens < 0 || w.Chunks < 0 || w.Attempts < 0:
		return fmt.Errorf("input_tokens %d, output_tokens %d, chunks %d, attempts %d: counts are >= 0 (a hand-edited line?)",
			w.InputTokens, w.OutputTokens, w.Chunks, w.Attempts)
	}
	if err := checkOrder(&w); err != nil {
		return err
	}
	*r = Record{
		ID: *w.ID, Tier: w.Tier, Shard: w.Shard, Outcome: *w.Outcome,
		Planned: seconds(w.Planned), Dispatched: seconds(w.Dispatched), Slot: seconds(w.Slot),
		Sent: seconds(w.Sent), Written: seconds(w.Written), FirstEvent: seconds(w.FirstEvent), First: seconds(w.First), FirstRead: seconds(w.FirstRead),
		Last: seconds(w.Last), End: seconds(w.End), Chunks: w.Chunks,
		InputTokens: w.InputTokens, InputTokensSource: w.InputTokensSource, RequestedInputTokens: w.RequestedInput,
		OutputTokens: w.OutputTokens, OutputTokensSource: w.OutputTokensSource,
		UsageRejected: BoundText(w.UsageRejected, MaxNoteLen), MaxTokens: w.MaxTokens,
		FinishReason: BoundText(w.FinishReason, MaxFinishReasonLen), HTTPStatus: w.HTTPStatus, Error: w.Error, Attempts: w.Attempts,
		ITL: itl, Session: w.Session, Turn: w.Turn, SessionID: BoundText(w.SessionID, MaxNoteLen), FirstAnswer: seconds(w.FirstAnswer),
		ReasoningChunks: w.ReasoningChunks, ReasoningTokens: w.ReasoningTokens, ReasoningTokensSource: w.ReasoningTokensSource,
		CachedTokens: w.CachedTokens, CachedTokensSource: w.CachedTokensSource,
	}
	if w.ReasoningChunks > 0 {
		r.AnswerITL = answerITL
	} else {
		r.FirstAnswer = Unset // kept only for a response with reasoning
	}
	if w.QualityOK != nil {
		r.Quality = QualityFail
		if *w.QualityOK {
			r.Quality = QualityPass
		}
	}
	return nil
}

// checkOrder refuses a request line whose moments are out of their order: a response is
// sent, then streams its first token, its last, and ends; each moment is measured on one
// monotonic clock, so only a hand-edited line can say otherwise. Moments never reached are
// absent and not compared.
func checkOrder(w *wireRecord) error {
	order := []struct {
		name string
		v    *float64
	}{{"sent_s", w.Sent}, {"written_s", w.Written}, {"first_s", w.First}, {"last_s", w.Last}, {"end_s", w.End}}
	for i, a := range order {
		for _, b := range order[i+1:] {
			if a.v != nil && b.v != nil && *b.v < *a.v {
				return fmt.Errorf("%s %v is before %s %v: a request's moments come in the order sent, written, first token, last token, end (a hand-edited line?)",
					b.name, *b.v, a.name, *a.v)
			}
		}
	}
	if w.FirstRead != nil && (w.First == nil || *w.FirstRead < *w.First) {
		return fmt.Errorf("first_read_s %v without a first_s before it: the first token is read after it arrives (a hand-edited line?)", *w.FirstRead)
	}
	return nil
}

// decodeGaps decodes a JSON array of gaps in milliseconds (nil for none).
func decodeGaps(key string, raw json.RawMessage) ([]time.Duration, error) {
	gaps, err := parseGaps(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if len(gaps) == 0 {
		return nil, nil
	}
	out := make([]time.Duration, len(gaps))
	for i, ms := range gaps {
		if !(ms >= 0 && ms <= maxSeconds*1e3) {
			return nil, fmt.Errorf("an %s gap of %v ms is outside [0, %g] ms", key, ms, maxSeconds*1e3)
		}
		out[i] = time.Duration(math.Round(ms * 1e6))
	}
	return out, nil
}

// maxSeconds bounds a moment so that it fits a time.Duration: about 292 years, far beyond any run.
const maxSeconds = float64(math.MaxInt64/int64(time.Second)) - 1

func seconds(s *float64) time.Duration {
	if s == nil {
		return Unset
	}
	return time.Duration(math.Round(*s * 1e9))
}

// parseGaps decodes itl_ms, a JSON array of numbers (already validated as JSON by the decoder
// that captured it), or null / absent. It reads the numbers with strconv as encoding/json does,
// so the values are the same, without reflection per element.
func parseGaps(raw json.RawMessage) ([]float64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, fmt.Errorf("want an array of numbers, got %.40s", raw)
	}
	body := bytes.TrimSpace(raw[1 : len(raw)-1])
	if len(body) == 0 {
		return nil, nil
	}
	out := make([]float64, 0, bytes.Count(body, []byte{','})+1)
	for len(body) > 0 {
		item := body
		if i := bytes.IndexByte(body, ','); i >= 0 {
			item, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		item = bytes.TrimSpace(item)
		if len(item) == 0 || item[0] == '"' || item[0] == '[' || item[0] == '{' || item[0] == 'n' || item[0] == 't' || item[0] == 'f' {
			return nil, fmt.Errorf("want an array of numbers, got an item %.40q", item)
		}
		v, err := strconv.ParseFloat(string(item), 64)
		if err != nil {
			return nil, fmt.Errorf("%s is not a number", quoteInput(string(item)))
		}
		out = append(out, v)
	}
	return out, nil
}
