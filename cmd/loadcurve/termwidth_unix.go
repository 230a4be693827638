//go:build linux || darwin

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// terminalWidth is the width in columns of the terminal f is, 0 when f is not a terminal.
func terminalWidth(f *os.File) int {
	if !isTerminal(f) {
		return 0
	}
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws))); errno != 0 {
		return 0
	}
	return int(ws.Col)
}
