//go:build !unix

package main

// openFileLimit is 0 where the limit is not a process setting loadcurve can read.
func openFileLimit() uint64 { return 0 }
