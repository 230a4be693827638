package shard

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Reasons Merge refuses, for errors.Is. A refusal joins one error per problem found.
var (
	// ErrNotShard: a file whose header names no shard (or an unreadable one).
	ErrNotShard = errors.New("not a shard")
	// ErrMixedRuns: files whose run identity (header or tier lines, or k) differs.
	ErrMixedRuns = errors.New("shards of different runs")
	// ErrDuplicateShard: the same shard index given more than once.
	ErrDuplicateShard = errors.New("duplicate shard")
	// ErrMissingShard: a shard index (or a shard's tier) that is absent.
	ErrMissingShard = errors.New("missing shard")
	// ErrInconsistent: records or planned counts that contradict the shard they are in.
	ErrInconsistent = errors.New("inconsistent shard")
)

// DefaultMaxAnchorSpread is the spread of the shards' wall-clock anchors of a tier above which
// the merge report warns: beyond it, the shards' T0s may be that far apart, and the merged
// schedule is uncertain by as much.
const DefaultMaxAnchorSpread = 10 * time.Millisecond

// maxExamples bounds how many bad records of one kind are named per file.
const maxExamples = 3

// Input is one shard's records file and the name used for it in messages (usually its path).
type Input struct {
	Name string
	File *records.File
}

// Options tune the checks of the merge report. Zero values mean the defaults.
type Options struct {
	// MaxAnchorSpread: warn when a tier's anchors spread more (default DefaultMaxAnchorSpread).
	MaxAnchorSpread time.Duration
	// MaxScheduleLag: a shard whose schedule-lag p99 in a tier exceeds it was client-bound there
	// (default measure.DefaultMaxScheduleLag, the run's own default).
	MaxScheduleLag time.Duration
}

// MergeReport describes a merge: which file was which shard, and per tier what merging cannot
// repair but can show.
type MergeReport struct {
	Count    int           `json:"shard_count"`
	Shards   []ShardSource `json:"shards"` // by index
	Tiers    []TierReport  `json:"tiers"`
	Warnings []string      `json:"warnings,omitempty"`
	// MaxAnchorSpreadMs and MaxScheduleLagMs are the thresholds the flags were set against.
	MaxAnchorSpreadMs float64 `json:"max_anchor_spread_ms"`
	MaxScheduleLagMs  float64 `json:"max_schedule_lag_ms"`
}

// ShardSource is one merged file.
type ShardSource struct {
	Shard string `json:"shard"` // "i/k"
	Name  string `json:"name"`
}

// TierReport is one merged tier.
type TierReport struct {
	Tier    int         `json:"tier"`
	Arrival string      `json:"arrival"`
	Planned int         `json:"planned"` // global: the sum of the shards' planned counts
	Records int         `json:"records"`
	Shards  []ShardTier `json:"shards"`
	// AnchorSpreadMs is max − min of the shards' wall-clock anchors (tier start_wall, each read
	// on its own host): start jitter and drift between the shards' tiers, a lower bound on the
	// uncertainty of every cross-shard time. A constant offset between the hosts' clocks does not
	// show in it (see the package documentation). Unknown (NaN) when some shard has no anchor.
	AnchorSpreadMs Millis `json:"anchor_spread_ms"`
	ClockWarning   bool   `json:"clock_warning,omitempty"` // AnchorSpreadMs above the limit
}

// ShardTier is one shard's part of one tier.
type ShardTier struct {
	Shard   string `json:"shard"`
	Planned int    `json:"planned"`
	Records int    `json:"records"`
	OK      int    `json:"ok"`
	Failed  int    `json:"failed"`   // every outcome but ok
	HTTP429 int    `json:"http_429"` // "too many requests": a gateway or server limit
	// AnchorOffsetMs is this shard's anchor minus the earliest anchor of the tier.
	AnchorOffsetMs Millis `json:"anchor_offset_ms"`
	// ScheduleLagP99Ms is the p99 of dispatched − planned over this shard's dispatched requests
	// (unknown when none was dispatched).
	ScheduleLagP99Ms Millis `json:"schedule_lag_p99_ms"`
	// MedianTTFTMs is the median TTFT of this shard's ok requests (unknown when none).
	MedianTTFTMs Millis `json:"median_ttft_ms"`
	// ClientBound: this shard's own schedule-lag p99 exceeded the limit in this tier.
	ClientBound bool `json:"client_bound,omitempty"`
	// FailureOutlier: this shard fails more often than the other shards together, by more than
	// 4 standard errors (see MergeInputs).
	FailureOutlier bool `json:"failure_outlier,omitempty"`
}

