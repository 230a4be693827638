package records

import "time"

// SetMaxLineLen lowers the bound on a line for a test (to make an endless line cheap to refuse);
// the returned function puts it back.
func SetMaxLineLen(n int) (restore func()) {
	old := maxLineLen
	maxLineLen = n
	return func() { maxLineLen = old }
}

// CuttableFile is what NewFileWriter writes to: a file that can be cut back.
type CuttableFile = cuttable

// NewFileWriter is a Writer on f as Create makes one on a file it opened (cut back when a
// write fails), for a test's file that fills up.
func NewFileWriter(f CuttableFile) *Writer {
	w := NewWriter(f, time.Hour)
	w.file = f
	return w
}
