// Package field is how loadcurve's libraries report an invalid input without knowing how the
// user gave it: an Error names the input by the name the command line also uses for it (without
// dashes, e.g. "target-share"), and the command maps that name to its flag once, so that a
// message names the flag exactly once ("--target-share: must be in (0, 1], got 0").
package field

import (
	"errors"
	"fmt"
)

// Error is one invalid input.
type Error struct {
	// Name is the input's name, as the command line spells its flag without the dashes.
	Name string
	// Msg says what is wrong and what would be accepted.
	Msg string
}

func (e *Error) Error() string { return e.Name + ": " + e.Msg }

// Errorf returns an *Error for the named input.
func Errorf(name, format string, a ...any) error {
	return &Error{Name: name, Msg: fmt.Sprintf(format, a...)}
}

// Of returns the *Error err is or wraps, or nil.
func Of(err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return nil
}