// Merge joins the shard files of one run, naming them "#1", "#2", ... in messages. See
// MergeInputs.
func Merge(files []*records.File) (*records.File, MergeReport, error) {
	in := make([]Input, len(files))
	for i, f := range files {
		in[i] = Input{Name: "#" + strconv.Itoa(i+1), File: f}
	}
	return MergeInputs(in, Options{})
}

// MergeInputs checks that the inputs are exactly the shards 0..k−1 of one run and joins them into
// one records file, or refuses with every problem found (each wrapping ErrNotShard,
// ErrMixedRuns, ErrDuplicateShard, ErrMissingShard or ErrInconsistent, and naming the files).
//
// Same run means: equal headers in every identity field (tool version, metric-definition version,
// command, target, sim profile, endpoint, model, workload and its fingerprint, arrival, seed,
// max concurrency, cache policy, extra body, timeout), the same k, and the same tiers (index,
// arrival, rate, burstiness, seed, duration, request-set fingerprint). A shard's tier line plans
// the shard's own count ([Spec.OwnedCount]); the merged tier plans their sum n, and every
// shard's count must be what a global set of n gives it. Every record must sit in the shard that
// owns its id, with id < n, once.
//
// The merged file has the header of shard 0 with Shard "", the earliest start_wall of the shards,
// and max_concurrency k·C when each shard had the cap C (k separate gates of C, not one of k·C).
// Its tiers are the shards' tiers with the global planned count and the earliest anchor; each
// tier's records are sorted by planned offset, then id. Records keep their "shard" field.
//
// The report flags, per tier: an anchor spread above Options.MaxAnchorSpread; a shard whose
// schedule-lag p99 exceeds Options.MaxScheduleLag (its own client was the bottleneck); a shard
// that fails more often than the other shards together by more than 4 standard errors (a
// screening flag, see flagFailureOutliers: under one common failure probability it fires with
// probability about 3e-5 per shard and tier); and shards with fewer records than planned
// (interrupted).
func MergeInputs(in []Input, opts Options) (*records.File, MergeReport, error) {
	if opts.MaxAnchorSpread <= 0 {
		opts.MaxAnchorSpread = DefaultMaxAnchorSpread
	}
	if opts.MaxScheduleLag <= 0 {
		opts.MaxScheduleLag = measure.DefaultMaxScheduleLag
	}
	m := &merger{in: in, opts: opts}
	if err := m.check(); err != nil {
		return nil, MergeReport{}, fmt.Errorf("refusing to merge %d files:\n%w", len(in), err)
	}
	return m.merge(), m.report(), nil
}

type merger struct {
	in    []Input
	opts  Options
	specs []Spec // per input
	k     int
	order []int // input positions by shard index (valid once the shard set checks pass)
	// planned[t] is the global planned count of tier t.
	planned map[int]int
	errs    []error
}

func (m *merger) fail(kind error, format string, args ...any) {
	m.errs = append(m.errs, fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, args...)))
}

func (m *merger) check() error {
	if len(m.in) == 0 {
		return fmt.Errorf("%w: no shard files given", ErrMissingShard)
	}
	for _, in := range m.in {
		if in.File == nil {
			return fmt.Errorf("%s: no records file", in.Name)
		}
	}
	setOK := m.checkShardSet()
	m.checkHeaders()
	tiersOK := m.checkTiers()
	if setOK && tiersOK {
		m.checkPlanned()
		m.checkRecords()
	}
	return errors.Join(m.errs...)
}

