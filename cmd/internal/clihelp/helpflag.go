package clihelp

import (
	"flag"
	"slices"

	"github.com/urfave/cli/v2"
)

// HelpFlag is --help (-h) without state; a program sets cli.HelpFlag = HelpFlag{} before any
// app runs. urfave/cli's own HelpFlag is one *cli.BoolFlag shared by every app, and its Apply
// writes to it: two apps run at once (tests run several in one process) race on it.
type HelpFlag struct{}

func (HelpFlag) Apply(set *flag.FlagSet) error {
	set.Bool("help", false, "show help")
	set.Bool("h", false, "show help")
	return nil
}
func (HelpFlag) Names() []string { return []string{"help", "h"} }
func (HelpFlag) IsSet() bool     { return false }
func (HelpFlag) IsVisible() bool { return true }
func (HelpFlag) String() string  { return "--help, -h\tshow help" }

// VersionFlag is --version (-v) without state, for the same reason as HelpFlag: a program sets
// cli.VersionFlag = VersionFlag{} before any app runs.
type VersionFlag struct{}

func (VersionFlag) Apply(set *flag.FlagSet) error {
	set.Bool("version", false, "print the version")
	set.Bool("v", false, "print the version")
	return nil
}
func (VersionFlag) Names() []string { return []string{"version", "v"} }
func (VersionFlag) IsSet() bool     { return false }
func (VersionFlag) IsVisible() bool { return true }
func (VersionFlag) String() string  { return "--version, -v\tprint the version" }

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
