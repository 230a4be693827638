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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Line kinds. Request lines carry no "kind".
const (
	KindHeader        = "header"
	KindTier          = "tier"
	KindTierEnd       = "tier_end"
	KindServerMetrics = "server_metrics"
	// KindCut is the last line of a file whose writing failed (a full disk, a file-size limit):
	// the file is whole up to it, and it says why the file ends there (Cut).
	KindCut = "cut"
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
		return fmt.Errorf("rate: want a number or \"inf\", got %s", quoteInput(string(b)))
	}
	*r = Rate(f)
	return nil
}

// Command says which command made a records file.
type Command string

// The commands that write records files.
const (
	CommandRun   Command = "run"
	CommandSweep Command = "sweep"
)

// Header is line 1 of records.jsonl: what was measured, how, with which traffic, and with which
// analysis settings, so that every result can be reproduced from the file alone. It never holds
// secrets: the target has user info and query removed, and no header values are kept.
type Header struct {
	Kind           string  `json:"kind"`
	Tool           string  `json:"tool"`
	Version        string  `json:"version"`
	MetricsVersion string  `json:"metric_definition_version"`
	Command        Command `json:"command"`
	Target         string  `json:"target"`
	Sim            string  `json:"sim,omitempty"` // the embedded sim, when it was the target: its profile or model
	// SimConfig is the embedded deployment's whole configuration (sim.Config's JSON: every knob,
	// durations in nanoseconds) when the sim's engine was the target, SimQueueConfig
	// (sim.QueueConfig's) when its M/D/c queue was; with SimReplicas replicas behind a SimBalance
	// balancer (0 and "" for one): what a rehearsal rebuilds.
	SimConfig           json.RawMessage `json:"sim_config,omitempty"`
	SimQueueConfig      json.RawMessage `json:"sim_queue_config,omitempty"`
	SimReplicas         int             `json:"sim_replicas,omitempty"`
	SimBalance          string          `json:"sim_balance,omitempty"`
	Endpoint            string          `json:"endpoint"`
	Unit                Unit            `json:"unit,omitempty"` // what throughputs count; "" (absent): output tokens
	Model               string          `json:"model"`
	Workload            string          `json:"workload"`
	WorkloadFingerprint string          `json:"workload_fingerprint"`
	// Tokenizer is the tokenizer the prompts were sized (or a file's counted) in, "NAME
	// (sha256:…)": its file and the hash of its contents; "" (absent) when they were counted in
	// words.
	Tokenizer      string          `json:"tokenizer,omitempty"`
	Arrival        string          `json:"arrival"`
	Seed           int64           `json:"seed"`
	MaxConcurrency int             `json:"max_concurrency"`
	CachePolicy    string          `json:"cache_policy"`
	ExtraBody      json.RawMessage `json:"extra_body,omitempty"`
	TimeoutS       float64         `json:"timeout_s"`
	Retries        int             `json:"retries,omitempty"` // re-sends allowed per request (0: none)
	StartWall      time.Time       `json:"start_wall"`
	Shard          string          `json:"shard,omitempty"`
	// RequestIDPrefix is --request-id-prefix: every request was sent with the header
	// "X-Request-Id: <prefix><tier>-<id>" (the preflight's "<prefix>preflight"), which joins the
	// server's logs to these records. Empty: no id was sent.
	RequestIDPrefix string `json:"request_id_prefix,omitempty"`
	// Label (--label) and Metadata (--metadata KEY=VALUE) are the user's names for the run,
	// carried into every result derived from it (vLLM's --label and --metadata).
	Label    string   `json:"label,omitempty"`
	Metadata Metadata `json:"metadata,omitempty"`
	// Settings are the analysis inputs the run was made with; nil in files written before they
	// were kept here (readers then fall back to defaults and say so).
	Settings *Settings `json:"settings,omitempty"`
}

// Metadata is the user's KEY=VALUE pairs for a run (--metadata), in the order given. It is a
// JSON object on the wire, its members in that order.
type Metadata []MetaPair

// MetaPair is one KEY=VALUE of Metadata.
type MetaPair struct{ Key, Value string }