// checkShardSet: every file is a shard, one k, each index once, none missing.
func (m *merger) checkShardSet() bool {
	m.specs = make([]Spec, len(m.in))
	ok := true
	byK := newGroups()
	for i, in := range m.in {
		if in.File.Header.Shard == "" {
			m.fail(ErrNotShard, "%s: its header names no shard: merge joins the files of one run made with --shard i/k", in.Name)
			ok = false
			continue
		}
		sp, err := parseHeader(in.File.Header.Shard)
		if err != nil {
			m.fail(ErrNotShard, "%s: header shard %v", in.Name, err)
			ok = false
			continue
		}
		m.specs[i] = sp
		byK.add(strconv.Itoa(sp.Count), in.Name)
	}
	if byK.len() > 1 {
		m.fail(ErrMixedRuns, "the shard count k differs: %s", byK.describe("k="))
		return false
	}
	if !ok {
		return false
	}
	m.k = m.specs[0].Count
	where := make([][]string, m.k)
	for i, sp := range m.specs {
		where[sp.Index] = append(where[sp.Index], m.in[i].Name)
	}
	var missing, present []string
	for idx, names := range where {
		sp := Spec{Index: idx, Count: m.k}
		switch len(names) {
		case 0:
			missing = append(missing, sp.String())
		case 1:
			present = append(present, fmt.Sprintf("%s from %s", sp, names[0]))
		default:
			m.fail(ErrDuplicateShard, "shard %s is given %d times: %s", sp, len(names), strings.Join(names, ", "))
			ok = false
		}
	}
	if len(missing) > 0 {
		have := "none"
		if len(present) > 0 {
			have = strings.Join(present, ", ")
		}
		noun := "shard"
		if len(missing) > 1 {
			noun = "shards"
		}
		m.fail(ErrMissingShard, "%s %s of %d missing (have %s)", noun, strings.Join(missing, ", "), m.k, have)
		ok = false
	}
	if ok {
		m.order = make([]int, m.k)
		for i, sp := range m.specs {
			m.order[sp.Index] = i
		}
	}
	return ok
}

// headerFields are the identity fields of a header: equal in every shard of one run.
var headerFields = []struct {
	name string
	get  func(*records.Header) string
}{
	{"tool version", func(h *records.Header) string { return h.Tool + " " + h.Version }},
	{"metric-definition version", func(h *records.Header) string { return h.MetricsVersion }},
	{"command", func(h *records.Header) string { return string(h.Command) }},
	{"target", func(h *records.Header) string { return h.Target }},
	{"sim profile", func(h *records.Header) string { return h.Sim }},
	{"endpoint", func(h *records.Header) string { return h.Endpoint }},
	{"model", func(h *records.Header) string { return h.Model }},
	{"workload", func(h *records.Header) string { return h.Workload }},
	{"workload fingerprint", func(h *records.Header) string { return h.WorkloadFingerprint }},
	{"arrival", func(h *records.Header) string { return h.Arrival }},
	{"seed", func(h *records.Header) string { return strconv.FormatInt(h.Seed, 10) }},
	{"max concurrency", func(h *records.Header) string { return strconv.Itoa(h.MaxConcurrency) }},
	{"cache policy", func(h *records.Header) string { return h.CachePolicy }},
	{"extra body", func(h *records.Header) string { return string(h.ExtraBody) }},
	{"timeout", func(h *records.Header) string { return strconv.FormatFloat(h.TimeoutS, 'g', -1, 64) + " s" }},
}

func (m *merger) checkHeaders() {
	for _, f := range headerFields {
		g := newGroups()
		for _, in := range m.in {
			g.add(f.get(&in.File.Header), in.Name)
		}
		if g.len() > 1 {
			m.fail(ErrMixedRuns, "%s differs: %s", f.name, g.describe(""))
		}
	}
}

// tierFields are the identity fields of a tier line.
var tierFields = []struct {
	name string
	get  func(*records.Tier) string
}{
	{"arrival", func(t *records.Tier) string { return t.Arrival }},
	{"request rate", func(t *records.Tier) string { return rateString(t.RequestRate) }},
	{"burstiness", func(t *records.Tier) string { return rateString(t.Burstiness) }},
	{"seed", func(t *records.Tier) string { return strconv.FormatInt(t.Seed, 10) }},
	{"duration", func(t *records.Tier) string { return strconv.FormatFloat(t.DurationS, 'g', -1, 64) + " s" }},
	{"request-set fingerprint", func(t *records.Tier) string { return t.WorkloadFingerprint }},
}

func rateString(r records.Rate) string {
	if math.IsInf(float64(r), 1) {
		return "inf"
	}
	return strconv.FormatFloat(float64(r), 'g', -1, 64)
}

// tierLine returns the tier line of tier t in f.
func tierLine(f *records.File, t int) *records.Tier {
	for i := range f.Tiers {
		if f.Tiers[i].Tier == t {
			return &f.Tiers[i]
		}
	}
	return nil
}

