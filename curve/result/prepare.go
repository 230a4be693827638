package result

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Kind is what a command writes into a directory: it decides when the directory is taken and
// what a replace removes.
type Kind int

const (
	// Measured is a run's, a sweep's or a merge's result: any result file takes the directory,
	// and a replace removes all of them (and nothing else).
	Measured Kind = iota
	// Derived is a result derived from a records file (report): taken as Measured, but a
	// replace leaves the records file it reads (Out.Keep) in place.
	Derived
	// Comparison is compare.json and its plots: a comparison takes the directory, and a
	// replace writes over it.
	Comparison
	// Plan is plan.json and its page: a plan takes the directory, and a replace writes over it.
	Plan
)

// What says what a directory taken for this kind already holds, in words.
func (k Kind) What() string {
	switch k {
	case Comparison:
		return "a comparison"
	case Plan:
		return "a plan"
	default:
		return "a result (" + RecordsName + ", " + CurveName + ", …)"
	}
}

// Replaces says what a replace does to the directory, in words.
func (k Kind) Replaces() string {
	switch k {
	case Measured:
		return "replace all of it"
	case Derived:
		return "replace its derived files"
	default:
		return "write over it"
	}
}

// marker is the file whose presence takes the directory, "" when any result file does.
func (k Kind) marker() string {
	switch k {
	case Comparison:
		return CompareName
	case Plan:
		return PlanName
	}
	return ""
}

// Out is a directory a command is about to write a result into.
type Out struct {
	Dir  string
	Kind Kind
	// Replace allows a directory that already holds a result of this kind to be used.
	Replace bool
	// Keep, with Derived, is the records file the result is derived from: never removed.
	Keep string
}

// TakenError is Prepare's refusal: the directory already holds a result of the kind and no
// replace was asked for. Nothing was changed.
type TakenError struct {
	Dir  string
	Kind Kind
}

func (e *TakenError) Error() string {
	return fmt.Sprintf("%s already holds %s", e.Dir, e.Kind.What())
}

// Prepare makes o.Dir ready for a new result before anything is written (for a run or a sweep,
// before any load is sent) and locks it for this process (LockDir): it creates the directory,
// refuses it when another writer holds it (a *BusyError); then, under the lock, it refuses a
// directory that already holds a result of the kind (a *TakenError) unless o.Replace, and, for
// Measured and Derived, removes every file of the old result (and nothing else, and not
// o.Keep), so that the new result is not mixed with pieces of the old one. The caller holds the
// Lock until its result is written; a refusal releases it. The check and the clearing happen
// under the lock: two commands started at once on one new directory both found it free and
// both wrote their records into it.
func Prepare(o Out) (*Lock, error) {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", o.Dir, err)
	}
	lock, err := LockDir(o.Dir)
	if err != nil {
		return nil, err
	}
	if err := o.clear(); err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

// clear is Prepare's refusal or clearing, with the directory locked.
func (o Out) clear() error {
	taken, err := o.taken()
	if err != nil {
		return err
	}
	if taken && !o.Replace {
		return &TakenError{Dir: o.Dir, Kind: o.Kind}
	}
	if taken && o.Kind.marker() == "" {
		keep := ""
		if o.Kind == Derived {
			keep = o.Keep
		}
		if err := Clear(o.Dir, keep); err != nil {
			return fmt.Errorf("%s: clear the old result: %w", o.Dir, err)
		}
	}
	return nil
}

func (o Out) taken() (bool, error) {
	m := o.Kind.marker()
	if m == "" {
		held, err := Holds(o.Dir)
		if err != nil {
			return false, fmt.Errorf("%s: %w", o.Dir, err)
		}
		return held, nil
	}
	_, err := os.Stat(filepath.Join(o.Dir, m))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("%s: %w", o.Dir, err)
}
