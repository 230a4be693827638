// Package flagfile gives a urfave/cli command flag values from a file: a scenario (package
// scenario's YAML, "flag: value" lines). Apply sets the flags a file names that the command
// line did not set, each value checked against its flag, every problem reported with its line
// (ApplyFile reads and parses the file a flag names first); Resolve turns the flags a command
// was given back into a scenario, secret flags left out; Read reads such a recorded scenario
// back, to compare a command's flags with it (Compare) and to take the ones it was not given
// (Take). What is wrong with a flag's value, and what the
// flag wants instead, is said as package clihelp says it for the command line. Which
// flags a command has, which are secret and what they mean is the command's business.
package flagfile

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
	"github.com/loadcurve/loadcurve/internal/scenario"
)

// MaxProblems bounds the problems of a file that Apply shows (300,000 bad keys once printed
// 17 MB); the rest are counted.
const MaxProblems = 20

// Apply sets on c every flag that entries (the file at path, as scenario.Parse read it) name
// and the command line did not set. self is the flag that names the file, which the file cannot
// name. A value the command line overrides is still checked against its flag: the next run
// without the override would use it. Every problem is returned at once, joined, each with the
// file's line (at most MaxProblems, the rest counted); nil when the file is good.
func Apply(c *cli.Context, path, self string, entries []scenario.Entry) error {
	flags := ByName(c.Command)
	onCommandLine := map[string]bool{} // before any flag is set from the file
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		onCommandLine[name] = c.IsSet(name)
	}
	var errs []error
	more := 0 // problems beyond the first MaxProblems, counted
	bad := func(line int, format string, a ...any) {
		if len(errs) == MaxProblems {
			more++
			return
		}
		errs = append(errs, fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, a...)))
	}
	seen := map[string]int{}
	for _, e := range entries {
		name := e.Name
		f, ok := flags[name]
		var canonical string
		if ok {
			canonical = f.Names()[0]
		}
		switch {
		case !e.NameOK:
			bad(e.Line, "a key must be a flag name")
			continue
		case name == self:
			bad(e.Line, "a scenario cannot name another scenario")
			continue
		case !ok && len(errs) == MaxProblems:
			more++ // not worth the suggestions' search
			continue
		case !ok:
			if sg := clihelp.NearestFlags(name, c.Command.Flags); sg != "" {
				bad(e.Line, "%s %s has no flag --%s; did you mean %s?", c.App.Name, c.Command.Name, clihelp.Excerpt(name), sg)
			} else {
				bad(e.Line, "%s %s has no flag --%s", c.App.Name, c.Command.Name, clihelp.Excerpt(name))
			}
			continue
		case seen[canonical] > 0:
			bad(e.Line, "--%s is given twice (first on line %d)", canonical, seen[canonical])
			continue
		}
		seen[canonical] = e.Line
		if e.Null {
			continue // "label: null" (or ~, or nothing) leaves the flag unset, as YAML means it
		}
		if e.ValueErr != nil {
			bad(e.ValueLine, "--%s: %v", clihelp.Excerpt(name), e.ValueErr)
			continue
		}
		if onCommandLine[canonical] {
			for _, v := range e.Values {
				if err := checkValue(f, v); err != nil {
					bad(e.ValueLine, "%s (the command line overrides it, but the file is wrong)", clihelp.ValueProblem(f, name, v, err.Error()))
				}
			}
			continue
		}
		for _, v := range e.Values {
			if err := c.Set(canonical, v); err != nil {
				bad(e.ValueLine, "%s", clihelp.ValueProblem(f, name, v, err.Error()))
			}
		}
	}
	if more > 0 {
		errs = append(errs, fmt.Errorf("%s: and %d more problems", path, more))
	}
	return errors.Join(errs...)
}

// checkValue parses v as flag f would, without setting anything (the flag package's parsers,
// which cli.Context.Set uses); string flags take any text.
func checkValue(f cli.Flag, v string) error {
	var err error
	switch clihelp.Unwrap(f).(type) {
	case *cli.IntFlag:
		_, err = strconv.ParseInt(v, 0, strconv.IntSize)
	case *cli.Int64Flag:
		_, err = strconv.ParseInt(v, 0, 64)
	case *cli.UintFlag:
		_, err = strconv.ParseUint(v, 0, strconv.IntSize)
	case *cli.Uint64Flag:
		_, err = strconv.ParseUint(v, 0, 64)
	case *cli.Float64Flag:
		_, err = strconv.ParseFloat(v, 64)
	case *cli.DurationFlag:
		_, err = time.ParseDuration(v)
	case *cli.BoolFlag:
		_, err = strconv.ParseBool(v)
	}
	return err
}
