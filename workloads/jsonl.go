package workloads

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// LoadJSONL reads the user's own requests, or a set written by Save, from a JSONL file.
// See ReadJSONL for the format.
func LoadJSONL(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load requests: %w", err)
	}
	defer f.Close()
	return ReadJSONL(f, path)
}

// ReadJSONL reads requests, one JSON object a line; blank lines are skipped. name locates
// errors ("name:line: what"). Keys:
//
//   - "prompt" (string) and/or "messages" ([{"role", "content"}], content a string): at least one,
//     with some text. Prompt goes to /completions and, as one user message, to chat; messages go to
//     chat as they are.
//   - "max_tokens": a positive integer; absent, the request carries none (server default).
//   - "output_tokens": vLLM's custom dataset's name for max_tokens, used when max_tokens is absent.
//   - "input_tokens": a positive integer; absent, CountWords of the prompt and of every message
//     content (an approximation: a real tokenizer and the chat template count differently).
//   - "expected": a string (the exact answer, compared with surrounding space trimmed) or an
//     object {"exact", "contains", "regex", "finish_reason", "min_tokens"}; a regex must compile.
//   - "expected_finish_reason": a string, the same as expected.finish_reason.
//   - "id" (string or number) or "label" (string): the request's name, kept as Request.Label. A
//     numeric id equal to the request's 0-based position is the numbering Save writes and is not
//     kept as a label, so a file written by Save reads back to the identical set (same fingerprint).
//   - "prefix_group": a non-negative integer, as Save writes for shared-prefix sets.
//   - "tools": a non-empty array of OpenAI tool objects, sent to chat as it is (Request.Tools,
//     kept compact as Save writes it).
//
// Sessions (multi-turn conversations): a line may also have
//
//   - "session" (a non-empty string or an integer): the conversation the line is a turn of;
//   - "turn": its 1-based number in the session;
//   - "think_ms": the user's think time before the turn, milliseconds in [0, 86400000] after the
//     previous turn's response (absent or 0 on a first turn).
//
// Either every line has a "session" or none does. The lines of a session may be interleaved
// with other sessions' lines: sessions are numbered (Request.Session) in the order of their first
// line, and each one's turns are taken in file order, or by "turn" when its lines have one (then
// all of them must, numbered 1, 2, … without gaps or repeats). A turn's "prompt" or "messages"
// is only what the turn adds: user messages, and on the first turn a system message before them
// ("system" or "developer"); the assistant's replies are the server's, sent in the history by
// the client. "input_tokens" counts the turn's own text. A turn without "id" or "label" is
// labelled "SESSION#TURN", except when the session is an integer equal to its number (Save's
// numbering), so a set written by Save reads back identical.
//
// Any other key is an error (a misspelt "expected" would otherwise silently drop a quality
// check); null for a key means the key is absent. The whole input is
// validated before anything is returned, and every problem is reported (up to ten, then a count),
// each a *LineError joined with errors.Join.
func ReadJSONL(r io.Reader, name string) (*Set, error) {
	br := bufio.NewReader(&lineCapped{r: r})
	p := &problems{path: name}
	var (
		reqs  []Request
		turns []turnLine // each request's session fields, when it has any
	)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if lineNo == 1 {
				line = bytes.TrimPrefix(line, []byte("\ufeff"))
			}
			if len(bytes.TrimSpace(line)) > 0 {
				req, tl, ok := parseRequestLine(line, lineNo, len(reqs), p)
				if !ok {
					req = Request{} // keep positions (numeric ids) right
				}
				reqs = append(reqs, req)
				turns = append(turns, tl)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read requests %s: %w", name, err)
		}
	}
	reqs = groupSessions(reqs, turns, p)
	p.sortByLine()
	if err := p.err(); err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return nil, &LineError{Path: name, Msg: "no requests: the file is empty (one JSON object a line expected)"}
	}
	if err := ValidateSessions(reqs); err != nil { // the rules above imply it: a safety net
		return nil, &LineError{Path: name, Msg: err.Error()}
	}
	return NewSet(fmt.Sprintf("jsonl(file=%s)", name), reqs), nil
}

