package sweep

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Resume is an interrupted sweep's records file, read to be continued (OpenResume). The sweep's
// tiers that finished (a closing line that does not say interrupted) are kept as they are; the
// tier that was running when the sweep stopped, and anything after it, is discarded and run
// again. An Executor given a Resume replays the kept tiers through its own planning, in order,
// instead of running them: every choice it makes after them (the saturation, the shadow queue,
// the search's next rate, the confirmation) is then the one the uninterrupted sweep made, since
// each is a function of the tiers before it.
type Resume struct {
	// Path is the records file.
	Path   string
	Header records.Header
	// Kept are the finished tiers, numbered 0 to len−1 in the order they ran, each with its
	// closing line.
	Kept []records.Tier
	// Server is what the target's metrics endpoint said over the kept tiers.
	Server map[int]json.RawMessage
	// Dropped are the tiers discarded (the interrupted one, with its closing line when it has
	// one); DroppedRecords counts their records.
	Dropped        []records.Tier
	DroppedRecords int
	// Warnings are the reader's (a line cut by a crash, a tier without its closing line).
	Warnings []string
	// Cut is the line the records file ends with when its writing failed (a full disk), nil
	// otherwise.
	Cut *records.Cut

	keepBytes int64 // the length of the file's part that holds the header and the kept tiers
	readSize  int64 // the file's length when it was read
	discarded bool
	// SavedTo names the file the discarded part was moved to (Discard), "" before.
	SavedTo string
}

// ErrNoSweep says that a directory holds no sweep that could be resumed.
var ErrNoSweep = errors.New("no sweep to resume")

// OpenResume reads the records file of an interrupted sweep in dir and says which of its tiers
// are kept. It changes nothing (Discard does).
func OpenResume(dir string) (*Resume, error) {
	path := filepath.Join(dir, result.RecordsName)
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s holds no %s (a sweep writes it when its first tier starts)", ErrNoSweep, dir, result.RecordsName)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer fh.Close()
	r := &Resume{Path: path, Server: map[int]json.RawMessage{}}
	var tiers []records.Tier
	counts := map[int]int{}
	seals := records.NewSeals()
	r.Warnings, err = records.Scan(fh, records.Visitor{
		Seals:  seals,
		Header: func(h records.Header) error { r.Header = h; return nil },
		Tier:   func(t records.Tier) error { tiers = append(tiers, t); return nil },
		TierEnd: func(e records.TierEnd) error {
			for i := range tiers {
				if tiers[i].Tier == e.Tier {
					tiers[i].End = &e
				}
			}
			return nil
		},
		Record:        func(rec *records.Record) error { counts[rec.Tier]++; return nil },
		ServerMetrics: func(m records.ServerMetrics) error { r.Server[m.Tier] = m.Metrics; return nil },
		Cut:           func(c records.Cut) error { r.Cut = &c; return nil },
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNoSweep, path, err)
	}
	if fi, err := fh.Stat(); err == nil {
		r.readSize = fi.Size()
	}
	switch {
	case !madeBySweep(r.Header):
		return nil, fmt.Errorf("%w: %s holds the records of a %s, not of a sweep", ErrNoSweep, path, orWord(string(r.Header.Command), "command of another kind"))
	case r.Header.Shard != "":
		return nil, fmt.Errorf("%s is shard %s of a sharded sweep, whose tiers start at fixed wall-clock times: it cannot be resumed (run the sweep again, every shard with a new --start-at)", path, r.Header.Shard)
	}
	for i, t := range tiers {
		if t.Tier != i {
			return nil, fmt.Errorf("%s: tier line %d is tier %d: a sweep numbers its tiers 0, 1, 2, … in order", path, i+1, t.Tier)
		}
		if len(r.Dropped) == 0 && t.End != nil && t.End.Reason != records.EndedInterrupted {
			r.Kept = append(r.Kept, result.IdentityOf(r.Header, t))
			continue
		}
		r.Dropped = append(r.Dropped, t)
		r.DroppedRecords += counts[t.Tier]
		delete(r.Server, t.Tier)
	}
	if err := r.checkSeals(seals); err != nil {
		return nil, err
	}
	if r.keepBytes, err = keptLength(path, len(r.Kept)); err != nil {
		return nil, err
	}
	return r, nil
}

