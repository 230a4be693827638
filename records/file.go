package records

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
	"sync"
	"time"
)

// Line kinds. Request lines carry no "kind".
const (
	KindHeader        = "header"
	KindTier          = "tier"
	KindServerMetrics = "server_metrics"
)

// Rate is a request rate in requests per second that encodes +Inf as the JSON string "inf".
type Rate float64

// MarshalJSON implements json.Marshaler.
func (r Rate) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(r), 1) {
		return []byte(`"inf"`), nil
	}
	if math.IsNaN(float64(r)) || math.IsInf(float64(r), -1) {
		return nil, fmt.Errorf("rate %v cannot be encoded", float64(r))
	}
	return strconv.AppendFloat(nil, float64(r), 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *Rate) UnmarshalJSON(b []byte) error {
	if string(b) == `"inf"` {
		*r = Rate(math.Inf(1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("rate: want a number or \"inf\", got %s", b)
	}
	*r = Rate(f)
	return nil
}

// Header is line 1 of records.jsonl: what was measured, how, and with which traffic. It never
// holds secrets: the target has user info and query removed, and no header values are kept.
type Header struct {
	Kind                string          `json:"kind"`
	Tool                string          `json:"tool"`
	Version             string          `json:"version"`
	MetricsVersion      string          `json:"metric_definition_version"`
	Command             string          `json:"command"`
	Target              string          `json:"target"`
	Sim                 string          `json:"sim,omitempty"` // profile of the embedded sim, when it was the target
	Endpoint            string          `json:"endpoint"`
	Model               string          `json:"model"`
	Workload            string          `json:"workload"`
	WorkloadFingerprint string          `json:"workload_fingerprint"`
	Arrival             string          `json:"arrival"`
	Seed                int64           `json:"seed"`
	MaxConcurrency      int             `json:"max_concurrency"`
	CachePolicy         string          `json:"cache_policy"`
	ExtraBody           json.RawMessage `json:"extra_body,omitempty"`
	TimeoutS            float64         `json:"timeout_s"`
	Retries             int             `json:"retries,omitempty"` // re-sends allowed per request (0: none)
	StartWall           time.Time       `json:"start_wall"`
	Shard               string          `json:"shard,omitempty"`
}

// Tier opens one tier of a run or sweep. Records of the tier follow it (records of different
// tiers never interleave).
type Tier struct {
	Kind                string    `json:"kind"`
	Tier                int       `json:"tier"`
	Arrival             string    `json:"arrival"`
	RequestRate         Rate      `json:"request_rate"`
	Burstiness          Rate      `json:"burstiness"`
	Seed                int64     `json:"seed"`
	Planned             int       `json:"planned"`
	DurationS           float64   `json:"duration_s,omitempty"` // planned tier length for duration-bound tiers
	WorkloadFingerprint string    `json:"workload_fingerprint"`
	StartWall           time.Time `json:"start_wall"`
}

// ServerMetrics closes a tier with what the target's own metrics endpoint reported over it
// (scraped by the client; the payload is the servermetrics package's per-tier JSON).
type ServerMetrics struct {
	Kind    string          `json:"kind"`
	Tier    int             `json:"tier"`
	Metrics json.RawMessage `json:"metrics"`
}

// File is a whole records.jsonl read back.
type File struct {
	Header        Header
	Tiers         []Tier
	Records       []Record
	ServerMetrics map[int]json.RawMessage // by tier
	Warnings      []string                // e.g. a truncated last line that was ignored
}

// TierRecords returns the records of tier t.
func (f *File) TierRecords(t int) []Record {
	var out []Record
	for _, r := range f.Records {
		if r.Tier == t {
			out = append(out, r)
		}
	}
	return out
}

// ReadFile reads a records.jsonl file.
func ReadFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read records: %w", err)
	}
	defer fh.Close()
	f, err := Read(fh)
	if err != nil {
		return nil, fmt.Errorf("read records %s: %w", path, err)
	}
	return f, nil
}

