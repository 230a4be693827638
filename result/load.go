package result

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/loadcurve/loadcurve/records"
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
// gave to report or compare), exactly or, bounded, in bounded memory.
func Load(arg string, override func(Settings) (Settings, error), bounded bool) (*Loaded, error) {
	l := &Loaded{Dir: arg, Path: filepath.Join(arg, RecordsName)}
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		l.Dir, l.Path = filepath.Dir(arg), arg
	}
	h, err := records.ReadHeader(l.Path)
	if err != nil {
		return nil, err
	}
	s, notes, err := SettingsOf(h)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Path, err)
	}
	if override != nil {
		if s, err = override(s); err != nil {
			return nil, err
		}
	}
	if bounded {
		l.Result, l.Warnings, err = ScanFile(l.Path, s)
	} else if l.File, err = records.ReadFile(l.Path); err == nil {
		l.Result, l.Warnings = FromFile(l.File, s), l.File.Warnings
	}
	if err != nil {
		return nil, err
	}
	if len(l.Result.Tiers) == 0 {
		return nil, fmt.Errorf("%s has no tier: it holds no measurement", l.Path)
	}
	l.Result.Notes = append(notes, l.Result.Notes...)
	return l, nil
}