// checkSeals refuses a kept tier whose lines, or the header, are not the ones it was written
// with (records.Seal: the count of its request lines and the digests of its lines and of the
// header, in its closing line): a resumed sweep replays its kept tiers' records into its
// decisions, so a record deleted, added or changed, or an objective edited in the header,
// would change the decision without a word. Tiers written by an older loadcurve have no seal:
// they are kept unchecked, and a warning says so; a tier without a seal after one with a seal
// lost it to an edit.
func (r *Resume) checkSeals(seals *records.Seals) error {
	var unsealed []int
	sealed := -1
	for _, t := range r.Kept {
		switch st, e := seals.State(t.Tier); st {
		case records.Broken:
			return fmt.Errorf("%s: %w; a resumed sweep keeps its finished tiers only as they were written (restore the file, or start a new sweep)", r.Path, e)
		case records.Whole:
			sealed = t.Tier
		default:
			if sealed >= 0 {
				return fmt.Errorf("%s: tier %d was changed after it finished: its closing line has no seal (the count and digest of its lines), which tier %d's has; a resumed sweep keeps its finished tiers only as they were written", r.Path, t.Tier, sealed)
			}
			unsealed = append(unsealed, t.Tier)
		}
	}
	if n := len(unsealed); n > 0 {
		which := fmt.Sprintf("tier %d was", unsealed[0])
		if n > 1 {
			which = fmt.Sprintf("tiers %d-%d were", unsealed[0], unsealed[n-1])
		}
		r.Warnings = append(r.Warnings, which+" written by an older loadcurve, whose closing lines do not seal the lines they close: an edit of them, or of the header, cannot be detected; they are kept as they are")
	}
	return nil
}