// Read parses records.jsonl from r. A final line without a newline that does not parse is taken
// as cut off by a crash: it is ignored with a warning. Any other bad line is an error naming it.
func Read(r io.Reader) (*File, error) {
	f := &File{}
	var err error
	f.Warnings, err = Scan(r, Visitor{
		Header: func(h Header) error { f.Header = h; return nil },
		Tier:   func(t Tier) error { f.Tiers = append(f.Tiers, t); return nil },
		Record: func(r *Record) error { f.Records = append(f.Records, *r); return nil },
		ServerMetrics: func(m ServerMetrics) error {
			if f.ServerMetrics == nil {
				f.ServerMetrics = map[int]json.RawMessage{}
			}
			f.ServerMetrics[m.Tier] = m.Metrics
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Visitor receives the objects of a records file, in file order. A nil function skips its kind.
// An error from a function stops the scan and is returned, wrapped with the line number.
type Visitor struct {
	Header        func(Header) error
	Tier          func(Tier) error
	Record        func(*Record) error // the record is the function's to keep
	ServerMetrics func(ServerMetrics) error
}

// Scan reads records.jsonl from r one line at a time and hands each object to v, holding no more
// than one line in memory: for files too big to read whole. Its checks and its handling of a cut
// last line are Read's; the warnings say what was ignored.
func Scan(r io.Reader, v Visitor) (warnings []string, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	lineNo := 0
	sawHeader := false
	for {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return warnings, fmt.Errorf("line %d: %w", lineNo+1, err)
		}
		lineNo++
		complete := err == nil
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		obj, perr := parseLine(lineNo, line)
		if perr != nil {
			if !complete {
				warnings = append(warnings, fmt.Sprintf("line %d is incomplete (the run was probably killed while writing it) and was ignored", lineNo))
				break
			}
			return warnings, perr
		}
		if verr := obj.visit(v); verr != nil {
			return warnings, fmt.Errorf("line %d: %w", lineNo, verr)
		}
		sawHeader = sawHeader || obj.header != nil
	}
	if !sawHeader {
		return warnings, errors.New("no header line: empty, or not a loadcurve records file")
	}
	return warnings, nil
}

// object is one parsed line: exactly one field is set.
type object struct {
	header  *Header
	tier    *Tier
	record  *Record
	metrics *ServerMetrics
}

func (o object) visit(v Visitor) error {
	switch {
	case o.header != nil && v.Header != nil:
		return v.Header(*o.header)
	case o.tier != nil && v.Tier != nil:
		return v.Tier(*o.tier)
	case o.record != nil && v.Record != nil:
		return v.Record(o.record)
	case o.metrics != nil && v.ServerMetrics != nil:
		return v.ServerMetrics(*o.metrics)
	}
	return nil
}

// kindKey is how every non-request line names its kind; a request line has none.
var kindKey = []byte(`"kind"`)

func parseLine(n int, line []byte) (object, error) {
	if n > 1 && !bytes.Contains(line, kindKey) {
		// A request line (no "kind": what the probe below would conclude), decoded in one pass
		// instead of a probe, encoding/json's validation and the decode proper.
		r := new(Record)
		if err := r.UnmarshalJSON(line); err != nil {
			return object{}, fmt.Errorf("line %d: request: %w", n, err)
		}
		return object{record: r}, nil
	}
	var probe struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		if n == 1 {
			return object{}, fmt.Errorf("line 1 is not JSON (%v): not a loadcurve records file", err)
		}
		return object{}, fmt.Errorf("line %d: not JSON: %w", n, err)
	}
	switch {
	case n == 1 && probe.Kind != KindHeader:
		return object{}, fmt.Errorf("line 1: want a header object with \"kind\":\"header\": not a loadcurve records file")
	case probe.Kind == KindHeader:
		if n != 1 {
			return object{}, fmt.Errorf("line %d: a second header: records of two runs are mixed in one file", n)
		}
		var h Header
		if err := json.Unmarshal(line, &h); err != nil {
			return object{}, fmt.Errorf("line 1: header: %w", err)
		}
		return object{header: &h}, nil
	case probe.Kind == KindTier:
		var t Tier
		if err := json.Unmarshal(line, &t); err != nil {
			return object{}, fmt.Errorf("line %d: tier: %w", n, err)
		}
		return object{tier: &t}, nil
	case probe.Kind == KindServerMetrics:
		var m ServerMetrics
		if err := json.Unmarshal(line, &m); err != nil {
			return object{}, fmt.Errorf("line %d: server metrics: %w", n, err)
		}
		return object{metrics: &m}, nil
	case probe.Kind == "":
		r := new(Record)
		if err := json.Unmarshal(line, r); err != nil {
			return object{}, fmt.Errorf("line %d: request: %w", n, err)
		}
		return object{record: r}, nil
	default:
		return object{}, fmt.Errorf("line %d: unknown kind %q", n, probe.Kind)
	}
}

// Writer writes records.jsonl through a buffer that is flushed at least every FlushInterval, so a
// crash loses at most that much. It is safe for concurrent use; Write does not wait for the disk
// unless a flush is due.
type Writer struct {
	mu       sync.Mutex
	w        *bufio.Writer
	c        io.Closer
	buf      []byte
	interval time.Duration
	last     time.Time
	err      error
	stop     chan struct{} // closes the background flusher, when one runs
	done     chan struct{}
}

// DefaultFlushInterval bounds what a crash can lose.
const DefaultFlushInterval = time.Second

// Create makes path and writes the header line.
func Create(path string, h Header) (*Writer, error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create records: %w", err)
	}
	w := NewWriter(fh, DefaultFlushInterval)
	w.c = fh
	if err := w.WriteHeader(h); err != nil {
		fh.Close()
		return nil, err
	}
	w.AutoFlush()
	return w, nil
}

// AutoFlush starts a background flush every interval, so that records written just before a
// quiet stretch (no request finishing) reach the file too: a kill loses at most one interval.
// Close stops it.
func (w *Writer) AutoFlush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil {
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	w.stop, w.done = stop, done
	go func() {
		defer close(done)
		t := time.NewTicker(w.interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				w.mu.Lock()
				if w.w.Buffered() > 0 && time.Since(w.last) >= w.interval {
					w.flushLocked()
				}
				w.mu.Unlock()
			case <-stop:
				return
			}
		}
	}()
}

