//go:build !linux

package loadgen

import "net"

// kernelStamps: only Linux gives a TCP read the kernel's receive timestamp; elsewhere a read's
// moment is when it returned.
func kernelStamps(net.Conn) rxReader { return nil }
