//go:build linux

package loadgen

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// kernelStamps turns on the kernel's receive timestamps of c (SO_TIMESTAMPNS) and returns the
// reader that takes them, or nil when c is not a TCP connection or the option is refused.
func kernelStamps(c net.Conn) rxReader {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	k := &kernelRx{raw: raw, local: tc.LocalAddr(), remote: tc.RemoteAddr()}
	k.msg.Iov, k.msg.Iovlen = &k.iov, 1
	k.recv = k.recvmsg
	return k
}

// kernelRx reads a TCP connection with recvmsg, taking the receive timestamp the kernel adds to
// the data (that of the last segment the read took).
type kernelRx struct {
	raw           syscall.RawConn
	local, remote net.Addr
	// One recvmsg's arguments and results, kept here so that a read allocates nothing (the
	// syscall package's Recvmsg allocates its address buffer, and a closure its captures).
	msg   syscall.Msghdr
	iov   syscall.Iovec
	oob   [64]byte // one timespec control message (32 bytes on 64-bit systems)
	n     int
	errno syscall.Errno
	recv  func(fd uintptr) bool // k.recvmsg, bound once
}

// recvmsg reads into k.iov's buffer with k.msg; false asks RawConn.Read to wait until the
// socket is readable and call it again.
func (k *kernelRx) recvmsg(fd uintptr) bool {
	k.msg.Control = &k.oob[0]
	k.msg.SetControllen(len(k.oob))
	r, _, e := syscall.Syscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&k.msg)), 0)
	if e == syscall.EAGAIN || e == syscall.EINTR {
		return false
	}
	k.n, k.errno = int(r), e
	return true
}

func (k *kernelRx) readRx(p []byte) (int, time.Time, error) {
	if len(p) == 0 {
		return 0, time.Time{}, nil
	}
	k.iov.Base = &p[0]
	k.iov.SetLen(len(p))
	k.n, k.errno = 0, 0
	err := k.raw.Read(k.recv)
	k.iov.Base = nil // p is the caller's
	n, rerr := k.n, k.errno
	switch {
	case err != nil:
		return 0, time.Time{}, readError(err)
	case rerr != 0:
		return 0, time.Time{}, &net.OpError{Op: "read", Net: "tcp", Source: k.local, Addr: k.remote, Err: os.NewSyscallError("recvmsg", rerr)}
	case n == 0:
		return 0, time.Time{}, io.EOF
	}
	return n, rxStamp(k.oob[:min(int(k.msg.Controllen), len(k.oob))]), nil
}

// rxStamp finds the SCM_TIMESTAMPNS message in oob (zero time when there is none), without
// allocating.
func rxStamp(oob []byte) time.Time {
	hdr := syscall.CmsgLen(0)
	for len(oob) >= hdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return time.Time{}
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SO_TIMESTAMPNS && l-hdr >= int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&oob[hdr]))
			return time.Unix(int64(ts.Sec), int64(ts.Nsec)) //nolint:unconvert // int32 on 32-bit systems
		}
		oob = oob[min(syscall.CmsgSpace(l-hdr), len(oob)):]
	}
	return time.Time{}
}

// readError names a failed raw read as net.TCPConn.Read names its errors ("read", not
// "raw-read"). Apart from readRx, so that its error's address does not make every read allocate.
func readError(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		oe.Op = "read"
		return oe
	}
	return err
}
