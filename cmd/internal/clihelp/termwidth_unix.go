//go:build linux || darwin

package clihelp

import (
	"os"
	"syscall"
	"unsafe"
)

// terminalWidth is the width in columns of the terminal f is, 0 when f is not a terminal (the
// ioctl fails on anything else). The ioctl runs through SyscallConn, not Fd, which would put a
// pipe into blocking mode.
func terminalWidth(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	var ws struct{ Row, Col, X, Y uint16 }
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	}); err != nil || errno != 0 {
		return 0
	}
	return int(ws.Col)
}
