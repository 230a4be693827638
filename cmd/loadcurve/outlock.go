package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/curve/result"
)

// heldDirs are the result directories one command holds locked (result.Lock) until it ends:
// runApp makes one per command line and releases it when the command returns, whatever
// happened (the process ending releases them too).
type heldDirs struct {
	mu    sync.Mutex
	locks []*result.Lock
}

type heldDirsKey struct{}

// withHeldDirs is ctx carrying a new heldDirs, and the function that releases them.
func withHeldDirs(ctx context.Context) (context.Context, func()) {
	h := &heldDirs{}
	return context.WithValue(ctx, heldDirsKey{}, h), h.release
}

func (h *heldDirs) hold(l *result.Lock) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.locks = append(h.locks, l)
}

func (h *heldDirs) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.locks {
		l.Release()
	}
	h.locks = nil
}

// holdLock keeps l until the command ends.
func holdLock(c *cli.Context, l *result.Lock) {
	if h, ok := c.Context.Value(heldDirsKey{}).(*heldDirs); ok {
		h.hold(l)
		return
	}
	l.Release() // no command to hold it for (cannot happen through runApp)
}

// busyRefusal says, naming the flag that gave dir, that another loadcurve process writes a
// result there: one line, exit 2, nothing changed.
func busyRefusal(flag, dir string, busy *result.BusyError) error {
	msg := fmt.Sprintf("--%s %s: %s is writing a result there: wait for it to end, or choose another directory", flag, dir, busy.Holder())
	if busy.Stale != "" {
		msg += " (" + busy.Stale + ")"
	}
	return usageError{errors.New(msg)}
}

// claimResumed locks the directory of the sweep --resume continues before anything of it is
// read, for the whole command: a second resume, or any other writer, is refused while this one
// runs (two resumes at once both truncated and appended to one records file, and one
// panicked). A directory that does not exist is left to the reader to refuse.
func claimResumed(c *cli.Context, dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	l, err := result.LockDir(dir)
	var busy *result.BusyError
	if errors.As(err, &busy) {
		return busyRefusal("resume", dir, busy)
	}
	if err != nil {
		return fmt.Errorf("--resume: %w", err)
	}
	holdLock(c, l)
	return nil
}