// requestKeys lists the keys ReadJSONL accepts, for the unknown-key message.
const requestKeys = `prompt, messages, max_tokens, output_tokens, input_tokens, expected, expected_finish_reason, id, label, prefix_group, tools, session, turn, think_ms`

// turnLine is what a line says about sessions. lineNo is 0 when the line could not be read as
// an object at all (nothing is known); has is set when it has a "session" (valid or not).
type turnLine struct {
	lineNo  int
	has     bool
	label   string // the session's label: the string, or the integer as spelt
	numeric bool   // the label is an integer
	turn    int    // "turn" (0 = absent)
	think   bool   // a positive "think_ms"
	timed   bool   // a valid "think_ms", 0 included
	sure    bool   // "session", "turn" and "think_ms" are all valid
	roles   []string
	labeled bool // the line has an "id" or "label" of its own
}

// parseRequestLine parses one non-blank line holding the request at position index; problems
// go to p.
func parseRequestLine(line []byte, lineNo, index int, p *problems) (Request, turnLine, bool) {
	obj, ok := jsonObject(bytes.TrimSpace(line), lineNo, p)
	if !ok {
		return Request{}, turnLine{}, false
	}
	before := len(p.errs) + p.more
	l := requestLine{obj: obj, tl: turnLine{lineNo: lineNo, sure: true}, bad: func(format string, args ...any) { p.add(lineNo, format, args...) }}
	for _, key := range sortedKeys(obj) {
		raw := obj[key]
		if isNull(raw) {
			continue // null = absent
		}
		if !l.requestField(key, raw, index) && !l.turnField(key, raw) && !l.expectField(key, raw) {
			hint := ""
			if key == "timestamp" || key == "input_length" || key == "hash_ids" {
				hint = " (this looks like a Mooncake trace: use mooncake:FILE)"
			}
			l.bad("unknown field %s; a request line may have %s%s", quoteValue(key), requestKeys, hint)
		}
	}
	l.agree()
	req := l.req
	words := CountWords(req.Prompt)
	for _, m := range req.Messages {
		words += CountWords(m.Content)
	}
	if words == 0 && len(p.errs)+p.more == before { // else the text's problem is reported
		if _, has := obj["prompt"]; has || len(req.Messages) > 0 {
			l.bad(`the request has no text: "prompt" and every message content are empty`)
		} else {
			l.bad(`a request needs "prompt" or "messages"`)
		}
	}
	if req.InputTokens == 0 {
		req.InputTokens = words
	}
	return req, l.tl, len(p.errs)+p.more == before
}

// requestLine is one request line being read: its members, the request and its turn so far,
// and where its problems go.
type requestLine struct {
	obj        map[string]json.RawMessage
	req        Request
	tl         turnLine
	idLabel    string
	hasIDLabel bool
	bad        func(format string, args ...any)
}

// requestField reads one of the request's own members: its text, lengths, prefix group and
// name. It reports whether key is one.
func (l *requestLine) requestField(key string, raw json.RawMessage, index int) bool {
	req, bad := &l.req, l.bad
	switch key {
	case "prompt":
		if s, ok := stringValue(raw); !ok {
			bad(`"prompt" must be a string, got %s`, describe(raw))
		} else {
			req.Prompt = s
		}
	case "messages":
		req.Messages = parseMessages(raw, bad)
	case "max_tokens":
		if v, ok := intValue(raw, 1); !ok {
			bad(`"max_tokens" must be a positive integer, got %s`, describe(raw))
		} else {
			req.MaxTokens = v
		}
	case "output_tokens":
		// vLLM's custom dataset names the output length so: max_tokens, unless that is given too.
		if v, ok := intValue(raw, 1); !ok {
			bad(`"output_tokens" must be a positive integer, got %s`, describe(raw))
		} else if mt, has := l.obj["max_tokens"]; !has || isNull(mt) {
			req.MaxTokens = v
		}
	case "input_tokens":
		if v, ok := intValue(raw, 1); !ok {
			bad(`"input_tokens" must be a positive integer, got %s`, describe(raw))
		} else {
			req.InputTokens = v
		}
	case "prefix_group":
		if v, ok := intValue(raw, 0); !ok {
			bad(`"prefix_group" must be a non-negative integer, got %s`, describe(raw))
		} else {
			req.PrefixGroup = v
		}
	case "label":
		if s, ok := stringValue(raw); !ok {
			bad(`"label" must be a string, got %s`, describe(raw))
		} else {
			req.Label = s
		}
	case "id":
		label, isLabel, ok := idValue(raw, index)
		if !ok {
			bad(`"id" must be a string or a number, got %s`, describe(raw))
		} else if isLabel {
			l.idLabel, l.hasIDLabel = label, true
		}
	default:
		return false
	}
	return true
}

