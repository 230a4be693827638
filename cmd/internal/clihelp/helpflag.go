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
