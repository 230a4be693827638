//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package result

import (
	"errors"
	"os"
	"syscall"
)

// lockFile opens path (making it) and takes an exclusive flock(2) on it without waiting:
// held false when another open file holds it. The lock belongs to the open file: a second
// open of the path by this process is refused too, and closing the file, or the process
// ending, releases it.
func lockFile(path string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		return f, true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return nil, false, nil
	}
	f.Close()
	return nil, false, err
}

// unlockFile releases the lock by closing the file.
func unlockFile(f *os.File) error { return f.Close() }

// staleHint is empty: the kernel releases a flock when its holder ends, so none is stale.
func staleHint(string) string { return "" }
