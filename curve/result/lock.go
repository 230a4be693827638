package result

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// LockName is the file in a result directory that its one writer holds locked while it
// writes (Lock): a run, a sweep, a resumed sweep, a merge, a report, a comparison or a plan.
// It is removed when the writer releases it; it belongs to no result (IsFile).
const LockName = ".loadcurve.lock"

// Lock is a result directory held by this process for writing. Two writers of one directory
// would mix their results: two runs started at once on one new directory both found it free
// and both wrote records.jsonl, and two resumes of one sweep both truncated and appended to it.
// On Linux and the BSDs (and macOS) the lock is flock(2) on LockName, so the kernel releases it
// when the process ends, however it ends: a writer killed with -9 leaves no stale lock behind
// (a lock file made with O_EXCL would stay, and refuse every later writer until removed by
// hand). Elsewhere it is that file made with O_EXCL, which a crash leaves behind (BusyError
// says to remove it).
type Lock struct {
	dir, path string
	f         *os.File
}

// BusyError is the refusal of a directory another writer holds.
type BusyError struct {
	Dir string
	// PID is the holder's process id, as it wrote it in the lock file (0: not known yet).
	PID int
	// Stale, where the lock is a file made with O_EXCL, says how to remove a lock a crash left.
	Stale string
}

// Holder names who holds the lock: "another loadcurve process (pid 4242)".
func (e *BusyError) Holder() string {
	switch {
	case e.PID == os.Getpid():
		return "another loadcurve command of this process"
	case e.PID > 0:
		return fmt.Sprintf("another loadcurve process (pid %d)", e.PID)
	}
	return "another loadcurve process"
}

func (e *BusyError) Error() string {
	msg := fmt.Sprintf("%s is writing a result into %s", e.Holder(), e.Dir)
	if e.Stale != "" {
		msg += " (" + e.Stale + ")"
	}
	return msg
}

// LockDir locks the existing directory dir for this process's writing, or refuses with a
// *BusyError when another writer holds it. Release ends it; the process ending does too.
func LockDir(dir string) (*Lock, error) {
	path := filepath.Join(dir, LockName)
	// The holder removes the file as it releases it: the file this process opened may be the
	// one just removed, whose lock protects nothing. Then the file at the path is locked again.
	for range 16 {
		f, held, err := lockFile(path)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		}
		if !held {
			return nil, &BusyError{Dir: dir, PID: readPID(path), Stale: staleHint(path)}
		}
		if !isFileAt(f, path) {
			f.Close()
			continue
		}
		// Who holds it, for the refusal of the next writer (written after the lock is held, so
		// a refusal may come before it: then without a pid).
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return &Lock{dir: dir, path: path, f: f}, nil
	}
	return nil, fmt.Errorf("lock %s: %s keeps being replaced", dir, LockName)
}

// Release removes the lock file and unlocks the directory; it does nothing the second time.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	var err error
	if isFileAt(l.f, l.path) {
		// Removed while still held, so that no writer locks a file that is about to go.
		if rerr := os.Remove(l.path); rerr != nil {
			err = fmt.Errorf("release the lock of %s: %w", l.dir, rerr)
		}
	}
	if cerr := unlockFile(l.f); cerr != nil && err == nil {
		err = fmt.Errorf("release the lock of %s: %w", l.dir, cerr)
	}
	l.f = nil
	return err
}

// Dir is the directory held.
func (l *Lock) Dir() string { return l.dir }

// isFileAt reports whether f is the file now at path.
func isFileAt(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// readPID reads the pid the holder wrote in the lock file, 0 when none is there (yet).
func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
