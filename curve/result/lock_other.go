//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package result

import (
	"errors"
	"io/fs"
	"os"
)

// lockFile makes path with O_EXCL: held false when it exists (another writer made it, or a
// crash left it: staleHint).
func lockFile(path string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return f, true, nil
}

// unlockFile closes the file (Release removed it first).
func unlockFile(f *os.File) error { return f.Close() }

// staleHint says how to remove a lock file a crash left.
func staleHint(path string) string {
	return "if no loadcurve process is running, a crash left " + path + " behind: remove it"
}
