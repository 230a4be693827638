//go:build !(linux || darwin)

package main

import "os"

// terminalWidth is 0 where loadcurve does not read a terminal's width: help is not wrapped.
func terminalWidth(*os.File) int { return 0 }
