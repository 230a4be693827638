package result

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/loadcurve/loadcurve/measure/records"
)

// Loaded is a result rebuilt from its records file.
type Loaded struct {
	Dir, Path string
	// File is the records file read whole; nil when it was scanned in bounded memory.
	File     *records.File
	Result   *Result
	Warnings []string // the reader's (a cut last line, tiers without a closing line)
}

// Load rebuilds the result of a records file (a result directory, or the file itself) under
// the settings its header states, changed by override when it is not nil (the options a user
// gave to report or compare), exactly or, bounded, in bounded memory. It opens the file once
// and reads it in one pass, which sets the summaries and, for a run, vLLM's peak figures (the
// Peaks of summary.json); in bounded memory a run's peaks take a second pass over the same
// open file, and a file that cannot be read again (a pipe) has none, with a warning. A sweep
// has no peaks.
func Load(arg string, override func(Settings) (Settings, error), bounded bool) (*Loaded, error) {
	l := &Loaded{Dir: arg, Path: filepath.Join(arg, RecordsName)}
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		l.Dir, l.Path = filepath.Dir(arg), arg
	}
	fh, err := os.Open(l.Path)
	if err != nil {
		return nil, fmt.Errorf("read records: %w", err)
	}
	defer fh.Close()
	var notes []string
	settle := func(h records.Header) (Settings, error) {
		s, n, err := SettingsOf(h)
		if err != nil {
			return s, fmt.Errorf("%s: %w", l.Path, err)
		}
		notes = n
		if override != nil {
			return override(s)
		}
		return s, nil
	}
	if bounded {
		l.Result, l.Warnings, err = scan(fh, l.Path, settle)
	} else {
		l.Result, err = l.read(fh, settle)
	}
	if err != nil {
		return nil, err
	}
	if len(l.Result.Tiers) == 0 {
		return nil, fmt.Errorf("%s has no tier: it holds no measurement", l.Path)
	}
	l.Result.Notes = append(notes, l.Result.Notes...)
	if err := l.peaks(fh); err != nil {
		return nil, err
	}
	return l, nil
}

// read reads the whole file from fh and derives its result under the settings its header
// gives.
func (l *Loaded) read(fh io.Reader, settle func(records.Header) (Settings, error)) (*Result, error) {
	f, err := records.Read(fh)
	if err != nil {
		return nil, fmt.Errorf("read records %s: %w", l.Path, err)
	}
	s, err := settle(f.Header)
	if err != nil {
		return nil, err
	}
	l.File, l.Warnings = f, f.Warnings
	return FromFile(f, s), nil
}

// peaks sets a run's Peaks: from the records in memory, or by reading fh again from its start.
func (l *Loaded) peaks(fh io.ReadSeeker) error {
	if !l.Result.Shape().OneTier() {
		return nil
	}
	if l.File != nil {
		l.Result.Peaks = PeaksOf(l.File)
		return nil
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		l.Warnings = append(l.Warnings, "vLLM's peak figures (max_output_tokens_per_s, max_concurrent_requests) are not computed: in bounded memory they take a second pass, and this file cannot be read again")
		return nil
	}
	p, err := peaksOf(fh)
	if err != nil {
		return fmt.Errorf("peaks of %s: %w", l.Path, err)
	}
	l.Result.Peaks = p
	return nil
}
