//go:build !(linux || darwin)

package clihelp

import "os"

// terminalWidth is 0 where no terminal's width is read: help is not wrapped.
func terminalWidth(*os.File) int { return 0 }