// NewWriter writes to out, flushing every interval.
func NewWriter(out io.Writer, interval time.Duration) *Writer {
	return &Writer{w: bufio.NewWriterSize(out, 1<<16), interval: interval, last: time.Now()}
}

// WriteHeader writes the header line (Kind, Tool and MetricsVersion are filled in) and flushes.
func (w *Writer) WriteHeader(h Header) error {
	h.Kind = KindHeader
	if h.Tool == "" {
		h.Tool = "loadcurve"
	}
	if h.MetricsVersion == "" {
		h.MetricsVersion = MetricsVersion
	}
	return w.writeObject(h)
}

// WriteServerMetrics writes a tier's server-side metrics (any JSON-encodable value) and flushes.
func (w *Writer) WriteServerMetrics(tier int, metrics any) error {
	b, err := json.Marshal(metrics)
	if err != nil {
		return fmt.Errorf("encode server metrics: %w", err)
	}
	return w.writeObject(ServerMetrics{Kind: KindServerMetrics, Tier: tier, Metrics: b})
}

// WriteTier writes a tier line and flushes.
func (w *Writer) WriteTier(t Tier) error {
	t.Kind = KindTier
	return w.writeObject(t)
}

func (w *Writer) writeObject(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode records line: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.w.Write(b)
	w.w.WriteByte('\n')
	w.flushLocked()
	return w.err
}

// Write appends one request line.
func (w *Writer) Write(r *Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf = r.AppendJSON(w.buf[:0])
	w.buf = append(w.buf, '\n')
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = fmt.Errorf("write records: %w", err)
		return w.err
	}
	if time.Since(w.last) >= w.interval {
		w.flushLocked()
	}
	return w.err
}

func (w *Writer) flushLocked() {
	if err := w.w.Flush(); err != nil && w.err == nil {
		w.err = fmt.Errorf("write records: %w", err)
	}
	w.last = time.Now()
}

// Flush writes out everything buffered.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	return w.err
}

// Close stops the background flusher, flushes, and closes the underlying file when the Writer
// opened it.
func (w *Writer) Close() error {
	w.mu.Lock()
	stop, done := w.stop, w.done
	w.stop = nil
	w.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	err := w.Flush()
	if w.c != nil {
		if cerr := w.c.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close records: %w", cerr)
		}
	}
	return err
}
