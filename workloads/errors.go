package workloads

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// LineError is one problem of an input file, located by its 1-based line number (0 when the
// problem is the file as a whole, e.g. it is empty).
type LineError struct {
	Path string
	Line int
	Msg  string
}

func (e *LineError) Error() string {
	if e.Line <= 0 {
		return fmt.Sprintf("%s: %s", e.Path, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
}

// maxReported is how many problems of one file are reported before the rest are only counted.
const maxReported = 10

// problems collects the problems of one file, so a file is validated as a whole and the user
// sees every mistake at once (up to maxReported, then a count).
type problems struct {
	path string
	errs []error
	more int
}

func (p *problems) add(line int, format string, args ...any) {
	if len(p.errs) >= maxReported {
		p.more++
		return
	}
	p.errs = append(p.errs, &LineError{Path: p.path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// addErr records an error that is already located (a *LineError).
func (p *problems) addErr(err error) {
	if len(p.errs) >= maxReported {
		p.more++
		return
	}
	p.errs = append(p.errs, err)
}

// sortByLine orders the problems by line (stably), for checks made after a first pass over
// the file.
func (p *problems) sortByLine() {
	slices.SortStableFunc(p.errs, func(a, b error) int { return lineOf(a) - lineOf(b) })
}

func lineOf(err error) int {
	var le *LineError
	if errors.As(err, &le) {
		return le.Line
	}
	return 0
}

// err joins the problems (nil if none); each is a *LineError, reachable with errors.As.
func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	errs := p.errs
	if p.more > 0 {
		errs = append(errs[:len(errs):len(errs)], fmt.Errorf("%s: %d more problems not shown", p.path, p.more))
	}
	return errors.Join(errs...)
}

// quoteValue quotes a value read from a file for a message, cut to 40 characters (clip): a
// message never carries a file's content at length.
func quoteValue(s string) string {
	if c := clip(s); c != s {
		return strconv.Quote(c) + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

// clip is s cut to its first 40 characters.
func clip(s string) string {
	const max = 40
	cut, n := 0, 0
	for cut < len(s) && n < max {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
		n++
	}
	return s[:cut]
}