// Get returns the value of key and whether it is set.
func (m Metadata) Get(key string) (string, bool) {
	for _, p := range m {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// MarshalJSON writes m as a JSON object, its members in order.
func (m Metadata) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, p := range m {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(p.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(p.Value)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads a JSON object of strings (or null), keeping the order of its members.
func (m *Metadata) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*m = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("metadata: want a JSON object of strings")
	}
	out := Metadata{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
		key, _ := tok.(string)
		var v string
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("metadata: %s: want a string: %w", quoteInput(key), err)
		}
		out = append(out, MetaPair{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	*m = out
	return nil
}

// Settings are the inputs from which a result is derived from the records: objectives,
// statistics, window and the sweep's analysis parameters. They are plain values here; the
// measure and curve packages read and write their own parts.
type Settings struct {
	// Objectives in the canonical form of --goodput ("ttft:500 tpot:50"), "" for none.
	Objectives string `json:"objectives"`
	// Percentiles reported (0–100) and the metrics whose statistics are reported (nil: all).
	Percentiles       []float64 `json:"metric_percentiles"`
	PercentileMetrics []string  `json:"percentile_metrics,omitempty"`
	// A fixed steady-state window on planned time, when the user gave one (seconds).
	WindowWarmupS   float64 `json:"window_warmup_s"`
	WindowCooldownS float64 `json:"window_cooldown_s"`
	// MaxScheduleLagMs is the client_bound threshold on the schedule-lag p99.
	MaxScheduleLagMs float64 `json:"max_schedule_lag_ms"`
	// The analysis parameters of a sweep (a run keeps them too: cost and compare use them).
	TargetShare float64 `json:"target_share"`
	Headroom    float64 `json:"headroom"`
	Confidence  float64 `json:"confidence"`
	PlateauGain float64 `json:"plateau_gain"`
}

// Role is what a tier is for.
type Role string

// Tier roles. A file without roles (older versions) has only RoleTier and, in sweeps, a probe
// at rate inf.
const (
	RoleTier    Role = "tier"    // a point of the load curve (the only tier of a run)
	RoleProbe   Role = "probe"   // a saturation probe: a burst (off the rate axis) or an overloaded open-loop tier (a point of the curve)
	RoleConfirm Role = "confirm" // the confirmation of a sweep's operating point
)

// Tier opens one tier of a run or sweep: its identity, from the plan to the report. Records of
// the tier follow it (records of different tiers never interleave), and a closing line
// ([TierEnd]) follows them once the tier ended.
type Tier struct {
	Kind string `json:"kind"`
	Tier int    `json:"tier"`
	Role Role   `json:"role,omitempty"`
	// Repeat numbers the repetition of a sweep's decision the tier belongs to (--repeat; 0 for
	// the first or only one).
	Repeat         int    `json:"repeat,omitempty"`
	Arrival        string `json:"arrival"`
	RequestRate    Rate   `json:"request_rate"`
	Burstiness     Rate   `json:"burstiness"`
	MaxConcurrency int    `json:"max_concurrency,omitempty"` // the cap in this tier (0: none)
	// Users, when > 0, makes the tier a closed loop of that many users (its concurrency level):
	// each sends its next request when its previous response ended, plus Think. Arrival and
	// RequestRate then describe nothing planned in advance.
	Users  int     `json:"users,omitempty"`
	ThinkS float64 `json:"think_s,omitempty"`
	Seed   int64   `json:"seed"`
	// Planned is the number of requests in the tier's schedule as drawn; a tier that stopped
	// early (its verdict was decided) planned fewer: see End.
	Planned int `json:"planned"`
	// DurationS is the planned length of a duration-bound tier; MaxDurationS the cap of a tier
	// that runs until its verdict is decided (0: not such a tier).
	DurationS           float64   `json:"duration_s,omitempty"`
	MaxDurationS        float64   `json:"max_duration_s,omitempty"`
	WorkloadFingerprint string    `json:"workload_fingerprint"`
	StartWall           time.Time `json:"start_wall"` // the wall-clock time of T0
	// Shadow is the shadow queue the tier's compliant share is controlled with (package shadow),
	// calibrated before the tier; nil when there is none.
	Shadow *ShadowQueue `json:"shadow,omitempty"`
	// End is the tier's closing line, set when the file is read; nil while the tier runs, in files
	// of older versions, and when the run was killed before the tier ended.
	End *TierEnd `json:"-"`
}

// ShadowQueue is an M/D/c model of a deployment (package shadow): Servers slots, each serving a
// request for ServiceS seconds; a request complies when it waited at most BudgetS seconds.
type ShadowQueue struct {
	Servers  int     `json:"servers"`
	ServiceS float64 `json:"service_s"`
	BudgetS  float64 `json:"budget_s"`
}

// CurveRole reports whether the tier is one the curve is planned from: RoleTier, or an older
// file's tier (or the only tier of a run). Probes at a finite rate are points of the curve too,
// but not tiers a comparison pairs.
func (t Tier) CurveRole() bool { return t.Role == RoleTier || t.Role == "" }

// PlannedRequests is the number of requests the tier planned: the closing line's count when the
// tier stopped early, else the tier line's.
func (t Tier) PlannedRequests() int {
	if t.End != nil {
		return t.End.Planned
	}
	return t.Planned
}

// ArrivalsEnd is the end of the tier's arrival phase as an offset from T0, known from its
// closing line (0 when unknown): the measurement window of a steady state ends there, before
// the drain.
func (t Tier) ArrivalsEnd() time.Duration {
	if t.End == nil {
		return 0
	}
	return time.Duration(math.Round(t.End.ArrivalsEndS * 1e9))
}

// TierEnd closes a tier after its last record.
type TierEnd struct {
	Kind string `json:"kind"`
	Tier int    `json:"tier"`
	// Planned is the number of requests the tier planned in the end: the tier line's, or fewer
	// when the tier stopped dispatching early (the rest of its schedule was never part of it).
	Planned int `json:"planned"`
	// ArrivalsEndS is the end of the arrival phase: the tier's duration, the time dispatching
	// stopped, or the last planned arrival, in seconds from T0.
	ArrivalsEndS float64 `json:"arrivals_end_s"`
	// Reason says why the arrival phase ended (see the Ended* constants).
	Reason string `json:"reason"`
	// RateLimited: the --rate-limit ceiling delayed at least one dispatch, so it, not the
	// schedule, shaped the load.
	RateLimited bool `json:"rate_limited,omitempty"`
	// Seal states the tier's lines as the Writer wrote them (their count and digests); nil in
	// files of older versions.
	Seal *Seal `json:"seal,omitempty"`
	// CPU is what the client's process and the machine's CPUs spent over the tier; nil where it
	// was not read (a virtual clock's tier, files of older versions).
	CPU *TierCPU `json:"cpu,omitempty"`
}

// TierCPU is the CPU spent over a tier, from its start (T0) to its closing line: the client's
// own, so that a result says how much of the cores the load generator took from a target that
// shares them, and the machine's, so that it says how busy those cores were.
type TierCPU struct {
	WallS float64 `json:"wall_s"`
	// ProcessS is the client process's user plus system CPU time, s.
	ProcessS float64 `json:"process_cpu_s"`
	// InProcessTarget: the target ran in the client's process (the embedded deployment), so its
	// CPU is in ProcessS.
	InProcessTarget bool `json:"in_process_target,omitempty"`
	// MachineCPUs and MachineBusy are the machine's CPUs and the share of their time that was
	// busy (0–1, everything on the machine, the client included); 0 where not read.
	MachineCPUs int     `json:"machine_cpus,omitempty"`
	MachineBusy float64 `json:"machine_busy,omitempty"`
}

// Cores is the client's CPU time over the wall time: the cores it kept busy on average.
func (c *TierCPU) Cores() float64 {
	if c == nil || c.WallS <= 0 {
		return 0
	}
	return c.ProcessS / c.WallS
}

// Why a tier's arrival phase ended.
const (
	EndedSchedule    = "schedule"    // the schedule ran out (or the tier's duration passed)
	EndedDecided     = "decided"     // the tier's verdict was decided at the stated confidence
	EndedCap         = "cap"         // the tier reached its time cap undecided
	EndedInterrupted = "interrupted" // the run was stopped
)

// ServerMetrics closes a tier with what the target's own metrics endpoint reported over it
// (scraped by the client; the payload is the servermetrics package's per-tier JSON).
type ServerMetrics struct {
	Kind    string          `json:"kind"`
	Tier    int             `json:"tier"`
	Metrics json.RawMessage `json:"metrics"`
}

// Cut is the line a Writer ends a file with when writing it failed: after the file's last whole
// line (or the last whole line it could make room after), the error, and the tier it was
// writing, whose lines end there without a closing line.
type Cut struct {
	Kind  string `json:"kind"`
	Tier  *int   `json:"tier,omitempty"` // the tier being written; nil between tiers
	Error string `json:"error"`
	// Dropped is the number of the tier's last request (or server-metrics) lines removed to make
	// room for this line on a disk that had none.
	Dropped int `json:"dropped,omitempty"`
}

// Why is the cut's account for a person: that the file was cut short by a failed write, not by
// a kill, and what the error was.
func (c *Cut) Why() string {
	s := "cut short by a failed write (" + c.Error + "), not by a kill"
	switch {
	case c.Dropped == 1:
		s += "; its last request line was removed to make room for the note that says so"
	case c.Dropped > 1:
		s += fmt.Sprintf("; its last %d request lines were removed to make room for the note that says so", c.Dropped)
	}
	return s
}

// File is a whole records.jsonl read back.
type File struct {
	Header        Header
	Tiers         []Tier // in file order, each with its closing line when it has one
	Records       []Record
	ServerMetrics map[int]json.RawMessage // by tier
	Warnings      []string                // e.g. a truncated last line that was ignored
	// Cut, when set, is the line the file ends with because writing it failed (Cut.Why).
	Cut *Cut
}

// TierRecords returns the records of tier t, in file order.
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

// ReadHeader reads the header line of a records file (checked as Scan checks it), without
// reading further.
func ReadHeader(path string) (Header, error) {
	var h Header
	fh, err := os.Open(path)
	if err != nil {
		return h, fmt.Errorf("read records: %w", err)
	}
	defer fh.Close()
	_, err = Scan(fh, Visitor{Header: func(x Header) error { h = x; return errHeaderRead }})
	if err != nil && !errors.Is(err, errHeaderRead) {
		return h, fmt.Errorf("read records %s: %w", path, err)
	}
	return h, nil
}

// errHeaderRead stops a scan after the header.
var errHeaderRead = errors.New("header read")

// Read parses records.jsonl from r with Scan's checks. A final line without a newline that
// does not parse is taken as cut off by a crash: it is ignored with a warning.
func Read(r io.Reader) (*File, error) {
	f := &File{}
	var err error
	f.Warnings, err = Scan(r, Visitor{
		Header: func(h Header) error { f.Header = h; return nil },
		Tier:   func(t Tier) error { f.Tiers = append(f.Tiers, t); return nil },
		TierEnd: func(e TierEnd) error {
			for i := range f.Tiers {
				if f.Tiers[i].Tier == e.Tier {
					f.Tiers[i].End = &e
				}
			}
			return nil
		},
		Record: func(r *Record) error { f.Records = append(f.Records, *r); return nil },
		Cut:    func(c Cut) error { f.Cut = &c; return nil },
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
	TierEnd       func(TierEnd) error
	Record        func(*Record) error // the record is the function's to keep
	ServerMetrics func(ServerMetrics) error
	Cut           func(Cut) error // the line a file whose writing failed ends with
	// Seals, when set, recomputes every tier's seal from the file's lines (Seals.State says
	// what it found); nil does not (it hashes every line).
	Seals *Seals
}

// Scan reads records.jsonl from r one line at a time and hands each object to v, holding no more
// than one line in memory (and one bit per request id seen): for files too big to read whole.
// It is the one reader of records files: Read, report, merge and compare all go through it, so
// they accept and refuse the same files. Besides the syntax of every line it checks:
//
//   - line 1 is a header written by loadcurve with a metric-definition version this reader knows;
//   - every tier is declared once, with planned ≥ 0 and a finite rate > 0 (or inf);
//   - every request line belongs to a declared tier, and no request id appears twice in a tier;
//   - a tier's closing line follows its tier line once, and does not plan more than it;
//   - a tier holds no more records than it planned;
//   - nothing follows the line a file whose writing failed ends with (KindCut).
//
// A last line without a newline that does not parse is taken as cut by a crash: it is ignored,
// with a warning. Tiers without a closing line (the run was killed, or an older file) are read
// as they are; the warnings say which.
func Scan(r io.Reader, v Visitor) (warnings []string, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	chk := newChecker()
	lineNo := 0
	for {
		line, err := ReadLine(br)
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
		if cerr := chk.check(obj); cerr != nil {
			return warnings, fmt.Errorf("line %d: %w", lineNo, cerr)
		}
		if obj.cut != nil {
			chk.cutLine = lineNo
		}
		if v.Seals != nil {
			v.Seals.add(obj, line)
		}
		if verr := obj.visit(v); verr != nil {
			return warnings, fmt.Errorf("line %d: %w", lineNo, verr)
		}
	}
	if !chk.sawHeader {
		return warnings, errors.New("no header line: empty, or not a loadcurve records file")
	}
	return append(warnings, chk.finish()...), nil
}

// MaxLineLen bounds a line of a records file, which is read whole: the longest a loadcurve
// writes is a request's line with the gaps of every chunk of the longest response it keeps
// (1,048,576 chunks: about 10 MB, twice that with a reasoning model's answer gaps). A longer
// line is refused as it is read, before it is held whole.
const MaxLineLen = 64 << 20

// maxLineLen is MaxLineLen, lowered by the tests.
var maxLineLen = MaxLineLen

// LineTooLongError is the error of a line longer than MaxLineLen.
type LineTooLongError struct{}

func (*LineTooLongError) Error() string {
	return fmt.Sprintf("longer than %g MiB: not a line loadcurve writes (a hand-made or corrupted file?)", float64(maxLineLen)/(1<<20))
}

// ReadLine reads the next line of br, its newline kept, as bufio.Reader.ReadBytes does, but
// refuses a line longer than MaxLineLen (LineTooLongError) having held no more than that.
func ReadLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > maxLineLen {
			return nil, &LineTooLongError{}
		}
		line = append(line, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// quoteInput quotes a value read from a file for a message, cut to 40 characters: a message
// never carries a file's content at length.
func quoteInput(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) <= max {
		return strconv.Quote(s)
	}
	cut, n := 0, 0
	for cut < len(s) && n < max {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
		n++
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("…(%d bytes)", len(s))
}

// KnownMetricsVersions are the metric-definition versions this reader understands. Version 1
// files have no steady-state keys; they read, and their results are recomputed under the
// current definitions. Version 2 files timed every message when the client read it, and have
// no written_s or first_read_s; they read as they are.
var KnownMetricsVersions = []string{"loadcurve-metrics/1", "loadcurve-metrics/2", MetricsVersion}

// checker holds what Scan's cross-line checks need: per tier its planned count, its record
// count and a bitset of the request ids seen.
type checker struct {
	sawHeader bool
	tiers     map[int]*tierCheck
	order     []int
	cut       *Cut // the file's cut line, once read
	cutLine   int
}

type tierCheck struct {
	planned, records int
	ended            bool
	ids              []uint64 // bitset of request ids
}

func newChecker() *checker { return &checker{tiers: map[int]*tierCheck{}} }

func (c *checker) check(o object) error {
	if c.cut != nil {
		return fmt.Errorf("a line after the line %d that ends the file (%s)", c.cutLine, c.cut.Why())
	}
	switch {
	case o.header != nil:
		h := o.header
		if h.Tool != "" && h.Tool != "loadcurve" {
			return fmt.Errorf("header: tool %s: not a loadcurve records file", quoteInput(h.Tool))
		}
		if h.MetricsVersion != "" && !slices.Contains(KnownMetricsVersions, h.MetricsVersion) {
			return fmt.Errorf("header: metric-definition version %s is not one this loadcurve knows (%s): read it with the version that wrote it",
				quoteInput(h.MetricsVersion), strings.Join(KnownMetricsVersions, ", "))
		}
		c.sawHeader = true
	case o.tier != nil:
		t := o.tier
		if _, dup := c.tiers[t.Tier]; dup {
			return fmt.Errorf("tier %d is declared twice", t.Tier)
		}
		switch r := float64(t.RequestRate); {
		case t.Tier < 0:
			return fmt.Errorf("tier %d: a tier index is ≥ 0", t.Tier)
		case t.Planned < 0:
			return fmt.Errorf("tier %d: planned %d is negative", t.Tier, t.Planned)
		case math.IsNaN(r) || r < 0:
			return fmt.Errorf("tier %d: request rate %v is not a rate (want a number ≥ 0 or \"inf\")", t.Tier, r)
		}
		c.tiers[t.Tier] = &tierCheck{planned: t.Planned}
		c.order = append(c.order, t.Tier)
	case o.end != nil:
		e := o.end
		tc, ok := c.tiers[e.Tier]
		switch {
		case !ok:
			return fmt.Errorf("tier_end of tier %d, which no tier line declared before it", e.Tier)
		case tc.ended:
			return fmt.Errorf("tier %d is closed twice", e.Tier)
		case e.Planned < 0 || e.Planned > tc.planned:
			return fmt.Errorf("tier %d: tier_end plans %d requests, the tier line %d", e.Tier, e.Planned, tc.planned)
		case e.Planned < tc.records:
			return fmt.Errorf("tier %d: tier_end plans %d requests, but %d records came before it", e.Tier, e.Planned, tc.records)
		case !(e.ArrivalsEndS >= 0 && e.ArrivalsEndS <= maxSeconds):
			return fmt.Errorf("tier %d: arrivals_end_s %v is outside [0, %g]", e.Tier, e.ArrivalsEndS, maxSeconds)
		}
		tc.ended, tc.planned = true, e.Planned
	case o.cut != nil:
		c.cut = o.cut
	case o.record != nil:
		r := o.record
		tc, ok := c.tiers[r.Tier]
		if !ok {
			return fmt.Errorf("request %d of tier %d, which no tier line declared before it", r.ID, r.Tier)
		}
		if r.ID < 0 {
			return fmt.Errorf("request id %d is negative", r.ID)
		}
		w, bit := r.ID/64, uint64(1)<<(r.ID%64)
		if w >= len(tc.ids) {
			tc.ids = append(tc.ids, make([]uint64, w+1-len(tc.ids))...)
		}
		if tc.ids[w]&bit != 0 {
			return fmt.Errorf("request %d of tier %d appears twice", r.ID, r.Tier)
		}
		tc.ids[w] |= bit
		tc.records++
		if tc.records > tc.planned {
			return fmt.Errorf("tier %d has more records than the %d it planned", r.Tier, tc.planned)
		}
	}
	return nil
}

// finish returns the warnings about tiers that did not end.
func (c *checker) finish() []string {
	var open []string
	for _, t := range c.order {
		if !c.tiers[t].ended {
			open = append(open, strconv.Itoa(t))
		}
	}
	var out []string
	if c.cut != nil {
		out = append(out, fmt.Sprintf("the file ends at line %d, %s", c.cutLine, c.cut.Why()))
	}
	switch {
	case len(open) == 0:
	case c.cut != nil:
		out = append(out, fmt.Sprintf("tier(s) %s have no closing line: the file was cut short while they ran; they are read as they are", strings.Join(open, ", ")))
	default:
		out = append(out, fmt.Sprintf("tier(s) %s have no closing line: the run was killed during them, or the file is from an older loadcurve; they are read as they are",
			strings.Join(open, ", ")))
	}
	return out
}

// object is one parsed line: exactly one field is set.
type object struct {
	header  *Header
	tier    *Tier
	end     *TierEnd
	record  *Record
	metrics *ServerMetrics
	cut     *Cut
}

func (o object) visit(v Visitor) error {
	switch {
	case o.header != nil && v.Header != nil:
		return v.Header(*o.header)
	case o.tier != nil && v.Tier != nil:
		return v.Tier(*o.tier)
	case o.end != nil && v.TierEnd != nil:
		return v.TierEnd(*o.end)
	case o.record != nil && v.Record != nil:
		return v.Record(o.record)
	case o.metrics != nil && v.ServerMetrics != nil:
		return v.ServerMetrics(*o.metrics)
	case o.cut != nil && v.Cut != nil:
		return v.Cut(*o.cut)
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
		r.cleanText()
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
		h.cleanText()
		return object{header: &h}, nil
	case probe.Kind == KindTier:
		var t Tier
		if err := json.Unmarshal(line, &t); err != nil {
			return object{}, fmt.Errorf("line %d: tier: %w", n, err)
		}
		return object{tier: &t}, nil
	case probe.Kind == KindTierEnd:
		var e TierEnd
		if err := json.Unmarshal(line, &e); err != nil {
			return object{}, fmt.Errorf("line %d: tier_end: %w", n, err)
		}
		return object{end: &e}, nil
	case probe.Kind == KindServerMetrics:
		var m ServerMetrics
		if err := json.Unmarshal(line, &m); err != nil {
			return object{}, fmt.Errorf("line %d: server metrics: %w", n, err)
		}
		return object{metrics: &m}, nil
	case probe.Kind == KindCut:
		var c Cut
		if err := json.Unmarshal(line, &c); err != nil {
			return object{}, fmt.Errorf("line %d: cut: %w", n, err)
		}
		c.Error = cleanNote(c.Error)
		return object{cut: &c}, nil
	case probe.Kind == "":
		r := new(Record)
		if err := json.Unmarshal(line, r); err != nil {
			return object{}, fmt.Errorf("line %d: request: %w", n, err)
		}
		r.cleanText()
		return object{record: r}, nil
	default:
		return object{}, fmt.Errorf("line %d: unknown kind %s", n, quoteInput(probe.Kind))
	}
}

// Writer writes records.jsonl through a buffer that is flushed at least every FlushInterval, so a
// crash loses at most that much. It is safe for concurrent use; Write does not wait for the disk
// unless a flush is due.
//
// When a write fails (a full disk, a file-size limit), the Writer stops writing and, in a file it
// opened, cuts what the failed write left of a line and ends the file with a Cut line naming the
// error, so that the file is whole and says it was cut short; on a disk without room for that
// line it removes the open tier's last request lines first (at most 64: their records are in
// memory, and the tier, without its closing line, is run again by a resume), or, when even
// that does not make room, leaves the file ending with its last whole line.
type Writer struct {
	mu  sync.Mutex
	out io.Writer
	c   io.Closer
	// file is the file the Writer opened (Create, Append), cut back when a write fails; nil
	// otherwise.
	file cuttable
	pend []byte    // whole lines not yet written
	ends []lineEnd // where each line of pend ends
	at   int64     // the offset in out of pend[0]
	// whole is the end of the last line written whole; recent the ends of the open tier's request
	// and server-metrics lines written since floor (the end of the line before the first of
	// them), newest last: where a cut may go back to, dropping those lines.
	whole, floor int64
	recent       []int64
	openTier     int // the tier whose tier line was written and whose closing line was not; -1: none
	buf          []byte
	interval     time.Duration
	last         time.Time
	err          error
	stop         chan struct{} // closes the background flusher, when one runs
	done         chan struct{}
	// seal follows the lines of every tier whose tier line this Writer wrote, for its closing
	// line's Seal.
	seal sealer
}

// cuttable is what a Writer needs of the file it opened to cut it back: an *os.File's methods
// (a test's file that fills up, too).
type cuttable interface {
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
	Write(p []byte) (int, error)
}

// lineEnd is the end of a pending line in Writer.pend, and whether a cut may drop it (a line of
// the open tier that is not its tier line).
type lineEnd struct {
	end       int
	droppable bool
}

const (
	// flushSize is how much is buffered before a write, at the latest.
	flushSize = 1 << 16
	// maxDropped bounds the lines a cut drops to make room for its note.
	maxDropped = 64
)

// DefaultFlushInterval bounds what a crash can lose.
const DefaultFlushInterval = time.Second

// Create makes path and writes the header line. A header that cannot be written leaves no file.
func Create(path string, h Header) (*Writer, error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create records: %w", err)
	}
	w := NewWriter(fh, DefaultFlushInterval)
	w.c, w.file = fh, fh
	if err := w.WriteHeader(h); err != nil {
		fh.Close()
		os.Remove(path)
		return nil, err
	}
	w.AutoFlush()
	return w, nil
}

// Append opens the records file at path to append tiers to it (a resumed sweep's): the tiers it
// writes are sealed under the header the file holds (Seal.Header), as if the Writer had written
// it. The Writer closes the file.
func Append(path string) (*Writer, error) {
	header, err := firstLine(path)
	if err != nil {
		return nil, err
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("append to records: %w", err)
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("append to records: %w", err)
	}
	w := NewWriter(fh, DefaultFlushInterval)
	w.c, w.file = fh, fh
	w.at, w.whole, w.floor = st.Size(), st.Size(), st.Size()
	w.seal.header = lineDigest(header)
	w.AutoFlush()
	return w, nil
}

// firstLine reads the header line of the file at path, trimmed as Scan trims it.
func firstLine(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("append to records: %w", err)
	}
	defer fh.Close()
	line, err := ReadLine(bufio.NewReaderSize(fh, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("append to records: read the header line of %s: %w", path, err)
	}
	return bytes.TrimSpace(line), nil
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
				if len(w.pend) > 0 && time.Since(w.last) >= w.interval {
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
	return &Writer{out: out, pend: make([]byte, 0, flushSize), interval: interval, last: time.Now(), openTier: -1}
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
	return w.writeObject(h, -1, func(line []byte) { w.seal.header = lineDigest(line) })
}

// WriteServerMetrics writes a tier's server-side metrics (any JSON-encodable value) and flushes.
func (w *Writer) WriteServerMetrics(tier int, metrics any) error {
	b, err := json.Marshal(metrics)
	if err != nil {
		return fmt.Errorf("encode server metrics: %w", err)
	}
	return w.writeMetrics(ServerMetrics{Kind: KindServerMetrics, Tier: tier, Metrics: b})
}

func (w *Writer) writeMetrics(m ServerMetrics) error {
	return w.writeObject(m, m.Tier, func(line []byte) {
		if sum := w.seal.of(m.Tier); sum != nil {
			sum.add(line)
		}
	})
}

// WriteTier writes a tier line and flushes. The tier's lines are followed from here on, for
// the seal of its closing line.
func (w *Writer) WriteTier(t Tier) error {
	t.Kind = KindTier
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.writeObjectLocked(t, -1, func(line []byte) { w.seal.open(t.Tier, line) }); err != nil {
		return err
	}
	w.openTier = t.Tier
	return nil
}

// WriteTierEnd writes a tier's closing line and flushes. Its Seal is the Writer's (whatever e
// holds): the count and digest of the tier's lines it wrote and of the header, or none when it
// did not write the tier's tier line.
func (w *Writer) WriteTierEnd(e TierEnd) error {
	e.Kind = KindTierEnd
	w.mu.Lock()
	defer w.mu.Unlock()
	e.Seal = w.seal.close(e.Tier)
	if err := w.writeObjectLocked(e, -1, nil); err != nil {
		return err
	}
	if w.openTier == e.Tier {
		w.openTier = -1
	}
	return nil
}

// writeObject writes v as a line and flushes; seal, when set, is given the line's bytes first.
// tier is the tier v is a droppable line of (server metrics), -1 for none.
func (w *Writer) writeObject(v any, tier int, seal func(line []byte)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writeObjectLocked(v, tier, seal)
}

func (w *Writer) writeObjectLocked(v any, tier int, seal func(line []byte)) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode records line: %w", err)
	}
	if w.err != nil {
		return w.err
	}
	if seal != nil {
		seal(b)
	}
	w.pend = append(append(w.pend, b...), '\n')
	w.ends = append(w.ends, lineEnd{end: len(w.pend), droppable: tier >= 0 && tier == w.openTier})
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
	if sum := w.seal.of(r.Tier); sum != nil {
		sum.add(w.buf)
		sum.records++
	}
	w.pend = append(append(w.pend, w.buf...), '\n')
	w.ends = append(w.ends, lineEnd{end: len(w.pend), droppable: r.Tier == w.openTier})
	if len(w.pend) >= flushSize || time.Since(w.last) >= w.interval {
		w.flushLocked()
	}
	return w.err
}

// flushLocked writes the pending lines; on a failure it cuts the file back (cutBack).
func (w *Writer) flushLocked() {
	w.last = time.Now()
	if w.err != nil || len(w.pend) == 0 {
		return
	}
	n, err := w.out.Write(w.pend)
	if err == nil && n < len(w.pend) {
		err = io.ErrShortWrite
	}
	for _, e := range w.ends {
		if e.end > n {
			break
		}
		w.wrote(w.at+int64(e.end), e.droppable)
	}
	w.at += int64(n)
	w.pend, w.ends = w.pend[:0], w.ends[:0]
	if err != nil {
		w.err = fmt.Errorf("write records: %w", err)
		w.cutBack()
	}
}

// wrote notes a line written whole, ending at end.
func (w *Writer) wrote(end int64, droppable bool) {
	switch {
	case !droppable:
		w.floor, w.recent = end, w.recent[:0]
	case len(w.recent) == maxDropped:
		w.floor = w.recent[0]
		w.recent = append(w.recent[:0], w.recent[1:]...)
		fallthrough
	default:
		w.recent = append(w.recent, end)
	}
	w.whole = end
}

// cutBack ends a file the Writer opened, after its writing failed (w.err), with a Cut line after
// its last whole line, or, when the disk has no room for it there, after an earlier line of the
// open tier; failing that, with its last whole line.
func (w *Writer) cutBack() {
	if w.file == nil {
		return
	}
	note := Cut{Kind: KindCut, Error: BoundText(w.err.Error(), MaxNoteLen)}
	if w.openTier >= 0 {
		t := w.openTier
		note.Tier = &t
	}
	at := []int64{w.whole}
	for i := len(w.recent) - 1; i >= 0; i-- {
		if w.recent[i] < w.whole {
			at = append(at, w.recent[i])
		}
	}
	if len(w.recent) > 0 && w.floor < at[len(at)-1] {
		at = append(at, w.floor)
	}
	for dropped, end := range at {
		note.Dropped = dropped
		b, _ := json.Marshal(note)
		if w.writeAt(end, append(b, '\n')) {
			return
		}
	}
	_ = w.file.Truncate(w.whole) // no room even for the note: the file ends whole
}

// writeAt cuts the file at end and writes line there; false when it could not.
func (w *Writer) writeAt(end int64, line []byte) bool {
	if w.file.Truncate(end) != nil {
		return false
	}
	if _, err := w.file.Seek(end, io.SeekStart); err != nil {
		return false
	}
	n, err := w.file.Write(line)
	return err == nil && n == len(line)
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

// WriteFile writes f as records.jsonl at path: the header, then each tier line followed by that
// tier's records in their order in f, its server metrics and its closing line. It writes a
// temporary file next to path and renames it, so an existing file is replaced only by a complete
// one.
func WriteFile(path string, f *File) (err error) {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	w, err := Create(tmp, f.Header)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			w.Close()
			os.Remove(tmp)
		}
	}()
	byTier := map[int][]int{}
	for i := range f.Records {
		byTier[f.Records[i].Tier] = append(byTier[f.Records[i].Tier], i)
	}
	for _, t := range f.Tiers {
		if err := w.WriteTier(t); err != nil {
			return fmt.Errorf("write records %s: %w", path, err)
		}
		for _, i := range byTier[t.Tier] {
			if err := w.Write(&f.Records[i]); err != nil {
				return fmt.Errorf("write records %s: %w", path, err)
			}
		}
		if m, ok := f.ServerMetrics[t.Tier]; ok {
			if err := w.writeMetrics(ServerMetrics{Kind: KindServerMetrics, Tier: t.Tier, Metrics: m}); err != nil {
				return fmt.Errorf("write records %s: %w", path, err)
			}
		}
		if t.End != nil {
			if err := w.WriteTierEnd(*t.End); err != nil {
				return fmt.Errorf("write records %s: %w", path, err)
			}
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write records %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write records: %w", err)
	}
	return nil
}
