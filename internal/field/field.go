// Package field is how loadcurve's libraries report an invalid input without knowing how the
// user gave it. An Error names the input in the library's own domain words (e.g. "burstiness",
// "input length", "ramp strategy"), exported as a Field* constant of the library, and may refer
// to other inputs in its message with Ref. A command maps each name to the way its user gives
// that input (a flag, a file's key) in one table, and renders the message with Text, so that a
// message names the flag exactly once (--target-share: must be in (0, 1], got 0) and the
// library never knows the command line.
package field

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Error is one invalid input.
type Error struct {
	// Name is the input's name in the library's domain words (a Field* constant).
	Name string
	// Msg says what is wrong and what would be accepted. References to other inputs (Ref) are
	// held in it as markers; read it with Text.
	Msg string
	// refs are the inputs Msg refers to.
	refs []string
	// wrapped is what Errorf made: the errors its %w verbs wrap.
	wrapped error
	// sentence: Msg is the whole text, naming the input itself where it does (Sentencef).
	sentence bool
}

// Error returns "NAME: MSG", other inputs named by their domain names; a sentence (Sentencef)
// is its text alone.
func (e *Error) Error() string {
	if e.sentence {
		return e.Text(nil)
	}
	return e.Name + ": " + e.Text(nil)
}

// Render writes the error for a reader who knows the inputs as name(input) (a flag, a file's
// key): the input, then the message with every input it refers to written the same way. A
// message that is a predicate about the input ("must be …", "is …") reads on from the name
// (--burstiness must be > 0 or inf); any other follows a colon (--shard: "x": want i/k).
// A sentence (Sentencef) is written as its text alone.
func (e *Error) Render(name func(string) string) string {
	if e.sentence {
		return e.Text(name)
	}
	head := e.Name
	if name != nil {
		head = name(e.Name)
	}
	msg := e.Text(name)
	for _, p := range []string{"must ", "is ", "are ", "cannot "} {
		if strings.HasPrefix(msg, p) {
			return head + " " + msg
		}
	}
	return head + ": " + msg
}

// Text returns the message with every input it refers to written as name(input); a nil name
// writes the domain name itself.
func (e *Error) Text(name func(string) string) string {
	msg := e.Msg
	for _, r := range e.refs {
		to := r
		if name != nil {
			to = name(r)
		}
		msg = strings.ReplaceAll(msg, marker(r), to)
	}
	return msg
}

// Unwrap returns the errors the message wraps (%w in Errorf).
func (e *Error) Unwrap() []error {
	switch w := e.wrapped.(type) {
	case interface{ Unwrap() []error }:
		return w.Unwrap()
	case interface{ Unwrap() error }:
		if u := w.Unwrap(); u != nil {
			return []error{u}
		}
	}
	return nil
}

// Refs returns the other inputs the message refers to.
func (e *Error) Refs() []string { return append([]string(nil), e.refs...) }

// Ref is a reference to another input in a message: an argument of Errorf, written as that
// input's name wherever the message is read (Text), e.g.
// Errorf(FieldRampStart, "only allowed with %v linear or exponential", Ref(FieldRamp)).
type Ref string

// Format writes the reference's marker; only Errorf knows what it stands for.
func (r Ref) Format(f fmt.State, _ rune) { fmt.Fprint(f, marker(string(r))) }

// marker is how a reference is held in Msg: NUL bytes around the name, which no message text
// holds (values are quoted with %q where they could).
func marker(name string) string { return "\x00" + name + "\x00" }

// Errorf returns an *Error for the named input, formatted as fmt.Errorf does (%w wraps an
// error); arguments of type Ref refer to other inputs, and so do Refs formatted into a string
// argument first.
func Errorf(name, format string, a ...any) error {
	w := fmt.Errorf(format, a...)
	e := &Error{Name: name, Msg: w.Error(), wrapped: w}
	rest := e.Msg
	for {
		i := strings.IndexByte(rest, 0)
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i+1:], 0)
		if j < 0 {
			break
		}
		if r := rest[i+1 : i+1+j]; r != "" && !slices.Contains(e.refs, r) {
			e.refs = append(e.refs, r)
		}
		rest = rest[i+1+j+1:]
	}
	return e
}

// Sentencef is Errorf for a message that is a whole sentence: it names its inputs itself, the
// input it is about too, where and how the sentence needs them, e.g.
// Sentencef(FieldDuration, "give %v or %v, not both", Ref(FieldRequests), Ref(FieldDuration)), or
// Sentencef(FieldModel, "%v %s: want batching or mdc", Ref(FieldModel), v), which a command
// renders as: give --num-requests or --duration, not both; and as: --sim-model x: want batching or mdc.
func Sentencef(name, format string, a ...any) error {
	e := Errorf(name, format, a...).(*Error)
	e.sentence = true
	return e
}

// Of returns the *Error err is or wraps, or nil.
func Of(err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return nil
}

// Bytes writes a size in bytes in binary units (2.00 GiB, 24.6 GiB, 560 MiB), for the messages
// that refuse an input too large to hold.
func Bytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	switch {
	case b < 10:
		return fmt.Sprintf("%.2f %s", b, units[i])
	case b < 100:
		return fmt.Sprintf("%.1f %s", b, units[i])
	}
	return fmt.Sprintf("%.0f %s", b, units[i])
}
