package clihelp

import (
	"flag"
	"slices"

	"github.com/urfave/cli/v2"
)

// HelpFlag is --help (-h) without state; a program sets cli.HelpFlag = HelpFlag before any app
// runs. urfave/cli's own HelpFlag is one *cli.BoolFlag shared by every app, and its Apply
// writes to it: two apps run at once (tests run several in one process) race on it.
var HelpFlag cli.Flag = &staticBool{names: []string{"help", "h"}, usage: "show help"}

// VersionFlag is --version (-v) without state, for the same reason: a program sets
// cli.VersionFlag = VersionFlag before any app runs.
var VersionFlag cli.Flag = &staticBool{names: []string{"version", "v"}, usage: "print the version"}

// staticBool is a bool flag that keeps no state: its value lives in each app's flag set only
// (it is shared by pointer, which urfave/cli compares, and never written).
type staticBool struct {
	names []string
	usage string
}

func (f staticBool) Apply(set *flag.FlagSet) error {
	for _, n := range f.names {
		set.Bool(n, false, f.usage)
	}
	return nil
}
func (f staticBool) Names() []string { return f.names }
func (staticBool) IsSet() bool       { return false }
func (staticBool) IsVisible() bool   { return true }
func (f staticBool) String() string {
	return "--" + f.names[0] + ", -" + f.names[1] + "\t" + f.usage
}

// AnswerFlag makes cmd answer its bool flag name with answer before anything else it does, as
// it answers --help: its Before and its Action are skipped. A command without the flag is left
// as it is.
func AnswerFlag(cmd *cli.Command, name string, answer cli.ActionFunc) {
	if !slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) }) {
		return
	}
	before, action := cmd.Before, cmd.Action
	cmd.Before = func(c *cli.Context) error {
		if c.Bool(name) || before == nil {
			return nil
		}
		return before(c)
	}
	cmd.Action = func(c *cli.Context) error {
		if c.Bool(name) {
			return answer(c)
		}
		return action(c)
	}
}