// checkTiers: the same tier lines in every file.
func (m *merger) checkTiers() bool {
	ok := true
	var all []int
	for _, in := range m.in {
		seen := map[int]bool{}
		for _, t := range in.File.Tiers {
			if seen[t.Tier] {
				m.fail(ErrInconsistent, "%s has two tier lines for tier %d", in.Name, t.Tier)
				ok = false
			}
			seen[t.Tier] = true
			if !slices.Contains(all, t.Tier) {
				all = append(all, t.Tier)
			}
		}
	}
	slices.Sort(all)
	if len(all) == 0 {
		m.fail(ErrMissingShard, "no file has a tier line: there is no measurement to merge")
		return false
	}
	for _, t := range all {
		var have, lack []string
		for i, in := range m.in {
			name := m.label(i)
			if tierLine(in.File, t) == nil {
				lack = append(lack, name)
			} else {
				have = append(have, name)
			}
		}
		if len(lack) > 0 {
			m.fail(ErrMissingShard, "tier %d is missing from %s (present in %s): every shard must run every tier; was it interrupted?",
				t, strings.Join(lack, ", "), orNone(have))
			ok = false
			continue
		}
		for _, f := range tierFields {
			g := newGroups()
			for _, in := range m.in {
				g.add(f.get(tierLine(in.File, t)), in.Name)
			}
			if g.len() > 1 {
				m.fail(ErrMixedRuns, "tier %d %s differs: %s", t, f.name, g.describe(""))
				ok = false
			}
		}
	}
	return ok
}

