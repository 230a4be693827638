package workloads

import (
	"bytes"
	"fmt"
	"io"
)

// MaxLineLen bounds a line of a request or trace file (JSONL, an Azure CSV, a Mooncake trace)
// and an entry of a ShareGPT file, which are read whole: a request of a 128k-token prompt is
// about 0.5 MB. A longer line is refused as it is read, having held no more than this.
const MaxLineLen = 64 << 20

// maxLineLen is MaxLineLen, lowered by the tests.
var maxLineLen = MaxLineLen

// LineTooLongError is the error of a line (or ShareGPT entry) longer than MaxLineLen.
type LineTooLongError struct {
	Line  int  // the line, or the line the entry starts on or after, from 1
	Entry bool // a ShareGPT entry
}

func (e *LineTooLongError) Error() string {
	if e.Entry {
		return fmt.Sprintf("the entry at line %d or after is longer than %s: not a conversation", e.Line, mib(maxLineLen))
	}
	return fmt.Sprintf("line %d is longer than %s: not a line of requests or of a trace", e.Line, mib(maxLineLen))
}

// lineCapped reads r, failing with a *LineTooLongError once a line runs past MaxLineLen bytes
// without its newline.
type lineCapped struct {
	r     io.Reader
	run   int // bytes of the current line read so far
	lines int // newlines read
}

func (l *lineCapped) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	b := p[:n]
	first := bytes.IndexByte(b, '\n')
	if first < 0 {
		l.run += n
	} else {
		if l.run+first > maxLineLen {
			return n, &LineTooLongError{Line: l.lines + 1}
		}
		l.lines += bytes.Count(b, []byte{'\n'})
		l.run = n - 1 - bytes.LastIndexByte(b, '\n')
	}
	if l.run > maxLineLen {
		return n, &LineTooLongError{Line: l.lines + 1}
	}
	return n, err
}

// mib writes n bytes in MiB.
func mib(n int) string { return fmt.Sprintf("%g MiB", float64(n)/(1<<20)) }
