package main

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/flagfile"
	"github.com/loadcurve/loadcurve/cmd/internal/nearest"
	"github.com/loadcurve/loadcurve/redact"
)

// Usage errors that say what was meant. Go's flag package, under urfave/cli, reports a mistyped
// flag as "flag provided but not defined: -requst-rate" and a bad value as `invalid value "10"
// for flag -duration: parse error`, with no word on the expected form; it exports no error
// types, so its messages are matched here. urfave/cli's own suggestions (App.Suggest) do not
// apply: they are printed only when no OnUsageError is set (ours makes the exit code 2), and
// they name the nearest flag however far it is.

var (
	reUndefined = regexp.MustCompile(`^flag provided but not defined: -{1,2}(.+)$`)
	reInvalid   = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-{1,2}([^:]+): (.*)$`)
	reNeedsArg  = regexp.MustCompile(`^flag needs an argument: -{1,2}(.+)$`)
)

// explainUsage rewrites a flag-parsing error of a command whose flags are flags: a mistyped
// flag gets the nearest names, a bad value the form the flag wants. Other errors are returned
// as they are.
func explainUsage(flags []cli.Flag, err error) error {
	msg := err.Error()
	if m := reUndefined.FindStringSubmatch(msg); m != nil {
		name := m[1]
		if s := nearest.Names(name, flagfile.NameList(flags)); len(s) > 0 {
			return fmt.Errorf("flag provided but not defined: -%s; did you mean %s?", name, nearest.Or(flagfile.Dashed(s)))
		}
		return err
	}
	if m := reNeedsArg.FindStringSubmatch(msg); m != nil {
		f := flagfile.Find(flags, m[1])
		if f == nil {
			return err
		}
		return fmt.Errorf("--%s needs a value: %s", m[1], flagfile.ExpectedForm(f))
	}
	if m := reInvalid.FindStringSubmatch(msg); m != nil {
		f := flagfile.Find(flags, m[2])
		if f == nil {
			return err
		}
		return errors.New(flagfile.ValueProblem(f, m[2], m[1], m[3]))
	}
	return err
}

// unknownCommand is the error for `loadcurve NAME` when no command is called NAME.
func unknownCommand(name string, cmds []*cli.Command) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	if strings.HasPrefix(name, "-") {
		return usagef("unknown option %s", name)
	}
	if s := nearest.Names(name, names); len(s) > 0 {
		return usagef("no command %q; did you mean %s?", name, nearest.Or(s))
	}
	return usagef("no command %q; the commands are %s (loadcurve --help says what each does)", name, strings.Join(names, ", "))
}

// rootUsage explains a flag error before the command: a flag of some command (or a near
// name of one) given before it.
func rootUsage(app *cli.App, err error) error {
	m := reUndefined.FindStringSubmatch(err.Error())
	if m == nil {
		return explainUsage(app.Flags, err)
	}
	owners := func(name string) []string {
		var out []string
		for _, c := range app.Commands {
			if flagfile.Find(c.Flags, name) != nil {
				out = append(out, c.Name)
			}
		}
		return out
	}
	name := m[1]
	if cmds := owners(name); len(cmds) > 0 {
		return fmt.Errorf("--%s is a flag of %s: give it after the command, e.g. loadcurve %s --%s …", name, nearest.Or(cmds), cmds[0], name)
	}
	var all []string
	for _, c := range app.Commands {
		all = append(all, flagfile.NameList(c.Flags)...)
	}
	if s := nearest.Names(name, all); len(s) > 0 {
		cmds := owners(s[0])
		return fmt.Errorf("flag provided but not defined: -%s; did you mean --%s, a flag of %s? Give it after the command, e.g. loadcurve %s --%s …",
			name, s[0], nearest.Or(cmds), cmds[0], s[0])
	}
	return explainUsage(app.Flags, err)
}

// checkBaseURL says what is wrong with a --base-url and what was probably meant; nil when it is
// an http or https URL with a host. The URL is echoed without user info, query or fragment:
// they may hold credentials.
func checkBaseURL(raw string) error {
	s := strings.TrimSpace(raw)
	const want = "want e.g. http://host:8000/v1"
	if !strings.Contains(s, "://") {
		guess, err := url.Parse("http://" + s)
		if err != nil || guess.Host == "" || strings.HasPrefix(strings.ToLower(s), "http") && strings.Contains(s, ":/") {
			return fmt.Errorf("--base-url: not a URL with a scheme; %s", want)
		}
		shown := redact.URL(guess.String())
		return fmt.Errorf("--base-url %s: not a URL with a scheme; did you mean %s?", strings.TrimPrefix(shown, "http://"), shown)
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole input, which may hold credentials
		}
		return fmt.Errorf("--base-url: not a valid URL (%v); %s", err, want)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("--base-url %s: the scheme must be http or https; %s", redact.URL(s), want)
	case u.Host == "":
		return fmt.Errorf("--base-url %s: no host; %s", redact.URL(s), want)
	}
	return nil
}
