package sweep

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Names of the inputs that say which sweep a resume continues and where a sweep writes.
const (
	FieldResume  = "sweep to resume"
	FieldOut     = "sweep's directory"
	FieldReplace = "replacing a sweep's result"
)

// OpenResumeIn opens the interrupted sweep in dir (OpenResume) for a resume, and refuses, naming
// the resume, a dir not given and a dir that holds no sweep, saying what it must be.
func OpenResumeIn(dir string) (*Resume, error) {
	if dir == "" {
		return nil, field.Sentencef(FieldResume, "%v: give the directory of the interrupted sweep (its %v)", field.Ref(FieldResume), field.Ref(FieldOut))
	}
	r, err := OpenResume(dir)
	if errors.Is(err, ErrNoSweep) {
		return nil, field.Sentencef(FieldResume, "%v %s: %w: give the %v directory of a sweep that was interrupted", field.Ref(FieldResume), dir, err, field.Ref(FieldOut))
	}
	if err != nil {
		return nil, ResumeRefused(dir, err)
	}
	return r, nil
}

// ResumeRefused is err, why the resume of the sweep in dir cannot go on, as a refusal of the
// resume.
func ResumeRefused(dir string, err error) error {
	return field.Sentencef(FieldResume, "%v %s: %w", field.Ref(FieldResume), dir, err)
}

// CheckResumeOutput refuses what a resume of the sweep in dir cannot be given: another
// directory to write to (out, when outGiven; a resumed sweep writes to the one it continues),
// and replacing a result there (it would delete the sweep it continues).
func CheckResumeOutput(dir, out string, outGiven, replace bool) []error {
	var errs []error
	if outGiven && !sameDir(out, dir) {
		errs = append(errs, field.Sentencef(FieldOut, "%v %s: a resumed sweep writes to the directory it continues, %s: leave %v out",
			field.Ref(FieldOut), out, dir, field.Ref(FieldOut)))
	}
	if replace {
		errs = append(errs, field.Sentencef(FieldReplace, "%v: it would delete the sweep that %v %s continues", field.Ref(FieldReplace), field.Ref(FieldResume), dir))
	}
	return errs
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
