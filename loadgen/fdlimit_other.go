//go:build !unix

package loadgen

// OpenFileLimit is 0 where the limit is not a process setting loadgen can read.
func OpenFileLimit() uint64 { return 0 }
