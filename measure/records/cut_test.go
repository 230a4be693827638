package records_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

// fullFile is a file on a disk that holds limit bytes of it: a write past the limit writes what
// fits and fails with ENOSPC, as a full disk does; Truncate gives the room back. (The test's
// stand-in for a full disk: no real one is filled.)
type fullFile struct {
	data  []byte
	off   int
	limit int
}

func (f *fullFile) Write(p []byte) (int, error) {
	n := min(len(p), max(f.limit-f.off, 0))
	f.data = append(f.data[:f.off], p[:n]...)
	f.off += n
	if n < len(p) {
		return n, syscall.ENOSPC
	}
	return n, nil
}

func (f *fullFile) Truncate(size int64) error {
	f.data = f.data[:min(int(size), len(f.data))]
	return nil
}

func (f *fullFile) Seek(off int64, whence int) (int64, error) {
	if whence != io.SeekStart {
		return 0, errors.New("only from the start")
	}
	f.off = int(off)
	return off, nil
}

// TestAFullDiskLeavesAWholeFileThatSaysSo: a sweep's records written to a disk that fills up
// at four places. Whatever the place, the file reads (every line whole, the finished tier still
// sealed), holds the records written before the failure, less any the cut removed to make room
// for its note, and, where there was room for it, ends with the Cut line that names the error,
// so that a reader says the file was cut short by a failed write, not that the run was killed.
func TestAFullDiskLeavesAWholeFileThatSaysSo(t *testing.T) {
	// Where each line ends when the disk has room: line 1 is the header, 2 tier 0's tier line,
	// 3-22 its records, 23 its closing line, 24 tier 1's tier line, 25-44 its records.
	var whole bytes.Buffer
	writeSweep(t, records.NewWriter(&whole, time.Hour))
	var ends []int
	for i, c := range whole.Bytes() {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	end := func(line int) int { return ends[line-1] }
	tier1 := 1
	tier0 := 0
	tests := []struct {
		name     string
		limit    int
		cut      *records.Cut // nil: no room for the note
		records0 int          // tier 0's records in the file
		records1 int
		closed0  bool
	}{
		{"in the middle of a record, room for the note", end(29) + 120, &records.Cut{Tier: &tier1}, 20, 5, true},
		{"in the middle of a record, no room: the last one dropped", end(29) + 10, &records.Cut{Tier: &tier1, Dropped: 1}, 20, 4, true},
		{"in tier 0's closing line: tier 0 is cut", end(22) + 30, &records.Cut{Tier: &tier0, Dropped: 1}, 19, 0, false},
		{"in tier 1's tier line, nothing to drop: the file ends whole", end(23) + 10, nil, 20, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fullFile{limit: tc.limit}
			writeSweep(t, records.NewFileWriter(f))
			seals := records.NewSeals()
			var got records.File
			warnings, err := records.Scan(bytes.NewReader(f.data), records.Visitor{
				Seals:   seals,
				Tier:    func(tr records.Tier) error { got.Tiers = append(got.Tiers, tr); return nil },
				TierEnd: func(e records.TierEnd) error { got.Tiers[e.Tier].End = &e; return nil },
				Record:  func(r *records.Record) error { got.Records = append(got.Records, *r); return nil },
				Cut:     func(c records.Cut) error { got.Cut = &c; return nil },
			})
			if err != nil {
				t.Fatalf("the file does not read: %v\n%s", err, f.data)
			}
			if !bytes.HasSuffix(f.data, []byte("\n")) {
				t.Errorf("the file ends in the middle of a line: %q", f.data[max(len(f.data)-80, 0):])
			}
			switch {
			case tc.cut == nil && got.Cut != nil:
				t.Errorf("a cut line %+v where there was no room for one", got.Cut)
			case tc.cut != nil && got.Cut == nil:
				t.Errorf("no cut line; the file ends %q", f.data[max(len(f.data)-120, 0):])
			case tc.cut != nil && (*got.Cut.Tier != *tc.cut.Tier || got.Cut.Dropped != tc.cut.Dropped || !strings.Contains(got.Cut.Error, "no space left on device")):
				t.Errorf("cut %+v (tier %d), want tier %d, %d dropped, the disk's error", got.Cut, *got.Cut.Tier, *tc.cut.Tier, tc.cut.Dropped)
			}
			n := map[int]int{}
			for _, r := range got.Records {
				n[r.Tier]++
			}
			if n[0] != tc.records0 || n[1] != tc.records1 {
				t.Errorf("records of tiers 0 and 1: %d and %d, want %d and %d", n[0], n[1], tc.records0, tc.records1)
			}
			if closed := got.Tiers[0].End != nil; closed != tc.closed0 {
				t.Errorf("tier 0 closed: %v, want %v", closed, tc.closed0)
			}
			if st, _ := seals.State(0); tc.closed0 && st != records.Whole {
				t.Errorf("tier 0's seal: %v, want it whole", st)
			}
			all := strings.Join(warnings, "\n")
			if tc.cut != nil && !strings.Contains(all, "cut short by a failed write") || strings.Contains(all, "killed") {
				t.Errorf("warnings:\n%s", all)
			}
		})
	}
}

// writeSweep writes two tiers of 20 records to w, flushing after every line as a file's writer
// does at its interval, until a write fails.
func writeSweep(t *testing.T, w *records.Writer) {
	t.Helper()
	if err := w.WriteHeader(records.Header{Command: "sweep", Seed: 3}); err != nil {
		return
	}
	for tier := range 2 {
		if w.WriteTier(records.Tier{Tier: tier, RequestRate: 4, Burstiness: 1, Planned: 20}) != nil {
			return
		}
		for i := range 20 {
			r := records.NewRecord(tier, i, time.Duration(i)*time.Second)
			r.Sent, r.End = r.Planned, r.Planned+time.Second
			if w.Write(&r) != nil || w.Flush() != nil {
				return
			}
		}
		if w.WriteTierEnd(records.TierEnd{Tier: tier, Planned: 20, Reason: records.EndedSchedule}) != nil {
			return
		}
	}
}