func orWord(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// keptLength is the length of the part of the records file that holds its header and its first
// kept tiers (0 to kept−1): the end of the last line that belongs to one of them. A sweep's
// tiers do not interleave, so everything after it belongs to the discarded tiers (or is a line
// cut by a crash).
func keptLength(path string, kept int) (int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	defer fh.Close()
	br := bufio.NewReaderSize(fh, 1<<16)
	var pos, keep int64
	for {
		line, err := records.ReadLine(br)
		if len(line) > 0 && err == nil {
			var probe struct {
				Kind string `json:"kind"`
				Tier *int   `json:"tier"`
			}
			if jerr := json.Unmarshal(bytes.TrimSpace(line), &probe); jerr != nil {
				return 0, fmt.Errorf("%s: byte %d: %w", path, pos, jerr)
			}
			pos += int64(len(line))
			switch {
			case probe.Kind == records.KindHeader:
				keep = pos
			case probe.Tier != nil && *probe.Tier < kept:
				keep = pos
			case probe.Tier != nil:
				return keep, nil // the first line of a discarded tier
			}
			continue
		}
		if err == io.EOF {
			return keep, nil // a last line without its newline: cut by a crash, never kept
		}
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// Discard removes the discarded tiers from the records file, so that it holds the header and
// the kept tiers, and the resumed sweep's tiers follow them. Nothing is lost: the part removed
// is written first, after a copy of the header, to interrupted_tierN.jsonl (N the first tier
// discarded) beside it, a records file of its own that report reads. It does nothing when
// nothing is to be discarded, or the second time.
func (r *Resume) Discard() error {
	if r.discarded {
		return nil
	}
	fi, err := os.Stat(r.Path)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if fi.Size() > r.keepBytes {
		if fi.Size() != r.readSize {
			// What follows the kept tiers was written since the file was read, by another
			// process (the result directory's lock keeps loadcurve's out): not ours to remove.
			return fmt.Errorf("resume: %s changed from %d to %d bytes since it was read: another process is writing it", r.Path, r.readSize, fi.Size())
		}
		if err := r.saveDiscarded(); err != nil {
			return err
		}
		if err := os.Truncate(r.Path, r.keepBytes); err != nil {
			return fmt.Errorf("resume: remove the interrupted tier from %s: %w", r.Path, err)
		}
	}
	r.discarded = true
	return nil
}

// DiscardedName is the file the part of an interrupted sweep's records that a resume discards is
// kept in (tier is the first discarded tier).
func DiscardedName(tier int) string { return fmt.Sprintf("interrupted_tier%02d.jsonl", tier) }

// saveDiscarded copies the header line and the part of the records file after keepBytes to
// DiscardedName beside it (a temporary file renamed into place).
func (r *Resume) saveDiscarded() error {
	first := len(r.Kept)
	dir := filepath.Dir(r.Path)
	name := DiscardedName(first)
	in, err := os.Open(r.Path)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	defer in.Close()
	header, err := records.ReadLine(bufio.NewReader(in))
	if err != nil {
		return fmt.Errorf("resume: read the header of %s: %w", r.Path, err)
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	out, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("resume: keep the interrupted tier: %w", err)
	}
	_, err = out.Write(header)
	if err == nil {
		_, err = in.Seek(r.keepBytes, io.SeekStart)
	}
	if err == nil {
		_, err = io.Copy(out, in)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("resume: keep the interrupted tier in %s: %w", name, err)
	}
	r.SavedTo = filepath.Join(dir, name)
	return nil
}

// Objectives are the objectives the interrupted sweep's records header states, in their
// canonical form ("ttft:500 tpot:50"); "" when it states none. A resumed sweep measures against
// them: the header states them whole, however they were given.
func (r *Resume) Objectives() string {
	if st := r.Header.Settings; st != nil {
		return st.Objectives
	}
	return ""
}

// Describe says in a line what the resume keeps and what it runs again.
func (r *Resume) Describe() string {
	kept := "no finished tier to keep"
	switch n := len(r.Kept); n {
	case 0:
	case 1:
		kept = "keeping its finished tier 0"
	default:
		kept = fmt.Sprintf("keeping its %d finished tiers 0-%d", n, n-1)
	}
	if len(r.Dropped) == 0 {
		return kept + "; no tier was interrupted"
	}
	d := r.Dropped[0]
	why := "interrupted"
	switch {
	case d.End == nil && r.Cut != nil:
		why = "never closed: the records file was cut short by a failed write"
	case d.End == nil:
		why = "never closed: the sweep was killed"
	}
	return fmt.Sprintf("%s; tier %d (%s, %s, %d records) is discarded and runs again", kept, d.Tier, d.Role, why, r.DroppedRecords)
}

// MismatchError says that a resumed sweep plans a kept tier differently from the way it ran: the
// sweep's settings (or this version's planning) are not the ones of the interrupted sweep, so
// its tiers cannot be continued.
type MismatchError struct {
	Tier int
	What string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("tier %d of the interrupted sweep %s: the sweep's settings are not the ones it ran with", e.Tier, e.What)
}

// keptTier is a kept tier summarised from its records as it was when it ran.
type keptTier struct {
	result     result.TierResult
	ttft, e2el []time.Duration
}

// replaySummaries summarises the kept tiers from the records file in one pass, each through a
// collector as the tier's own was (same records, same order, same options), so each summary is
// the one the interrupted sweep computed.
func (r *Resume) replaySummaries(cfg Config) ([]keptTier, error) {
	cols := make([]*collector, len(r.Kept))
	for i := range cols {
		c, err := newCollector(cfg.Settings.Measure, cfg.Bounded, nil)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	fh, err := os.Open(r.Path)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	defer fh.Close()
	if _, err := records.Scan(fh, records.Visitor{Record: func(rec *records.Record) error {
		if rec.Tier < len(cols) {
			return cols[rec.Tier].Write(rec)
		}
		return nil
	}}); err != nil {
		return nil, fmt.Errorf("resume: read %s: %w", r.Path, err)
	}
	out := make([]keptTier, len(r.Kept))
	for i, t := range r.Kept {
		c := cols[i]
		out[i] = keptTier{result: result.TierResult{Tier: t, Summary: c.summary(t, cfg.Settings.Measure), Server: r.Server[t.Tier]}, ttft: c.ttft, e2el: c.e2el}
	}
	return out, nil
}

// planDiffers says how a kept tier differs from the tier the executor plans in its place ("" when
// they are the same tier): its role, repetition, schedule, seed, cap and shadow queue.
func planDiffers(kept, plan records.Tier) string {
	same := func(a, b records.Rate) bool {
		x, y := float64(a), float64(b)
		return x == y || math.IsNaN(x) && math.IsNaN(y)
	}
	switch {
	case kept.Role != plan.Role:
		return fmt.Sprintf("was a %s, this sweep plans a %s", kept.Role, plan.Role)
	case kept.Repeat != plan.Repeat:
		return fmt.Sprintf("belonged to repetition %d, this sweep plans repetition %d", kept.Repeat, plan.Repeat)
	case kept.Users != plan.Users:
		return fmt.Sprintf("ran %d users, this sweep plans %d", kept.Users, plan.Users)
	case !same(kept.RequestRate, plan.RequestRate):
		return fmt.Sprintf("ran at %s, this sweep plans %s", rateText(float64(kept.RequestRate), "req/s"), rateText(float64(plan.RequestRate), "req/s"))
	case kept.Arrival != plan.Arrival:
		return fmt.Sprintf("ran the schedule %s, this sweep plans %s", kept.Arrival, plan.Arrival)
	case !same(kept.Burstiness, plan.Burstiness):
		return fmt.Sprintf("ran at burstiness %v, this sweep plans %v", kept.Burstiness, plan.Burstiness)
	case kept.MaxConcurrency != plan.MaxConcurrency:
		return fmt.Sprintf("ran with --max-concurrency %d, this sweep plans %d", kept.MaxConcurrency, plan.MaxConcurrency)
	case kept.ThinkS != plan.ThinkS:
		return fmt.Sprintf("ran with a think time of %g s, this sweep plans %g s", kept.ThinkS, plan.ThinkS)
	case kept.Seed != plan.Seed:
		return fmt.Sprintf("ran with the seed %d, this sweep plans %d (--seed)", kept.Seed, plan.Seed)
	case kept.DurationS != plan.DurationS:
		return fmt.Sprintf("ran for %g s, this sweep plans %g s", kept.DurationS, plan.DurationS)
	case kept.MaxDurationS != plan.MaxDurationS:
		return fmt.Sprintf("was capped at %g s, this sweep plans %g s", kept.MaxDurationS, plan.MaxDurationS)
	case (kept.Shadow == nil) != (plan.Shadow == nil) || kept.Shadow != nil && *kept.Shadow != *plan.Shadow:
		return fmt.Sprintf("was controlled with the shadow queue %s, this sweep plans %s", shadowText(kept.Shadow), shadowText(plan.Shadow))
	}
	return ""
}

func shadowText(q *records.ShadowQueue) string {
	if q == nil {
		return "none"
	}
	return fmt.Sprintf("(%d slots, %g s, %g s)", q.Servers, q.ServiceS, q.BudgetS)
}

// madeBySweep reports whether a records file's header says the sweep command wrote it: a
// file of another command, or of none, is not a sweep's to resume.
func madeBySweep(h records.Header) bool { return h.Command == records.CommandSweep }
