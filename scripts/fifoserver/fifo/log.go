package fifo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// LogLine is one request of the log.
type LogLine struct {
	ID       string   `json:"id,omitempty"`          // the request's X-Request-Id
	Seq      int64    `json:"seq"`                   // arrival order
	RX       *float64 `json:"rx_s,omitempty"`        // the request's last bytes arrived at the server's socket
	Received float64  `json:"received_s"`            // the handler started
	Arrival  float64  `json:"arrival_s"`             // its body read and valid, it joined the queue
	Start    *float64 `json:"start_s,omitempty"`     // logical start of service
	FirstDue *float64 `json:"first_due_s,omitempty"` // start + first token
	// FirstWrite is when the first token's chunk was handed to the connection, First when its
	// flush returned: the chunk left between them.
	FirstWrite *float64 `json:"first_write_s,omitempty"`
	First      *float64 `json:"first_s,omitempty"`
	End        *float64 `json:"end_s,omitempty"` // [DONE] flushed
	Service    float64  `json:"service_s"`       // logical
	Tokens     int      `json:"tokens"`
	Outcome    string   `json:"outcome"`
}

// Outcomes of a LogLine.
const (
	OutcomeOK            = "ok"
	OutcomeLeftWaiting   = "left while waiting"
	OutcomeLeftInService = "client left in service"
)

// OK reports whether the server streamed the whole response.
func (l *LogLine) OK() bool { return l.Outcome == OutcomeOK && l.First != nil }

// Sent is when the first token's chunk was handed to the connection (valid when OK): the
// moment a server preempted after it wrote still sent its token.
func (l *LogLine) Sent() float64 {
	if l.FirstWrite != nil {
		return *l.FirstWrite
	}
	return *l.First
}

// From is when the server had the request: its last bytes' arrival at its socket (RX), or,
// without it, its handler's start.
func (l *LogLine) From() float64 {
	if l.RX != nil {
		return *l.RX
	}
	return l.Received
}

// TTFT is the server-side time to first token, in seconds: from when it had the request (From)
// to its first token's chunk handed to the connection (valid when OK).
func (l *LogLine) TTFT() float64 { return l.Sent() - l.From() }

// Log is a server's log read back: its configuration and its requests in arrival order.
type Log struct {
	Config   Config
	Requests []LogLine
	// ByID finds a request by its X-Request-Id.
	ByID map[string]*LogLine
}

// ReadLog reads a log (name says where from, in errors). A last line cut by a kill is ignored.
func ReadLog(r io.Reader, name string) (*Log, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	l := &Log{ByID: map[string]*LogLine{}}
	n := 0
	var cut error // a line that did not parse: an error unless it is the last
	for sc.Scan() {
		n++
		if cut != nil {
			return nil, cut
		}
		if n == 1 {
			if err := json.Unmarshal(sc.Bytes(), &l.Config); err != nil || l.Config.Server != ServerName {
				return nil, fmt.Errorf("%s:1: not a fifoserver log header (%v)", name, err)
			}
			continue
		}
		var ll LogLine
		if err := json.Unmarshal(sc.Bytes(), &ll); err != nil {
			cut = fmt.Errorf("%s:%d: %w", name, n, err)
			continue
		}
		l.Requests = append(l.Requests, ll)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: empty", name)
	}
	slices.SortFunc(l.Requests, func(a, b LogLine) int { return int(a.Seq - b.Seq) })
	for i := range l.Requests {
		if id := l.Requests[i].ID; id != "" {
			l.ByID[id] = &l.Requests[i]
		}
	}
	return l, nil
}
