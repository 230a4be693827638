package clihelp

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/nearest"
)

// Usage errors that say what was meant. Go's flag package, under urfave/cli, reports a mistyped
// flag as "flag provided but not defined: -requst-rate" and a bad value as `invalid value "10"
// for flag -duration: parse error`, with no word on the expected form; it exports no error
// types, so its messages are matched here. urfave/cli's own suggestions (App.Suggest) do not
// apply: they are printed only when no OnUsageError is set, and they name the nearest flag
// however far it is.

var (
	reUndefined = regexp.MustCompile(`^flag provided but not defined: -{1,2}(.+)$`)
	reInvalid   = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-{1,2}([^:]+): (.*)$`)
	reNeedsArg  = regexp.MustCompile(`^flag needs an argument: -{1,2}(.+)$`)
)

// Explain rewrites a flag-parsing error of a command whose flags are flags: a mistyped flag
// gets the nearest names, a bad value the form the flag wants. Other errors are returned as
// they are.
func Explain(flags []cli.Flag, err error) error {
	msg := err.Error()
	if m := reUndefined.FindStringSubmatch(msg); m != nil {
		name := m[1]
		if s := NearestFlags(name, flags); s != "" {
			return fmt.Errorf("flag provided but not defined: -%s; did you mean %s?", name, s)
		}
		return err
	}
	if m := reNeedsArg.FindStringSubmatch(msg); m != nil {
		f := FindFlag(flags, m[1])
		if f == nil {
			return err
		}
		return fmt.Errorf("--%s needs a value: %s", m[1], expectedForm(f))
	}
	if m := reInvalid.FindStringSubmatch(msg); m != nil {
		f := FindFlag(flags, m[2])
		if f == nil {
			return err
		}
		return errors.New(ValueProblem(f, m[2], m[1], m[3]))
	}
	return err
}

// ExplainRoot explains a flag error of app before the command: a flag of some command (or a
// near name of one) given before it. Other errors are explained as Explain does with the app's
// own flags.
func ExplainRoot(app *cli.App, err error) error {
	m := reUndefined.FindStringSubmatch(err.Error())
	if m == nil {
		return Explain(app.Flags, err)
	}
	owners := func(name string) []string {
		var out []string
		for _, c := range app.Commands {
			if FindFlag(c.Flags, name) != nil {
				out = append(out, c.Name)
			}
		}
		return out
	}
	name := m[1]
	if cmds := owners(name); len(cmds) > 0 {
		return fmt.Errorf("--%s is a flag of %s: give it after the command, e.g. %s %s --%s …", name, nearest.Or(cmds), app.Name, cmds[0], name)
	}
	var all []string
	for _, c := range app.Commands {
		all = append(all, flagNames(c.Flags)...)
	}
	if s := nearest.Names(name, all); len(s) > 0 {
		cmds := owners(s[0])
		return fmt.Errorf("flag provided but not defined: -%s; did you mean --%s, a flag of %s? Give it after the command, e.g. %s %s --%s …",
			name, s[0], nearest.Or(cmds), app.Name, cmds[0], s[0])
	}
	return Explain(app.Flags, err)
}

// UnknownCommand is the error for `APP NAME` when app has no command called NAME: the commands
// NAME is near, else all of them.
func UnknownCommand(app *cli.App, name string) error {
	var names []string
	for _, c := range app.Commands {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	if strings.HasPrefix(name, "-") {
		return fmt.Errorf("unknown option %s", name)
	}
	if s := nearest.Names(name, names); len(s) > 0 {
		return fmt.Errorf("no command %q; did you mean %s?", name, nearest.Or(s))
	}
	return fmt.Errorf("no command %q; the commands are %s (%s --help says what each does)", name, strings.Join(names, ", "), app.Name)
}

// ValueProblem says why value is not one of the values of f (given as --name) and what is:
// "--duration 10: give a unit, e.g. 10s or 2m". reason is what the parser said ("parse
// error", "value out of range").
func ValueProblem(f cli.Flag, name, value, reason string) string {
	value, reason = Excerpt(value), Excerpt(reason) // a file's value may be megabytes long
	head := fmt.Sprintf("--%s %s", name, value)
	if value == "" || strings.ContainsAny(value, " \t") {
		head = fmt.Sprintf("--%s %q", name, value)
	}
	_, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	isNumber := err == nil
	switch Unwrap(f).(type) {
	case *cli.DurationFlag:
		if isNumber {
			return fmt.Sprintf("%s: give a unit, e.g. %ss or %sm", head, value, value)
		}
		return fmt.Sprintf("%s: not a duration; %s", head, expectedForm(f))
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		if strings.Contains(reason, "range") {
			return fmt.Sprintf("%s: out of range; %s", head, expectedForm(f))
		}
		if isNumber {
			return fmt.Sprintf("%s: not a whole number; %s", head, expectedForm(f))
		}
		return fmt.Sprintf("%s: not a number; %s", head, expectedForm(f))
	case *cli.Float64Flag:
		if strings.Contains(reason, "range") {
			return fmt.Sprintf("%s: out of range; %s", head, expectedForm(f))
		}
		return fmt.Sprintf("%s: not a number; %s", head, expectedForm(f))
	case *cli.BoolFlag:
		return fmt.Sprintf("--%s=%s: %s", name, value, expectedForm(f))
	}
	return fmt.Sprintf("%s: %s", head, reason)
}

// expectedForm says what a flag takes, with an example.
func expectedForm(f cli.Flag) string {
	switch f := Unwrap(f).(type) {
	case *cli.DurationFlag:
		return "give a number with a unit, e.g. 500ms, 30s, 2m or 1h30m"
	case *cli.IntFlag:
		return "give a whole number, e.g. " + exampleInt(int64(f.Value))
	case *cli.Int64Flag:
		return "give a whole number, e.g. " + exampleInt(f.Value)
	case *cli.UintFlag, *cli.Uint64Flag:
		return "give a whole number ≥ 0, e.g. 10"
	case *cli.Float64Flag:
		if f.Value != 0 {
			return "give a number, e.g. " + strconv.FormatFloat(f.Value, 'g', -1, 64)
		}
		return "give a number, e.g. 2.5"
	case *cli.BoolFlag:
		return fmt.Sprintf("want true or false (--%s alone means true)", f.Name)
	}
	return "give a value"
}

// exampleInt is a flag's default as an example, 10 when it is 0 or negative (a "none" marker).
func exampleInt(v int64) string {
	if v <= 0 {
		v = 10
	}
	return strconv.FormatInt(v, 10)
}

// FindFlag is the flag of flags called name (any of its names), nil when none is.
func FindFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// Excerpt is s for a message: itself when it has at most 80 bytes, else its first 60 characters
// and how long it was, so that no message carries a value (a file's, most often) at length.
func Excerpt(s string) string {
	const keep, limit = 60, 80
	if len(s) <= limit {
		return s
	}
	cut, n := 0, 0
	for cut < len(s) && n < keep {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
		n++
	}
	return fmt.Sprintf("%s…(%d bytes)", strings.ToValidUTF8(s[:cut], "\uFFFD"), len(s))
}

// NearestFlags names the flags of flags that typed was probably meant to be, as a message says
// them ("--request-rate or --request-id-prefix"); "" when none is near.
func NearestFlags(typed string, flags []cli.Flag) string {
	s := nearest.Names(typed, flagNames(flags))
	for i, n := range s {
		if len(n) == 1 {
			s[i] = "-" + n
		} else {
			s[i] = "--" + n
		}
	}
	return nearest.Or(s)
}

// flagNames is every name of flags, in order.
func flagNames(flags []cli.Flag) []string {
	var out []string
	for _, f := range flags {
		out = append(out, f.Names()...)
	}
	return out
}