// turnField reads one of a session turn's members: session, turn, think_ms. It reports
// whether key is one.
func (l *requestLine) turnField(key string, raw json.RawMessage) bool {
	tl, bad := &l.tl, l.bad
	switch key {
	case "session":
		tl.has = true
		if label, numeric, ok := sessionValue(raw); !ok {
			bad(`"session" must be a non-empty string or an integer, got %s`, describe(raw))
			tl.sure = false
		} else {
			tl.label, tl.numeric = label, numeric
		}
	case "turn":
		if v, ok := intValue(raw, 1); !ok {
			bad(`"turn" must be a positive integer (turns are numbered from 1), got %s`, describe(raw))
			tl.sure = false
		} else {
			tl.turn = v
		}
	case "think_ms":
		var v float64
		if raw[0] == '"' || json.Unmarshal(raw, &v) != nil || !(v >= 0 && v <= maxThinkMS) {
			bad(`"think_ms" must be a number of milliseconds in [0, %d], got %s`, maxThinkMS, describe(raw))
			tl.sure = false
		} else {
			l.req.ThinkMS = v + 0 // -0 is 0
			tl.think, tl.timed = v > 0, true
		}
	default:
		return false
	}
	return true
}

// expectField reads the tools a request offers and what its answer is expected to be. It
// reports whether key is one of those.
func (l *requestLine) expectField(key string, raw json.RawMessage) bool {
	req, bad := &l.req, l.bad
	switch key {
	case "tools":
		req.Tools = parseTools(raw, bad)
	case "expected":
		req.Expect = mergeExpect(req.Expect, parseExpected(raw, bad))
	case "expected_finish_reason":
		if s, ok := stringValue(raw); !ok || strings.TrimSpace(s) == "" {
			bad(`"expected_finish_reason" must be a non-empty string, got %s`, describe(raw))
		} else {
			req.Expect = mergeExpect(req.Expect, &Expectation{FinishReason: s})
		}
	default:
		return false
	}
	return true
}

// agree checks the members against each other: the two forms of an expected finish reason, the
// id and the label, a session turn's roles, and a turn or think time outside a session.
func (l *requestLine) agree() {
	obj, req, tl, bad := l.obj, &l.req, &l.tl, l.bad
	if e := obj["expected"]; e != nil && !isNull(e) {
		if fr := obj["expected_finish_reason"]; fr != nil && !isNull(fr) {
			var a struct {
				FinishReason string `json:"finish_reason"`
			}
			b, _ := stringValue(fr)
			if json.Unmarshal(e, &a) == nil && a.FinishReason != "" && a.FinishReason != b {
				bad(`"expected.finish_reason" %s and "expected_finish_reason" %s disagree`, quoteValue(a.FinishReason), quoteValue(b))
			}
		}
	}
	if l.hasIDLabel {
		if obj["label"] != nil && !isNull(obj["label"]) && req.Label != l.idLabel {
			bad(`both "id" and "label" name the request (%s, %s): give one`, quoteValue(l.idLabel), quoteValue(req.Label))
		}
		req.Label = l.idLabel
	}
	tl.labeled = req.Label != ""
	if !tl.has {
		if tl.turn > 0 {
			bad(`"turn" without "session": only a session's turns are numbered`)
		}
		if tl.timed {
			bad(`"think_ms" without "session": a think time is the wait between a session's turns`)
		}
		return
	}
	for i, m := range req.Messages {
		switch m.Role {
		case "user", "system", "developer":
			tl.roles = append(tl.roles, m.Role)
		case "assistant":
			bad(`a session turn's messages are what the user adds; the assistant's replies are the server's`)
		default:
			bad(`messages[%d]: role %s in a session turn, whose messages are user messages (and a system message opening the first turn)`, i, quoteValue(m.Role))
		}
	}
}