// label names input i with its shard when known.
func (m *merger) label(i int) string {
	if m.specs != nil && m.specs[i].Sharded() {
		return fmt.Sprintf("%s (shard %s)", m.in[i].Name, m.specs[i])
	}
	return m.in[i].Name
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// checkPlanned: the shards' planned counts partition one global count.
func (m *merger) checkPlanned() {
	m.planned = map[int]int{}
	for _, t := range m.in[0].File.Tiers {
		n := 0
		for _, in := range m.in {
			n += tierLine(in.File, t.Tier).Planned
		}
		m.planned[t.Tier] = n
		for i, in := range m.in {
			got, want := tierLine(in.File, t.Tier).Planned, m.specs[i].OwnedCount(n)
			if got != want {
				m.fail(ErrInconsistent, "tier %d: %s plans %d requests, but a global set of %d (the sum over the shards) gives shard %s %d: "+
					"the shards did not compute the same schedule, or a tier line holds the global count instead of the shard's",
					t.Tier, m.label(i), got, n, m.specs[i], want)
			}
		}
	}
}

// checkRecords: every record in its tier, its shard, below the global count, once.
func (m *merger) checkRecords() {
	type key struct{ tier, id int }
	seen := map[key]string{}
	for i, in := range m.in {
		sp := m.specs[i]
		var bad []string
		nBad := 0
		note := func(format string, args ...any) {
			nBad++
			if len(bad) < maxExamples {
				bad = append(bad, fmt.Sprintf(format, args...))
			}
		}
		for _, r := range in.File.Records {
			n, declared := m.planned[r.Tier]
			switch {
			case !declared:
				note("id %d is in tier %d, which has no tier line", r.ID, r.Tier)
			case r.Shard != sp.Index:
				note("id %d (tier %d) says shard %d", r.ID, r.Tier, r.Shard)
			case !sp.Owns(r.ID):
				note("id %d (tier %d) belongs to shard %d/%d", r.ID, r.Tier, r.ID%sp.Count, sp.Count)
			case r.ID >= n:
				note("id %d (tier %d) is beyond the tier's %d planned requests", r.ID, r.Tier, n)
			default:
				k := key{r.Tier, r.ID}
				if prev, dup := seen[k]; dup {
					note("id %d (tier %d) appears twice (also in %s)", r.ID, r.Tier, prev)
				}
				seen[k] = in.Name
			}
		}
		if nBad > 0 {
			more := ""
			if nBad > len(bad) {
				more = fmt.Sprintf(", and %d more", nBad-len(bad))
			}
			m.fail(ErrInconsistent, "%s: %d record(s) do not fit shard %s: %s%s", m.label(i), nBad, sp, strings.Join(bad, "; "), more)
		}
	}
}

// merge builds the merged file; check must have passed.
func (m *merger) merge() *records.File {
	first := m.in[m.order[0]].File
	h := first.Header
	h.Shard = ""
	h.StartWall = earliest(m.in, func(f *records.File) time.Time { return f.Header.StartWall })
	if h.MaxConcurrency > 0 {
		h.MaxConcurrency *= m.k
	}
	out := &records.File{Header: h}
	total := 0
	for _, in := range m.in {
		total += len(in.File.Records)
	}
	out.Records = make([]records.Record, 0, total)
	for _, t := range first.Tiers {
		tl := t
		tl.Planned = m.planned[t.Tier]
		tl.StartWall = earliest(m.in, func(f *records.File) time.Time { return tierLine(f, t.Tier).StartWall })
		tl.End = m.mergedEnd(t.Tier)
		out.Tiers = append(out.Tiers, tl)
		start := len(out.Records)
		for _, in := range m.in {
			for _, r := range in.File.Records {
				if r.Tier == t.Tier {
					out.Records = append(out.Records, r)
				}
			}
		}
		slices.SortFunc(out.Records[start:], func(a, b records.Record) int {
			return cmp.Or(cmp.Compare(a.Planned, b.Planned), cmp.Compare(a.ID, b.ID))
		})
	}
	return out
}

// mergedEnd closes a merged tier: every shard's planned count added up, the latest end of the
// arrival phase, and the gravest reason (an interruption of any shard interrupts the tier); nil
// when a shard's tier has no closing line (it was killed, or the file is older).
func (m *merger) mergedEnd(tier int) *records.TierEnd {
	end := &records.TierEnd{Kind: records.KindTierEnd, Tier: tier, Reason: records.EndedSchedule}
	for _, in := range m.in {
		e := tierLine(in.File, tier).End
		if e == nil {
			return nil
		}
		end.Planned += e.Planned
		end.ArrivalsEndS = max(end.ArrivalsEndS, e.ArrivalsEndS)
		end.RateLimited = end.RateLimited || e.RateLimited
		if e.Reason != records.EndedSchedule && end.Reason != records.EndedInterrupted {
			end.Reason = e.Reason
		}
	}
	return end
}

// earliest returns the earliest non-zero time of the inputs, or the zero time.
func earliest(in []Input, get func(*records.File) time.Time) time.Time {
	var first time.Time
	for _, x := range in {
		t := get(x.File)
		if !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first
}

// report builds the merge report; check must have passed.
func (m *merger) report() MergeReport {
	rep := MergeReport{Count: m.k, MaxAnchorSpreadMs: msf(m.opts.MaxAnchorSpread), MaxScheduleLagMs: msf(m.opts.MaxScheduleLag)}
	for _, i := range m.order {
		rep.Shards = append(rep.Shards, ShardSource{Shard: m.specs[i].String(), Name: m.in[i].Name})
		for _, w := range m.in[i].File.Warnings {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %s", m.label(i), w))
		}
	}
	for _, t := range m.in[m.order[0]].File.Tiers {
		tr := TierReport{Tier: t.Tier, Arrival: t.Arrival, Planned: m.planned[t.Tier]}
		anchor0 := earliest(m.in, func(f *records.File) time.Time { return tierLine(f, t.Tier).StartWall })
		var latest time.Time
		noAnchor := false
		totalFailed := 0
		for _, i := range m.order {
			st := m.shardTier(i, t.Tier)
			a := tierLine(m.in[i].File, t.Tier).StartWall
			if a.IsZero() {
				noAnchor = true
				st.AnchorOffsetMs = Millis(math.NaN())
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("tier %d: %s has no wall-clock anchor (start_wall): the clock offset between shards is unknown", t.Tier, m.label(i)))
			} else {
				st.AnchorOffsetMs = Millis(msf(a.Sub(anchor0)))
				if a.After(latest) {
					latest = a
				}
			}
			if st.Records < st.Planned {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("tier %d: %s has %d records for %d planned requests: it was interrupted, and the merged tier is incomplete",
					t.Tier, m.label(i), st.Records, st.Planned))
			}
			if st.ClientBound {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("tier %d: shard %s was CLIENT-BOUND: its schedule-lag p99 is %.3g ms (limit %.3g ms); its machine, not the server, shaped part of the load",
					t.Tier, st.Shard, st.ScheduleLagP99Ms, rep.MaxScheduleLagMs))
			}
			tr.Records += st.Records
			totalFailed += st.Failed
			tr.Shards = append(tr.Shards, st)
		}
		tr.AnchorSpreadMs = Millis(math.NaN())
		if !noAnchor {
			tr.AnchorSpreadMs = Millis(msf(latest.Sub(anchor0)))
			if latest.Sub(anchor0) > m.opts.MaxAnchorSpread {
				tr.ClockWarning = true
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("tier %d: the shards' wall-clock anchors spread %.3g ms (limit %.3g ms): their T0s, and so every cross-shard time, are at least that uncertain; check how late each shard started (and NTP on the client machines, whose offsets do not show here)",
					t.Tier, tr.AnchorSpreadMs, rep.MaxAnchorSpreadMs))
			}
		}
		flagFailureOutliers(tr.Shards, tr.Records, totalFailed)
		for _, st := range tr.Shards {
			if st.FailureOutlier {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("tier %d: shard %s failed %d of %d requests, the other shards %d of %d: a limit per client (connections, rate, source address) at a gateway would do this",
					t.Tier, st.Shard, st.Failed, st.Records, totalFailed-st.Failed, tr.Records-st.Records))
			}
		}
		rep.Tiers = append(rep.Tiers, tr)
	}
	return rep
}

