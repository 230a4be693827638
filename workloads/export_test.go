package workloads

// SetMaxLineLen lowers the bound on a line for a test (to make an endless line cheap to refuse);
// the returned function puts it back.
func SetMaxLineLen(n int) (restore func()) {
	old := maxLineLen
	maxLineLen = n
	return func() { maxLineLen = old }
}
