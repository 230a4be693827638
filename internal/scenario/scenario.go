// Package scenario is loadcurve's scenario file: a YAML mapping of a command's setting names to
// their values (one value, or a list of values for a repeatable setting). Parse reads one into
// entries, each with its line, and refuses what a plain YAML decoder would read silently wrong
// (a second document, a mapping or a null inside a list); Encode writes the resolved scenario a
// result carries, quoted so that Parse reads back the same text. Which names exist and which
// values they take is the command's business, not this package's.
package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is a problem of a scenario file as a whole (not YAML, two documents, not a mapping),
// with its line when it has one (0 otherwise).
type Error struct {
	Line int
	Err  error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Entry is one "name: value" line of a scenario.
type Entry struct {
	// Name is the key's text; NameOK is false when the key is not a plain value (a list or a
	// mapping written as a key), which names nothing.
	Name   string
	NameOK bool
	// Line is the key's line.
	Line int
	// Null: the value is YAML's null (null, ~ or nothing), which leaves the setting unset.
	Null bool
	// Values are the value's text: one, or the items of a list.
	Values []string
	// ValueLine is the value's line; ValueErr says why the value is neither a value nor a list
	// of values (Values is then empty).
	ValueLine int
	ValueErr  error
}

// MaxFileSize bounds a scenario file, and MaxItems the lines and list items it may hold, both
// checked before it is parsed: a resolved scenario of every flag of a sweep is a few kB and a
// few hundred lines. The YAML decoder costs about 200 bytes of memory per byte of a file of
// short items (a 1 MB list of one-letter items took 170 MB), so the count is what bounds it:
// at most MaxItems items cost a few MB.
const (
	MaxFileSize = 1 << 20
	MaxItems    = 10_000
)

// ReadFile reads the scenario file at path, refusing one larger than MaxFileSize before reading
// it (or, for a file that grows or has no size, such as a pipe, as soon as it passes the bound).
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooBig := func(n int64) error {
		return fmt.Errorf("%s: %s, more than a scenario file holds (at most %d MiB): not read", path, sizeWords(n), MaxFileSize>>20)
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileSize {
		return nil, tooBig(st.Size())
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxFileSize {
		return nil, tooBig(int64(len(b)))
	}
	return b, nil
}

// sizeWords says how large n bytes are, as more than MaxFileSize when only that much was read.
func sizeWords(n int64) string {
	if n > MaxFileSize+1 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("more than %d MiB", MaxFileSize>>20)
}

// items bounds the YAML nodes b can make: every node of a scenario starts a line or follows a
// ',', '[' or '{' (a value on its key's line is the line's second).
func items(b []byte) int {
	n := 1
	for _, c := range b {
		switch c {
		case '\n', ',', '[', '{':
			n++
		}
	}
	return n
}

// Parse reads a scenario file's content. An empty file, or one holding only null, is an empty
// scenario. A file that is not YAML, holds a second document or is not a mapping is refused with
// an *Error; an entry whose key or value is malformed is returned with NameOK false or
// ValueErr set, for the caller to report with its other problems. A file of more than MaxItems
// lines and list items is refused before it is decoded.
func Parse(b []byte) ([]Entry, error) {
	if n := items(b); n > MaxItems {
		return nil, &Error{Err: fmt.Errorf("%d lines and list items, more than a scenario holds (at most %d): not read", n, MaxItems)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, &Error{Err: err}
	}
	// A second document would be dropped without a word by a plain Unmarshal: the settings it
	// names would silently not apply.
	var next yaml.Node
	if err := dec.Decode(&next); err != nil && !errors.Is(err, io.EOF) {
		return nil, &Error{Err: fmt.Errorf("one document expected, and what follows the first '---' is not YAML either: %w", err)}
	} else if err == nil && len(next.Content) > 0 && !isNull(next.Content[0]) {
		return nil, &Error{Line: next.Content[0].Line, Err: errors.New("one document expected: a second one starts here (after a '---'); put every flag in one mapping")}
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, nil // an empty file sets nothing
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Line: root.Line, Err: fmt.Errorf("want a mapping of flag names to values (request-rates: auto), got a %s", kindName(root.Kind))}
	}
	var out []Entry
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		e := Entry{Name: key.Value, NameOK: key.Kind == yaml.ScalarNode, Line: key.Line, ValueLine: val.Line, Null: isNull(val)}
		if !e.Null {
			e.Values, e.ValueErr = scalars(val)
		}
		out = append(out, e)
	}
	return out, nil
}

// isNull reports whether n is YAML's null: null, ~ or nothing at all.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// scalars are a value's text: one scalar, or a list of scalars (a repeatable setting).
func scalars(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return []string{n.Value}, nil
	case yaml.SequenceNode:
		var out []string
		for _, e := range n.Content {
			if isNull(e) {
				return nil, fmt.Errorf("a list may not hold null (line %d): give a value, or leave the item out", e.Line)
			}
			if e.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("a list may hold values only, got a %s on line %d", kindName(e.Kind), e.Line)
			}
			out = append(out, e.Value)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a value or a list of values, got a %s", kindName(n.Kind))
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "value"
}

// Setting is one setting of a resolved scenario: a single value, or a list (List) of values.
type Setting struct {
	Name   string
	Values []string
	List   bool
}

// Resolved is the scenario a command ran with, as a result carries it.
type Resolved struct {
	// Comments are the lines of the file's head (when it was resolved, what was left out, how
	// to run it again), each written after "# ".
	Comments []string
	// Settings are the settings, in order.
	Settings []Setting
}

// Encode writes the resolved scenario as YAML that Parse reads back to the same values: the
// comments, then the mapping. A single value that YAML would read as another type (true, null,
// a date) is quoted so that it keeps its text; a number or a boolean is written bare.
func Encode(r Resolved) ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	for _, s := range r.Settings {
		val := &yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle}
		if s.List {
			val = &yaml.Node{Kind: yaml.SequenceNode}
			for _, v := range s.Values {
				val.Content = append(val.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: v, Style: yaml.DoubleQuotedStyle})
			}
		} else {
			if len(s.Values) != 1 {
				return nil, fmt.Errorf("encode the resolved scenario: %s has %d values, want one", s.Name, len(s.Values))
			}
			val.Value = s.Values[0]
			if _, err := strconv.ParseFloat(val.Value, 64); err == nil || val.Value == "true" || val.Value == "false" {
				val.Style = 0
			}
		}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s.Name}, val)
	}
	var head strings.Builder
	for _, c := range r.Comments {
		head.WriteString("# " + c + "\n")
	}
	body, err := yaml.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("encode the resolved scenario: %w", err)
	}
	if len(root.Content) == 0 {
		body = []byte("{}\n")
	}
	return append([]byte(head.String()), body...), nil
}