// shardTier summarises input i's records of tier t.
func (m *merger) shardTier(i, t int) ShardTier {
	st := ShardTier{Shard: m.specs[i].String(), Planned: tierLine(m.in[i].File, t).Planned,
		ScheduleLagP99Ms: Millis(math.NaN()), MedianTTFTMs: Millis(math.NaN())}
	var lags, ttfts []float64
	for k := range m.in[i].File.Records {
		r := &m.in[i].File.Records[k]
		if r.Tier != t {
			continue
		}
		st.Records++
		if r.Outcome == records.OK {
			st.OK++
			if v, ok := r.TTFT(); ok {
				ttfts = append(ttfts, msf(v))
			}
		} else {
			st.Failed++
		}
		if r.HTTPStatus == 429 {
			st.HTTP429++
		}
		if v, ok := r.ScheduleLag(); ok {
			lags = append(lags, msf(v))
		}
	}
	if len(lags) > 0 {
		slices.Sort(lags)
		st.ScheduleLagP99Ms = Millis(measure.Percentile(lags, 99))
		st.ClientBound = float64(st.ScheduleLagP99Ms) > msf(m.opts.MaxScheduleLag)
	}
	if len(ttfts) > 0 {
		slices.Sort(ttfts)
		st.MedianTTFTMs = Millis(measure.Percentile(ttfts, 50))
	}
	return st
}

// flagFailureOutliers marks shards that fail more often than the other shards of the tier taken
// together, by more than 4 standard errors of a one-sided two-proportion z-test:
// z = (p_i − p_rest) / √(p̂(1−p̂)(1/n_i + 1/n_rest)), p̂ the tier's pooled failure share. Under one
// common failure probability P(z > 4) ≈ 3e-5 per shard and tier (normal approximation). Only the
// upper side is flagged: a shard that a per-client limit throttles fails more, and the others
// then necessarily look better than the rest pool that contains it.
func flagFailureOutliers(shards []ShardTier, n, failed int) {
	if n == 0 || failed == 0 || failed == n || len(shards) < 2 {
		return
	}
	p := float64(failed) / float64(n)
	for i := range shards {
		ni, fi := float64(shards[i].Records), float64(shards[i].Failed)
		nr, fr := float64(n)-ni, float64(failed)-fi
		if ni == 0 || nr == 0 {
			continue
		}
		se := math.Sqrt(p * (1 - p) * (1/ni + 1/nr))
		if se > 0 && (fi/ni-fr/nr)/se > 4 {
			shards[i].FailureOutlier = true
		}
	}
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Millis is a time in milliseconds. NaN means unknown and encodes as JSON null.
type Millis float64

// Known reports whether the value is known (not NaN).
func (v Millis) Known() bool { return !math.IsNaN(float64(v)) }

// MarshalJSON implements json.Marshaler.
func (v Millis) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(v), 'g', -1, 64), nil
}

// groups collects the names of the inputs by value, in first-seen order.
type groups struct {
	values []string
	names  map[string][]string
}

func newGroups() *groups { return &groups{names: map[string][]string{}} }

func (g *groups) add(value, name string) {
	if _, ok := g.names[value]; !ok {
		g.values = append(g.values, value)
	}
	g.names[value] = append(g.names[value], name)
}

func (g *groups) len() int { return len(g.values) }

// describe gives e.g. `"a" in x, y; "b" in z` (prefix+value, unquoted, when prefix is set).
func (g *groups) describe(prefix string) string {
	parts := make([]string, len(g.values))
	for i, v := range g.values {
		shown := strconv.Quote(v)
		if prefix != "" {
			shown = prefix + v
		}
		parts[i] = shown + " in " + strings.Join(g.names[v], ", ")
	}
	return strings.Join(parts, "; ")
}