// sessionValue reads a "session": a non-empty string, or an integer spelt as in the file.
func sessionValue(raw json.RawMessage) (label string, numeric, ok bool) {
	if s, isStr := stringValue(raw); isStr {
		return s, false, strings.TrimSpace(s) != ""
	}
	t := string(bytes.TrimSpace(raw))
	if _, err := strconv.ParseInt(t, 10, 64); err != nil {
		return "", false, false
	}
	return t, true, true
}

// parseTools checks a "tools" array and returns it compact, exactly as Save (encoding/json)
// writes it back, so a loaded set saves and loads back identical.
func parseTools(raw json.RawMessage, bad func(string, ...any)) json.RawMessage {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		bad(`"tools" must be an array of tool objects, got %s`, describe(raw))
		return nil
	}
	if len(items) == 0 {
		bad(`"tools" is empty (leave it out for a request without tools)`)
		return nil
	}
	for i, item := range items {
		if item[0] != '{' {
			bad(`tools[%d] must be a tool object, got %s`, i, describe(item))
			return nil
		}
	}
	var compact, out bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		bad(`"tools": %s`, jsonErrText(err)) // not expected: it decoded
		return nil
	}
	json.HTMLEscape(&out, compact.Bytes())
	return out.Bytes()
}

// groupSessions checks the session structure of a file's lines and returns the requests in
// sending order: sessions in the order of their first line, each one's turns together and in
// order, numbered. Problems go to p (the requests are then not used).
func groupSessions(reqs []Request, turns []turnLine, p *problems) []Request {
	// Either every line has a "session" or none does; lines that are not objects say nothing.
	first := -1
	for i, tl := range turns {
		if tl.lineNo == 0 {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		if tl.has != turns[first].has {
			if tl.has {
				p.add(tl.lineNo, `"session" here, but the first request (line %d) has none: either every line has a "session" or none does`, turns[first].lineNo)
			} else {
				p.add(tl.lineNo, `no "session" here, but the first request (line %d) has one: either every line has a "session" or none does`, turns[first].lineNo)
			}
			return reqs
		}
	}
	if first < 0 || !turns[first].has {
		return reqs
	}
	type session struct {
		label string
		lines []int // indices into reqs, in file order
		sure  bool
	}
	var order []*session
	byLabel := map[string]*session{}
	for i, tl := range turns {
		if tl.lineNo == 0 || tl.label == "" {
			continue // reported already
		}
		s := byLabel[tl.label]
		if s == nil {
			s = &session{label: tl.label, sure: true}
			byLabel[tl.label] = s
			order = append(order, s)
		}
		s.lines = append(s.lines, i)
		s.sure = s.sure && tl.sure
	}
	out := make([]Request, 0, len(reqs))
	for k, s := range order {
		if !s.sure || !orderTurns(s.label, s.lines, turns, p) {
			continue // the file is refused: its structure is not checked further
		}
		for j, i := range s.lines {
			tl := &turns[i]
			r := reqs[i]
			r.Session, r.Turn = k+1, j+1
			if savedNumbering := tl.numeric && tl.label == strconv.Itoa(k+1); !savedNumbering {
				r.SessionID = tl.label // the file's own id, which records keep
				if !tl.labeled {
					r.Label = tl.label + "#" + strconv.Itoa(j+1)
				}
			}
			if j == 0 && tl.think {
				p.add(tl.lineNo, `"think_ms" on the first turn of session %s: a think time is the wait after the previous turn's reply, and a first turn has none`, quoteValue(s.label))
			}
			userSeen := false
			for m, role := range tl.roles {
				switch {
				case role == "user":
					userSeen = true
				case j > 0:
					p.add(tl.lineNo, `messages[%d]: a %s message in turn %d of session %s: only the first turn may open with one`, m, clip(role), j+1, quoteValue(s.label))
				case userSeen:
					p.add(tl.lineNo, `messages[%d]: a %s message after a user message: it may only open the session's first turn`, m, role)
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// orderTurns sorts a session's lines by "turn" when they have one, and checks the numbering:
// all of the session's lines numbered or none, 1, 2, … without gaps or repeats.
func orderTurns(label string, lines []int, turns []turnLine, p *problems) bool {
	numbered := turns[lines[0]].turn > 0
	for _, i := range lines[1:] {
		tl := &turns[i]
		switch {
		case numbered && tl.turn == 0:
			p.add(tl.lineNo, `session %s: no "turn" here, but line %d numbers its turn: number every turn of a session or none`, quoteValue(label), turns[lines[0]].lineNo)
			return false
		case !numbered && tl.turn > 0:
			p.add(tl.lineNo, `session %s: "turn" here, but line %d has none: number every turn of a session or none`, quoteValue(label), turns[lines[0]].lineNo)
			return false
		}
	}
	if !numbered {
		return true
	}
	slices.SortStableFunc(lines, func(a, b int) int { return turns[a].turn - turns[b].turn })
	for j, i := range lines {
		tl := &turns[i]
		switch {
		case j > 0 && tl.turn == turns[lines[j-1]].turn:
			p.add(tl.lineNo, `session %s has turn %d twice (line %d and here)`, quoteValue(label), tl.turn, turns[lines[j-1]].lineNo)
			return false
		case tl.turn != j+1:
			p.add(tl.lineNo, `session %s: turn %d, but the session has no turn %d (a session's turns are numbered 1, 2, … without gaps)`, quoteValue(label), tl.turn, j+1)
			return false
		}
	}
	return true
}

// jsonObject decodes a line holding one JSON object, reporting what is wrong otherwise.
func jsonObject(line []byte, lineNo int, p *problems) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	err := json.Unmarshal(line, &obj)
	switch {
	case err == nil && obj != nil:
		return obj, true
	case line[0] != '{' && json.Valid(line):
		p.add(lineNo, "expected a JSON object, got %s", describe(line))
	case err != nil:
		p.add(lineNo, "not valid JSON: %s", jsonErrText(err))
	default:
		p.add(lineNo, "expected a JSON object, got %s", describe(line))
	}
	return nil, false
}

// parseMessages parses a chat messages array.
func parseMessages(raw json.RawMessage, bad func(string, ...any)) []Message {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		bad(`"messages" must be an array of {"role", "content"} objects, got %s`, describe(raw))
		return nil
	}
	if len(items) == 0 {
		bad(`"messages" is empty`)
		return nil
	}
	msgs := make([]Message, 0, len(items))
	for i, item := range items {
		var obj map[string]json.RawMessage
		if json.Unmarshal(item, &obj) != nil || obj == nil {
			bad(`messages[%d] must be a {"role", "content"} object, got %s`, i, describe(item))
			continue
		}
		var m Message
		ok := true
		for _, key := range sortedKeys(obj) {
			v := obj[key]
			switch key {
			case "role":
				if s, isStr := stringValue(v); !isStr || strings.TrimSpace(s) == "" {
					bad(`messages[%d].role must be a non-empty string, got %s`, i, describe(v))
					ok = false
				} else {
					m.Role = s
				}
			case "content":
				if s, isStr := stringValue(v); !isStr {
					bad(`messages[%d].content must be a string, got %s (content parts are not supported)`, i, describe(v))
					ok = false
				} else {
					m.Content = s
				}
			default:
				bad(`messages[%d]: unknown field %s (only "role" and "content" are sent)`, i, quoteValue(key))
				ok = false
			}
		}
		if _, has := obj["role"]; !has {
			bad(`messages[%d] has no "role"`, i)
			ok = false
		}
		if _, has := obj["content"]; !has {
			bad(`messages[%d] has no "content"`, i)
			ok = false
		}
		if ok {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// parseExpected parses "expected": a string (exact answer) or an expectation object.
func parseExpected(raw json.RawMessage, bad func(string, ...any)) *Expectation {
	if s, ok := stringValue(raw); ok {
		if strings.TrimSpace(s) == "" {
			bad(`"expected" is an empty string (an exact answer must have text)`)
			return nil
		}
		return &Expectation{Exact: s}
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		bad(`"expected" must be a string (the exact answer) or an object {exact|contains|regex|finish_reason|min_tokens}, got %s`, describe(raw))
		return nil
	}
	e := &Expectation{}
	for _, key := range sortedKeys(obj) {
		v := obj[key]
		if isNull(v) {
			continue
		}
		var dst *string
		switch key {
		case "exact":
			dst = &e.Exact
		case "contains":
			dst = &e.Contains
		case "regex":
			dst = &e.Regex
		case "finish_reason":
			dst = &e.FinishReason
		case "min_tokens":
			if n, ok := intValue(v, 0); !ok {
				bad(`"expected.min_tokens" must be a non-negative integer, got %s`, describe(v))
			} else {
				e.MinTokens = n
			}
			continue
		default:
			bad(`"expected": unknown field %s; it may have exact, contains, regex, finish_reason, min_tokens`, quoteValue(key))
			continue
		}
		if s, ok := stringValue(v); !ok {
			bad(`"expected.%s" must be a string, got %s`, clip(key), describe(v))
		} else {
			*dst = s
		}
	}
	if err := e.Validate(); err != nil {
		bad(`"expected.regex" does not compile: %v`, errors.Unwrap(err))
	}
	return e
}

// mergeExpect combines "expected" and "expected_finish_reason" into one expectation.
func mergeExpect(a, b *Expectation) *Expectation {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := *a
	if b.Exact != "" {
		out.Exact = b.Exact
	}
	if b.Contains != "" {
		out.Contains = b.Contains
	}
	if b.Regex != "" {
		out.Regex = b.Regex
	}
	if b.FinishReason != "" {
		out.FinishReason = b.FinishReason
	}
	if b.MinTokens != 0 {
		out.MinTokens = b.MinTokens
	}
	return &out
}

// idValue reads an "id": a string is a label; a number equal to index is Save's numbering (no
// label); any other number is a label spelt as in the file.
func idValue(raw json.RawMessage, index int) (label string, isLabel, ok bool) {
	if s, isStr := stringValue(raw); isStr {
		return s, true, true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return "", false, false
	}
	if v, err := strconv.ParseInt(n.String(), 10, 64); err == nil && v == int64(index) {
		return "", false, true
	}
	return n.String(), true, true
}

// stringValue decodes a JSON string.
func stringValue(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// intValue decodes a JSON integer literal >= min that fits in an int.
func intValue(raw json.RawMessage, min int) (int, bool) {
	v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil || v < int64(min) || v > int64(maxInt) {
		return 0, false
	}
	return int(v), true
}

const maxInt = int(^uint(0) >> 1)

// sortedKeys returns the keys of obj in order, so problems are reported in a stable order.
func sortedKeys(obj map[string]json.RawMessage) []string {
	return slices.Sorted(maps.Keys(obj))
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// describe shows a JSON value in an error message: numbers, booleans and null as they are,
// strings, objects and arrays by kind (and short strings quoted).
func describe(raw []byte) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '"':
		if len(b) <= 42 {
			return "the string " + string(b)
		}
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// jsonErrText is a JSON decoding error's message without Go type names.
func jsonErrText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Error()
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
